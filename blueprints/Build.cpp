#include "blueprints/Build.h"

#include "blueprints/Params.h"
#include "ir/FabricGraph.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

namespace infracc::blueprints {

PathElem all(llvm::StringRef name) { return PathElem{name.str(), std::nullopt, {}}; }

PathElem at(llvm::StringRef name, uint64_t i) {
  Slice s;
  s.isIndex = true;
  s.start = static_cast<int64_t>(i);
  return PathElem{name.str(), s, {}};
}

PathElem range(llvm::StringRef name, uint64_t begin, uint64_t end, uint64_t step) {
  Slice s;
  s.start = static_cast<int64_t>(begin);
  s.stop = static_cast<int64_t>(end);
  if (step != 1)
    s.step = static_cast<int64_t>(step);
  return PathElem{name.str(), s, {}};
}

// --- Devices ----------------------------------------------------------------------------

DeviceBuilder::DeviceBuilder(std::string name, std::string description) {
  d_.name = std::move(name);
  d_.description = std::move(description);
}

void DeviceBuilder::component(std::string name, ComponentKind kind, uint64_t count,
                              std::string description) {
  Component c;
  c.name = std::move(name);
  c.kind = kind;
  c.count = count;
  c.description = std::move(description);
  d_.components.push_back(std::move(c));
}

void DeviceBuilder::custom(std::string name, std::string type, uint64_t count,
                           std::string description) {
  component(std::move(name), ComponentKind::Custom, count, std::move(description));
  d_.components.back().customType = std::move(type);
}

void DeviceBuilder::link(std::string name, std::string description,
                         std::optional<Bandwidth> bandwidth, std::optional<Duration> latency) {
  LinkDef l;
  l.name = std::move(name);
  l.description = std::move(description);
  l.bandwidth = bandwidth;
  l.latency = latency;
  d_.links.push_back(std::move(l));
}

void DeviceBuilder::edge(Scheme scheme, ComponentPath ep1, ComponentPath ep2,
                         llvm::StringRef link) {
  DeviceEdge e;
  e.ep1 = std::move(ep1);
  e.ep2 = std::move(ep2);
  e.scheme = scheme;
  e.link = link.str();
  d_.edges.push_back(std::move(e));
}

const ParamInfo SpecsParam = {
    "specs", "vendor",
    "vendor: internal links carry the vendor's per-link bandwidth (and latency where one is "
    "published); none: no bandwidth or latency, as InfraGraph's reference blueprint"};

bool vendorFigures(ParamReader &r) { return r.choice("specs", {"vendor", "none"}) == "vendor"; }

DeviceBuild DeviceBuilder::take(std::vector<DeviceDef> parts) {
  return DeviceBuild{std::move(d_), std::move(parts)};
}

static bool samePath(const ComponentPath &a, const ComponentPath &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].slice.has_value() != b[i].slice.has_value())
      return false;
    if (a[i].slice) {
      const Slice &x = *a[i].slice, &y = *b[i].slice;
      if (x.isIndex != y.isIndex || x.start != y.start || x.stop != y.stop || x.step != y.step)
        return false;
    }
  }
  return true;
}

bool sameDefinition(const DeviceDef &a, const DeviceDef &b) {
  if (a.name != b.name || a.description != b.description ||
      a.components.size() != b.components.size() || a.links.size() != b.links.size() ||
      a.edges.size() != b.edges.size())
    return false;
  for (size_t i = 0; i < a.components.size(); ++i) {
    const Component &x = a.components[i], &y = b.components[i];
    if (x.name != y.name || x.kind != y.kind || x.customType != y.customType ||
        x.count != y.count || x.description != y.description)
      return false;
  }
  for (size_t i = 0; i < a.links.size(); ++i) {
    const LinkDef &x = a.links[i], &y = b.links[i];
    if (x.name != y.name || x.description != y.description || x.bandwidth != y.bandwidth ||
        x.latency != y.latency)
      return false;
  }
  for (size_t i = 0; i < a.edges.size(); ++i) {
    const DeviceEdge &x = a.edges[i], &y = b.edges[i];
    if (x.scheme != y.scheme || x.link != y.link || !samePath(x.ep1, y.ep1) ||
        !samePath(x.ep2, y.ep2))
      return false;
  }
  return true;
}

