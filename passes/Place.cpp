// place: maps every rank of the schedule to an endpoint of the fabric
// (FabricGraph::endpoints(): its xpus, or one NIC per host when it has none) and
// stores it in Module::placement.
//
// Each policy orders the usable endpoints; rank r takes the r-th (with
// -oversubscribe, the (r mod E)-th):
//   linear       the fabric's endpoint order
//   packed       host by host, at most -place-per-host endpoints of each (all by default)
//   round-robin  one endpoint of every host in turn, then the next of every host, ...
//   random       a random order (-seed), drawn from the usable endpoints
//   map          -place-map=<file>: `rank endpoint-name` per line
#include "ir/Module.h"
#include "passes/Pass.h"
#include "passes/Placing.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

namespace infracc {
namespace cl = llvm::cl;

namespace {

enum class Policy { Linear, Packed, RoundRobin, Random, Map };

cl::opt<Policy> PlacePolicy(
    "place", cl::value_desc("policy"), cl::init(Policy::Linear),
    cl::desc("Placement policy of the place pass (default linear; -place-map implies map)"),
    cl::values(clEnumValN(Policy::Linear, "linear", "rank r on endpoint r"),
               clEnumValN(Policy::Packed, "packed", "fill a host before the next"),
               clEnumValN(Policy::RoundRobin, "round-robin", "one rank per host in turn"),
               clEnumValN(Policy::Random, "random", "a random endpoint per rank (-seed)"),
               clEnumValN(Policy::Map, "map", "from -place-map=<file>")),
    cl::cat(opts::passCategory()));

cl::opt<unsigned> PlacePerHost("place-per-host", cl::init(0), cl::value_desc("k"),
                               cl::desc("Use at most k endpoints of every host (packed, "
                                        "round-robin, random; default 0: all)"),
                               cl::cat(opts::passCategory()));

cl::opt<bool> Oversubscribe("oversubscribe",
                            cl::desc("place: allow several ranks on one endpoint"),
                            cl::cat(opts::passCategory()));

class PlacePass : public Pass {
public:
  llvm::StringRef name() const override { return "place"; }
  llvm::Error run(Module &m, PassContext &ctx) override;

private:
  llvm::Error fromMap(Module &m, PassContext &ctx);
};

llvm::Error PlacePass::run(Module &m, PassContext &ctx) {
  if (!m.hasFabric())
    return usageError("the place pass needs a fabric (an InfraGraph .yaml/.json file or "
                      "-fabric=<blueprint>) to place ranks on");
  if (!m.hasSchedule())
    return usageError("the place pass needs a workload (e.g. a .goal file)");
  if (!m.placement.empty() || m.placement.hasMembers())
    return usageError("the schedule is already placed or grouped (by merge-jobs, remap-gpus or "
                      "an earlier place); run place once, before the passes that regroup ranks");
  Policy policy = PlacePolicy;
  if (m.placeMap) {
    if (PlacePolicy.getNumOccurrences() && policy != Policy::Map)
      return usageError("-place-map gives the placement; it cannot be combined with -place=" +
                        std::string(PlacePolicy.getParser().getOption(unsigned(policy))));
    policy = Policy::Map;
  } else if (policy == Policy::Map) {
    return usageError("-place=map needs -place-map=<file> (lines 'rank endpoint-name')");
  }
  if (policy == Policy::Map)
    return fromMap(m, ctx);

  const FabricGraph &g = *m.fabric;
  const uint32_t ranks = m.schedule->numRanks();
  EndpointPool pool(g, PlacePerHost);
  std::vector<NodeId> order;
  switch (policy) {
  case Policy::Linear: order = g.endpoints(); break;
  case Policy::Packed: order = pool.packed(); break;
  case Policy::RoundRobin: order = pool.roundRobin(); break;
  case Policy::Random: order = pool.random(opts::seed()); break;
  case Policy::Map: break;
  }
  if (order.empty())
    return inputError("the fabric '" + m.fabricSource + "' has no endpoints to place ranks on "
                      "(no xpu, and no host with a NIC)");
  if (ranks > order.size() && !Oversubscribe) {
    std::string what = g.endpointsAreXpus() ? "xpus" : "hosts";
    std::string usable = std::to_string(order.size()) + " endpoints (" + what + ")";
    if (order.size() < g.endpoints().size())
      usable = fmt::format("{} usable endpoints ({} {}, at most {} per host with "
                           "-place-per-host={})",
                           order.size(), g.endpoints().size(), what, unsigned(PlacePerHost),
                           unsigned(PlacePerHost));
    ctx.diags.error(m.workloadSource,
                    fmt::format("the workload has {} ranks but the fabric '{}' has only {}; give "
                                "a larger fabric, or -oversubscribe to put several ranks on "
                                "one endpoint",
                                ranks, m.fabricSource, usable));
    return reportedError();
  }
  m.placement.clear();
  m.placement.endpointOfRank.resize(ranks);
  for (uint32_t r = 0; r < ranks; ++r)
    m.placement.endpointOfRank[r] = order[r % order.size()];
  recordPlacementStats(m, ctx.stats, "place");
  return llvm::Error::success();
}

llvm::Error PlacePass::fromMap(Module &m, PassContext &ctx) {
  const std::vector<RankMapEntry> &entries = m.placeMap->entries;
  const FabricGraph &g = *m.fabric;
  const uint32_t ranks = m.schedule->numRanks();
  std::vector<NodeId> endpoint(ranks, InvalidNode);
  std::vector<llvm::SMLoc> placedAt(ranks);
  llvm::DenseMap<NodeId, std::pair<uint32_t, llvm::SMLoc>> rankOn;
  EndpointNames names(g);
  for (const RankMapEntry &e : entries) {
    if (ctx.diags.shouldStop())
      break;
    if (e.rank >= ranks) {
      ctx.diags.error(e.rankLoc, fmt::format("rank {} does not exist: the workload '{}' has "
                                             "ranks 0 to {}",
                                             e.rank, m.workloadSource, ranks - 1));
      continue;
    }
    auto node = names.resolve(e.name);
    if (!node) {
      ctx.diags.error(e.nameLoc, llvm::toString(node.takeError()));
      continue;
    }
    if (endpoint[e.rank] != InvalidNode) {
      ctx.diags.error(e.rankLoc, fmt::format("rank {} is placed twice", e.rank));
      ctx.diags.note(placedAt[e.rank], "first placed here");
      continue;
    }
    auto [it, fresh] = rankOn.try_emplace(*node, e.rank, e.nameLoc);
    if (!fresh && !Oversubscribe) {
      ctx.diags.error(e.nameLoc,
                      fmt::format("ranks {} and {} are both placed on '{}'; give every rank its "
                                  "own endpoint, or -oversubscribe",
                                  it->second.first, e.rank, e.name));
      ctx.diags.note(it->second.second, fmt::format("rank {} placed here", it->second.first));
      continue;
    }
    endpoint[e.rank] = *node;
    placedAt[e.rank] = e.rankLoc;
  }
  if (ctx.diags.hasErrors())
    return reportedError();
  std::vector<uint32_t> missing;
  for (uint32_t r = 0; r < ranks; ++r)
    if (endpoint[r] == InvalidNode)
      missing.push_back(r);
  if (!missing.empty()) {
    ctx.diags.error(m.placeMap->path, fmt::format("the map places no endpoint for {} {} (the "
                                              "workload has {} ranks); every rank needs a line",
                                              missing.size() == 1 ? "rank" : "ranks",
                                              describeRanks(missing), ranks));
    return reportedError();
  }
  m.placement.clear();
  m.placement.endpointOfRank = std::move(endpoint);
  recordPlacementStats(m, ctx.stats, "place");
  return llvm::Error::success();
}

RegisterPass<PlacePass> X("place", "map ranks to fabric endpoints (-place=linear|packed|"
                                   "round-robin|random, -place-map=<file>)");

} // namespace

} // namespace infracc
