// What the passes and the topology-aware simulator model read from the fabric beyond
// its graph: per-switch latencies (annotations or -switch-latency). Which NIC an
// endpoint's traffic leaves through: ir/AttachPoints.h, passes/NicAssignment.h.
#pragma once

#include "ir/FabricGraph.h"
#include "ir/Paths.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

/// The node attribute naming a switch's latency, e.g. `switch_latency: 300ns`
/// (a bare number is ns). On a node of a switch device it applies to that switch;
/// as a graph attribute it is the default for every switch.
inline constexpr const char *SwitchLatencyAttribute = "switch_latency";

/// -switch-latency=<ns>: the latency of a switch without the annotation (default 0).
double defaultSwitchLatencyNs();
/// A usage error when -switch-latency is negative or not finite.
llvm::Error checkSwitchLatencyOption();

/// Per node: the latency (ps) a path pays for passing it when it counts as a switch
/// (see ir/Paths.h), from the annotations or the default. An unreadable annotation is
/// reported (naming the node, against `where`) and gives nullopt.
std::optional<std::vector<int64_t>> switchLatencies(const FabricGraph &g, DiagEngine &diags,
                                                    llvm::StringRef where);

/// "link 'nvlink' of device 'dgx'" or "infrastructure link 'eth'", for messages.
std::string describeLink(const FabricGraph &g, LinkId l);

/// What a fabric-priced model (-sim-model=topo, intranode-calc) did where the fabric has
/// no numbers, told once per run: one warning per link without a bandwidth that the
/// priced paths pass, naming it and, when a path had no bandwidth at all, the default
/// used there; and one warning when paths had no latency at all.
class FabricFallbacks {
public:
  explicit FabricFallbacks(const FabricGraph &g) : g_(g) {}
  /// Records a priced path from a to b.
  void note(const PathInfo &p, NodeId a, NodeId b);
  bool usedDefaultBandwidth() const { return defaultBandwidthPaths_ != 0; }
  bool usedDefaultLatency() const { return defaultLatencyPaths_ != 0; }
  /// `model` names the model in messages ("-sim-model=topo"); `bandwidthDefault` and
  /// `latencyDefault` say what was used instead ("G=6 ns/byte (the -G default)"); an
  /// empty `latencyDefault` reports nothing about latencies.
  void report(DiagEngine &diags, llvm::StringRef where, llvm::StringRef model,
              llvm::StringRef bandwidthDefault, llvm::StringRef latencyDefault) const;

private:
  struct Use {
    NodeId a = InvalidNode, b = InvalidNode;                 // a path through the link
    NodeId bareA = InvalidNode, bareB = InvalidNode;         // one without any bandwidth
  };
  const FabricGraph &g_;
  std::map<LinkId, Use> links_;
  uint64_t defaultBandwidthPaths_ = 0, defaultLatencyPaths_ = 0;
  NodeId latA_ = InvalidNode, latB_ = InvalidNode;
};

} // namespace infracc
