#!/bin/sh
# Runs ASTRA-sim's ns-3 backend on this folder (written by infracc).
#   ./run-astra-ns3.sh WORKLOAD_PREFIX   (Chakra traces WORKLOAD_PREFIX.<npu>.et, one per NPU)
# NS3_BIN: the ns-3 AstraSimNetwork binary (default: ASTRA_SIM's extern/network_backend/ns-3/
# build/scratch/ns3.42-AstraSimNetwork-default). config.txt holds ASTRA-sim's shipped values
# (DCQCN-style CC_MODE 12, 1000-byte packets, 32 MB switch buffers) and paths into this folder;
# the simulator writes output/fct.txt, output/pfc.txt, output/qlen.txt here.
# topology.txt: ns-3 nodes 0..7 are the NPUs, 8..31 switches (nodes.txt names them).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
workload=${1:?usage: $0 WORKLOAD_PREFIX (Chakra .et files, one per NPU)}
bin=${NS3_BIN:-${ASTRA_SIM:?set ASTRA_SIM to the ASTRA-sim source folder, or NS3_BIN}/extern/network_backend/ns-3/build/scratch/ns3.42-AstraSimNetwork-default}
cd "$here"
mkdir -p output
"$bin" \
  --workload-configuration="$workload" \
  --system-configuration="$here/system.json" \
  --remote-memory-configuration="$here/remote_memory.json" \
  --network-configuration="$here/config.txt" \
  --logical-topology-configuration="$here/logical_topology.json" \
  --comm-group-configuration=empty
