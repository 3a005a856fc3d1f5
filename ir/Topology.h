// Topology definitions: devices, links, instances and edges, mirroring InfraGraph's
// model. Frontends (InfraGraph YAML/JSON) and blueprints produce an Infrastructure;
// expandFabric() (ir/FabricGraph.h) turns it into the fully qualified graph.
//
// Source locations (llvm::SMLoc) are carried so that semantic errors found during
// expansion can point at the text; generated definitions leave them empty and are
// reported against Infrastructure::origin instead.
#pragma once

#include "support/Units.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

enum class ComponentKind : uint8_t { Custom, Device, Cpu, Xpu, Nic, Memory, Port, Switch };
inline constexpr unsigned NumComponentKinds = 8;

/// The InfraGraph spelling: custom, device, cpu, xpu, nic, memory, port, switch.
llvm::StringRef componentKindName(ComponentKind k);
std::optional<ComponentKind> parseComponentKind(llvm::StringRef s);

/// Python slice notation on the copies 0..count-1 of an instance or component:
/// `[i]`, `[a:b]`, `[a:b:s]`, `[a:]`, `[:b]`. No slice at all means every copy.
struct Slice {
  bool isIndex = false;          // `[i]`: start holds i
  std::optional<int64_t> start, stop, step;
};

/// One element of an endpoint path: `name` or `name[slice]`.
struct PathElem {
  std::string name;
  std::optional<Slice> slice;
  llvm::SMLoc loc;
};

/// A component inside a device, possibly through composed devices:
/// `cx5[0:2].pcie_endpoint[0]` is two elements.
using ComponentPath = llvm::SmallVector<PathElem, 2>;

struct Component {
  std::string name, description;
  ComponentKind kind = ComponentKind::Custom;
  std::string customType;   // only for ComponentKind::Custom
  uint64_t count = 1;
  llvm::SMLoc loc, countLoc;
};

struct LinkDef {
  std::string name, description;
  std::optional<Bandwidth> bandwidth;
  std::optional<Duration> latency;
  llvm::SMLoc loc;
};

enum class Scheme : uint8_t { One2One, Many2Many, Ring };
llvm::StringRef schemeName(Scheme s);
std::optional<Scheme> parseScheme(llvm::StringRef s);

struct DeviceEdge {
  ComponentPath ep1, ep2;   // InfraGraph's optional `device` field is the leading element
  Scheme scheme = Scheme::One2One;
  std::string link;
  llvm::SMLoc loc, linkLoc;
};

struct DeviceDef {
  std::string name, description;
  std::vector<Component> components;
  std::vector<LinkDef> links;
  std::vector<DeviceEdge> edges;
  llvm::SMLoc loc;
};

struct Instance {
  std::string name, device, description;
  uint64_t count = 1;
  llvm::SMLoc loc, deviceLoc, countLoc;
};

struct InfraEndpoint {
  PathElem instance;
  ComponentPath component;
};

struct InfraEdge {
  InfraEndpoint ep1, ep2;
  Scheme scheme = Scheme::One2One;
  std::string link;
  llvm::SMLoc loc, linkLoc;
};

/// InfraGraph's Annotation: string attributes on nodes (by name or prefix/slice
/// spec), edges (exact endpoint names), links (every edge of that link) and the graph.
struct Attribute {
  std::string key, value;
  llvm::SMLoc loc;
};
struct Annotations {
  struct NodeAnn { std::string name; std::vector<Attribute> attributes; llvm::SMLoc loc; };
  struct EdgeAnn { std::string ep1, ep2; std::vector<Attribute> attributes; llvm::SMLoc loc; };
  struct LinkAnn { std::string name; std::vector<Attribute> attributes; llvm::SMLoc loc; };
  std::vector<NodeAnn> nodes;
  std::vector<EdgeAnn> edges;
  std::vector<LinkAnn> links;
  std::vector<Attribute> graph;
  bool empty() const { return nodes.empty() && edges.empty() && links.empty() && graph.empty(); }
};

struct Infrastructure {
  std::string name, description;
  std::vector<DeviceDef> devices;
  std::vector<LinkDef> links;       // links of infrastructure-level edges
  std::vector<Instance> instances;
  std::vector<InfraEdge> edges;
  Annotations annotations;
  /// What errors without a source location are reported against: the file name,
  /// or e.g. "blueprint clos" for generated fabrics.
  std::string origin;

  const DeviceDef *findDevice(llvm::StringRef name) const;
};

} // namespace infracc
