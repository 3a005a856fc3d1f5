// NVIDIA DGX systems, one device blueprint per profile, with the component counts and
// internal wiring of InfraGraph's reference (blueprints/devices/nvidia/dgx.py), except
// where that wiring is plainly broken (see docs/blueprints.md):
//   * dgx2 wires its xpus to "nvlsw", a component that does not exist (the reference
//     silently drops those edges); here they go to the NVSwitches, "nvsw".
//   * dgx2 declares 14 PCIe switches but wires only 12; the other two (12, 13) are
//     attached to the CPUs here instead of being left without edges.
// The internal links carry the vendor figures of blueprints/devices/LinkFigures.h
// (specs=none leaves them bare, as the reference does).
#include "blueprints/Build.h"
#include "blueprints/Params.h"
#include "blueprints/devices/LinkFigures.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

namespace infracc::blueprints {
namespace {

struct Profile {
  const char *name;
  const char *cpuDesc, *cpuFabric;
  uint64_t cpus;
  const char *xpuDesc, *xpuFabric;
  uint64_t xpus, nvswitches;
  const char *pcieswDesc, *pcieFabric;
  uint64_t pcieSwitches;
  const char *slotDesc;
  uint64_t slots;
  const char *defaultNic;
  // Per direction: one edge between two CPUs, an xpu and an NVSwitch (or two xpus), and
  // a PCIe x16 link with half its switch's latency; a CPU and an xpu (NVLink-C2C).
  Bandwidth cpuBw, xpuBw, pcieBw;
  Duration pcieHop;
  std::optional<Bandwidth> c2cBw;
};

namespace f = figures;

// NVLink per edge: DGX-1 (P100) joins its GPUs in a hybrid cube-mesh, one NVLink 1 link
// per GPU pair (NVIDIA DGX-1 system architecture whitepaper); DGX-2 gives each V100 one
// NVLink 2 link to each of its baseboard's 6 NVSwitches (NVIDIA DGX-2 whitepaper), used
// here for the switch-to-switch edges too; DGX A100 two NVLink 3 links from each A100 to
// each of its 6 NVSwitches (DGX A100 system architecture whitepaper); DGX H100 18 NVLink
// 4 links per GPU over 4 NVSwitches (5, 4, 4 and 5; 4.5 per edge on average, DGX H100
// user guide); GB200 one NVLink 5 link from each GPU to each of the 18 NVLink switch chips
// of an NVL72 rack (NVIDIA GB200 NVL72 documentation).
const Profile Profiles[] = {
    {"dgx1", "Intel Xeon E5-2698 v4 (Broadwell-EP)", "qpi", 2, "NVIDIA Tesla P100 SXM2",
     "nvlink_1", 8, 0, "PLX PEX8796 PCIe Switch", "pcie_gen3", 4,
     "Internal PCIe x16 endpoints (GPU-attached)", 4, "cx5", f::QpiBroadwell, f::NvLink1,
     f::PcieGen3x16, f::PcieGen3Hop, std::nullopt},
    {"dgx2", "Intel Xeon Platinum 8168 (Skylake-SP)", "upi", 2, "NVIDIA Tesla V100 SXM2",
     "nvlink_2", 16, 12, "Broadcom / PLX PEX8796 PCIe Switch", "pcie_gen3", 14,
     "Internal PCIe x16 endpoints (GPU + NVSwitch)", 8, "cx5", f::UpiSkylake, f::NvLink2,
     f::PcieGen3x16, f::PcieGen3Hop, std::nullopt},
    {"dgx_a100", "AMD EPYC 7742 (Rome)", "infinity_fabric", 2, "NVIDIA A100 SXM4", "nvlink_3", 8,
     6, "Broadcom / PLX PCIe Gen4 Switch", "pcie_gen4", 5, "PCIe Gen4 x16 slots (NIC / storage)", 8,
     "cx6", f::XgmiRome, Bandwidth::bitsPerSec(2 * f::NvLink3.bitsPerSecond), f::PcieGen4x16,
     f::PcieGen4Hop, std::nullopt},
    {"dgx_h100", "AMD EPYC 9654 (Genoa)", "infinity_fabric", 2, "NVIDIA H100 / H200 SXM5",
     "nvlink_4", 8, 4, "Broadcom PCIe Gen5 Switch", "pcie_gen5", 3,
     "PCIe Gen5 x16 slots (ConnectX / BlueField)", 8, "cx7", f::XgmiGenoa,
     Bandwidth::bitsPerSec(4.5 * f::NvLink4.bitsPerSecond), f::PcieGen5x16, f::PcieGen5Hop,
     std::nullopt},
    {"dgx_gb200", "NVIDIA Grace CPU Superchip", "nvlink_c2c", 2, "NVIDIA Grace Blackwell Superchip",
     "nvlink_c2c", 4, 18, "", "pcie_gen5", 0, "External PCIe Gen5 lanes from Grace", 4, "cx7",
     f::NvLinkC2C, f::NvLink5, f::PcieGen5x16, f::PcieGen5Hop, f::NvLinkC2C},
};

const std::vector<ParamInfo> DgxParams = {
    {"nic", "",
     "name of the plain NIC components, one per PCIe slot (default: cx5 on dgx1/dgx2, cx6 on "
     "dgx_a100, cx7 on dgx_h100/dgx_gb200)"},
    {"nic_device", "none",
     "a NIC device composed into every PCIe slot instead, e.g. cx5(variant=100g_dual); its "
     "pcie_endpoint plugs into the slot and its ports face the fabric"},
    SpecsParam,
};

void wirePcie(DeviceBuilder &d, const Profile &p) {
  std::string prof = p.name;
  auto m2m = [&](PathElem a, PathElem b) { d.edge(Scheme::Many2Many, {a}, {b}, "pcie"); };
  auto o2o = [&](PathElem a, PathElem b) { d.edge(Scheme::One2One, {a}, {b}, "pcie"); };
  if (prof == "dgx1") {
    const uint64_t firstXpu[4] = {0, 1, 4, 5};   // each switch serves xpus x and x+2
    for (uint64_t sw = 0; sw < 4; ++sw)
      m2m(at("pciesw", sw), range("xpu", firstXpu[sw], firstXpu[sw] + 3, 2));
    for (uint64_t sw = 0; sw < 4; ++sw)
      o2o(at("pciesw", sw), at("pciesl", sw));
    for (uint64_t c = 0; c < 2; ++c) {
      o2o(at("pciesw", 2 * c), at("cpu", c));
      o2o(at("pciesw", 2 * c + 1), at("cpu", c));
    }
  } else if (prof == "dgx2") {
    for (uint64_t i = 0; i < 8; ++i)
      m2m(at("pciesw", i), range("xpu", 2 * i, 2 * i + 2));
    for (uint64_t i = 0; i < 8; ++i)
      o2o(at("pciesw", i), at("pciesl", i));
    m2m(range("pciesw", 8, 10), at("cpu", 0));
    m2m(range("pciesw", 10, 12), at("cpu", 1));
    for (uint64_t root = 8; root < 12; ++root)
      m2m(at("pciesw", root), range("pciesw", 2 * (root - 8), 2 * (root - 8) + 2));
    // Not in the reference, which leaves these two switches unconnected.
    o2o(at("pciesw", 12), at("cpu", 0));
    o2o(at("pciesw", 13), at("cpu", 1));
  } else if (prof == "dgx_a100") {
    const std::pair<uint64_t, uint64_t> cpuSwitch[] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}};
    for (auto [cpu, sw] : cpuSwitch)
      m2m(at("cpu", cpu), at("pciesw", sw));
    for (uint64_t i = 0; i < 4; ++i) {
      m2m(at("pciesw", i), range("pciesl", 2 * i, 2 * i + 2));
      m2m(at("pciesw", i), range("xpu", 2 * i, 2 * i + 2));
    }
    m2m(at("pciesw", 4), range("nvsw", 0, 6));
    o2o(at("pciesw", 4), at("pciesw", 3));
  } else if (prof == "dgx_h100") {
    // As in the reference: slots 0-2 and 4-6 hang off the CPUs (3 and 7 only off their xpu).
    for (uint64_t c = 0; c < 2; ++c)
      m2m(at("cpu", c), range("pciesl", 4 * c, 4 * c + 3));
    for (uint64_t c = 0; c < 2; ++c)
      o2o(at("cpu", c), at("pciesw", c));
    for (uint64_t s = 0; s < 8; ++s)
      o2o(at("pciesl", s), at("xpu", s));
    m2m(range("nvsw", 0, 4), at("pciesw", 2));
    o2o(at("cpu", 0), at("pciesw", 2));
  } else if (prof == "dgx_gb200") {
    for (uint64_t c = 0; c < 2; ++c)
      m2m(at("cpu", c), range("pciesl", 2 * c, 2 * c + 2));
    for (uint64_t c = 0; c < 2; ++c)
      d.edge(Scheme::Many2Many, {at("cpu", c)}, {range("xpu", 2 * c, 2 * c + 2)}, "c2c_link");
  }
}

