// Generic devices: the server and switch of InfraGraph's reference blueprints
// (blueprints/devices/generic/{server,generic_switch}.py), with the same component
// names, counts and edges, and a minimal host for fabrics of plain endpoints.
//
// The server's links carry the figures of the generation its description names ("PCI
// Express Switch Gen 4", blueprints/devices/LinkFigures.h): PCIe Gen4 x16 through Broadcom
// PEX88000 switches, NVLink 3 (an A100's 12 links, all on the one NVLink switch) and the
// 2nd generation EPYC's xGMI between the CPUs. The switch's own link (ASIC to port) has
// none: it is the switching fabric, priced by the switch latency.
#include "blueprints/Build.h"
#include "blueprints/Params.h"
#include "blueprints/devices/LinkFigures.h"

namespace infracc::blueprints {

DeviceBuild genericSwitch(uint64_t ports, std::string name) {
  DeviceBuilder d(std::move(name), "A generic switch");
  d.component("asic", ComponentKind::Cpu, 1, "Generic ASIC");
  d.component("port", ComponentKind::Port, ports, "Generic port");
  d.link("ic", "Generic integrated circuitry");
  d.edge(Scheme::Many2Many, {all("asic")}, {all("port")}, "ic");
  return d.take();
}

namespace {

const std::vector<ParamInfo> ServerParams = {
    {"npu_factor", "1",
     "scale: npu_factor cpus and PCIe switches, 2*npu_factor xpus and NICs (1..1024)"},
    SpecsParam,
};

std::optional<DeviceBuild> buildServer(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, ServerParams, "device blueprint 'server'", diags);
  uint64_t f = r.uint("npu_factor", 1, 1024);
  bool vendor = vendorFigures(r);
  if (!r.ok())
    return std::nullopt;
  auto bw = [&](Bandwidth b) { return vendor ? std::optional<Bandwidth>(b) : std::nullopt; };
  // The reference's description says npu_factor * 4 xpus; its code (and this one)
  // builds npu_factor * 2.
  DeviceBuilder d("server", "A generic server with npu_factor * 2 xpu(s)");
  d.component("cpu", ComponentKind::Cpu, f, "Generic CPU");
  d.component("xpu", ComponentKind::Xpu, 2 * f, "Generic GPU/XPU");
  d.component("nvlsw", ComponentKind::Switch, 1, "NVLink Switch");
  d.component("pciesw", ComponentKind::Switch, f, "PCI Express Switch Gen 4");
  d.component("nic", ComponentKind::Nic, 2 * f, "Generic Nic");
  d.custom("mgmt", "mgmt-nic", 1, "Mgmt Nic");
  d.link("fabric", "CPU Fabric", bw(figures::XgmiRome));
  d.link("nvlink", "", bw(Bandwidth::bitsPerSec(12 * figures::NvLink3.bitsPerSecond)));
  d.link("pcie", "", bw(figures::PcieGen4x16),
         vendor ? std::optional<Duration>(figures::PcieGen4Hop) : std::nullopt);
  d.edge(Scheme::One2One, {all("mgmt")}, {at("cpu", 0)}, "pcie");
  d.edge(Scheme::Many2Many, {all("cpu")}, {all("cpu")}, "fabric");
  d.edge(Scheme::Many2Many, {all("xpu")}, {all("nvlsw")}, "nvlink");
  for (uint64_t i = 0; i < f; ++i)
    d.edge(Scheme::Many2Many, {at("cpu", i)}, {at("pciesw", i)}, "pcie");
  for (uint64_t i = 0; i < f; ++i)
    d.edge(Scheme::Many2Many, {range("xpu", 2 * i, 2 * i + 2)}, {at("pciesw", i)}, "pcie");
  for (uint64_t i = 0; i < f; ++i)
    d.edge(Scheme::Many2Many, {range("nic", 2 * i, 2 * i + 2)}, {at("pciesw", i)}, "pcie");
  return d.take();
}

const std::vector<ParamInfo> SwitchParams = {
    {"ports", "16", "number of ports, joined to one ASIC (1..65536)"},
};

std::optional<DeviceBuild> buildSwitch(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, SwitchParams, "device blueprint 'switch'", diags);
  uint64_t ports = r.uint("ports", 1, 65536);
  if (!r.ok())
    return std::nullopt;
  return genericSwitch(ports);
}

const std::vector<ParamInfo> SimpleHostParams = {
    {"xpus", "1", "number of xpus (0..4096)"},
    {"nics", "1", "number of NICs (0..4096); every xpu is wired to every NIC"},
    {"bw", "32GB/s",
     "bandwidth of the xpu-NIC links (default: PCIe Gen4 x16, 32 GB/s each way as PCI-SIG "
     "gives it; none for no bandwidth)"},
    {"lat", "none", "latency of the xpu-NIC links"},
};

std::optional<DeviceBuild> buildSimpleHost(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, SimpleHostParams, "device blueprint 'simple_host'", diags);
  uint64_t xpus = r.uint("xpus", 0, 4096);
  uint64_t nics = r.uint("nics", 0, 4096);
  auto bw = r.bandwidth("bw");
  auto lat = r.latency("lat");
  if (r.ok() && xpus + nics == 0)
    r.error("nics", "a simple_host needs at least one xpu or NIC");
  if (!r.ok())
    return std::nullopt;
  DeviceBuilder d("simple_host", "A host with xpus and NICs only");
  if (xpus)
    d.component("xpu", ComponentKind::Xpu, xpus, "Generic GPU/XPU");
  if (nics)
    d.component("nic", ComponentKind::Nic, nics, "Generic Nic");
  if (xpus && nics) {
    d.link("pcie", "xpu to NIC", bw, lat);
    d.edge(Scheme::Many2Many, {all("xpu")}, {all("nic")}, "pcie");
  }
  return d.take();
}

RegisterDeviceBlueprint Server({"server",
                                "generic server as in InfraGraph's reference: cpus, xpus, an "
                                "NVLink switch, PCIe switches, NICs and a management NIC",
                                ServerParams, nullptr, buildServer});
RegisterDeviceBlueprint Switch({"switch", "generic switch: one ASIC joined to every port",
                                SwitchParams, nullptr, buildSwitch});
RegisterDeviceBlueprint SimpleHost({"simple_host",
                                    "minimal host: xpus and NICs, every xpu wired to every NIC",
                                    SimpleHostParams, nullptr, buildSimpleHost});

} // namespace
} // namespace infracc::blueprints
