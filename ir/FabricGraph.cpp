// Expansion of topology definitions into the fully qualified graph, with the
// validation InfraGraph's reference performs plus what it silently gets wrong
// (unknown components, one2one length mismatches, recursive composition, ...).
#include "ir/FabricGraph.h"

#include "ir/AnnotationNames.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <map>
#include <numeric>

namespace infracc {

// ---------------------------------------------------------------------------------
// Node queries
// ---------------------------------------------------------------------------------

uint32_t FabricGraph::instanceOf(NodeId n) const {
  // Instances are laid out in order; find the last one starting at or before n.
  auto it = std::upper_bound(instances_.begin(), instances_.end(), n,
                             [](NodeId v, const InstanceInfo &i) { return v < i.firstNode; });
  // Instances with zero nodes share a firstNode with their successor; skip them.
  --it;
  while (it != instances_.begin() && (it->count == 0 || it->nodesPerCopy == 0))
    --it;
  return static_cast<uint32_t>(it - instances_.begin());
}

uint64_t FabricGraph::copyOf(NodeId n) const {
  const InstanceInfo &inst = instances_[instanceOf(n)];
  return (n - inst.firstNode) / inst.nodesPerCopy;
}

uint32_t FabricGraph::deviceCopyOf(NodeId n) const {
  uint32_t i = instanceOf(n);
  return deviceCopyBase_[i] + static_cast<uint32_t>(copyOf(n));
}

FabricGraph::NodePath FabricGraph::decode(NodeId n) const {
  NodePath p;
  p.instance = instanceOf(n);
  const InstanceInfo &inst = instances_[p.instance];
  uint32_t local = n - inst.firstNode;
  p.copy = local / inst.nodesPerCopy;
  local %= inst.nodesPerCopy;
  uint32_t device = inst.device;
  for (;;) {
    const DeviceLayout &lay = layouts_[device];
    auto g = std::upper_bound(lay.groups.begin(), lay.groups.end(), local,
                              [](uint32_t v, const Group &gr) { return v < gr.offset; });
    --g;
    // Groups with zero copies share an offset with the next one; step back past them.
    while (g->count == 0 || g->nodesPerCopy == 0)
      --g;
    uint32_t within = local - g->offset;
    const Component &comp = defs_->devices[device].components[g->component];
    p.components.push_back({&comp, within / g->nodesPerCopy});
    if (g->childDevice < 0)
      break;
    local = within % g->nodesPerCopy;
    device = static_cast<uint32_t>(g->childDevice);
  }
  return p;
}

void FabricGraph::appendName(NodeId n, llvm::SmallVectorImpl<char> &out) const {
  NodePath p = decode(n);
  llvm::raw_svector_ostream os(out);
  os << instances_[p.instance].name << '.' << p.copy;
  for (auto &[comp, idx] : p.components)
    os << '.' << comp->name << '.' << idx;
}

std::string FabricGraph::name(NodeId n) const {
  llvm::SmallString<64> s;
  appendName(n, s);
  return std::string(s.str());
}

llvm::StringRef FabricGraph::typeName(NodeId n) const {
  NodePath p = decode(n);
  const Component &c = p.leaf();
  if (c.kind == ComponentKind::Custom)
    return c.customType;
  return componentKindName(c.kind);
}

std::optional<NodeId> FabricGraph::lookup(llvm::StringRef name) const {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  name.split(parts, '.');
  if (parts.size() < 4 || parts.size() % 2 != 0)
    return std::nullopt;
  auto it = instanceByName_.find(parts[0]);
  if (it == instanceByName_.end())
    return std::nullopt;
  const InstanceInfo &inst = instances_[it->second];
  uint64_t copy;
  if (parts[1].getAsInteger(10, copy) || copy >= inst.count)
    return std::nullopt;
  uint64_t node = inst.firstNode + copy * inst.nodesPerCopy;
  uint32_t device = inst.device;
  for (size_t i = 2; i < parts.size(); i += 2) {
    const DeviceDef &dev = defs_->devices[device];
    const DeviceLayout &lay = layouts_[device];
    const Group *found = nullptr;
    for (const Group &g : lay.groups)
      if (dev.components[g.component].name == parts[i]) {
        found = &g;
        break;
      }
    uint64_t idx;
    if (!found || parts[i + 1].getAsInteger(10, idx) || idx >= found->count)
      return std::nullopt;
    node += found->offset + idx * found->nodesPerCopy;
    bool last = i + 2 == parts.size();
    if (found->childDevice < 0) {
      if (!last)
        return std::nullopt;
      return static_cast<NodeId>(node);
    }
    if (last)
      return std::nullopt;
    device = static_cast<uint32_t>(found->childDevice);
  }
  return std::nullopt;
}

std::optional<std::pair<NodeId, NodeId>> FabricGraph::prefixRange(llvm::StringRef prefix) const {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  prefix.split(parts, '.');
  auto it = instanceByName_.find(parts[0]);
  if (it == instanceByName_.end())
    return std::nullopt;
  const InstanceInfo &inst = instances_[it->second];
  // An index must be written as the expansion writes it (no sign, no leading 0).
  auto index = [](llvm::StringRef s, uint64_t limit) -> std::optional<uint64_t> {
    uint64_t v;
    if (s.empty() || s.getAsInteger(10, v) || std::to_string(v) != s || v >= limit)
      return std::nullopt;
    return v;
  };
  uint64_t lo = inst.firstNode, hi = inst.firstNode + inst.count * uint64_t(inst.nodesPerCopy);
  uint32_t device = inst.device;
  uint32_t span = inst.nodesPerCopy;   // nodes per copy at the current level
  size_t i = 1;
  if (i < parts.size()) {
    auto c = index(parts[i], inst.count);
    if (!c)
      return std::nullopt;
    lo += *c * span;
    hi = lo + span;
    ++i;
  }
  while (i < parts.size()) {
    const DeviceDef &dev = defs_->devices[device];
    const Group *found = nullptr;
    for (const Group &g : layouts_[device].groups)
      if (dev.components[g.component].name == parts[i]) {
        found = &g;
        break;
      }
    if (!found)
      return std::nullopt;
    lo += found->offset;
    hi = lo + uint64_t(found->count) * found->nodesPerCopy;
    ++i;
    if (i == parts.size())
      break;
    auto c = index(parts[i], found->count);
    if (!c)
      return std::nullopt;
    lo += *c * found->nodesPerCopy;
    hi = lo + found->nodesPerCopy;
    ++i;
    if (i < parts.size()) {
      if (found->childDevice < 0)
        return std::nullopt;
      device = static_cast<uint32_t>(found->childDevice);
    }
    span = found->nodesPerCopy;
  }
  (void)span;
  if (lo >= hi)
    return std::nullopt;
  return std::make_pair(static_cast<NodeId>(lo), static_cast<NodeId>(hi));
}

llvm::StringRef FabricGraph::deviceName(NodeId n) const {
  NodePath p = decode(n);
  if (p.components.size() == 1)
    return defs_->devices[instances_[p.instance].device].name;
  return p.components[p.components.size() - 2].first->name;   // a composed device
}

std::string FabricGraph::composedDeviceName(NodeId n) const {
  NodePath p = decode(n);
  std::string out = fmt::format("{}.{}", instances_[p.instance].name, p.copy);
  for (size_t i = 0; i + 1 < p.components.size(); ++i)
    out += fmt::format(".{}.{}", p.components[i].first->name, p.components[i].second);
  return out;
}

const std::vector<Attribute> *FabricGraph::nodeAttributes(NodeId n) const {
  if (nodeAttrStart_.empty())
    return nullptr;
  auto it = std::upper_bound(nodeAttrStart_.begin(), nodeAttrStart_.end(), n);
  if (it == nodeAttrStart_.begin())
    return nullptr;
  uint32_t set = nodeAttrSet_[size_t(it - nodeAttrStart_.begin()) - 1];
  return set ? &nodeAttrSets_[set] : nullptr;
}

const std::vector<Attribute> *FabricGraph::edgeAttributes(EdgeId e) const {
  auto it = edgeAttrs_.find(e);
  if (it != edgeAttrs_.end())
    return &it->second;
  LinkId l = edges_[e].link;
  if (l < linkAttrs_.size() && !linkAttrs_[l].empty())
    return &linkAttrs_[l];
  return nullptr;
}

// ---------------------------------------------------------------------------------
// Expansion
// ---------------------------------------------------------------------------------

namespace {

constexpr uint64_t MaxNodes = 0xFFFFFFFEull;

std::string joinNames(llvm::ArrayRef<std::string> names, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) {
    if (i)
      out += ", ";
    out += names[i];
  }
  if (names.size() > limit)
    out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

std::string describeSlice(const PathElem &e) {
  std::string s = e.name;
  if (!e.slice)
    return s;
  const Slice &sl = *e.slice;
  if (sl.isIndex)
    return s + fmt::format("[{}]", sl.start.value_or(0));
  s += '[';
  if (sl.start)
    s += std::to_string(*sl.start);
  s += ':';
  if (sl.stop)
    s += std::to_string(*sl.stop);
  if (sl.step)
    s += ':' + std::to_string(*sl.step);
  return s + ']';
}

// An edge inside one copy of a device, between local node offsets (a < b), with the
// device edge that declared it (for messages).
struct LocalEdge {
  uint32_t a, b;
  LinkId link;
  const DeviceEdge *origin;
};

} // namespace

class FabricExpander {
public:
  FabricExpander(std::shared_ptr<const Infrastructure> defs, DiagEngine &diags,
                 const ExpandOptions &opts)
      : defs_(std::move(defs)), diags_(diags), opts_(opts), g_(new FabricGraph) {
    g_->defs_ = defs_;
  }