void wireXpus(DeviceBuilder &d, const Profile &p) {
  std::string prof = p.name;
  auto m2m = [&](PathElem a, PathElem b) { d.edge(Scheme::Many2Many, {a}, {b}, "xpu_fabric"); };
  if (prof == "dgx1") {
    m2m(range("xpu", 0, 4), range("xpu", 0, 4));   // two 4-cliques
    m2m(range("xpu", 4, 8), range("xpu", 4, 8));
    for (uint64_t i = 0; i < 4; ++i)
      d.edge(Scheme::One2One, {at("xpu", i)}, {at("xpu", i + 4)}, "xpu_fabric");
  } else if (prof == "dgx2") {
    m2m(range("xpu", 0, 8), range("nvsw", 0, 6));
    m2m(range("xpu", 8, 16), range("nvsw", 6, 12));
    m2m(range("nvsw", 0, 6), range("nvsw", 6, 12));
  } else if (prof == "dgx_h100") {
    m2m(range("nvsw", 0, 4), range("xpu", 0, 8));
  } else if (prof == "dgx_a100") {
    m2m(range("xpu", 0, 8), range("nvsw", 0, 6));
  } else if (prof == "dgx_gb200") {
    m2m(range("xpu", 0, 4), range("nvsw", 0, 18));
  }
}

