// An AMD Instinct MI300X host as in InfraGraph's reference (amd/mi300x.py, after
// figure 2 of Broadcom's BCM957608 application note): 2 cpus, 8 xpus on an Infinity
// Fabric full mesh, 4 PCIe switches each serving 2 xpus, 2 NICs and 2 NVMe drives. The
// internal links carry the vendor figures of blueprints/devices/LinkFigures.h: PCIe Gen5
// x16 through Broadcom Atlas 2 (PEX89000) switches, one Infinity Fabric link per GPU pair,
// and for the CPUs (the reference calls their link QPI; a Gen5 host) 4th generation Xeon
// UPI.
#include "blueprints/Build.h"
#include "blueprints/Params.h"
#include "blueprints/devices/LinkFigures.h"

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> Mi300xParams = {SpecsParam};

std::optional<DeviceBuild> buildMi300x(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, Mi300xParams, "device blueprint 'mi300x'", diags);
  bool vendor = vendorFigures(r);
  if (!r.ok())
    return std::nullopt;
  auto bw = [&](Bandwidth b) { return vendor ? std::optional<Bandwidth>(b) : std::nullopt; };
  DeviceBuilder d("mi300x", "NIC, GPU, and PCIe Switch Configuration Inside a AI/ML Host");
  d.component("cpu", ComponentKind::Cpu, 2, "Host CPU");
  d.component("xpu", ComponentKind::Xpu, 8, "AMD INSTINCT MI300X OAM");
  d.component("pciesw", ComponentKind::Switch, 4, "Broadcom Atlas2 PCIe switches");
  d.component("nic", ComponentKind::Nic, 8, "Broadcom Thor2 400G NIC");
  d.custom("frontend_nic", "front_end_nic", 2, "Front-end NIC (400G/100G/25G frontend network)");
  d.custom("storage", "nvme", 8, "NVMe SSD");
  d.custom("lom", "lom_nic", 1, "LOM 1GbE management NIC");
  d.custom("bmc", "bmc_nic", 1, "Baseboard Management Controller");
  d.link("qpi", "QPI CPU fabric", bw(figures::UpiSapphireRapids));
  d.link("infinity_fabric", "AMD Infinity Fabric (xGMI point-to-point mesh)",
         bw(figures::InfinityFabricMi300x));
  d.link("pcie", "Host PCIe interconnect", bw(figures::PcieGen5x16),
         vendor ? std::optional<Duration>(figures::PcieGen5Hop) : std::nullopt);
  d.edge(Scheme::Many2Many, {all("cpu")}, {all("cpu")}, "qpi");
  for (uint64_t c = 0; c < 2; ++c) {
    d.edge(Scheme::One2One, {at("pciesw", 2 * c)}, {at("cpu", c)}, "pcie");
    d.edge(Scheme::One2One, {at("pciesw", 2 * c + 1)}, {at("cpu", c)}, "pcie");
  }
  for (const char *leaf : {"xpu", "nic", "storage"})
    for (uint64_t sw = 0; sw < 4; ++sw)
      d.edge(Scheme::Many2Many, {at("pciesw", sw)}, {range(leaf, 2 * sw, 2 * sw + 2)}, "pcie");
  d.edge(Scheme::Many2Many, {range("xpu", 0, 8)}, {range("xpu", 0, 8)}, "infinity_fabric");
  for (uint64_t i = 0; i < 2; ++i)
    d.edge(Scheme::One2One, {at("cpu", i)}, {at("frontend_nic", i)}, "pcie");
  d.edge(Scheme::One2One, {at("cpu", 0)}, {at("lom", 0)}, "pcie");
  d.edge(Scheme::One2One, {at("cpu", 0)}, {at("bmc", 0)}, "pcie");
  return d.take();
}

RegisterDeviceBlueprint Mi300x({"mi300x",
                                "AMD MI300X host: 2 cpus, 8 xpus (Infinity Fabric mesh), 4 PCIe "
                                "switches, 8 NICs, 2 front-end NICs, 8 NVMe drives, LOM, BMC",
                                Mi300xParams, nullptr, buildMi300x});

} // namespace
} // namespace infracc::blueprints