  std::unique_ptr<FabricGraph> run();

private:
  void error(llvm::SMLoc loc, const llvm::Twine &msg) {
    if (loc.isValid())
      diags_.error(loc, msg);
    else
      diags_.error(defs_->origin, msg);
  }
  static constexpr uint64_t BytesPerNode = FabricBytesPerNode, BytesPerEdge = FabricBytesPerEdge;
  /// False, with an error at `loc`, when `count` items would not fit in -max-memory.
  bool fits(llvm::SMLoc loc, llvm::StringRef what, uint64_t count, uint64_t bytesEach) {
    if (std::optional<std::string> msg = exceedsMemory(what, count, bytesEach)) {
      error(loc, *msg);
      return false;
    }
    return true;
  }
  void warning(llvm::SMLoc loc, const llvm::Twine &msg) {
    if (loc.isValid())
      diags_.warning(loc, msg);
    else
      diags_.warning(defs_->origin, msg);
  }
  void note(llvm::SMLoc loc, const llvm::Twine &msg) {
    if (loc.isValid())
      diags_.note(loc, msg);
  }

  void checkName(llvm::StringRef name, llvm::StringRef what, llvm::SMLoc loc);
  void checkDefinitions();
  bool computeLayouts();
  bool computeLayout(uint32_t d, std::vector<uint8_t> &state, std::vector<uint32_t> &stack);
  bool layoutInstances();
  void buildLinkTable();
  bool resolveSlice(const PathElem &e, uint64_t count, llvm::StringRef owner,
                    llvm::SmallVectorImpl<uint32_t> &out);
  bool resolvePath(uint32_t device, llvm::ArrayRef<PathElem> path, uint32_t base,
                   std::vector<uint32_t> &out);
  bool pairUp(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b, Scheme scheme,
              LinkId link, llvm::SMLoc loc, const std::function<void(uint32_t, uint32_t)> &add,
              const std::function<std::string(uint32_t)> &nameOf);
  const std::vector<LocalEdge> *deviceEdges(uint32_t d);
  std::string localName(uint32_t device, uint32_t local) const;
  bool resolveEndpoint(const InfraEndpoint &ep, std::vector<uint32_t> &out);
  void expandEdges();
  llvm::SMLoc declarationOf(NodeId u, NodeId v, LinkId link);
  void dedupAndBuildAdjacency();
  void findEndpoints();
  void connectivityWarnings();
  void applyAnnotations();

  std::shared_ptr<const Infrastructure> defs_;
  DiagEngine &diags_;
  ExpandOptions opts_;
  std::unique_ptr<FabricGraph> g_;
  unsigned errorsAtStart_ = 0;

