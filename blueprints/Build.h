// Helpers for writing blueprints: endpoint paths, device and fabric builders, and
// where a fabric attaches to a device (a host's NICs, a switch's ports).
#pragma once

#include "blueprints/Blueprint.h"
#include "ir/Topology.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace infracc::blueprints {

class ParamReader;

// --- Endpoint paths ------------------------------------------------------------------
PathElem all(llvm::StringRef name);                       // name
PathElem at(llvm::StringRef name, uint64_t i);            // name[i]
PathElem range(llvm::StringRef name, uint64_t begin, uint64_t end, uint64_t step = 1);

// --- Devices ----------------------------------------------------------------------------
class DeviceBuilder {
public:
  DeviceBuilder(std::string name, std::string description);
  void component(std::string name, ComponentKind kind, uint64_t count, std::string description);
  void custom(std::string name, std::string type, uint64_t count, std::string description);
  void link(std::string name, std::string description = "",
            std::optional<Bandwidth> bandwidth = std::nullopt,
            std::optional<Duration> latency = std::nullopt);
  void edge(Scheme scheme, ComponentPath ep1, ComponentPath ep2, llvm::StringRef link);
  DeviceDef &def() { return d_; }
  DeviceBuild take(std::vector<DeviceDef> parts = {});

private:
  DeviceDef d_;
};

/// The parameter `specs` of the vendor device blueprints: `vendor` (default) gives their
/// internal links the vendor's figures (blueprints/devices/LinkFigures.h), `none` leaves
/// them without bandwidth and latency, as InfraGraph's reference blueprints do.
extern const ParamInfo SpecsParam;
/// Reads `specs`: true for vendor figures.
bool vendorFigures(ParamReader &r);

/// Structural equality of two definitions (source locations ignored).
bool sameDefinition(const DeviceDef &a, const DeviceDef &b);

/// FQG nodes one copy of the device expands to (composition included).
uint64_t nodesPerCopy(const DeviceBuild &d);
/// Leaf components of one kind in one copy (composition included).
uint64_t countKind(const DeviceBuild &d, ComponentKind kind);

/// Where a fabric attaches to a device, in order: either copies of a plain component
/// (`nic[i]`, `port[i]`) or ports of composed NIC devices (`cx5_100gbe[c].port[p]`).
struct AttachPoints {
  std::string component;     // the (first) component holding them
  std::string port;          // composed: the port component inside it; else empty
  uint64_t count = 0;        // attach points per device copy
  uint64_t perCard = 1;      // composed: ports per composed device
  ComponentPath all() const;
  ComponentPath at(uint64_t i) const;
  /// "8 NICs per host", for messages.
  std::string describe(llvm::StringRef noun) const;
};

/// The host's NICs: the first nic component (as InfraGraph's reference blueprints
/// do), else the ports of the first composed NIC device (one with ports and no xpu;
/// its last port component, i.e. the transceivers when it has them), else, for a
/// device with xpus, its first port component (gpu_noc's I/O ports).
std::optional<AttachPoints> hostNics(const DeviceBuild &d);
/// The switch's ports: its first port component.
std::optional<AttachPoints> switchPorts(const DeviceBuild &d);

// --- Fabrics ----------------------------------------------------------------------------
class FabricBuilder {
public:
  FabricBuilder(const BlueprintSpec &spec, std::string name, std::string description);

  /// Adds the device and its parts. A definition with the same name is shared when it
  /// is identical; a different one is reported against parameter `key`.
  bool addDevice(const DeviceBuild &d, ParamReader &r, llvm::StringRef key);
  void instance(std::string name, std::string device, uint64_t count);
  void link(std::string name, std::string description, std::optional<Bandwidth> bandwidth,
            std::optional<Duration> latency);
  void edge(PathElem inst1, ComponentPath comp1, PathElem inst2, ComponentPath comp2,
            llvm::StringRef link, Scheme scheme = Scheme::One2One);

  /// Before generating edges: reports when the instances expand to more nodes than
  /// the fully qualified graph holds (32-bit node ids).
  bool checkSize(ParamReader &r);

  Infrastructure &infra() { return *in_; }
  std::shared_ptr<Infrastructure> take() { return std::move(in_); }

private:
  std::shared_ptr<Infrastructure> in_;
};

/// The generic switch (device blueprint `switch`): one ASIC joined to `ports` ports.
DeviceBuild genericSwitch(uint64_t ports, std::string name = "switch");

/// The ports [a, b) of a plain attach component: the whole component when that is all
/// of it, else a slice.
ComponentPath portRange(const AttachPoints &p, uint64_t a, uint64_t b);

/// Reports (through r) that a host device has no NICs to attach, naming its components.
void reportNoNics(ParamReader &r, llvm::StringRef key, const DeviceBuild &d);
void reportNoPorts(ParamReader &r, llvm::StringRef key, const DeviceBuild &d);

} // namespace infracc::blueprints
