// Message latencies as lines in a fabric parameter, along the paths -sim-model=topo
// takes (ir/Paths.h; backends/sim/TopoModel.h): the parameter replaces the latency of
// every link of one name, or of every switch, and the path itself stays the one chosen
// at the fabric's own latencies (routing does not follow the latency being varied).
#include "backends/sensitivity/Setup.h"

#include "backends/sim/TopoModel.h"
#include "ir/MessageMatching.h"
#include "ir/Module.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <map>
#include <set>

namespace infracc::sens {

llvm::Expected<MessageCosts> fabricMessageCosts(const Module &m, const sim::LogGPParams &params,
                                                llvm::StringRef param) {
  if (llvm::Error e = sim::checkTopoInputs(m))
    return e;
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  const FabricGraph &g = *m.fabric;
  std::string linkName;
  if (param.starts_with("link:")) {
    linkName = param.drop_front(5).str();
    std::set<std::string> names;
    for (const auto &l : g.links())
      names.insert(l.name);
    if (!names.count(linkName)) {
      std::vector<std::string> list(names.begin(), names.end());
      return usageError(fmt::format("-param=link:{}: the fabric has no link of that name (its "
                                    "links: {}){}",
                                    linkName, llvm::join(list, ", "), didYouMean(linkName, list)));
    }
  }
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  auto lat = switchLatencies(g, m.diags, m.fabricSource);
  if (!lat)
    return reportedError();
  std::vector<int64_t> switchPs = *lat;
  PathFinder paths(g, std::move(*lat));

  MessageCosts out;
  out.costOfSend.assign(s.numOps(), 0);
  std::vector<uint32_t> partner = matchMessages(s);
  llvm::DenseMap<uint64_t, uint32_t> pairIndex;
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    for (uint32_t op = s.rankBegin(r); op < s.rankBegin(r) + s.numOps(r); ++op) {
      if (s.kind(op) != OpKind::Send)
        continue;
      auto [a, b] = sim::messageEndpoints(pl, s, r, op, partner[op]);
      auto [it, fresh] = pairIndex.try_emplace((uint64_t(a) << 32) | b, uint32_t(pairs.size()));
      if (fresh)
        pairs.push_back({a, b});
      out.costOfSend[op] = it->second;
    }
  out.costs.resize(std::max<size_t>(pairs.size(), 1));
  std::map<NodeId, std::vector<uint32_t>> bySource;
  for (uint32_t i = 0; i < pairs.size(); ++i)
    bySource[pairs[i].first].push_back(i);
  for (const auto &[src, list] : bySource) {
    std::vector<NodeId> targets;
    for (uint32_t i : list)
      targets.push_back(pairs[i].second);
    std::vector<PathInfo> info;
    std::vector<std::vector<EdgeId>> routes = paths.routes(src, targets, &info);
    for (size_t k = 0; k < list.size(); ++k) {
      const PathInfo &p = info[k];
      if (!p.reachable)
        return inputError(fmt::format("-sim-model=topo: no path in the fabric '{}' from '{}' to "
                                      "'{}', which exchange messages",
                                      m.fabricSource, g.name(src), g.name(targets[k])));
      const sim::PairCost nominal = sim::topoCost(p, params);
      MessageCost &c = out.costs[list[k]];
      c.G = nominal.G;
      c.L = {static_cast<int64_t>(nominal.L), 0};
      if (p.links == 0)
        continue;   // stays on its endpoint: no latency, no gap
      if (param == "L" && !p.latencyKnown)
        c.L = {0, 1};
      if (param == "G")
        c.gIsParam = !p.bottleneckBps;
      if (param != "switch" && linkName.empty())
        continue;
      // Count what the parameter replaces along the path, and what it costs now.
      int64_t count = 0, replacedPs = 0;
      NodeId at = src;
      for (EdgeId e : routes[k]) {
        const auto &edge = g.edge(e);
        const NodeId next = edge.u == at ? edge.v : edge.u;
        if (!linkName.empty() && g.link(edge.link).name == linkName) {
          ++count;
          if (const auto &l = g.link(edge.link).latency)
            replacedPs += static_cast<int64_t>(std::llround(l->ns * 1000.0));
        } else if (linkName.empty() && paths.chargesSwitch(at, next)) {
          ++count;
          replacedPs += switchPs[next];
        }
        at = next;
      }
      if (!p.latencyKnown && count == 0)
        continue;   // the global L, as the topology model takes it
      c.L = {(p.latencyPs - replacedPs + 500) / 1000, count};
    }
  }
  return out;
}

} // namespace infracc::sens
