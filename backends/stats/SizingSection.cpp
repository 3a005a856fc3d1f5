#include "backends/stats/SizingSection.h"

#include "backends/stats/FabricStats.h"

#include "ir/Module.h"
#include "support/Options.h"

#include <fmt/format.h>

#include <limits>

namespace infracc {

namespace {

llvm::cl::opt<bool> ExactDiameter(
    "exact-diameter",
    llvm::cl::desc("-emit=stats: compute the sizing section's exact diameter however large the "
                   "fabric (by default, fabrics needing more than about 1e10 search steps get a "
                   "lower bound)"),
    llvm::cl::cat(opts::fabricCategory()));

std::string tierName(int32_t t) {
  if (t == HostTier)
    return "hosts";
  if (t == NoTier)
    return "no tier";
  return fmt::format("tier {}", t);
}

// Instance names joined by spaces.
std::string instanceNames(const FabricGraph &g, const std::vector<uint32_t> &ids) {
  std::string out;
  for (uint32_t i : ids)
    out += (out.empty() ? "" : " ") + g.instances()[i].name;
  return out;
}

} // namespace

StructureOptions sizingOptions() {
  StructureOptions o;
  if (ExactDiameter)
    o.diameterWorkLimit = std::numeric_limits<double>::infinity();
  return o;
}

nlohmann::ordered_json fabricSizingJson(const FabricGraph &g, const FabricStructure &s) {
  // Objects rather than arrays, keyed by what a reader looks for, so that the stats
  // report's text rendering (one line per flat object) reads well.
  using json = nlohmann::ordered_json;
  auto gbpsOf = [](double bps) { return bps / 1e9; };
  json j;
  j["hosts"] = s.hosts;
  j["host instances"] = instanceNames(g, s.hostInstances);
  j["xpus"] = s.xpus;
  j["nics"] = s.nics;
  j["host ports on the fabric"] = s.hostPorts;
  j["switches"] = s.switches;
  json tiers = json::object();
  for (const auto &t : s.tiers) {
    json jt;
    jt["switches"] = t.switches;
    jt["instances"] = instanceNames(g, t.instances);
    tiers[tierName(int32_t(t.level))] = jt;
  }
  if (s.unattachedSwitches)
    tiers["no tier"] = json{{"switches", s.unattachedSwitches}, {"instances", "-"}};
  if (!tiers.empty())
    j["switches per tier"] = tiers;
  json links = json::object();
  for (const auto &c : s.linkClasses) {
    std::string what = c.lower == c.upper ? "within " + tierName(c.lower)
                                          : tierName(c.lower) + " - " + tierName(c.upper);
    json jc;
    jc["links"] = c.links;
    jc["gbps each"] = c.uniformBps ? json(gbpsOf(*c.uniformBps)) : json(nullptr);
    jc["gbps total"] = c.bandwidthKnown ? json(gbpsOf(c.bps)) : json(nullptr);
    std::string names;
    for (const auto &n : c.linkNames)
      names += (names.empty() ? "" : " ") + n;
    jc["link names"] = names;
    links[what] = jc;
  }
  if (!links.empty())
    j["links per tier"] = links;
  json over = json::object();
  for (const auto &t : s.tiers) {
    json jt;
    jt["ratio"] = t.oversubscription ? json(*t.oversubscription) : json(nullptr);
    jt["down links"] = t.downLinks;
    jt["up links"] = t.upLinks;
    jt["down gbps"] = t.bandwidthKnown ? json(gbpsOf(t.downBps)) : json(nullptr);
    jt["up gbps"] = t.bandwidthKnown ? json(gbpsOf(t.upBps)) : json(nullptr);
    over[tierName(int32_t(t.level))] = jt;
  }
  if (!over.empty())
    j["oversubscription per tier"] = over;
  if (s.bisection) {
    json jb;
    jb["gbps"] = s.bisection->bps ? json(gbpsOf(*s.bisection->bps)) : json(nullptr);
    jb["links cut"] = s.bisection->links;
    jb["first half hosts"] = s.bisection->firstHalfHosts;
    jb["second half hosts"] = s.bisection->secondHalfHosts;
    j["bisection"] = jb;
  } else {
    j["bisection"] = nullptr;
  }
  j["hosts connected"] = s.hostsConnected;
  j["diameter hops"] = s.diameterHops ? json(*s.diameterHops) : json(nullptr);
  j["diameter is a lower bound"] = s.diameterIsLowerBound;
  return j;
}

namespace {

RegisterStatsSection Sizing({
    .key = "sizing",
    .title = "sizing",
    .order = 50,
    .compute = [](const Module &m) -> std::optional<nlohmann::ordered_json> {
      if (!m.fabric)
        return std::nullopt;
      return fabricSizingJson(*m.fabric, analyzeFabricStructure(*m.fabric, sizingOptions()));
    },
});

} // namespace
} // namespace infracc
