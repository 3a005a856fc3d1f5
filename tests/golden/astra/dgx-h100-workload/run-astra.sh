#!/bin/sh
# Runs ASTRA-sim's analytical backends on this folder (written by infracc).
#   ./run-astra.sh [WORKLOAD_PREFIX]   (default: this folder's workload.<npu>.et)
# ASTRA_SIM: the folder of an ASTRA-sim build (build/astra_analytical/build/bin inside
# it holds the binaries). system.json and remote_memory.json are defaults: edit them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
workload=${1:-$here/workload}
bin=${ASTRA_SIM:?set ASTRA_SIM to the ASTRA-sim source folder}/build/astra_analytical/build/bin
# 8 NPUs: the workload needs 8 files, $workload.0.et to $workload.7.et
echo "== congestion unaware"
"$bin/AstraSim_Analytical_Congestion_Unaware" \
  --workload-configuration="$workload" \
  --system-configuration="$here/system.json" \
  --remote-memory-configuration="$here/remote_memory.json" \
  --comm-group-configuration="$here/workload.comm_groups.json" \
  --network-configuration="$here/network.yml" \
  --logging-folder="$here/log"
echo "== congestion aware"
"$bin/AstraSim_Analytical_Congestion_Aware" \
  --workload-configuration="$workload" \
  --system-configuration="$here/system.json" \
  --remote-memory-configuration="$here/remote_memory.json" \
  --comm-group-configuration="$here/workload.comm_groups.json" \
  --network-configuration="$here/network.yml" \
  --logging-folder="$here/log"
