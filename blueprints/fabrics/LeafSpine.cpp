// Two-tier leaf-spine with explicit counts: `leaves` leaf switches with
// `hosts_per_leaf` hosts each, every leaf joined to every one of `spines` spines by
// `bundle` parallel links. Leaf ports: [0, hosts_per_leaf * n) hosts in order (NIC-major
// within a host), then spine s, bundle link b on port hosts_per_leaf * n + s * bundle + b;
// spine port leaf * bundle + b.
// With `planes` = P > 1 the switches come in P disjoint copies (a multi-plane fabric, as
// CODES's multi-rail fat trees are): NIC i of every host is on plane i % P, and each plane
// is the leaf-spine above with the host's n/P NICs of that plane. Leaves and spines of
// plane p are leaf[p*leaves ..], spine[p*spines ..].
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> LeafSpineParams = {
    {"leaves", "4", "number of leaf switches (1..65536)"},
    {"spines", "2", "number of spine switches (1..65536)"},
    {"hosts_per_leaf", "2", "hosts on each leaf (1..65536)"},
    {"bundle", "1", "parallel links between each leaf and each spine"},
    {"planes", "1",
     "disjoint copies of the leaves and spines (1..64; must divide the host's NIC count): "
     "NIC i of a host is on plane i % planes"},
    {"host", "server", "host device (a device blueprint or a device of the fabric file)"},
    {"radix", "",
     "port count of every switch; default: leaves and spines get exactly the ports they use"},
    {"switch", "", "switch device for leaves and spines (needs enough ports); default: generic"},
    {"bw0", "100G", "bandwidth of host to leaf links (leaf_link)"},
    {"bw1", "400G", "bandwidth of leaf to spine links (spine_link)"},
    {"lat0", "none", "latency of leaf_link"},
    {"lat1", "none", "latency of spine_link"},
};

std::shared_ptr<Infrastructure> buildLeafSpine(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, LeafSpineParams, "fabric blueprint 'leaf_spine'", diags);
  uint64_t leaves = r.uint("leaves", 1, 65536), spines = r.uint("spines", 1, 65536);
  uint64_t hpl = r.uint("hosts_per_leaf", 1, 65536), bundle = r.uint("bundle", 1, 4096);
  uint64_t planes = r.uint("planes", 1, 64);
  auto bw0 = r.bandwidth("bw0"), bw1 = r.bandwidth("bw1");
  auto lat0 = r.latency("lat0"), lat1 = r.latency("lat1");
  auto host = readHost(r);
  if (r.given("radix") && r.given("switch"))
    r.error("radix", "give either radix or switch, not both");
  uint64_t radix = r.given("radix") ? r.uint("radix", 1, 65536) : 0;
  if (!r.ok() || !host)
    return nullptr;
  const uint64_t n = host->nics.count;
  if (n % planes != 0) {
    r.error("planes", fmt::format("planes {} must divide the host's NIC count ({}): NIC i is on "
                                  "plane i % planes and every plane takes the same share",
                                  planes, host->nics.describe("host")));
    return nullptr;
  }
  const uint64_t nicsPerPlane = n / planes;
  uint64_t down = hpl * nicsPerPlane, leafPorts = down + spines * bundle;
  uint64_t spinePorts = leaves * bundle;
  if (radix && radix < std::max(leafPorts, spinePorts)) {
    r.error("radix", fmt::format("radix {} is too small: a leaf uses {} ports ({} for hosts, {} "
                                 "for spines) and a spine {}",
                                 radix, leafPorts, down, spines * bundle, spinePorts));
    return nullptr;
  }
  std::optional<SwitchDevice> leafSw, spineSw;
  if (r.given("switch")) {
    leafSw = readSwitch(r, std::max(leafPorts, spinePorts),
                        fmt::format("a leaf uses {} ports and a spine {}, so the switches need",
                                    leafPorts, spinePorts));
    spineSw = leafSw;
  } else if (radix || leafPorts == spinePorts) {
    leafSw = readSwitch(r, radix ? radix : leafPorts, "");
    spineSw = leafSw;
  } else {
    leafSw = readSwitch(r, leafPorts, "", "leaf_switch");
    spineSw = readSwitch(r, spinePorts, "", "spine_switch");
  }
  if (!r.ok() || !leafSw || !spineSw)
    return nullptr;

  FabricBuilder f(spec, "leaf-spine-fabric", "Leaf-Spine Fabric");
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(leafSw->dev, r, "switch") ||
      !f.addDevice(spineSw->dev, r, "switch"))
    return nullptr;
  const std::string hostInst = host->dev.device.name;
  f.instance(hostInst, host->dev.device.name, leaves * hpl);
  f.instance("leaf", leafSw->dev.device.name, leaves * planes);
  f.instance("spine", spineSw->dev.device.name, spines * planes);
  f.link("leaf_link", "Host to leaf switch", bw0, lat0);
  f.link("spine_link", "Leaf switch to spine switch", bw1, lat1);
  if (!f.checkSize(r))
    return nullptr;
  if (planes == 1) {
    f.edge(all(hostInst), host->nics.all(), all("leaf"), portRange(leafSw->ports, 0, down),
           "leaf_link");
  } else {
    // NIC i of every host, in host order, onto the leaves of its plane: host h on leaf
    // h / hosts_per_leaf, port (h % hosts_per_leaf) * n/P + i/P (hosts in order, NIC-major).
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t p = i % planes, j = i / planes;
      ComponentPath ports = nicsPerPlane == 1
                                ? portRange(leafSw->ports, 0, down)
                                : ComponentPath{range(leafSw->ports.component, j, down,
                                                      nicsPerPlane)};
      f.edge(all(hostInst), host->nics.at(i), range("leaf", p * leaves, (p + 1) * leaves),
             ports, "leaf_link");
    }
  }
  for (uint64_t p = 0; p < planes; ++p)
    for (uint64_t l = 0; l < leaves; ++l)
      f.edge(at("leaf", p * leaves + l), portRange(leafSw->ports, down, leafPorts),
             planes == 1 ? all("spine") : range("spine", p * spines, (p + 1) * spines),
             portRange(spineSw->ports, l * bundle, (l + 1) * bundle), "spine_link");
  return f.take();
}

RegisterFabricBlueprint LeafSpine({"leaf_spine",
                                   "two-tier leaf-spine with explicit leaf, spine and host "
                                   "counts, every leaf joined to every spine",
                                   LeafSpineParams, buildLeafSpine});

} // namespace
} // namespace infracc::blueprints
