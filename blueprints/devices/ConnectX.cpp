// A ConnectX-5 style NIC as a device (InfraGraph's reference nvidia/cx5.py): a PCIe
// endpoint, an ASIC and one or two Ethernet ports, optionally a transceiver per port.
// Composed into a host (e.g. dgx_h100(nic_device=cx5)), its ports face the fabric.
// Figures (specs=vendor): the PCIe Gen3 x16 host interface of the NVIDIA/Mellanox
// ConnectX-5 product brief (blueprints/devices/LinkFigures.h), and the variant's port
// speed on the ASIC-port and port-transceiver links.
#include "blueprints/Build.h"
#include "blueprints/Params.h"
#include "blueprints/devices/LinkFigures.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

namespace infracc::blueprints {
namespace {

struct Variant {
  const char *name, *speed;
  uint64_t ports;
  double gbps;   // per port
};
const Variant Variants[] = {{"25g_dual", "25GbE", 2, 25},
                            {"50g_dual", "50GbE", 2, 50},
                            {"100g_dual", "100GbE", 2, 100},
                            {"100g_single", "100GbE", 1, 100}};

const std::vector<ParamInfo> Cx5Params = {
    {"variant", "100g_dual",
     "25g_dual, 50g_dual, 100g_dual or 100g_single (the reference's cx5_<variant>)"},
    {"transceiver", "none",
     "name of a transceiver component (port kind) to add behind each port, or none"},
    SpecsParam,
};

std::optional<DeviceBuild> buildCx5(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, Cx5Params, "device blueprint 'cx5'", diags);
  std::string v = r.choice("variant", {"25g_dual", "50g_dual", "100g_dual", "100g_single"});
  std::string xcvr = r.text("transceiver");
  if (xcvr != "none") {
    bool ok = !xcvr.empty() && xcvr != "port" && xcvr != "asic" && xcvr != "pcie_endpoint";
    for (char c : xcvr)
      ok &= llvm::isAlnum(c) || c == '_' || c == '-';
    if (!ok)
      r.error("transceiver", "transceiver '" + xcvr + "' is not a valid component name (letters, "
                             "digits, '_' and '-', and not port, asic or pcie_endpoint)");
  }
  bool vendor = vendorFigures(r);
  if (!r.ok())
    return std::nullopt;
  const Variant *var = &Variants[0];
  for (const Variant &x : Variants)
    if (v == x.name)
      var = &x;
  std::string speed = var->speed;
  DeviceBuilder d("cx5_" + llvm::StringRef(speed).lower(),
                  "Mellanox ConnectX-5 " + speed + " NIC");
  d.custom("pcie_endpoint", "pcie_endpoint", 1, "PCI Express GEN3 x16 endpoint");
  d.component("asic", ComponentKind::Cpu, 1, "ConnectX-5 network processing ASIC");
  d.component("port", ComponentKind::Port, var->ports, "Ethernet port (" + speed + ")");
  if (xcvr != "none")
    d.component(xcvr, ComponentKind::Port, var->ports, "QSFP transceiver (abstract)");
  auto bw = [&](Bandwidth b) { return vendor ? std::optional<Bandwidth>(b) : std::nullopt; };
  Bandwidth port = Bandwidth::gigabitsPerSec(var->gbps);
  d.link("pcie_internal", "Internal PCIe GEN3 fabric", bw(figures::PcieGen3x16));
  d.link("serdes", "High-speed SerDes lanes", bw(port));
  d.link("electrical", "Electrical interface to transceiver", bw(port));
  d.edge(Scheme::One2One, {all("pcie_endpoint")}, {all("asic")}, "pcie_internal");
  d.edge(Scheme::Many2Many, {all("asic")}, {all("port")}, "serdes");
  if (xcvr != "none")
    for (uint64_t i = 0; i < var->ports; ++i)
      d.edge(Scheme::One2One, {at("port", i)}, {at(xcvr, i)}, "electrical");
  return d.take();
}

RegisterDeviceBlueprint Cx5({"cx5",
                             "ConnectX-5 style NIC: PCIe endpoint, ASIC, 1 or 2 Ethernet ports "
                             "(device name cx5_25gbe, cx5_50gbe or cx5_100gbe)",
                             Cx5Params, nullptr, buildCx5});

} // namespace
} // namespace infracc::blueprints
