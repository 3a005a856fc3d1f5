// The fabric as htsim's FatTreeTopology sees it: 2 or 3 tiers of switches, one link
// speed, link latency and switch latency per tier, equal radices, bundles and
// oversubscription per tier, and htsim nodes numbered so that htsim's fixed wiring
// (node n on ToR n / Radix_Down, ToR t in pod t / ToRs-per-pod, ...) is the fabric's.
//
// An htsim node is a fabric attach point (ir/AttachPoints.h): a NIC, a NIC port, or the
// host port a link ends on when the host has no NIC. A host with 8 NICs on 8 rail
// switches is 8 nodes under 8 ToRs; one with 2 NICs on one ToR is 2 nodes there.
//
// recogniseFatTree() finds that shape in the fully qualified graph or says precisely
// why there is none and what would make it expressible; deriveHtsimShape() repeats
// htsim's own arithmetic on the values a .topo file gives
// (FatTreeTopology::set_custom_params), so that a file is only written when htsim
// builds the recognised fabric from it.
//
// htsim derives uplink counts from link speeds and never gives a switch more uplink
// than downlink bandwidth. Where the fabric's uplinks are faster than that arithmetic
// allows, they are written as bundles of links at the speed below (400G = 4 x 100G,
// same capacity); where a switch has more uplink than downlink bandwidth
// (undersubscribed), its uplinks are capped to what htsim can express and a warning
// says by how much.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/DenseMap.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::htsim {

/// The keys of one `Tier i` block of a .topo file.
struct TopoTier {
  uint64_t speedGbps = 0;        // Downlink_speed_Gbps: links from this tier down
  uint64_t latencyNs = 0;        // Downlink_Latency_ns
  uint64_t switchLatencyNs = 0;  // Switch_Latency_ns
  uint64_t radixDown = 0;        // Radix_Down: ports down (links, bundles counted out)
  uint64_t radixUp = 0;          // Radix_Up: ports up; 0 (absent) on the top tier
  uint64_t oversubscribed = 1;   // Oversubscribed (only below the top tier)
  uint64_t bundle = 1;           // Bundle: links to one switch of the tier below
};

/// Everything a .topo file says.
struct TopoParams {
  uint64_t nodes = 0, tiers = 0, podsize = 0;
  TopoTier tier[3];
};

/// What htsim builds from TopoParams.
struct HtsimShape {
  uint64_t pods = 0, torsPerPod = 0, aggsPerPod = 0, cores = 0;
  uint64_t torUplinks = 0, aggUplinks = 0;
  uint64_t tors() const { return pods * torsPerPod; }
  uint64_t aggs() const { return pods * aggsPerPod; }
};

/// htsim's derivation, check by check, in its order. On failure: the reason, naming the
/// .topo keys and the numbers (htsim itself would exit with an error or an assertion).
/// Includes the port limits htsim asserts (96 per ToR, 64 per tier-1/2 switch).
std::optional<HtsimShape> deriveHtsimShape(const TopoParams &p, std::string &why);

struct FatTree {
  TopoParams params;
  HtsimShape shape;
  /// htsim node -> its attach point in the fabric.
  std::vector<NodeId> attachOfNode;
  /// Attach point -> htsim node.
  llvm::DenseMap<NodeId, uint32_t> nodeOfAttach;
  /// htsim's switch index -> device copy, per tier (ToRs, aggregation, core).
  std::vector<uint32_t> switchesOfTier[3];
  /// Names of the device copies (`leaf.3`), by copy.
  std::vector<std::string> copyNames;
  /// The fabric link names behind each tier's links (for the .topo comments).
  std::vector<std::string> linkNamesOfTier[3];
  /// Paths between two nodes in different pods (or ToRs, with 2 tiers): for -paths.
  uint64_t upPaths = 1;
  /// How fabric.topo writes tiers htsim cannot take literally (uplinks as bundles of
  /// slower links, capped uplinks), one line each, for its comments.
  std::vector<std::string> notes;
};

/// htsim's default hop latency (csg-htsim main.h), given to links without a latency
/// unless -htsim-link-latency says otherwise.
inline constexpr double HtsimDefaultLinkLatencyNs = 1000;

struct FatTreeOptions {
  /// Latency in ns for links without one.
  double defaultLinkLatencyNs = HtsimDefaultLinkLatencyNs;
  /// Whether that latency was chosen by the user (no warning then).
  bool linkLatencyGiven = false;
  /// Switch latency per node in ps (passes/FabricCosts.h switchLatencies()).
  const std::vector<int64_t> *switchLatencyPs = nullptr;
};

/// Recognises the fabric as an htsim fat tree. Every problem is reported through diags
/// against `where` (the fabric's source) as the property that fails, the element that
/// breaks it and the way out; nullopt then. Approximations (capped uplinks, links
/// without latency) are warned about.
std::optional<FatTree> recogniseFatTree(const FabricGraph &g, DiagEngine &diags,
                                        llvm::StringRef where, const FatTreeOptions &opts);

/// The models that simulate what htsim cannot express, for refusals' ways out.
std::string otherModelsHint();

/// Writes the .topo file: `#` comments (`comments`, one per line, then the fabric's
/// shape), the header and one block per tier, LF line ends, single spaces.
void writeTopo(const FatTree &ft, llvm::ArrayRef<std::string> comments, llvm::raw_ostream &os);

} // namespace infracc::htsim