  llvm::StringMap<uint32_t> deviceIdx_;
  std::vector<llvm::StringMap<uint32_t>> componentIdx_;   // per device
  std::vector<llvm::StringMap<LinkId>> deviceLinkIdx_;    // per device
  llvm::StringMap<LinkId> infraLinkIdx_;
  std::vector<std::optional<std::vector<LocalEdge>>> deviceEdgeCache_;
  std::vector<uint8_t> deviceEdgeState_;
  std::vector<FabricGraph::EdgeRec> raw_;                 // in insertion order
  bool inDeviceEdge_ = false;
  bool failed() const { return diags_.errorCount() > errorsAtStart_; }
};

void FabricExpander::checkName(llvm::StringRef name, llvm::StringRef what, llvm::SMLoc loc) {
  if (name.empty()) {
    error(loc, llvm::Twine(what) + " has an empty name");
    return;
  }
  if (name.contains('.')) {
    error(loc, llvm::Twine(what) + " name '" + name +
                   "' contains '.', which separates the parts of fully qualified node names");
    return;
  }
  // InfraGraph's name pattern is ^[\sa-zA-Z0-9-_()><\[\]]+$. Of the blanks only the
  // space is allowed here (a tab or newline would break the TSV and text outputs).
  for (char c : name) {
    bool ok = llvm::isAlnum(c) || c == ' ' || c == '-' || c == '_' || c == '(' || c == ')' ||
              c == '<' || c == '>' || c == '[' || c == ']';
    if (!ok) {
      std::string shown = llvm::isPrint(c) ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      error(loc, llvm::Twine(what) + " name '" + name + "' contains '" + shown +
                     "'; names may use letters, digits, spaces and - _ ( ) < > [ ]");
      return;
    }
  }
  // Endpoints select copies with [..]: a component or instance named with brackets
  // could never be referred to.
  if ((what == "component" || what == "instance") && (name.contains('[') || name.contains(']')))
    error(loc, llvm::Twine(what) + " name '" + name + "' contains '" +
                   (name.contains('[') ? "[" : "]") +
                   "'; in edges brackets select copies, so such a " + what +
                   " could not be named in an edge");
}

void FabricExpander::checkDefinitions() {
  const Infrastructure &in = *defs_;
  componentIdx_.resize(in.devices.size());
  deviceLinkIdx_.resize(in.devices.size());
  for (uint32_t d = 0; d < in.devices.size(); ++d) {
    const DeviceDef &dev = in.devices[d];
    checkName(dev.name, "device", dev.loc);
    auto [it, fresh] = deviceIdx_.try_emplace(dev.name, d);
    if (!fresh) {
      error(dev.loc, "device '" + dev.name + "' is defined more than once");
      note(in.devices[it->second].loc, "first definition is here");
    }
    for (uint32_t c = 0; c < dev.components.size(); ++c) {
      const Component &comp = dev.components[c];
      checkName(comp.name, "component", comp.loc);
      auto [ci, cfresh] = componentIdx_[d].try_emplace(comp.name, c);
      if (!cfresh) {
        error(comp.loc, "component '" + comp.name + "' appears more than once in device '" +
                            dev.name + "'");
        note(dev.components[ci->second].loc, "first definition is here");
      }
      if (comp.kind == ComponentKind::Custom && comp.customType.empty())
        error(comp.loc, "component '" + comp.name + "' of device '" + dev.name +
                            "' has choice 'custom' but no custom type");
      if (comp.count > 0x7FFFFFFF)
        error(comp.countLoc.isValid() ? comp.countLoc : comp.loc,
              fmt::format("component '{}' of device '{}' has count {}, more than the "
                          "2147483647 InfraGraph allows",
                          comp.name, dev.name, comp.count));
    }
    for (const LinkDef &l : dev.links)
      checkName(l.name, "link", l.loc);
  }
  // Composed components must name a device; checked after all names are known.
  std::vector<std::string> deviceNames;
  for (const DeviceDef &dev : in.devices)
    deviceNames.push_back(dev.name);
  for (const DeviceDef &dev : in.devices)
    for (const Component &comp : dev.components)
      if (comp.kind == ComponentKind::Device && !deviceIdx_.count(comp.name))
        error(comp.loc, "component '" + comp.name + "' of device '" + dev.name +
                            "' is a composed device, but no device named '" + comp.name +
                            "' is defined (devices: " + joinNames(deviceNames) + ")" +
                            didYouMean(comp.name, deviceNames));
  for (const LinkDef &l : in.links)
    checkName(l.name, "link", l.loc);
  llvm::StringMap<uint32_t> instSeen;
  for (uint32_t i = 0; i < in.instances.size(); ++i) {
    const Instance &inst = in.instances[i];
    checkName(inst.name, "instance", inst.loc);
    auto [it, fresh] = instSeen.try_emplace(inst.name, i);
    if (!fresh) {
      error(inst.loc, "instance '" + inst.name + "' is defined more than once");
      note(in.instances[it->second].loc, "first definition is here");
    }
    if (!deviceIdx_.count(inst.device))
      error(inst.deviceLoc.isValid() ? inst.deviceLoc : inst.loc,
            "instance '" + inst.name + "' uses device '" + inst.device +
                "', which is not defined (devices: " + joinNames(deviceNames) + ")" +
                didYouMean(inst.device, deviceNames));
    if (inst.count > 0x7FFFFFFF)
      error(inst.countLoc.isValid() ? inst.countLoc : inst.loc,
            fmt::format("instance '{}' has count {}, more than the 2147483647 InfraGraph allows",
                        inst.name, inst.count));
  }
}

bool FabricExpander::computeLayout(uint32_t d, std::vector<uint8_t> &state,
                                   std::vector<uint32_t> &stack) {
  if (state[d] == 2)
    return true;
  const DeviceDef &dev = defs_->devices[d];
  if (state[d] == 1) {
    std::string chain;
    auto start = std::find(stack.begin(), stack.end(), d);
    for (auto it = start; it != stack.end(); ++it)
      chain += defs_->devices[*it].name + " -> ";
    chain += dev.name;
    error(dev.loc, "device '" + dev.name + "' contains itself through composition (" + chain +
                       ")");
    return false;
  }
  state[d] = 1;
  stack.push_back(d);
  FabricGraph::DeviceLayout lay;
  uint64_t total = 0;
  bool ok = true;
  for (uint32_t c = 0; c < dev.components.size(); ++c) {
    const Component &comp = dev.components[c];
    FabricGraph::Group g;
    g.component = c;
    g.count = static_cast<uint32_t>(std::min<uint64_t>(comp.count, 0x7FFFFFFF));
    g.offset = static_cast<uint32_t>(std::min<uint64_t>(total, MaxNodes));
    if (comp.kind == ComponentKind::Device) {
      auto it = deviceIdx_.find(comp.name);
      if (it == deviceIdx_.end())
        return false; // already reported
      if (!computeLayout(it->second, state, stack)) {
        ok = false;
        break;
      }
      const auto &child = g_->layouts_[it->second];
      g.childDevice = static_cast<int32_t>(it->second);
      g.nodesPerCopy = child.numNodes;
      lay.hasXpu |= child.hasXpu;
      lay.hasNic |= child.hasNic;
      lay.hasPort |= child.hasPort;
      lay.hasSwitch |= child.hasSwitch;
    } else {
      g.nodesPerCopy = 1;
      lay.hasXpu |= comp.kind == ComponentKind::Xpu;
      lay.hasNic |= comp.kind == ComponentKind::Nic;
      lay.hasPort |= comp.kind == ComponentKind::Port;
      lay.hasSwitch |= comp.kind == ComponentKind::Switch;
    }
    total += uint64_t(g.count) * g.nodesPerCopy;
    lay.groups.push_back(g);
  }
  stack.pop_back();
  if (!ok)
    return false;
  if (total > MaxNodes) {
    error(dev.loc, fmt::format("device '{}' expands to {} nodes per copy; at most {} are supported",
                               dev.name, total, MaxNodes));
    return false;
  }
  lay.numNodes = static_cast<uint32_t>(total);
  g_->layouts_[d] = std::move(lay);
  state[d] = 2;
  return true;
}

bool FabricExpander::computeLayouts() {
  size_t n = defs_->devices.size();
  g_->layouts_.resize(n);
  std::vector<uint8_t> state(n, 0);
  std::vector<uint32_t> stack;
  bool ok = true;
  for (uint32_t d = 0; d < n; ++d) {
    if (state[d] == 2)
      continue;
    // A cycle leaves devices half-visited; report each cycle once.
    if (state[d] == 1)
      continue;
    stack.clear();
    if (!computeLayout(d, state, stack))
      ok = false;
  }
  return ok;
}

bool FabricExpander::layoutInstances() {
  uint64_t next = 0;
  uint32_t copies = 0;
  for (uint32_t i = 0; i < defs_->instances.size(); ++i) {
    const Instance &inst = defs_->instances[i];
    FabricGraph::InstanceInfo info;
    info.name = inst.name;
    info.device = deviceIdx_.lookup(inst.device);
    info.count = inst.count;
    info.firstNode = static_cast<NodeId>(std::min<uint64_t>(next, MaxNodes));
    const auto &lay = g_->layouts_[info.device];
    info.nodesPerCopy = lay.numNodes;
    info.role = (lay.hasXpu || lay.hasNic) ? InstanceRole::Host
                : (lay.hasPort || lay.hasSwitch) ? InstanceRole::Switch
                                                 : InstanceRole::Other;
    next += inst.count * uint64_t(lay.numNodes);
    g_->instanceByName_[inst.name] = i;
    g_->deviceCopyBase_.push_back(copies);
    copies += static_cast<uint32_t>(inst.count);
    g_->instances_.push_back(std::move(info));
  }
  if (next > MaxNodes) {
    error(llvm::SMLoc(), fmt::format("the fabric expands to {} nodes; at most {} are supported",
                                     next, MaxNodes));
    return false;
  }
  if (!fits(llvm::SMLoc(), fmt::format("the fabric's {} nodes", next), next, BytesPerNode))
    return false;
  g_->numNodes_ = static_cast<uint32_t>(next);
  g_->numDeviceCopies_ = copies;
  return true;
}

void FabricExpander::buildLinkTable() {
  using LinkInfo = FabricGraph::LinkInfo;
  auto add = [&](const LinkDef &l, int32_t device, llvm::StringMap<LinkId> &index,
                 llvm::StringRef scope) {
    LinkInfo info;
    info.name = l.name;
    info.device = device;
    info.bandwidth = l.bandwidth;
    info.latency = l.latency;
    LinkId id = static_cast<LinkId>(g_->links_.size());
    auto [it, fresh] = index.try_emplace(l.name, id);
    if (!fresh) {
      error(l.loc, "link '" + l.name + "' is defined more than once in " + scope);
      const LinkInfo &first = g_->links_[it->second];
      const LinkDef *firstDef = nullptr;
      for (const LinkDef &x : first.device < 0 ? defs_->links
                                               : defs_->devices[size_t(first.device)].links)
        if (x.name == l.name && !firstDef)
          firstDef = &x;
      if (firstDef)
        note(firstDef->loc, "first definition is here");
      return;
    }
    // The frontend checks these at their values; blueprints are checked here.
    if (l.bandwidth && !(l.bandwidth->bitsPerSecond > 0))
      error(l.loc, "link '" + l.name + "' of " + scope + " has a bandwidth that is not positive");
    if (l.latency && !(l.latency->ns >= 0))
      error(l.loc, "link '" + l.name + "' of " + scope + " has a negative latency");
    g_->links_.push_back(std::move(info));
  };
  for (const LinkDef &l : defs_->links)
    add(l, -1, infraLinkIdx_, "the infrastructure");
  for (uint32_t d = 0; d < defs_->devices.size(); ++d)
    for (const LinkDef &l : defs_->devices[d].links)
      add(l, static_cast<int32_t>(d), deviceLinkIdx_[d], "device '" + defs_->devices[d].name + "'");
}

// Slices follow what the reference does with them: Python's range(start, stop, step)
// with start 0, stop = count and step 1 by default, `[i]` being range(i, i+1). A
// negative number is a plain range bound, not "from the end". Every selected index
// must be a copy that exists (the reference would invent nodes for the others).
bool FabricExpander::resolveSlice(const PathElem &e, uint64_t count, llvm::StringRef owner,
                                  llvm::SmallVectorImpl<uint32_t> &out) {
  if (!e.slice) {
    for (uint64_t i = 0; i < count; ++i)
      out.push_back(static_cast<uint32_t>(i));
    return true;
  }
  const Slice &s = *e.slice;
  std::string valid = count ? fmt::format("indices 0..{}", count - 1) : std::string("no copies");
  if (s.isIndex) {
    int64_t i = s.start.value_or(0);
    if (i < 0) {
      error(e.loc, fmt::format("index {} in '{}' is negative; indices count from 0 ({} has count "
                               "{}: {}) and a negative index does not count from the end",
                               i, describeSlice(e), owner.str(), count, valid));
      return false;
    }
    if (uint64_t(i) >= count) {
      error(e.loc, fmt::format("index {} in '{}' is out of range: {} has count {} ({})", i,
                               describeSlice(e), owner.str(), count, valid));
      return false;
    }
    out.push_back(static_cast<uint32_t>(i));
    return true;
  }
  __int128 step = s.step.value_or(1);
  if (step == 0) {
    error(e.loc, fmt::format("slice '{}' has step 0; the step must not be 0", describeSlice(e)));
    return false;
  }
  __int128 start = s.start.value_or(0), stop = s.stop ? __int128(*s.stop) : __int128(count);
  __int128 n = step > 0 ? (start < stop ? (stop - start + step - 1) / step : 0)
                        : (start > stop ? (start - stop - step - 1) / -step : 0);
  if (n == 0) {
    std::string hint = step < 0 && (!s.start || !s.stop)
                           ? "; with a negative step give both bounds, start above stop, "
                             "e.g. [7:3:-1]"
                           : "";
    error(e.loc, fmt::format("slice '{}' selects nothing ({} has count {}); slices are "
                             "range(start, stop, step){}",
                             describeSlice(e), owner.str(), count, hint));
    return false;
  }
  __int128 first = start, last = start + (n - 1) * step;
  __int128 lo = std::min(first, last), hi = std::max(first, last);
  if (lo < 0) {
    error(e.loc, fmt::format("slice '{}' selects index {}: a negative number is a range bound, it "
                             "does not count from the end ({} has count {}: {})",
                             describeSlice(e), int64_t(lo), owner.str(), count, valid));
    return false;
  }
  if (hi >= __int128(count)) {
    error(e.loc, fmt::format("slice '{}' selects index {}, out of range: {} has count {} ({})",
                             describeSlice(e), int64_t(hi), owner.str(), count, valid));
    return false;
  }
  for (__int128 k = 0; k < n; ++k)
    out.push_back(static_cast<uint32_t>(start + k * step));
  return true;
}

// Appends the local node offsets (relative to one copy of `device`, plus `base`)
// named by `path`, outermost element major.
bool FabricExpander::resolvePath(uint32_t device, llvm::ArrayRef<PathElem> path, uint32_t base,
                                 std::vector<uint32_t> &out) {
  const DeviceDef &dev = defs_->devices[device];
  const PathElem &head = path.front();
  auto it = componentIdx_[device].find(head.name);
  if (it == componentIdx_[device].end()) {
    std::vector<std::string> names;
    for (const Component &c : dev.components)
      names.push_back(c.name);
    std::string hint = didYouMean(head.name, names);
    if (hint.empty() && g_->instanceByName_.count(head.name))
      hint = inDeviceEdge_
                 ? "; '" + head.name + "' is an instance, and a device edge stays inside one "
                   "copy of its device: join instances with an infrastructure edge"
                 : "; '" + head.name + "' is an instance: write it in 'instance' and a "
                   "component of its device in 'component'";
    else if (hint.empty() && deviceIdx_.count(head.name))
      hint = "; '" + head.name + "' is a device, but device '" + dev.name +
             "' has no composed component of that name";
    error(head.loc, "component '" + head.name + "' is not a component of device '" + dev.name +
                        "' (it has: " + (names.empty() ? std::string("none") : joinNames(names)) +
                        ")" + hint);
    return false;
  }
  const auto &lay = g_->layouts_[device];
  const FabricGraph::Group &grp = lay.groups[it->second];
  const Component &comp = dev.components[it->second];
  llvm::SmallVector<uint32_t, 16> copies;
  if (!resolveSlice(head, grp.count, "component '" + head.name + "' of device '" + dev.name + "'",
                    copies))
    return false;
  if (grp.childDevice < 0) {
    if (path.size() > 1) {
      error(path[1].loc, "component '" + head.name + "' of device '" + dev.name +
                             "' is a " + componentKindName(comp.kind) +
                             ", not a composed device, so it has no component '" + path[1].name +
                             "'");
      return false;
    }
    for (uint32_t c : copies)
      out.push_back(base + grp.offset + c);
    return true;
  }
  if (path.size() == 1) {
    const DeviceDef &child = defs_->devices[grp.childDevice];
    std::vector<std::string> names;
    for (const Component &c : child.components)
      names.push_back(head.name + "." + c.name);
    error(head.loc, "'" + head.name + "' is a composed device; an edge must name one of its "
                    "components (" + joinNames(names) + ")");
    return false;
  }
  for (uint32_t c : copies)
    if (!resolvePath(static_cast<uint32_t>(grp.childDevice), path.drop_front(),
                     base + grp.offset + c * grp.nodesPerCopy, out))
      return false;
  return true;
}

bool FabricExpander::pairUp(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b,
                            Scheme scheme, LinkId link, llvm::SMLoc loc,
                            const std::function<void(uint32_t, uint32_t)> &add,
                            const std::function<std::string(uint32_t)> &nameOf) {
  (void)link;
  switch (scheme) {
  case Scheme::Many2Many:
    if (!fits(loc, fmt::format("this many2many edge's {} x {} pairs", a.size(), b.size()),
              uint64_t(a.size()) * b.size(), BytesPerEdge))
      return false;
    for (uint32_t x : a)
      for (uint32_t y : b)
        if (x != y)
          add(x, y);
    return true;
  case Scheme::One2One:
  case Scheme::Ring:
    if (scheme == Scheme::One2One && a.size() != b.size() && !a.empty() && !b.empty()) {
      // As the reference does (zip): pair up to the shorter side; say what was left.
      const std::vector<uint32_t> &longer = a.size() > b.size() ? a : b;
      size_t pairs = std::min(a.size(), b.size()), left = longer.size() - pairs;
      std::string names;
      for (size_t i = pairs; i < longer.size() && i < pairs + 3; ++i)
        names += (i == pairs ? "" : ", ") + nameOf(longer[i]);
      if (left > 3)
        names += fmt::format(" and {} more", left - 3);
      warning(loc, fmt::format("one2one edge joins {} node{} to {}: made {} pair{} up to the "
                               "shorter side, as InfraGraph's reference does; {} node{} of the "
                               "longer side got no partner: {}",
                               a.size(), a.size() == 1 ? "" : "s", b.size(), pairs,
                               pairs == 1 ? "" : "s", left, left == 1 ? "" : "s", names));
    } else if (a.size() != b.size()) {
      error(loc, fmt::format("{} edge joins {} node{} to {}; both sides must name the same "
                             "number of nodes",
                             schemeName(scheme).str(), a.size(), a.size() == 1 ? "" : "s",
                             b.size()));
      return false;
    }
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      uint32_t x = a[i], y = scheme == Scheme::Ring ? b[(i + 1) % b.size()] : b[i];
      if (x == y) {
        error(loc, schemeName(scheme) + " edge joins '" + nameOf(x) +
                       "' to itself; a node cannot have an edge to itself (many2many skips such "
                       "pairs, one2one and ring do not)");
        return false;
      }
      add(x, y);
    }
    return true;
  }
  return true;
}