static const DeviceDef *partNamed(const DeviceBuild &d, llvm::StringRef name) {
  for (const DeviceDef &p : d.parts)
    if (p.name == name)
      return &p;
  return nullptr;
}

static uint64_t countIn(const DeviceBuild &b, const DeviceDef &d, ComponentKind kind, bool nodes,
                        unsigned depth) {
  uint64_t n = 0;
  for (const Component &c : d.components) {
    if (c.kind == ComponentKind::Device) {
      const DeviceDef *child = partNamed(b, c.name);
      if (child && depth < 16)
        n += c.count * countIn(b, *child, kind, nodes, depth + 1);
    } else if (nodes || c.kind == kind) {
      n += c.count;
    }
  }
  return n;
}

uint64_t nodesPerCopy(const DeviceBuild &d) {
  return countIn(d, d.device, ComponentKind::Custom, true, 0);
}

uint64_t countKind(const DeviceBuild &d, ComponentKind kind) {
  return countIn(d, d.device, kind, false, 0);
}

ComponentPath AttachPoints::all() const {
  ComponentPath p{blueprints::all(component)};
  if (!port.empty())
    p.push_back(blueprints::all(port));
  return p;
}

ComponentPath AttachPoints::at(uint64_t i) const {
  if (port.empty())
    return ComponentPath{blueprints::at(component, i)};
  return ComponentPath{blueprints::at(component, i / perCard), blueprints::at(port, i % perCard)};
}

ComponentPath portRange(const AttachPoints &p, uint64_t a, uint64_t b) {
  if (a == 0 && b == p.count)
    return ComponentPath{blueprints::all(p.component)};
  if (b == a + 1)
    return ComponentPath{blueprints::at(p.component, a)};
  return ComponentPath{blueprints::range(p.component, a, b)};
}

std::string AttachPoints::describe(llvm::StringRef noun) const {
  return fmt::format("{} NIC{} per {}", count, count == 1 ? "" : "s", noun.str());
}

std::optional<AttachPoints> hostNics(const DeviceBuild &d) {
  for (const Component &c : d.device.components)
    if (c.kind == ComponentKind::Nic && c.count > 0)
      return AttachPoints{c.name, "", c.count, 1};
  for (const Component &c : d.device.components) {
    if (c.kind != ComponentKind::Device || c.count == 0)
      continue;
    const DeviceDef *child = partNamed(d, c.name);
    if (!child)
      continue;
    const Component *port = nullptr;
    bool hasXpu = false;
    for (const Component &cc : child->components) {
      // The last port component: a transceiver behind the NIC's ports, if any.
      if (cc.kind == ComponentKind::Port && cc.count > 0)
        port = &cc;
      hasXpu |= cc.kind == ComponentKind::Xpu;
    }
    if (port && !hasXpu)
      return AttachPoints{c.name, port->name, c.count * port->count, port->count};
  }
  // A processor with its own I/O ports and no NIC (gpu_noc): those ports.
  bool hasXpu = false;
  for (const Component &c : d.device.components)
    hasXpu |= c.kind == ComponentKind::Xpu;
  if (hasXpu)
    for (const Component &c : d.device.components)
      if (c.kind == ComponentKind::Port && c.count > 0)
        return AttachPoints{c.name, "", c.count, 1};
  return std::nullopt;
}

std::optional<AttachPoints> switchPorts(const DeviceBuild &d) {
  for (const Component &c : d.device.components)
    if (c.kind == ComponentKind::Port && c.count > 0)
      return AttachPoints{c.name, "", c.count, 1};
  return std::nullopt;
}

static std::string componentList(const DeviceDef &d) {
  std::vector<std::string> parts;
  for (const Component &c : d.components)
    parts.push_back(fmt::format("{} ({} x{})", c.name,
                                c.kind == ComponentKind::Custom ? c.customType
                                                                : componentKindName(c.kind).str(),
                                c.count));
  return parts.empty() ? std::string("none") : llvm::join(parts, ", ");
}

