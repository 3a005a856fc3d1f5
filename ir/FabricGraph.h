// The fully qualified graph (FQG): one node per component copy, named
// `instance.i.component.j` (composed devices extend the path), one undirected edge per
// expanded edge with a reference to its link.
//
// Storage is compact: node ids are 32-bit and laid out instance by instance, copy by
// copy, following the device's component layout, so a node's name, kind and owning
// instance are decoded from its id rather than stored. Adjacency is CSR.
#pragma once

#include "ir/Topology.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>

#include <memory>

namespace infracc {

class DiagEngine;

using NodeId = uint32_t;
using EdgeId = uint32_t;
using LinkId = uint32_t;
inline constexpr NodeId InvalidNode = ~NodeId(0);
inline constexpr LinkId InvalidLink = ~LinkId(0);
/// Resident bytes per expanded node and, at the peak of deduplication, per edge (the
/// expansion of a k=64 fat tree measured 56-58 B per node): the -max-memory checks.
inline constexpr uint64_t FabricBytesPerNode = 64, FabricBytesPerEdge = 40;

/// What a device instance is, as far as the rest of the program cares.
enum class InstanceRole : uint8_t { Host, Switch, Other };

class FabricGraph {
public:
  struct LinkInfo {
    std::string name;
    int32_t device = -1;   // index of the owning device definition; -1: infrastructure link
    std::optional<Bandwidth> bandwidth;
    std::optional<Duration> latency;
  };
  struct EdgeRec {
    NodeId u, v;           // u < v
    LinkId link;
  };
  struct Adjacent {
    NodeId node;
    EdgeId edge;
  };
  /// One component of a device as laid out in node ids: `count` copies of either a
  /// single node (a leaf) or a whole child device.
  struct Group {
    uint32_t component = 0;      // index into the device definition's components
    uint32_t count = 0;
    int32_t childDevice = -1;    // composed device, or -1 for a leaf component
    uint32_t nodesPerCopy = 1;
    uint32_t offset = 0;         // first local node of the group
  };
  struct DeviceLayout {
    uint32_t numNodes = 0;       // nodes per copy of the device, composition included
    std::vector<Group> groups;
    bool hasXpu = false, hasNic = false, hasPort = false, hasSwitch = false;
  };
  struct InstanceInfo {
    std::string name;
    uint32_t device = 0;         // index into devices
    uint64_t count = 0;
    NodeId firstNode = 0;
    uint32_t nodesPerCopy = 0;
    InstanceRole role = InstanceRole::Other;
  };
  /// A node decoded into its path: the instance, its copy, then (component, copy)
  /// pairs down through composed devices to the leaf component.
  struct NodePath {
    uint32_t instance = 0;
    uint64_t copy = 0;
    llvm::SmallVector<std::pair<const Component *, uint32_t>, 2> components;
    const Component &leaf() const { return *components.back().first; }
  };

  // --- Size -----------------------------------------------------------------------
  uint32_t numNodes() const { return numNodes_; }
  uint32_t numEdges() const { return static_cast<uint32_t>(edges_.size()); }
  uint32_t numLinks() const { return static_cast<uint32_t>(links_.size()); }

  // --- Nodes ----------------------------------------------------------------------
  NodePath decode(NodeId n) const;
  std::string name(NodeId n) const;
  void appendName(NodeId n, llvm::SmallVectorImpl<char> &out) const;
  ComponentKind kind(NodeId n) const { return decode(n).leaf().kind; }
  /// The InfraGraph `type` attribute: the kind's name, or the custom type.
  llvm::StringRef typeName(NodeId n) const;
  /// The device instance that holds a node (index into instances()) and its copy.
  uint32_t instanceOf(NodeId n) const;
  uint64_t copyOf(NodeId n) const;
  /// A dense id for (instance, copy), i.e. "which box": 0..numDeviceCopies()-1.
  uint32_t deviceCopyOf(NodeId n) const;
  uint32_t numDeviceCopies() const { return numDeviceCopies_; }
  /// Parses `inst.i.comp.j...` back into a node id.
  std::optional<NodeId> lookup(llvm::StringRef name) const;
  /// The nodes whose names start with the dotted `prefix` at a part boundary
  /// (`host`, `host.3`, `host.3.xpu`, `host.3.xpu.1`, ...): always a contiguous id
  /// range [first, second). Empty optional if the prefix names nothing.
  std::optional<std::pair<NodeId, NodeId>> prefixRange(llvm::StringRef prefix) const;
  /// The InfraGraph `device` and `composed_device` node attributes: the definition
  /// of the device that holds the leaf component, and that device copy's name
  /// (`dgx.0` or, for a composed one, `dgx.0.cx5.3`).
  llvm::StringRef deviceName(NodeId n) const;
  std::string composedDeviceName(NodeId n) const;