// `comp.j[.comp.j...]` of a node inside one copy of a device.
std::string FabricExpander::localName(uint32_t device, uint32_t local) const {
  std::string out;
  for (;;) {
    const auto &lay = g_->layouts_[device];
    const FabricGraph::Group *g = nullptr;
    for (const auto &grp : lay.groups)
      if (grp.count && local >= grp.offset && local < grp.offset + grp.count * grp.nodesPerCopy)
        g = &grp;
    if (!g)
      return out;
    uint32_t within = local - g->offset;
    if (!out.empty())
      out += '.';
    out += fmt::format("{}.{}", defs_->devices[device].components[g->component].name,
                       within / g->nodesPerCopy);
    if (g->childDevice < 0)
      return out;
    local = within % g->nodesPerCopy;
    device = static_cast<uint32_t>(g->childDevice);
  }
}

const std::vector<LocalEdge> *FabricExpander::deviceEdges(uint32_t d) {
  if (deviceEdgeState_[d] == 1)
    return &*deviceEdgeCache_[d];
  if (deviceEdgeState_[d] == 2)
    return nullptr;   // already reported
  const DeviceDef &dev = defs_->devices[d];
  const auto &lay = g_->layouts_[d];
  std::vector<LocalEdge> edges;
  bool ok = true;
  // Composed devices first: their internal edges exist in every copy.
  for (const auto &grp : lay.groups) {
    if (grp.childDevice < 0 || grp.count == 0)
      continue;
    const auto *child = deviceEdges(static_cast<uint32_t>(grp.childDevice));
    if (!child) {
      ok = false;
      continue;
    }
    for (uint32_t c = 0; c < grp.count; ++c) {
      uint32_t base = grp.offset + c * grp.nodesPerCopy;
      for (const LocalEdge &e : *child)
        edges.push_back({base + e.a, base + e.b, e.link, e.origin});
    }
  }
  inDeviceEdge_ = true;
  for (const DeviceEdge &e : dev.edges) {
    if (diags_.shouldStop())
      break;
    auto li = deviceLinkIdx_[d].find(e.link);
    if (li == deviceLinkIdx_[d].end()) {
      std::vector<std::string> names;
      for (const LinkDef &l : dev.links)
        names.push_back(l.name);
      std::string hint = didYouMean(e.link, names);
      if (hint.empty() && infraLinkIdx_.count(e.link))
        hint = "; '" + e.link + "' is an infrastructure link, and a device edge uses the "
               "device's own links";
      error(e.linkLoc.isValid() ? e.linkLoc : e.loc,
            "link '" + e.link + "' is not a link of device '" + dev.name + "' (it has: " +
                (names.empty() ? std::string("none") : joinNames(names)) + ")" + hint);
      ok = false;
      continue;
    }
    if (e.ep1.empty() || e.ep2.empty()) {
      error(e.loc, "device edge in '" + dev.name + "' has an empty endpoint");
      ok = false;
      continue;
    }
    std::vector<uint32_t> a, b;
    bool okA = resolvePath(d, e.ep1, 0, a);
    bool okB = resolvePath(d, e.ep2, 0, b);
    if (!okA || !okB) {
      ok = false;
      continue;
    }
    auto nameOf = [&](uint32_t local) { return localName(d, local); };
    LinkId link = li->second;
    if (!pairUp(a, b, e.scheme, link, e.loc,
                [&](uint32_t x, uint32_t y) {
                  edges.push_back({std::min(x, y), std::max(x, y), link, &e});
                },
                nameOf))
      ok = false;
  }
  inDeviceEdge_ = false;
  if (ok) {
    // Duplicate pairs collapse into one edge; one pair declared with two different
    // links is ambiguous (the reference keeps whichever it happens to add last).
    std::stable_sort(edges.begin(), edges.end(), [](const LocalEdge &x, const LocalEdge &y) {
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    });
    size_t w = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
      if (w && edges[w - 1].a == edges[i].a && edges[w - 1].b == edges[i].b) {
        if (edges[w - 1].link != edges[i].link) {
          const LocalEdge &first = edges[w - 1], &second = edges[i];
          error(second.origin->loc,
                "components '" + localName(d, first.a) + "' and '" + localName(d, first.b) +
                    "' of device '" + dev.name + "' are joined with link '" +
                    g_->links_[second.link].name + "' here and with link '" +
                    g_->links_[first.link].name +
                    "' by another edge; two nodes have at most one edge, so one link");
          if (first.origin != second.origin)
            note(first.origin->loc, "the other edge is here");
          ok = false;
        }
        continue;
      }
      edges[w++] = edges[i];
    }
    edges.resize(w);
  }
  if (!ok) {
    deviceEdgeState_[d] = 2;
    return nullptr;
  }
  deviceEdgeCache_[d] = std::move(edges);
  deviceEdgeState_[d] = 1;
  return &*deviceEdgeCache_[d];
}

