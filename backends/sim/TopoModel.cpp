// -sim-model=topo: LogGOPSim's engine with L and G per message from the fabric (the
// heterogeneous LogGP of LLAMP's Appendix I): a message pays the latency of its path
// (links plus switches, ir/Paths.h) instead of L, and the gap per byte of the path's
// bottleneck link instead of G. o, g, O and S stay global.
//
// A message's path runs between the endpoints its two ranks are placed on. In a
// per-node schedule (remap-gpus) the endpoints are the GPUs that send and receive:
// the sender's from its cpu stream, the receiver's from the stream of the recv that
// matches it in MPI order (ir/MessageMatching.h); a message whose recv is a wildcard
// goes to the first GPU of the receiving rank.
//
// Where the fabric has no numbers: a path with no latency on any link and no switch
// latency uses the global L; one without any bandwidth uses the global G. A message
// that stays on its endpoint (no link) costs L = 0 and G = 0. Each link without a
// bandwidth that a message's path passes, and the use of L or G, is warned about once
// (passes/FabricCosts.h); an -L or -G given on the command line that no path needs is
// refused, since it would be silently ignored.
#include "backends/sim/SimModel.h"
#include "backends/sim/TopoModel.h"

#include "ir/MessageMatching.h"
#include "ir/Module.h"
#include "ir/Paths.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <map>

namespace infracc::sim {

llvm::Error checkTopoInputs(const Module &m, llvm::StringRef model) {
  if (!m.hasFabric())
    return usageError(fmt::format("-sim-model={} needs a fabric (an InfraGraph .yaml/.json "
                                  "file or -fabric=<blueprint>) besides the workload",
                                  model.str()));
  const Placement &pl = m.placement;
  if (pl.empty())
    return usageError(fmt::format("-sim-model={} needs the ranks placed on the fabric: add "
                                  "place to -passes (it runs by default when -passes is not "
                                  "given)",
                                  model.str()));
  if (pl.numRanks() != m.schedule->numRanks())
    return inputError(fmt::format("the placement covers {} ranks but the schedule has {}",
                                  pl.numRanks(), m.schedule->numRanks()));
  return llvm::Error::success();
}

namespace {

class TopoCosts : public LinkCostModel {
public:
  PairCost cost(uint32_t src, uint32_t dst) const override {
    auto it = byRanks_.find((uint64_t(src) << 32) | dst);
    return it != byRanks_.end() ? it->second : uniform_;
  }
  PairCost costOfSend(uint32_t src, uint32_t dst, uint32_t sendOp) const override {
    if (!pairOfOp_.empty())
      return costs_[pairOfOp_[sendOp]];
    return cost(src, dst);
  }

  PairCost uniform_;
  llvm::DenseMap<uint64_t, PairCost> byRanks_;   // per-rank schedules
  std::vector<uint32_t> pairOfOp_;               // per-node schedules: per op
  std::vector<PairCost> costs_;
};

llvm::Expected<std::unique_ptr<LinkCostModel>> makeTopoCosts(const Module &m,
                                                             const LogGPParams &params) {
  if (llvm::Error e = checkTopoInputs(m))
    return e;
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  auto lat = switchLatencies(*m.fabric, m.diags, m.fabricSource);
  if (!lat)
    return reportedError();
  PathFinder paths(*m.fabric, std::move(*lat));
  auto costs = std::make_unique<TopoCosts>();
  costs->uniform_ = {params.L, params.G};

  // Distinct (source node, destination node) pairs, and who uses them.
  llvm::DenseMap<uint64_t, uint32_t> pairIndex;
  std::vector<std::pair<NodeId, NodeId>> pairs;
  auto indexOf = [&](NodeId a, NodeId b) {
    auto [it, fresh] = pairIndex.try_emplace((uint64_t(a) << 32) | b, uint32_t(pairs.size()));
    if (fresh)
      pairs.push_back({a, b});
    return it->second;
  };
  std::vector<std::pair<uint64_t, uint32_t>> rankPairs;   // per-rank schedules
  if (pl.hasMembers()) {
    std::vector<uint32_t> partner = matchMessages(s);
    costs->pairOfOp_.assign(s.numOps(), 0);
    for (uint32_t r = 0; r < s.numRanks(); ++r)
      for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g) {
        if (s.kind(g) != OpKind::Send)
          continue;
        auto [a, b] = messageEndpoints(pl, s, r, g, partner[g]);
        costs->pairOfOp_[g] = indexOf(a, b);
      }
  } else {
    llvm::DenseMap<uint64_t, bool> seen;
    for (uint32_t r = 0; r < s.numRanks(); ++r)
      for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g) {
        if (s.kind(g) != OpKind::Send)
          continue;
        uint64_t key = (uint64_t(r) << 32) | s.peer(g);
        if (seen.try_emplace(key, true).second)
          rankPairs.push_back(
              {key, indexOf(pl.endpointOfRank[r], pl.endpointOfRank[s.peer(g)])});
      }
  }

