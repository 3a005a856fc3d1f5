// Two-tier leaf-spine with explicit counts: `leaves` leaf switches with
// `hosts_per_leaf` hosts each, every leaf joined to every one of `spines` spines by
// `bundle` parallel links. Leaf ports: [0, hosts_per_leaf * n) hosts in order (NIC-major
// within a host), then spine s, bundle link b on port hosts_per_leaf * n + s * bundle + b;
// spine port leaf * bundle + b.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> LeafSpineParams = {
    {"leaves", "4", "number of leaf switches (1..65536)"},
    {"spines", "2", "number of spine switches (1..65536)"},
    {"hosts_per_leaf", "2", "hosts on each leaf (1..65536)"},
    {"bundle", "1", "parallel links between each leaf and each spine"},
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
  auto bw0 = r.bandwidth("bw0"), bw1 = r.bandwidth("bw1");
  auto lat0 = r.latency("lat0"), lat1 = r.latency("lat1");
  auto host = readHost(r);
  if (r.given("radix") && r.given("switch"))
    r.error("radix", "give either radix or switch, not both");
  uint64_t radix = r.given("radix") ? r.uint("radix", 1, 65536) : 0;
  if (!r.ok() || !host)
    return nullptr;
  uint64_t down = hpl * host->nics.count, leafPorts = down + spines * bundle;
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
  f.instance("leaf", leafSw->dev.device.name, leaves);
  f.instance("spine", spineSw->dev.device.name, spines);
  f.link("leaf_link", "Host to leaf switch", bw0, lat0);
  f.link("spine_link", "Leaf switch to spine switch", bw1, lat1);
  if (!f.checkSize(r))
    return nullptr;
  f.edge(all(hostInst), host->nics.all(), all("leaf"), portRange(leafSw->ports, 0, down),
         "leaf_link");
  for (uint64_t l = 0; l < leaves; ++l)
    f.edge(at("leaf", l), portRange(leafSw->ports, down, leafPorts), all("spine"),
           portRange(spineSw->ports, l * bundle, (l + 1) * bundle), "spine_link");
  return f.take();
}

RegisterFabricBlueprint LeafSpine({"leaf_spine",
                                   "two-tier leaf-spine with explicit leaf, spine and host "
                                   "counts, every leaf joined to every spine",
                                   LeafSpineParams, buildLeafSpine});

} // namespace
} // namespace infracc::blueprints