  // --- Edges ----------------------------------------------------------------------
  llvm::ArrayRef<Adjacent> neighbours(NodeId n) const {
    return {adj_.data() + adjBegin_[n], adj_.data() + adjBegin_[n + 1]};
  }
  uint32_t degree(NodeId n) const { return adjBegin_[n + 1] - adjBegin_[n]; }
  const EdgeRec &edge(EdgeId e) const { return edges_[e]; }
  llvm::ArrayRef<EdgeRec> edges() const { return edges_; }
  const LinkInfo &link(LinkId l) const { return links_[l]; }

  // --- Directed links -------------------------------------------------------------
  // Models that load each direction of a link separately number them 2e (edge e from
  // its u to its v) and 2e + 1 (back): 0 .. 2 * numEdges() - 1.
  uint32_t directedLink(EdgeId e, NodeId from) const {
    return 2 * e + (edges_[e].u == from ? 0 : 1);
  }
  NodeId directedFrom(uint32_t d) const { return d & 1 ? edges_[d / 2].v : edges_[d / 2].u; }
  NodeId directedTo(uint32_t d) const { return d & 1 ? edges_[d / 2].u : edges_[d / 2].v; }
  /// "a.0.x.1 -> b.0.y.2"
  std::string directedLinkName(uint32_t d) const {
    return name(directedFrom(d)) + " -> " + name(directedTo(d));
  }
  llvm::ArrayRef<LinkInfo> links() const { return links_; }

  // --- Structure ------------------------------------------------------------------
  llvm::ArrayRef<InstanceInfo> instances() const { return instances_; }
  const DeviceLayout &layout(uint32_t device) const { return layouts_[device]; }
  const Infrastructure &definitions() const { return *defs_; }
  /// Endpoints that ranks are placed on, in a stable order: every xpu node in node-id
  /// order if the fabric has any xpu; otherwise one node per host copy (its first
  /// nic, else its first node), in instance order.
  llvm::ArrayRef<NodeId> endpoints() const { return endpoints_; }
  bool endpointsAreXpus() const { return endpointsAreXpus_; }

  /// Annotation attributes (from the document's Annotation section), in the order
  /// they were first set, later annotations overriding earlier values; null when a
  /// node or edge has none. The attributes the expansion sets itself (type,
  /// instance, device, link, bandwidth, ...) are not included.
  const std::vector<Attribute> *nodeAttributes(NodeId n) const;
  const std::vector<Attribute> *edgeAttributes(EdgeId e) const;
  llvm::ArrayRef<Attribute> graphAttributes() const { return graphAttrs_; }

private:
  friend class FabricExpander;

  std::shared_ptr<const Infrastructure> defs_;
  std::vector<DeviceLayout> layouts_;
  std::vector<InstanceInfo> instances_;
  llvm::StringMap<uint32_t> instanceByName_;
  std::vector<uint32_t> deviceCopyBase_;  // per instance: first dense device-copy id
  uint32_t numNodes_ = 0, numDeviceCopies_ = 0;

  std::vector<LinkInfo> links_;
  std::vector<EdgeRec> edges_;
  std::vector<uint32_t> adjBegin_;
  std::vector<Adjacent> adj_;

  std::vector<NodeId> endpoints_;
  bool endpointsAreXpus_ = false;

  // Node annotations usually cover whole instances, so they are kept per run of
  // consecutive node ids with the same attributes: run i covers
  // [nodeAttrStart_[i], nodeAttrStart_[i+1]) and uses nodeAttrSets_[nodeAttrSet_[i]]
  // (index 0: no attributes).
  std::vector<NodeId> nodeAttrStart_;
  std::vector<uint32_t> nodeAttrSet_;
  std::vector<std::vector<Attribute>> nodeAttrSets_;
  // Edge attributes: those of the edge's link (from link annotations) unless the
  // edge has annotations of its own, which are then merged with its link's.
  std::vector<std::vector<Attribute>> linkAttrs_;   // per LinkId
  llvm::DenseMap<EdgeId, std::vector<Attribute>> edgeAttrs_;
  std::vector<Attribute> graphAttrs_;
};

struct ExpandOptions {
  /// Warn about nodes without edges and about a graph of several components.
  bool connectivityWarnings = true;
};

/// Validates the definitions and expands them into the fully qualified graph.
/// Every problem is reported through `diags` (at the element's location when it has
/// one, otherwise against defs->origin); returns null if any error was reported.
std::unique_ptr<FabricGraph> expandFabric(std::shared_ptr<const Infrastructure> defs,
                                          DiagEngine &diags, const ExpandOptions &opts = {});

} // namespace infracc
