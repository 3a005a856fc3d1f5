#include "backends/sizing/FabricSizing.h"

#include "compiler/Diagnostics.h"
#include "compiler/Options.h"
#include "compiler/TargetRegistry.h"
#include "ir/Module.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace infracc {

namespace {

llvm::cl::opt<bool> ExactDiameter(
    "exact-diameter",
    llvm::cl::desc("Sizing reports: compute the exact diameter however large the fabric (by "
                   "default, fabrics needing more than about 1e10 search steps get a lower "
                   "bound)"),
    llvm::cl::cat(opts::fabricCategory()));

// Whole numbers without a fraction, others with up to 6 significant digits.
std::string num(double v) {
  if (std::isfinite(v) && std::fabs(v) < 1e15 && v == std::floor(v))
    return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

std::string gbps(double bps) { return num(bps / 1e9) + " Gb/s"; }

std::string tierName(int32_t t) {
  if (t == HostTier)
    return "hosts";
  if (t == NoTier)
    return "no tier";
  return fmt::format("tier {}", t);
}

std::string instanceNames(const FabricGraph &g, const std::vector<uint32_t> &ids,
                          const char *separator = ", ") {
  std::string out;
  for (uint32_t i : ids)
    out += (out.empty() ? "" : separator) + g.instances()[i].name;
  return out;
}

void line(llvm::raw_ostream &os, unsigned indent, llvm::StringRef key, const std::string &value) {
  std::string k = std::string(indent, ' ') + key.str();
  if (value.empty())
    os << k << "\n";
  else
    os << fmt::format("{:<24} {}\n", k, value);
}

} // namespace

void printFabricSizing(const FabricGraph &g, const FabricStructure &s, llvm::raw_ostream &os) {
  line(os, 2, "hosts", s.hostInstances.empty()
                           ? num(double(s.hosts))
                           : fmt::format("{}  ({})", s.hosts, instanceNames(g, s.hostInstances)));
  line(os, 2, "xpus", num(double(s.xpus)));
  line(os, 2, "NICs", num(double(s.nics)));
  line(os, 2, "switches", num(double(s.switches)));
  for (const auto &t : s.tiers)
    line(os, 4, tierName(int32_t(t.level)),
         fmt::format("{}  ({})", t.switches, instanceNames(g, t.instances)));
  if (s.unattachedSwitches)
    line(os, 4, "no tier", fmt::format("{}  (not reachable from any host)", s.unattachedSwitches));
  if (s.otherCopies)
    line(os, 2, "other devices", num(double(s.otherCopies)));
  if (!s.linkClasses.empty()) {
    line(os, 2, "links", "");
    for (const auto &c : s.linkClasses) {
      std::string what = c.lower == c.upper ? "within " + tierName(c.lower)
                                            : tierName(c.lower) + " - " + tierName(c.upper);
      std::string value;
      if (c.uniformBps)
        value = fmt::format("{} x {}", c.links, gbps(*c.uniformBps));
      else if (c.bandwidthKnown)
        value = fmt::format("{}, {} in all", c.links, gbps(c.bps));
      else
        value = fmt::format("{}, bandwidth not given on all", c.links);
      std::string names;
      for (const auto &n : c.linkNames)
        names += (names.empty() ? "" : ", ") + n;
      line(os, 4, what, value + "  (" + names + ")");
    }
  }
  if (!s.tiers.empty()) {
    line(os, 2, "oversubscription", "");
    for (const auto &t : s.tiers) {
      std::string value;
      if (!t.oversubscription)
        value = t.upLinks ? "n/a" : "n/a (no links up)";
      else if (t.bandwidthKnown)
        value = fmt::format("{}:1  ({} down, {} up)", num(*t.oversubscription), gbps(t.downBps),
                            gbps(t.upBps));
      else
        value = fmt::format("{}:1  ({} links down, {} up; bandwidth not given on all)",
                            num(*t.oversubscription), t.downLinks, t.upLinks);
      line(os, 4, tierName(int32_t(t.level)), value);
    }
  }
  if (s.bisection) {
    const auto &b = *s.bisection;
    std::string halves = fmt::format("hosts 0-{} | {}-{}", b.firstHalfHosts - 1, b.firstHalfHosts,
                                     b.firstHalfHosts + b.secondHalfHosts - 1);
    if (b.bps)
      line(os, 2, "bisection bandwidth",
           fmt::format("{}  ({} links cut; {})", gbps(*b.bps), b.links, halves));
    else
      line(os, 2, "bisection bandwidth",
           fmt::format("{} links  (bandwidth not given on all; {})", b.links, halves));
  }
  if (s.diameterHops && s.diameterIsLowerBound)
    line(os, 2, "diameter",
         fmt::format("at least {} hops (host to host; searched from 256 of the hosts only, the "
                     "exact search is skipped for fabrics this large)",
                     *s.diameterHops));
  else if (s.diameterHops)
    line(os, 2, "diameter", fmt::format("{} hops (host to host)", *s.diameterHops));
  else if (s.hosts >= 2 && !s.hostsConnected)
    line(os, 2, "diameter", "infinite (some hosts cannot reach each other)");
}

StructureOptions sizingOptions() {
  StructureOptions o;
  if (ExactDiameter)
    o.diameterWorkLimit = std::numeric_limits<double>::infinity();
  return o;
}

nlohmann::ordered_json fabricSizingJson(const FabricGraph &g, const FabricStructure &s) {
  // Objects rather than arrays, keyed by what a reader looks for, so that the stats
  // report's text rendering (one line per flat object) reads well too.
  using json = nlohmann::ordered_json;
  auto gbpsOf = [](double bps) { return bps / 1e9; };
  json j;
  j["hosts"] = s.hosts;
  j["host instances"] = instanceNames(g, s.hostInstances, " ");
  j["xpus"] = s.xpus;
  j["nics"] = s.nics;
  j["switches"] = s.switches;
  json tiers = json::object();
  for (const auto &t : s.tiers) {
    json jt;
    jt["switches"] = t.switches;
    jt["instances"] = instanceNames(g, t.instances, " ");
    tiers[tierName(int32_t(t.level))] = jt;
  }
  if (s.unattachedSwitches)
    tiers["no tier"] = json{{"switches", s.unattachedSwitches}, {"instances", "-"}};
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

RegisterTarget SizingTarget({
    .name = "sizing",
    .description = "sizing summary of the fabric: hosts, switches and links per tier, "
                   "oversubscription, bisection bandwidth, diameter (text; -format=json)",
    .needs = TargetNeeds::Fabric,
    .writesDirectory = false,
    .defaultPipeline = nullptr,
    .run = [](TargetContext &ctx) -> llvm::Error {
      std::string format = opts::outputFormat();
      if (!format.empty() && format != "text" && format != "json")
        return usageError("-emit=sizing writes text or json, not '" + format + "'");
      const FabricGraph &g = *ctx.module.fabric;
      FabricStructure s = analyzeFabricStructure(g, sizingOptions());
      auto os = ctx.output.stream();
      if (!os)
        return os.takeError();
      if (format == "json") {
        *os << fabricSizingJson(g, s).dump(2) << "\n";
        return llvm::Error::success();
      }
      *os << "fabric " << g.definitions().name << "\n";
      printFabricSizing(g, s, *os);
      return llvm::Error::success();
    }});

} // namespace
} // namespace infracc