  // One search per source node, in parallel.
  std::map<NodeId, std::vector<NodeId>> bySource;
  for (auto [a, b] : pairs)
    bySource[a].push_back(b);
  std::vector<NodeId> sources;
  std::vector<std::vector<NodeId>> targets;
  for (auto &[a, list] : bySource) {
    sources.push_back(a);
    targets.push_back(std::move(list));
  }
  paths.precompute(sources, targets);
  costs->costs_.resize(pairs.size());
  FabricFallbacks fallbacks(*m.fabric);
  for (size_t i = 0; i < pairs.size(); ++i) {
    PathInfo p = paths.between(pairs[i].first, pairs[i].second);
    if (!p.reachable)
      return inputError(fmt::format("-sim-model=topo: no path in the fabric '{}' from '{}' to "
                                    "'{}', which exchange messages",
                                    m.fabricSource, m.fabric->name(pairs[i].first),
                                    m.fabric->name(pairs[i].second)));
    costs->costs_[i] = topoCost(p, params);
    fallbacks.note(p, pairs[i].first, pairs[i].second);
  }
  if (latencyOptionGiven() && !fallbacks.usedDefaultLatency())
    return usageError(fmt::format("-L={} is not used by -sim-model=topo: L applies only to "
                                  "paths without any latency in the fabric, and no message's "
                                  "path lacks one; drop -L, or use -sim-model=lgs for "
                                  "LogGOPSim's single L",
                                  params.L));
  if (gapPerByteOptionGiven() && !fallbacks.usedDefaultBandwidth())
    return usageError(fmt::format("-G={} is not used by -sim-model=topo: G applies only to "
                                  "paths without any bandwidth in the fabric, and no message's "
                                  "path lacks one; drop -G, or use -sim-model=lgs for "
                                  "LogGOPSim's single G",
                                  params.G.value()));
  fallbacks.report(m.diags, m.fabricSource, "-sim-model=topo",
                   fmt::format("G={} ns/byte ({})", params.G.value(),
                               gapPerByteOptionGiven() ? "-G" : "the -G default"),
                   fmt::format("L={} ns ({})", params.L,
                               latencyOptionGiven() ? "-L" : "the -L default"));
  for (auto [key, idx] : rankPairs)
    costs->byRanks_[key] = costs->costs_[idx];
  return std::unique_ptr<LinkCostModel>(std::move(costs));
}

} // namespace

std::pair<NodeId, NodeId> messageEndpoints(const Placement &pl, const Schedule &s, uint32_t rank,
                                           uint32_t sendOp, uint32_t recvOp) {
  const uint32_t d = s.peer(sendOp);
  if (!pl.hasMembers())
    return {pl.endpointOfRank[rank], pl.endpointOfRank[d]};
  auto endpointOf = [&](uint32_t r, uint32_t cpu) {
    const Placement::Member *mem = pl.memberOfCpu(r, cpu);
    return mem && mem->endpoint != InvalidNode ? mem->endpoint : pl.endpointOfRank[r];
  };
  return {endpointOf(rank, s.cpu(sendOp)),
          recvOp != NoPartner ? endpointOf(d, s.cpu(recvOp)) : pl.endpointOfRank[d]};
}

PairCost topoCost(const PathInfo &p, const LogGPParams &params) {
  if (p.links == 0)
    return {0, PerByte(0)};
  PairCost c;
  c.L = p.latencyKnown ? static_cast<uint64_t>((p.latencyPs + 500) / 1000) : params.L;
  c.G = p.bottleneckBps ? PerByte(8e9 / *p.bottleneckBps) : params.G;
  return c;
}

namespace {

RegisterSimModel TopoModel({
    .name = "topo",
    .description = "LogGOPSim's engine with L and G per message from the fabric path between "
                   "the two endpoints (needs a fabric and a placement)",
    .engine = Engine::Lgs,
    .costs = makeTopoCosts,
    .pipeline = {"place"},
    .runKernels = nullptr,
    .options = {},
});

} // namespace
} // namespace infracc::sim