bool FabricExpander::resolveEndpoint(const InfraEndpoint &ep, std::vector<uint32_t> &out) {
  auto it = g_->instanceByName_.find(ep.instance.name);
  if (it == g_->instanceByName_.end()) {
    std::vector<std::string> instNames;
    for (const Instance &i : defs_->instances)
      instNames.push_back(i.name);
    std::string hint = didYouMean(ep.instance.name, instNames);
    if (hint.empty() && deviceIdx_.count(ep.instance.name))
      hint = "; '" + ep.instance.name + "' is a device: an edge names an instance of it";
    error(ep.instance.loc, "instance '" + ep.instance.name + "' is not defined (instances: " +
                               (instNames.empty() ? std::string("none") : joinNames(instNames)) +
                               ")" + hint);
    return false;
  }
  const auto &inst = g_->instances_[it->second];
  llvm::SmallVector<uint32_t, 16> copies;
  if (!resolveSlice(ep.instance, inst.count, "instance '" + inst.name + "'", copies))
    return false;
  if (ep.component.empty()) {
    error(ep.instance.loc, "endpoint on instance '" + inst.name + "' names no component");
    return false;
  }
  std::vector<uint32_t> local;
  if (!resolvePath(inst.device, ep.component, 0, local))
    return false;
  out.reserve(copies.size() * local.size());
  for (uint32_t c : copies)
    for (uint32_t l : local)
      out.push_back(static_cast<uint32_t>(inst.firstNode + uint64_t(c) * inst.nodesPerCopy + l));
  return true;
}

