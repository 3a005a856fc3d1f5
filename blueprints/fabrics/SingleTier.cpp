// One switch with every NIC of every host on it, as InfraGraph's reference
// SingleTierFabric (blueprints/fabrics/single_tier_fabric.py): NIC j of host h is on
// switch port h * nics + j, over link `switch-link`.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> SingleTierParams = {
    {"hosts", "4", "number of hosts (1..1048576)"},
    {"host", "server", "host device (a device blueprint or a device of the fabric file)"},
    {"switch", "", SwitchParamHelp},
    {"bw", "100G", "bandwidth of the host links"},
    {"lat", "none", "latency of the host links"},
};

std::shared_ptr<Infrastructure> buildSingleTier(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, SingleTierParams, "fabric blueprint 'single_tier'", diags);
  uint64_t hosts = r.uint("hosts", 1, 1 << 20);
  auto bw = r.bandwidth("bw");
  auto lat = r.latency("lat");
  auto host = readHost(r);
  if (!r.ok() || !host)
    return nullptr;
  uint64_t n = host->nics.count, ports = hosts * n;
  auto sw = readSwitch(r, ports,
                       fmt::format("{} host{} with {} need", hosts, hosts == 1 ? "" : "s",
                                   host->nics.describe("host")));
  if (!r.ok() || !sw)
    return nullptr;

  FabricBuilder f(spec, "single-tier-fabric", "Single Tier Fabric");
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(sw->dev, r, "switch"))
    return nullptr;
  std::string hostInst = host->dev.device.name;
  f.instance(hostInst, host->dev.device.name, hosts);
  f.instance("switch", sw->dev.device.name, 1);
  f.link("switch-link",
         "Link characteristics for connectivity between servers and rack switches", bw, lat);
  if (!f.checkSize(r))
    return nullptr;
  f.edge(all(hostInst), host->nics.all(), at("switch", 0), portRange(sw->ports, 0, ports),
         "switch-link");
  return f.take();
}

RegisterFabricBlueprint SingleTier({"single_tier",
                                    "one switch with every host NIC on it (InfraGraph's "
                                    "SingleTierFabric)",
                                    SingleTierParams, buildSingleTier});

} // namespace
} // namespace infracc::blueprints