std::optional<DeviceBuild> buildDgx(const Profile &p, const BlueprintSpec &spec,
                                    DiagEngine &diags) {
  ParamReader r(spec, DgxParams, fmt::format("device blueprint '{}'", p.name), diags);
  std::string nicName = r.given("nic") ? r.text("nic") : p.defaultNic;
  std::optional<DeviceBuild> nicDev;
  if (r.given("nic_device") && r.text("nic_device") != "none") {
    if (r.given("nic"))
      r.error("nic", "give either nic (plain NIC components) or nic_device (composed NIC "
                     "devices), not both");
    nicDev = r.device("nic_device");
  }
  if (r.given("nic")) {
    bool okName = !nicName.empty();
    for (char c : nicName)
      okName &= llvm::isAlnum(c) || c == '_' || c == '-';
    if (!okName)
      r.error("nic", "nic '" + nicName + "' is not a valid component name (letters, digits, '_' "
                     "and '-')");
  }
  const Component *endpoint = nullptr;
  if (nicDev) {
    for (const Component &c : nicDev->device.components)
      if (c.name == "pcie_endpoint")
        endpoint = &c;
    if (!endpoint)
      r.error("nic_device", "nic_device '" + nicDev->device.name + "' has no 'pcie_endpoint' "
                            "component to plug into a PCIe slot");
  }
  bool vendor = vendorFigures(r);
  if (!r.ok())
    return std::nullopt;
  auto bw = [&](std::optional<Bandwidth> b) { return vendor ? b : std::nullopt; };
  auto lat = [&](Duration l) { return vendor ? std::optional<Duration>(l) : std::nullopt; };

  DeviceBuilder d(p.name, "NVIDIA DGX System");
  d.component("cpu", ComponentKind::Cpu, p.cpus, p.cpuDesc);
  d.component("xpu", ComponentKind::Xpu, p.xpus, p.xpuDesc);
  if (p.nvswitches)
    d.component("nvsw", ComponentKind::Switch, p.nvswitches, "NVIDIA NVSwitch");
  if (p.pcieSwitches)
    d.component("pciesw", ComponentKind::Switch, p.pcieSwitches, p.pcieswDesc);
  if (p.slots)
    d.custom("pciesl", "pcie_slot", p.slots, p.slotDesc);
  d.link("cpu_fabric", p.cpuFabric, bw(p.cpuBw));
  d.link("xpu_fabric", p.xpuFabric, bw(p.xpuBw));
  d.link("pcie", fmt::format("PCI Express {} x16", llvm::StringRef(p.pcieFabric).upper()),
         bw(p.pcieBw), lat(p.pcieHop));
  if (p.c2cBw)
    d.link("c2c_link", "", bw(p.c2cBw));
  d.edge(Scheme::Many2Many, {all("cpu")}, {all("cpu")}, "cpu_fabric");
  wirePcie(d, p);
  wireXpus(d, p);

  std::vector<DeviceDef> parts;
  if (nicDev) {
    d.component(nicDev->device.name, ComponentKind::Device, p.slots, nicDev->device.description);
    d.edge(Scheme::One2One, {range(nicDev->device.name, 0, p.slots), at("pcie_endpoint", 0)},
           {range("pciesl", 0, p.slots)}, "pcie");
    parts = nicDev->parts;
    parts.push_back(nicDev->device);
  } else {
    d.component(nicName, ComponentKind::Nic, p.slots,
                r.given("nic") ? nicName : "NVIDIA ConnectX / BlueField");
    for (uint64_t s = 0; s < p.slots; ++s)
      d.edge(Scheme::One2One, {at("pciesl", s)}, {at(nicName, s)}, "pcie");
  }
  return d.take(std::move(parts));
}

struct RegisterProfiles {
  RegisterProfiles() {
    for (const Profile &p : Profiles)
      Registry::addDevice(
          {p.name,
           fmt::format("NVIDIA {}: {} cpus, {} xpus, {} NVSwitches, {} PCIe switches, {} PCIe "
                       "slots with a NIC each (as InfraGraph's reference nvidia/dgx.py)",
                       p.name, p.cpus, p.xpus, p.nvswitches, p.pcieSwitches, p.slots),
           DgxParams, nullptr,
           [&p](const BlueprintSpec &s, DiagEngine &d) { return buildDgx(p, s, d); }});
  }
} Registration;

} // namespace
} // namespace infracc::blueprints
