// Clos fat tree with 2 or 3 levels of k-port switches, generalising InfraGraph's
// reference ClosFatTreeFabric (blueprints/fabrics/clos_fat_tree_fabric.py) with
// oversubscription and bundling. With oversub0 = oversub1 = bundle1 = bundle2 = 1 the
// expansion has exactly the reference's node names and edges; tier-1 to tier-2 links
// use tier_2_link (the reference declares it but wires them with tier_1_link).
//
// Notation (docs/blueprints.md has the derivation): k = radix, n = NICs per host.
//   tier-0 switch: down0 = k*os0/(os0+1) host ports [0, down0), up0 = k/(os0+1) uplinks.
//   2 levels: k/B1 tier-0 switches, up0/B1 tier-1 switches; tier-0 switch r uplink
//     u = s*B1 + b goes to tier-1 switch s, port r*B1 + b.
//   3 levels: pods of L = down1/B1 tier-0 and A = up0/B1 tier-1 switches, P = k/B2 pods,
//     A planes of C = up1/B2 tier-2 switches, with down1 = k*os1/(os1+1), up1 = k/(os1+1).
//     tier-0 switch r of pod p, uplink u -> tier-1 switch p*A + u/B1, port r*B1 + u%B1;
//     tier-1 switch j of pod p, uplink u -> tier-2 switch j*C + u/B2, port p*B2 + u%B2.
//   Host h, NIC j sits on tier-0 switch (h*n + j) / down0, port (h*n + j) % down0.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

#include <numeric>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> ClosParams = {
    {"radix", "8", "switch port count k (2..4096); default with switch=: that switch's ports"},
    {"levels", "2", "switch levels: 2 (leaf-spine) or 3 (pods and a core tier)"},
    {"host", "server", "host device (a device blueprint or a device of the fabric file)"},
    {"switch", "", "switch device for every tier; default: a generic switch with radix ports"},
    {"oversub0", "1", "tier-0 oversubscription: host ports per uplink of a tier-0 switch"},
    {"oversub1", "1", "tier-1 oversubscription: downlinks per uplink of a tier-1 switch (3 levels)"},
    {"bundle1", "1", "parallel links between a tier-0 switch and each tier-1 switch it reaches"},
    {"bundle2", "1", "parallel links between a tier-1 switch and each tier-2 switch it reaches"},
    {"bw0", "100G", "bandwidth of host to tier-0 links (tier_0_link)"},
    {"bw1", "200G", "bandwidth of tier-0 to tier-1 links (tier_1_link)"},
    {"bw2", "400G", "bandwidth of tier-1 to tier-2 links (tier_2_link, 3 levels)"},
    {"lat0", "none", "latency of tier_0_link"},
    {"lat1", "none", "latency of tier_1_link"},
    {"lat2", "none", "latency of tier_2_link (3 levels)"},
};