void reportNoNics(ParamReader &r, llvm::StringRef key, const DeviceBuild &d) {
  r.error(key, "device '" + d.device.name + "' cannot be a host: it has no nic component, no "
               "composed NIC device with ports and no xpu with ports to attach to the fabric "
               "(its components: " +
                   componentList(d.device) + ")");
}

void reportNoPorts(ParamReader &r, llvm::StringRef key, const DeviceBuild &d) {
  r.error(key, "device '" + d.device.name + "' cannot be a switch: it has no port component "
               "(its components: " + componentList(d.device) + ")");
}

// --- Fabrics ----------------------------------------------------------------------------

FabricBuilder::FabricBuilder(const BlueprintSpec &spec, std::string name,
                             std::string description)
    : in_(std::make_shared<Infrastructure>()) {
  in_->name = std::move(name);
  in_->description = std::move(description);
  in_->origin = spec.origin.empty() ? "blueprint '" + spec.name + "'" : spec.origin;
}

bool FabricBuilder::addDevice(const DeviceBuild &d, ParamReader &r, llvm::StringRef key) {
  auto add = [&](const DeviceDef &def) {
    for (const DeviceDef &have : in_->devices) {
      if (have.name != def.name)
        continue;
      if (sameDefinition(have, def))
        return true;
      r.error(key, "device '" + def.name + "' given for " + key.str() + " differs from another "
                   "device of the same name in this fabric; give one of them another name");
      return false;
    }
    in_->devices.push_back(def);
    return true;
  };
  for (const DeviceDef &p : d.parts)
    if (!add(p))
      return false;
  return add(d.device);
}

void FabricBuilder::instance(std::string name, std::string device, uint64_t count) {
  Instance i;
  i.name = std::move(name);
  i.device = std::move(device);
  i.count = count;
  in_->instances.push_back(std::move(i));
}

void FabricBuilder::link(std::string name, std::string description,
                         std::optional<Bandwidth> bandwidth, std::optional<Duration> latency) {
  LinkDef l;
  l.name = std::move(name);
  l.description = std::move(description);
  l.bandwidth = bandwidth;
  l.latency = latency;
  in_->links.push_back(std::move(l));
}

void FabricBuilder::edge(PathElem inst1, ComponentPath comp1, PathElem inst2, ComponentPath comp2,
                         llvm::StringRef link, Scheme scheme) {
  InfraEdge e;
  e.ep1 = {std::move(inst1), std::move(comp1)};
  e.ep2 = {std::move(inst2), std::move(comp2)};
  e.scheme = scheme;
  e.link = link.str();
  in_->edges.push_back(std::move(e));
}

bool FabricBuilder::checkSize(ParamReader &r) {
  constexpr uint64_t MaxNodes = 0xFFFFFFFEull;
  // Counts in long double: parameters can be large enough to overflow 64 bits.
  long double total = 0;
  for (const Instance &i : in_->instances) {
    const DeviceDef *d = in_->findDevice(i.device);
    if (!d)
      continue;
    DeviceBuild b{*d, in_->devices};
    total += static_cast<long double>(i.count) * nodesPerCopy(b);
  }
  if (total > MaxNodes) {
    std::vector<std::string> parts;
    for (const Instance &i : in_->instances)
      parts.push_back(fmt::format("{} x {}", i.count, i.name));
    r.error(fmt::format("the fabric would have {}, i.e. {:.4g} nodes; at most {} are supported",
                        llvm::join(parts, ", "), static_cast<double>(total), MaxNodes));
    return false;
  }
  // Before the edge records are generated: they grow with the fabric, and the expansion
  // would refuse it later anyway.
  if (std::optional<std::string> msg = exceedsMemory(
          fmt::format("the fabric's {} nodes", uint64_t(total)), uint64_t(total),
          FabricBytesPerNode)) {
    r.error(*msg);
    return false;
  }
  return true;
}

} // namespace infracc::blueprints
