// A fabric as ASTRA-sim's ns-3 backend sees it: hosts (the NPUs, ids 0..N-1 in endpoint
// order, as ASTRA-sim's rank i is ns-3 node i), switches (every other node), and
// point-to-point links with a DataRate and a Delay (docs/astra-sim.md, "ns-3").
//
//  * A switch device copy (ports and ASIC) is one switch node.
//  * Inside hosts every other node that carries traffic stays a node of its own: NICs,
//    NVSwitches, PCIe switches, CPUs. ns-3 hosts can only be NPUs, so they are switch
//    nodes; a NIC shared by two xpus is then exactly that, a shared hop, and the PCIe
//    link to it keeps its rate and delay (the service's translator instead folds each NIC
//    into an NPU).
//  * An xpu wired straight to several NICs keeps only the link to the NIC of its affinity
//    (ir/AttachPoints.h, the choice -emit=htsim makes), so ns-3's routing does not
//    spread its traffic over NICs the GPU does not use.
//  * Nodes that lead nowhere (a management NIC without a link out, NVMe drives) are
//    dropped: repeatedly, every non-NPU node with at most one neighbour.
//  * Parallel edges between two nodes become one link of their summed rate (ns-3's
//    routing keeps one interface per neighbour), with the largest of their latencies.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::astra {

struct Ns3Link {
  uint32_t a = 0, b = 0;           // ns-3 node ids, a < b
  double bitsPerSecond = 0;
  int64_t latencyPs = 0;
  bool latencyKnown = false;
  uint32_t edges = 0;              // fabric edges merged into it
};

struct Ns3Topology {
  uint32_t npus = 0, nodes = 0;
  std::vector<std::string> names;   // per ns-3 node: the fabric node or device copy
  std::vector<Ns3Link> links;
  uint32_t npuToNpuLinks = 0;       // links joining two NPUs directly
  std::vector<std::string> linksWithoutLatency;   // link names, for one warning
};

/// Builds the ns-3 graph of `g`; a link without a bandwidth is reported against
/// `where` and gives an error.
llvm::Expected<Ns3Topology> ns3Topology(const FabricGraph &g, DiagEngine &diags,
                                        llvm::StringRef where);

/// The topology file: `<nodes> <switches> <links>`, the switch ids, then
/// `<src> <dst> <rate> <delay> <error_rate>` per link.
std::string ns3TopologyFile(const Ns3Topology &t);

} // namespace infracc::astra