std::string plural(uint64_t n, const char *word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::shared_ptr<Infrastructure> buildClos(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, ClosParams, "fabric blueprint 'clos'", diags);
  uint64_t levels = r.uint("levels", 0, UINT64_MAX);
  if (r.ok() && (levels < 2 || levels > 3))
    r.error("levels", fmt::format("levels {}: a Clos fat tree has 2 or 3 levels", levels));
  uint64_t os0 = r.uint("oversub0", 1, 64), os1 = r.uint("oversub1", 1, 64);
  uint64_t b1 = r.uint("bundle1", 1, 4096), b2 = r.uint("bundle2", 1, 4096);
  auto bw0 = r.bandwidth("bw0"), bw1 = r.bandwidth("bw1"), bw2 = r.bandwidth("bw2");
  auto lat0 = r.latency("lat0"), lat1 = r.latency("lat1"), lat2 = r.latency("lat2");
  if (r.ok() && levels == 2)
    for (const char *key : {"oversub1", "bundle2", "bw2", "lat2"})
      if (r.given(key))
        r.error(key, fmt::format("{} applies to the tier-1 to tier-2 links of a 3-level Clos; "
                                 "this one has levels=2",
                                 key));
  auto host = readHost(r);
  std::optional<SwitchDevice> sw;
  uint64_t k = 0;
  if (r.given("switch")) {
    sw = readSwitch(r, 1, "a Clos switch needs");
    if (sw) {
      k = r.given("radix") ? r.uint("radix", 2, 4096) : sw->ports.count;
      if (r.ok() && sw->ports.count < k)
        r.error("switch", fmt::format("switch '{}' has {}; radix {} needs {}",
                                      sw->dev.device.name, plural(sw->ports.count, "port"), k, k));
    }
  } else {
    k = r.uint("radix", 2, 4096);
    sw = readSwitch(r, k, "");
  }
  if (!r.ok() || !host || !sw)
    return nullptr;
  uint64_t n = host->nics.count;

  // Tier 0: down0 host ports per up0 uplinks.
  auto splits = [&](uint64_t radix) { return radix % (os0 + 1) == 0; };
  auto down0Of = [&](uint64_t radix) { return radix / (os0 + 1) * os0; };
  if (!splits(k)) {
    std::string why = os0 == 1 ? fmt::format("radix {}: the radix must be even, half the ports of "
                                             "a tier-0 switch facing hosts and half facing tier 1",
                                             k)
                               : fmt::format("radix {} with oversub0 {}: the radix must be a "
                                             "multiple of oversub0+1 = {} ({} host ports per "
                                             "uplink on a tier-0 switch)",
                                             k, os0, os0 + 1, os0);
    std::string tryIt = suggestValues(k, splits, 2, 4096);
    r.error(r.given("radix") || !r.given("switch") ? "radix" : "switch",
            why + (tryIt.empty() ? "" : "; " + tryIt));
    return nullptr;
  }
  uint64_t down0 = down0Of(k), up0 = k / (os0 + 1);
  if (down0 % n != 0) {
    auto valid = [&](uint64_t radix) { return splits(radix) && down0Of(radix) % n == 0; };
    std::string tryIt = suggestValues(k, valid, 2, 4096);
    std::string nics = host->nics.describe("host");
    std::string why =
        os0 == 1 ? fmt::format("radix {} with {}: radix/2 must be a multiple of the NIC count", k,
                               nics)
                 : fmt::format("radix {} with oversub0 {} and {}: the {} host ports of a tier-0 "
                               "switch (radix*oversub0/(oversub0+1)) must be a multiple of the "
                               "NIC count",
                               k, os0, nics, down0);
    r.error(r.given("radix") || !r.given("switch") ? "radix" : "switch",
            why + (tryIt.empty() ? "" : "; " + tryIt));
    return nullptr;
  }
  uint64_t down1 = 0, up1 = 0;
  if (levels == 3) {
    if (k % (os1 + 1) != 0) {
      auto valid = [&](uint64_t o) { return k % (o + 1) == 0; };
      std::string tryIt = suggestValues(os1, valid, 1, 64);
      r.error("oversub1", fmt::format("oversub1 {} with radix {}: the radix must be a multiple "
                                      "of oversub1+1 = {}{}",
                                      os1, k, os1 + 1, tryIt.empty() ? "" : "; " + tryIt));
      return nullptr;
    }
    down1 = k / (os1 + 1) * os1;
    up1 = k / (os1 + 1);
  }
  // Bundles must divide what they bundle.
  uint64_t span1 = levels == 3 ? std::gcd(up0, down1) : up0;
  if (span1 % b1 != 0) {
    auto valid = [&](uint64_t b) { return span1 % b == 0; };
    std::string what = levels == 3 && up0 % b1 == 0
                           ? fmt::format("the {} of a tier-1 switch", plural(down1, "downlink"))
                           : fmt::format("the {} of a tier-0 switch", plural(up0, "uplink"));
    std::string tryIt = suggestValues(b1, valid, 1, 4096);
    r.error("bundle1", fmt::format("bundle1 {} does not divide {} into equal bundles{}", b1, what,
                                   tryIt.empty() ? "" : "; " + tryIt));
    return nullptr;
  }
  if (levels == 3 && up1 % b2 != 0) {
    auto valid = [&](uint64_t b) { return up1 % b == 0; };
    std::string tryIt = suggestValues(b2, valid, 1, 4096);
    r.error("bundle2", fmt::format("bundle2 {} does not divide the {} of a tier-1 switch into "
                                   "equal bundles{}",
                                   b2, plural(up1, "uplink"), tryIt.empty() ? "" : "; " + tryIt));
    return nullptr;
  }

  FabricBuilder f(spec, "clos-fat-tree-fabric", "Clos Fat Tree Fabric");
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(sw->dev, r, "switch"))
    return nullptr;
  const std::string hostInst = host->dev.device.name, swDev = sw->dev.device.name;
  const AttachPoints &ports = sw->ports;
  uint64_t t0, t1, t2 = 0, pods = 1, leavesPerPod = 0, aggsPerPod = 0, coresPerPlane = 0;
  if (levels == 2) {
    t0 = k / b1;
    t1 = up0 / b1;
  } else {
    leavesPerPod = down1 / b1;
    aggsPerPod = up0 / b1;
    pods = k / b2;
    coresPerPlane = up1 / b2;
    t0 = pods * leavesPerPod;
    t1 = pods * aggsPerPod;
    t2 = aggsPerPod * coresPerPlane;
  }
  uint64_t hosts = t0 * down0 / n;
  f.instance(hostInst, host->dev.device.name, hosts);
  f.instance("tier_0", swDev, t0);
  f.instance("tier_1", swDev, t1);
  if (levels == 3)
    f.instance("tier_2", swDev, t2);
  f.link("tier_0_link", "Link characteristics for connectivity between host and tier 0 switches",
         bw0, lat0);
  f.link("tier_1_link",
         "Link characteristics for connectivity between tier 0 and tier 1 switches", bw1, lat1);
  if (levels == 3)
    f.link("tier_2_link",
           "Link characteristics for connectivity between tier 1 and tier 2 switches", bw2, lat2);
  if (!f.checkSize(r))
    return nullptr;

  // Hosts in order, NIC-major within a host, fill the host ports of tier-0 switches in order.
  f.edge(all(hostInst), host->nics.all(), all("tier_0"), portRange(ports, 0, down0),
         "tier_0_link");
  if (levels == 2) {
    for (uint64_t leaf = 0; leaf < t0; ++leaf)
      f.edge(at("tier_0", leaf), portRange(ports, down0, k), all("tier_1"),
             portRange(ports, leaf * b1, (leaf + 1) * b1), "tier_1_link");
    return f.take();
  }
  for (uint64_t p = 0; p < pods; ++p)
    for (uint64_t leaf = 0; leaf < leavesPerPod; ++leaf)
      f.edge(at("tier_0", p * leavesPerPod + leaf), portRange(ports, down0, k),
             range("tier_1", p * aggsPerPod, (p + 1) * aggsPerPod),
             portRange(ports, leaf * b1, (leaf + 1) * b1), "tier_1_link");
  for (uint64_t p = 0; p < pods; ++p)
    for (uint64_t j = 0; j < aggsPerPod; ++j)
      f.edge(at("tier_1", p * aggsPerPod + j), portRange(ports, down1, k),
             range("tier_2", j * coresPerPlane, (j + 1) * coresPerPlane),
             portRange(ports, p * b2, (p + 1) * b2), "tier_2_link");
  return f.take();
}

RegisterFabricBlueprint Clos({"clos",
                              "Clos fat tree of radix-k switches with 2 or 3 levels, "
                              "oversubscription and bundling (InfraGraph's ClosFatTreeFabric)",
                              ClosParams, buildClos});

} // namespace
} // namespace infracc::blueprints
