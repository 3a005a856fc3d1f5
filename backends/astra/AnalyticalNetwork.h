// A fabric as ASTRA-sim's analytical backends see it: a product of dimensions, each a
// Ring, a FullyConnected group or a Switch, with one bandwidth and one latency.
//
// NPU i is endpoint i of the fabric (FabricGraph::endpoints: every xpu in node order,
// so the xpus of one host are consecutive). The backend numbers NPUs with dimension 0
// varying fastest, so dimension 0 is the xpus inside a host and the next dimensions
// group hosts, innermost first.
//
// How dimensions are found (docs/astra-sim.md, "Dimensions"):
//  * Inside a host: the paths between its xpus (ir/Paths.h: links, switches passed,
//    their latencies). All equal and one link long: FullyConnected. All equal and
//    longer: Switch (an NVSwitch or PCIe switch every xpu reaches alike). Neighbours
//    in index order one link apart and every pair a ring distance of them: Ring.
//  * Between hosts: the path from the first xpu of host 0 to the first xpu of every
//    other host. Hosts at the nearest distance class must be hosts 1..s1-1, those at
//    the next class fill up to s2 and so on (leaf, pod, whole fabric): one Switch per
//    class of size s_m / s_{m-1}. A single class of one-link paths is FullyConnected;
//    distances that grow as a ring does make a Ring.
//  * Then every host and every xpu index is checked against the dimensions: the path
//    from each NPU to its neighbour in each dimension must cost what the dimension
//    says. A Switch dimension charges 2 hops, so its latency is half the path's.
//  * Bandwidth per dimension is what one NPU can send into it: inside a host, its
//    links to the switches every xpu shares (summed), or the direct link (parallel
//    links summed); between hosts, the path's bottleneck.
// What the analytical model cannot express is refused, naming the property; with
// `approximate` it is folded into the nearest dimensions and each fold is listed:
// oversubscribed tiers (bandwidth divided by the ratio), NICs shared by several xpus
// (bandwidth divided among them), distances that do not nest (one Switch with the
// largest latency and the smallest bandwidth), paths that differ within a dimension.
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

enum class DimShape { Ring, FullyConnected, Switch };
const char *shapeName(DimShape s);   // as network.yml spells it

struct Dimension {
  DimShape shape = DimShape::Switch;
  uint32_t npus = 0;
  double bytesPerSecond = 0;   // per NPU link, per direction
  double latencyNs = 0;        // per hop (a Switch charges two)
  std::string what;            // "the 8 xpus inside each dgx_h100", for comments
};

struct AnalyticalNetwork {
  std::vector<Dimension> dims;
  uint32_t npus = 0, hosts = 0, npusPerHost = 0;
  std::vector<std::string> approximations;   // what -astra-approx folded, for the user
};

/// Finds the dimensions of `g`. `switchPs`: per node, what passing it costs (see
/// passes/FabricCosts.h). Problems are reported through `diags` against `where`;
/// returns an error (already reported) when the fabric cannot be expressed.
llvm::Expected<AnalyticalNetwork> analyticalNetwork(const FabricGraph &g,
                                                    std::vector<int64_t> switchPs,
                                                    bool approximate, DiagEngine &diags,
                                                    llvm::StringRef where);

} // namespace infracc::astra
