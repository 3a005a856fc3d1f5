// Dragonfly: groups of `a` routers, each router with `p` host ports, a-1 ports to the
// other routers of its group (full mesh) and `h` global ports. Balanced when
// a = 2p = 2h (InfraGraph's reference DragonflyFabric, which only allows that case);
// any a, p, h and a smaller number of groups are accepted here too.
//
// Router ports: [0, p) hosts, [p, p+a-1) group peers (peer q of router r on port
// p + q if q < r, else p + q - 1), [p+a-1, p+a-1+h) global. Global links: with G groups
// every pair of groups gets m = floor(a*h / (G-1)) links; round by round (m rounds), pairs
// (gi < gj) in lexicographic order take the next free global port of each group, group
// ports being used router by router (port k of a group is router k / h, global port
// k % h). With G = a*h + 1 (the default) that is the reference's wiring.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> DragonflyParams = {
    {"a", "4", "routers per group (1..1024)"},
    {"p", "2", "host ports per router (1..1024)"},
    {"h", "2", "global ports per router (1..1024)"},
    {"groups", "", "number of groups, 2..a*h+1; default a*h+1 (one global link per pair)"},
    {"host", "server", "host device (a device blueprint or a device of the fabric file)"},
    {"switch", "", "router device; default: a generic switch with p+a-1+h ports"},
    {"host_bw", "100G", "bandwidth of host to router links (host_switch_link)"},
    {"local_bw", "100G", "bandwidth of links within a group (intra_switch_link)"},
    {"global_bw", "100G", "bandwidth of links between groups (inter_switch_link)"},
    {"host_lat", "none", "latency of host_switch_link"},
    {"local_lat", "none", "latency of intra_switch_link"},
    {"global_lat", "none", "latency of inter_switch_link"},
};

std::shared_ptr<Infrastructure> buildDragonfly(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, DragonflyParams, "fabric blueprint 'dragonfly'", diags);
  uint64_t a = r.uint("a", 1, 1024), p = r.uint("p", 1, 1024), h = r.uint("h", 1, 1024);
  auto hostBw = r.bandwidth("host_bw"), localBw = r.bandwidth("local_bw");
  auto globalBw = r.bandwidth("global_bw");
  auto hostLat = r.latency("host_lat"), localLat = r.latency("local_lat");
  auto globalLat = r.latency("global_lat");
  uint64_t maxGroups = a * h + 1;
  uint64_t groups = maxGroups;
  if (r.ok() && r.given("groups")) {
    groups = r.uint("groups", 0, UINT64_MAX);
    if (r.ok() && (groups < 2 || groups > maxGroups))
      r.error("groups", fmt::format("groups {} is out of range: with a={} and h={} each group "
                                    "has {} global ports, so 2..{} groups can be joined",
                                    groups, a, h, a * h, maxGroups));
  }
  auto host = readHost(r);
  if (!r.ok() || !host)
    return nullptr;
  uint64_t n = host->nics.count;
  if (p % n != 0) {
    std::string tryIt = suggestValues(p, [&](uint64_t x) { return x % n == 0; }, 1, 1024);
    r.error("p", fmt::format("p {} with {}: the host ports per router must be a multiple of the "
                             "NIC count{}",
                             p, host->nics.describe("host"), tryIt.empty() ? "" : "; " + tryIt));
    return nullptr;
  }
  uint64_t portsPerRouter = p + (a - 1) + h;
  auto sw = readSwitch(r, portsPerRouter,
                       fmt::format("a router needs p + (a-1) + h = {} + {} + {} =", p, a - 1, h));
  if (!r.ok() || !sw)
    return nullptr;

  bool balanced = a == 2 * p && a == 2 * h;
  FabricBuilder f(spec, "dragonfly-fabric",
                  balanced ? "Balanced Dragonfly Fabric" : "Dragonfly Fabric");
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(sw->dev, r, "switch"))
    return nullptr;
  const std::string hostInst = host->dev.device.name;
  uint64_t routers = groups * a;
  f.instance(hostInst, host->dev.device.name, routers * (p / n));
  f.instance("router", sw->dev.device.name, routers);
  f.link("host_switch_link", "Link between host and router (terminal)", hostBw, hostLat);
  f.link("intra_switch_link", "Link between routers within the same group", localBw, localLat);
  f.link("inter_switch_link", "Link between routers in different groups (global)", globalBw,
         globalLat);
  if (!f.checkSize(r))
    return nullptr;
  const AttachPoints &ports = sw->ports;
  f.edge(all(hostInst), host->nics.all(), all("router"), portRange(ports, 0, p),
         "host_switch_link");
  // Router i of a group: ports p+i.. go to routers i+1.. (which use port p+i for i).
  for (uint64_t g = 0; g < groups; ++g)
    for (uint64_t i = 0; i + 1 < a; ++i)
      f.edge(at("router", g * a + i), portRange(ports, p + i, p + a - 1),
             range("router", g * a + i + 1, g * a + a), ComponentPath{at(ports.component, p + i)},
             "intra_switch_link");
  uint64_t perPair = a * h / (groups - 1), globalBase = p + a - 1;
  std::vector<uint64_t> next(groups, 0);   // next free global port of each group
  for (uint64_t round = 0; round < perPair; ++round)
    for (uint64_t gi = 0; gi < groups; ++gi)
      for (uint64_t gj = gi + 1; gj < groups; ++gj) {
        uint64_t ki = next[gi]++, kj = next[gj]++;
        f.edge(at("router", gi * a + ki / h), ComponentPath{at(ports.component, globalBase + ki % h)},
               at("router", gj * a + kj / h), ComponentPath{at(ports.component, globalBase + kj % h)},
               "inter_switch_link");
      }
  return f.take();
}

RegisterFabricBlueprint Dragonfly({"dragonfly",
                                   "dragonfly of router groups (full mesh inside a group, global "
                                   "links between groups); balanced when a = 2p = 2h",
                                   DragonflyParams, buildDragonfly});

} // namespace
} // namespace infracc::blueprints