void FabricExpander::expandEdges() {
  deviceEdgeCache_.resize(defs_->devices.size());
  deviceEdgeState_.assign(defs_->devices.size(), 0);
  // Device-internal edges, instance by instance, copy by copy.
  for (const auto &inst : g_->instances_) {
    if (inst.count == 0 || inst.nodesPerCopy == 0)
      continue;
    const auto *local = deviceEdges(inst.device);
    if (!local)
      continue;
    uint64_t more = uint64_t(local->size()) * inst.count;
    if (!fits(llvm::SMLoc(), fmt::format("the fabric's {} edges", raw_.size() + more),
              raw_.size() + more, BytesPerEdge))
      return;
    raw_.reserve(raw_.size() + local->size() * inst.count);
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId base = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      for (const LocalEdge &e : *local)
        raw_.push_back({base + e.a, base + e.b, e.link});
    }
  }
  // Devices no instance uses are checked too.
  for (uint32_t d = 0; d < defs_->devices.size() && !diags_.shouldStop(); ++d)
    deviceEdges(d);
  // Infrastructure edges.
  std::vector<std::string> linkNames;
  for (const LinkDef &l : defs_->links)
    linkNames.push_back(l.name);
  for (const InfraEdge &e : defs_->edges) {
    if (diags_.shouldStop())
      return;
    auto li = infraLinkIdx_.find(e.link);
    bool ok = true;
    if (li == infraLinkIdx_.end()) {
      std::string hint = didYouMean(e.link, linkNames);
      if (hint.empty())
        for (uint32_t d = 0; d < defs_->devices.size(); ++d)
          if (deviceLinkIdx_[d].count(e.link)) {
            hint = "; '" + e.link + "' is a link of device '" + defs_->devices[d].name +
                   "', and infrastructure edges use the infrastructure's links";
            break;
          }
      error(e.linkLoc.isValid() ? e.linkLoc : e.loc,
            "link '" + e.link + "' is not defined among the infrastructure links (" +
                (linkNames.empty() ? std::string("there are none") : joinNames(linkNames)) + ")" +
                hint);
      ok = false;
    }
    std::vector<uint32_t> a, b;
    ok &= resolveEndpoint(e.ep1, a);
    ok &= resolveEndpoint(e.ep2, b);
    if (!ok)
      continue;
    LinkId link = li->second;
    pairUp(a, b, e.scheme, link, e.loc,
           [&](uint32_t x, uint32_t y) { raw_.push_back({std::min(x, y), std::max(x, y), link}); },
           [&](uint32_t n) { return g_->name(n); });
  }
}

// Where an edge between u and v with `link` was declared, for messages.
llvm::SMLoc FabricExpander::declarationOf(NodeId u, NodeId v, LinkId link) {
  const FabricGraph::LinkInfo &info = g_->links_[link];
  if (info.device >= 0) {
    // A device edge: u and v lie in one copy of one instance.
    const auto &inst = g_->instances_[g_->instanceOf(u)];
    NodeId base = inst.firstNode + static_cast<NodeId>(g_->copyOf(u)) * inst.nodesPerCopy;
    if (const auto *local = deviceEdges(inst.device))
      for (const LocalEdge &e : *local)
        if (e.a == u - base && e.b == v - base && e.link == link)
          return e.origin->loc;
    return {};
  }
  for (const InfraEdge &e : defs_->edges) {
    if (e.link != info.name)
      continue;
    std::vector<uint32_t> a, b;
    if (!resolveEndpoint(e.ep1, a) || !resolveEndpoint(e.ep2, b))
      continue;
    bool hit = false;
    pairUp(a, b, e.scheme, link, e.loc,
           [&](uint32_t x, uint32_t y) { hit |= std::min(x, y) == u && std::max(x, y) == v; },
           [&](uint32_t n) { return g_->name(n); });
    if (hit)
      return e.loc;
  }
  return {};
}

