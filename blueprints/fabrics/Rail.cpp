// Rail-optimised GPU cluster: hosts come in groups (scalable units) of
// `hosts_per_group`; NIC i of every host of group u is on rail switch u*n + i ("rail i"
// of the group), port = the host's position in its group. Every rail switch joins every
// spine with `uplinks / spines` parallel links: rail switch l, uplink s*B + b on port
// hosts_per_group + s*B + b, to spine s, port l*B + b.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> RailParams = {
    {"radix", "16", "port count of rail switches and spines (2..4096)"},
    {"host", "dgx_h100", "host device; its NIC count is the number of rails"},
    {"hosts_per_group", "", "hosts per group, one port each on a rail switch (default radix/2)"},
    {"spines", "", "spine switches (default: radix - hosts_per_group, one link from every rail "
                   "switch to each)"},
    {"groups", "", "groups of hosts (default: as many as the spines' ports allow)"},
    {"bw0", "400G", "bandwidth of host to rail switch links (rail_link)"},
    {"bw1", "400G", "bandwidth of rail switch to spine links (spine_link)"},
    {"lat0", "none", "latency of rail_link"},
    {"lat1", "none", "latency of spine_link"},
};

std::shared_ptr<Infrastructure> buildRail(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, RailParams, "fabric blueprint 'rail'", diags);
  uint64_t k = r.uint("radix", 2, 4096);
  auto bw0 = r.bandwidth("bw0"), bw1 = r.bandwidth("bw1");
  auto lat0 = r.latency("lat0"), lat1 = r.latency("lat1");
  auto host = readHost(r);
  if (!r.ok() || !host)
    return nullptr;
  uint64_t n = host->nics.count;
  uint64_t hpg = r.given("hosts_per_group") ? r.uint("hosts_per_group", 1, 4096) : k / 2;
  if (r.ok() && hpg >= k)
    r.error("hosts_per_group", fmt::format("hosts_per_group {} leaves no uplink on a rail "
                                           "switch of radix {}; it must be below {}",
                                           hpg, k, k));
  if (!r.ok())
    return nullptr;
  uint64_t up = k - hpg;
  uint64_t spines = r.given("spines") ? r.uint("spines", 1, 4096) : up;
  if (r.ok() && up % spines != 0) {
    std::string tryIt = suggestValues(spines, [&](uint64_t s) { return up % s == 0; }, 1, up);
    r.error("spines", fmt::format("spines {}: the {} uplinks of a rail switch must split evenly "
                                  "over the spines{}",
                                  spines, up, tryIt.empty() ? "" : "; " + tryIt));
  }
  if (!r.ok())
    return nullptr;
  uint64_t bundle = up / spines;
  // A spine has k ports and takes `bundle` from each of groups * n rail switches.
  uint64_t maxGroups = k / (bundle * n);
  if (maxGroups == 0) {
    r.error(r.given("spines") ? "spines" : "radix",
            fmt::format("radix {} with {} and {} spine{}: a spine joins at most radix/{} = {} "
                        "rail switches, fewer than the {} rails of one group",
                        k, host->nics.describe("host"), spines, spines == 1 ? "" : "s", bundle,
                        k / bundle, n));
    return nullptr;
  }
  uint64_t groups = maxGroups;
  if (r.given("groups")) {
    groups = r.uint("groups", 1, UINT64_MAX);
    if (r.ok() && groups > maxGroups)
      r.error("groups", fmt::format("groups {} is too many: a spine has {} ports and takes {} "
                                    "from each of the {} rail switches of a group, so at most "
                                    "{} groups fit",
                                    groups, k, bundle, n, maxGroups));
  }
  if (!r.ok())
    return nullptr;
  uint64_t rails = groups * n;

  FabricBuilder f(spec, "rail-optimized-fabric", "Rail-Optimized GPU Fabric");
  DeviceBuild sw = genericSwitch(k);
  AttachPoints ports = *switchPorts(sw);
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(sw, r, "radix"))
    return nullptr;
  const std::string hostInst = host->dev.device.name;
  f.instance(hostInst, host->dev.device.name, groups * hpg);
  f.instance("rail", "switch", rails);
  f.instance("spine", "switch", spines);
  f.link("rail_link", "Host NIC to its rail switch", bw0, lat0);
  f.link("spine_link", "Rail switch to spine switch", bw1, lat1);
  if (!f.checkSize(r))
    return nullptr;
  for (uint64_t u = 0; u < groups; ++u)
    for (uint64_t i = 0; i < n; ++i)
      f.edge(range(hostInst, u * hpg, (u + 1) * hpg), host->nics.at(i), at("rail", u * n + i),
             portRange(ports, 0, hpg), "rail_link");
  for (uint64_t l = 0; l < rails; ++l)
    f.edge(at("rail", l), portRange(ports, hpg, k), all("spine"),
           portRange(ports, l * bundle, (l + 1) * bundle), "spine_link");
  return f.take();
}

RegisterFabricBlueprint Rail({"rail",
                              "rail-optimised GPU cluster: NIC i of every host of a group on "
                              "rail switch i of the group, rail switches joined by spines",
                              RailParams, buildRail});

} // namespace
} // namespace infracc::blueprints