void FabricExpander::dedupAndBuildAdjacency() {
  uint32_t n = g_->numNodes_;
  // Bucket the expanded edges by their lower end (a counting sort), then sort each
  // bucket by the other end: linear in the number of edges, unlike one big sort.
  std::vector<uint32_t> start(size_t(n) + 1, 0);
  for (const auto &e : raw_)
    ++start[e.u + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  struct Half {
    NodeId v;
    LinkId link;
  };
  std::vector<Half> bucket(raw_.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (const auto &e : raw_)
      bucket[fill[e.u]++] = {e.v, e.link};
  }
  std::vector<FabricGraph::EdgeRec>().swap(raw_);
  // Duplicate pairs collapse into one edge (the reference's graph is a networkx
  // Graph); a pair declared with two different links is an error.
  size_t unique = 0;
  for (uint32_t u = 0; u < n; ++u) {
    Half *b = bucket.data() + start[u], *e = bucket.data() + start[u + 1];
    if (e - b > 1)
      std::sort(b, e, [](const Half &x, const Half &y) {
        return x.v != y.v ? x.v < y.v : x.link < y.link;
      });
    for (Half *p = b; p != e; ++p)
      if (p == b || p[-1].v != p->v)
        ++unique;
  }
  if (unique > 0xFFFFFFFEull) {
    error(llvm::SMLoc(), "the fabric has more than 4294967294 edges");
    return;
  }
  auto &edges = g_->edges_;
  edges.reserve(unique);
  for (uint32_t u = 0; u < n; ++u) {
    Half *b = bucket.data() + start[u], *e = bucket.data() + start[u + 1];
    for (Half *p = b; p != e; ++p) {
      if (p != b && p[-1].v == p->v) {
        if (p[-1].link != p->link && !diags_.shouldStop()) {
          LinkId la = p[-1].link, lb = p->link;
          llvm::SMLoc locA = declarationOf(u, p->v, la), locB = declarationOf(u, p->v, lb);
          // Report at the later declaration (or at the one that has a location).
          if (!locB.isValid() ||
              (locA.isValid() && locA.getPointer() > locB.getPointer())) {
            std::swap(la, lb);
            std::swap(locA, locB);
          }
          error(locB, "nodes '" + g_->name(u) + "' and '" + g_->name(p->v) +
                          "' are joined with link '" + g_->links_[lb].name +
                          "' here and with link '" + g_->links_[la].name +
                          "' by another edge; two nodes have at most one edge, so one link");
          if (locA.isValid() && locA != locB)
            note(locA, "the other edge is here");
        }
        continue;
      }
      edges.push_back({u, p->v, p->link});
    }
  }
  std::vector<Half>().swap(bucket);
  std::vector<uint32_t>().swap(start);
  auto &begin = g_->adjBegin_;
  begin.assign(size_t(n) + 1, 0);
  for (const auto &e : edges) {
    ++begin[e.u + 1];
    ++begin[e.v + 1];
  }
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  g_->adj_.resize(begin[n]);
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  for (EdgeId id = 0; id < edges.size(); ++id) {
    const auto &e = edges[id];
    g_->adj_[fill[e.u]++] = {e.v, id};
    g_->adj_[fill[e.v]++] = {e.u, id};
  }
}

void FabricExpander::findEndpoints() {
  auto &eps = g_->endpoints_;
  bool anyXpu = false;
  for (uint32_t d = 0; d < g_->layouts_.size(); ++d)
    if (g_->layouts_[d].hasXpu)
      for (const auto &inst : g_->instances_)
        if (inst.device == d && inst.count)
          anyXpu = true;
  g_->endpointsAreXpus_ = anyXpu;
  // Per device: local offsets of xpus, or of the first nic, computed once.
  std::vector<std::vector<uint32_t>> localXpus(g_->layouts_.size());
  std::vector<uint32_t> firstNic(g_->layouts_.size(), 0);
  std::function<void(uint32_t, uint32_t, std::vector<uint32_t> &, bool &, uint32_t &)> walk =
      [&](uint32_t d, uint32_t base, std::vector<uint32_t> &xpus, bool &nicFound, uint32_t &nic) {
        const auto &lay = g_->layouts_[d];
        for (const auto &grp : lay.groups) {
          const Component &c = defs_->devices[d].components[grp.component];
          for (uint32_t k = 0; k < grp.count; ++k) {
            uint32_t off = base + grp.offset + k * grp.nodesPerCopy;
            if (grp.childDevice >= 0)
              walk(static_cast<uint32_t>(grp.childDevice), off, xpus, nicFound, nic);
            else if (c.kind == ComponentKind::Xpu)
              xpus.push_back(off);
            else if (c.kind == ComponentKind::Nic && !nicFound) {
              nicFound = true;
              nic = off;
            }
          }
        }
      };
  for (uint32_t d = 0; d < g_->layouts_.size(); ++d) {
    bool found = false;
    walk(d, 0, localXpus[d], found, firstNic[d]);
    std::sort(localXpus[d].begin(), localXpus[d].end());
  }
  for (const auto &inst : g_->instances_) {
    if (inst.nodesPerCopy == 0)
      continue;
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId base = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      if (anyXpu) {
        for (uint32_t x : localXpus[inst.device])
          eps.push_back(base + x);
      } else if (inst.role == InstanceRole::Host) {
        eps.push_back(base + firstNic[inst.device]);
      }
    }
  }
}

void FabricExpander::connectivityWarnings() {
  uint32_t n = g_->numNodes_;
  if (n == 0) {
    warning(llvm::SMLoc(), "the fabric has no nodes");
    return;
  }
  uint32_t isolated = 0;
  NodeId exampleIsolated = InvalidNode;
  for (NodeId v = 0; v < n; ++v)
    if (g_->degree(v) == 0) {
      if (!isolated++)
        exampleIsolated = v;
    }
  if (isolated)
    warning(llvm::SMLoc(), fmt::format("{} node{} no edges, e.g. '{}'", isolated,
                                       isolated == 1 ? " has" : "s have",
                                       g_->name(exampleIsolated)));
  // Connected components among nodes that have edges.
  std::vector<uint32_t> comp(n, ~0u);
  std::vector<NodeId> stack;
  uint32_t components = 0;
  NodeId firstRoot = InvalidNode, otherRoot = InvalidNode;
  for (NodeId s = 0; s < n; ++s) {
    if (comp[s] != ~0u || g_->degree(s) == 0)
      continue;
    if (components == 0)
      firstRoot = s;
    else if (components == 1)
      otherRoot = s;
    stack.push_back(s);
    comp[s] = components;
    while (!stack.empty()) {
      NodeId v = stack.back();
      stack.pop_back();
      for (const auto &a : g_->neighbours(v))
        if (comp[a.node] == ~0u) {
          comp[a.node] = components;
          stack.push_back(a.node);
        }
    }
    ++components;
  }
  if (components > 1)
    warning(llvm::SMLoc(),
            fmt::format("the fabric falls into {} connected parts (not counting nodes without "
                        "edges), e.g. '{}' cannot reach '{}'",
                        components, g_->name(firstRoot), g_->name(otherRoot)));
}

namespace {

// An attribute list with InfraGraph's set semantics: setting a key again replaces
// its value and keeps its place.
void setAttribute(std::vector<Attribute> &attrs, const Attribute &a) {
  for (Attribute &x : attrs)
    if (x.key == a.key) {
      x.value = a.value;
      return;
    }
  attrs.push_back(a);
}

} // namespace

void FabricExpander::applyAnnotations() {
  const Annotations &ann = defs_->annotations;
  static const llvm::StringRef immutable[] = {"type",   "instance",        "instance_idx",
                                              "device", "composed_device", "link"};
  // Attributes the expansion sets itself are skipped, as the reference does; one
  // warning for all of them.
  size_t skipped = 0;
  llvm::SMLoc firstSkipped;
  std::string firstSkippedKey;
  auto filtered = [&](const std::vector<Attribute> &attrs) {
    std::vector<Attribute> out;
    for (const Attribute &a : attrs) {
      if (llvm::is_contained(immutable, llvm::StringRef(a.key))) {
        if (!skipped++) {
          firstSkipped = a.loc;
          firstSkippedKey = a.key;
        }
        continue;
      }
      setAttribute(out, a);
    }
    return out;
  };

  // Nodes: each annotation covers a set of id ranges; sweep them into runs of ids
  // with equal attributes.
  struct Rule {
    NodeId lo, hi;
    uint32_t ann;
  };
  std::vector<Rule> rules;
  std::vector<std::vector<Attribute>> nodeAttrs;
  for (const auto &na : ann.nodes) {
    uint32_t index = static_cast<uint32_t>(nodeAttrs.size());
    nodeAttrs.push_back(filtered(na.attributes));
    AnnotationNames names(na.name);
    if (names.empty()) {
      error(na.loc, "node annotation has an empty name");
      continue;
    }
    names.forEach([&](const std::string &name) {
      auto range = g_->prefixRange(name);
      if (!range) {
        error(na.loc, "node annotation '" + na.name + "'" +
                          (name != na.name ? " names '" + name + "', which"
                                           : std::string(", which")) +
                          " is no node and no prefix of node names (such as 'host', 'host.0', "
                          "'host.0.xpu' or 'host.0.xpu.1')");
        return false;
      }
      rules.push_back({range->first, range->second, index});
      return true;
    });
  }
  if (!rules.empty()) {
    std::vector<std::pair<NodeId, int64_t>> events;   // (position, +rule+1 / -(rule+1))
    for (uint32_t r = 0; r < rules.size(); ++r) {
      events.push_back({rules[r].lo, int64_t(r) + 1});
      events.push_back({rules[r].hi, -(int64_t(r) + 1)});
    }
    std::sort(events.begin(), events.end());
    std::map<uint32_t, uint32_t> active;   // rule -> annotation, in rule order
    g_->nodeAttrSets_.assign(1, {});
    std::map<std::vector<std::pair<std::string, std::string>>, uint32_t> setIndex;
    for (size_t i = 0; i < events.size();) {
      NodeId pos = events[i].first;
      for (; i < events.size() && events[i].first == pos; ++i) {
        int64_t ev = events[i].second;
        if (ev > 0)
          active[uint32_t(ev - 1)] = rules[size_t(ev - 1)].ann;
        else
          active.erase(uint32_t(-ev - 1));
      }
      std::vector<Attribute> attrs;
      uint32_t lastAnn = ~0u;
      for (auto &[rule, a] : active)
        if (a != lastAnn) {   // one annotation with several overlapping ranges applies once
          for (const Attribute &x : nodeAttrs[a])
            setAttribute(attrs, x);
          lastAnn = a;
        }
      uint32_t set = 0;
      if (!attrs.empty()) {
        std::vector<std::pair<std::string, std::string>> key;
        for (const Attribute &x : attrs)
          key.push_back({x.key, x.value});
        auto [it, fresh] = setIndex.try_emplace(key, uint32_t(g_->nodeAttrSets_.size()));
        if (fresh)
          g_->nodeAttrSets_.push_back(std::move(attrs));
        set = it->second;
      }
      if (!g_->nodeAttrSet_.empty() && g_->nodeAttrSet_.back() == set)
        continue;
      if (!g_->nodeAttrStart_.empty() && g_->nodeAttrStart_.back() == pos) {
        g_->nodeAttrSet_.back() = set;
        continue;
      }
      g_->nodeAttrStart_.push_back(pos);
      g_->nodeAttrSet_.push_back(set);
    }
  }

  // Edges: exact node names (slices allowed) on both sides; every pair that is an
  // edge gets the attributes.
  for (const auto &ea : ann.edges) {
    auto attrs = filtered(ea.attributes);
    std::vector<NodeId> side[2];
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
      const std::string &spec = k == 0 ? ea.ep1 : ea.ep2;
      AnnotationNames(spec).forEach([&](const std::string &name) {
        auto node = g_->lookup(name);
        if (!node) {
          error(ea.loc, "edge annotation endpoint '" + name + "' is not a node (edge "
                        "annotations name nodes exactly, e.g. 'host.0.nic.0' or "
                        "'host[0:2]nic[0]')");
          ok = false;
          return false;
        }
        side[k].push_back(*node);
        return true;
      });
    }
    if (!ok)
      continue;
    std::sort(side[1].begin(), side[1].end());
    size_t matched = 0;
    for (NodeId a : side[0])
      for (const auto &adj : g_->neighbours(a))
        if (std::binary_search(side[1].begin(), side[1].end(), adj.node)) {
          ++matched;
          auto &dst = g_->edgeAttrs_[adj.edge];
          for (const Attribute &x : attrs)
            setAttribute(dst, x);
        }
    if (!matched)
      error(ea.loc, "edge annotation '" + ea.ep1 + "' -- '" + ea.ep2 +
                        "' matches no edge: no node of the first is joined to one of the second");
  }

  // Links: every edge of that link (device and infrastructure links of one name).
  g_->linkAttrs_.resize(g_->links_.size());
  for (const auto &la : ann.links) {
    auto attrs = filtered(la.attributes);
    bool any = false;
    for (LinkId l = 0; l < g_->links_.size(); ++l)
      if (g_->links_[l].name == la.name) {
        any = true;
        for (const Attribute &x : attrs)
          setAttribute(g_->linkAttrs_[l], x);
      }
    if (!any) {
      std::vector<std::string> names;
      for (const auto &l : g_->links_)
        if (!llvm::is_contained(names, l.name))
          names.push_back(l.name);
      error(la.loc, "link annotation names '" + la.name + "', which is not a link (links: " +
                        (names.empty() ? std::string("none") : joinNames(names)) + ")" +
                        didYouMean(la.name, names));
    }
  }
  // Edge annotations come first and link annotations override them, as in the
  // reference; edges with their own attributes keep a merged copy.
  for (auto &[e, attrs] : g_->edgeAttrs_)
    for (const Attribute &x : g_->linkAttrs_[g_->edges_[e].link])
      setAttribute(attrs, x);

  for (const Attribute &a : filtered(ann.graph))
    setAttribute(g_->graphAttrs_, a);
  if (skipped)
    warning(firstSkipped,
            fmt::format("{} annotation attribute{} ('{}'{}) set{} what the expansion itself sets "
                        "(type, instance, instance_idx, device, composed_device, link) and "
                        "{} ignored",
                        skipped, skipped == 1 ? "" : "s", firstSkippedKey,
                        skipped == 1 ? "" : ", ...", skipped == 1 ? "s" : "",
                        skipped == 1 ? "is" : "are"));
}

std::unique_ptr<FabricGraph> FabricExpander::run() {
  errorsAtStart_ = diags_.errorCount();
  checkDefinitions();
  if (failed())
    return nullptr;
  if (!computeLayouts() || failed())
    return nullptr;
  if (!layoutInstances())
    return nullptr;
  buildLinkTable();
  if (failed())
    return nullptr;
  expandEdges();
  if (failed())
    return nullptr;
  dedupAndBuildAdjacency();
  if (failed())
    return nullptr;
  findEndpoints();
  applyAnnotations();
  if (failed())
    return nullptr;
  if (opts_.connectivityWarnings)
    connectivityWarnings();
  return std::move(g_);
}

std::unique_ptr<FabricGraph> expandFabric(std::shared_ptr<const Infrastructure> defs,
                                          DiagEngine &diags, const ExpandOptions &opts) {
  auto g = FabricExpander(std::move(defs), diags, opts).run();
  // The expansion skips the remaining edges once the error limit is reached.
  if (diags.shouldStop())
    diags.announceStop();
  return g;
}

} // namespace infracc
