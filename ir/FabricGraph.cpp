// Expansion of topology definitions into the fully qualified graph, with the
// validation InfraGraph's reference performs plus what it silently gets wrong
// (unknown components, one2one length mismatches, recursive composition, ...).
#include "ir/FabricGraph.h"

#include "compiler/Diagnostics.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

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

const std::vector<Attribute> *FabricGraph::nodeAttributes(NodeId n) const {
  auto it = nodeAttrs_.find(n);
  return it == nodeAttrs_.end() ? nullptr : &it->second;
}

const std::vector<Attribute> *FabricGraph::edgeAttributes(EdgeId e) const {
  auto it = edgeAttrs_.find(e);
  return it == edgeAttrs_.end() ? nullptr : &it->second;
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

std::string didYouMean(llvm::StringRef bad, llvm::ArrayRef<std::string> names) {
  unsigned best = 3;
  llvm::StringRef pick;
  for (const std::string &n : names) {
    unsigned d = bad.edit_distance(n, true, best);
    if (d < best) {
      best = d;
      pick = n;
    }
  }
  return pick.empty() ? std::string() : fmt::format("; did you mean '{}'?", pick.str());
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

struct LocalEdge {
  uint32_t a, b;
  LinkId link;
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
  void expandEdges();
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
  for (char c : name) {
    bool ok = llvm::isAlnum(c) || c == ' ' || c == '\t' || c == '-' || c == '_' || c == '(' ||
              c == ')' || c == '<' || c == '>' || c == '[' || c == ']';
    if (!ok) {
      error(loc, llvm::Twine(what) + " name '" + name + "' contains '" + llvm::Twine(c) +
                     "'; names may use letters, digits, blanks and - _ ( ) < > [ ]");
      return;
    }
  }
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
  g_->numNodes_ = static_cast<uint32_t>(next);
  g_->numDeviceCopies_ = copies;
  return true;
}

void FabricExpander::buildLinkTable() {
  auto add = [&](const LinkDef &l, int32_t device, llvm::StringMap<LinkId> &index,
                 llvm::StringRef scope) {
    FabricGraph::LinkInfo info;
    info.name = l.name;
    info.device = device;
    info.bandwidth = l.bandwidth;
    info.latency = l.latency;
    LinkId id = static_cast<LinkId>(g_->links_.size());
    auto [it, fresh] = index.try_emplace(l.name, id);
    if (!fresh) {
      error(l.loc, "link '" + l.name + "' is defined more than once in " + scope);
      return;
    }
    if (l.bandwidth && !(l.bandwidth->bitsPerSecond > 0))
      error(l.loc, "link '" + l.name + "' has a bandwidth that is not positive");
    if (l.latency && !(l.latency->ns >= 0))
      error(l.loc, "link '" + l.name + "' has a negative latency");
    g_->links_.push_back(std::move(info));
  };
  for (const LinkDef &l : defs_->links)
    add(l, -1, infraLinkIdx_, "the infrastructure");
  for (uint32_t d = 0; d < defs_->devices.size(); ++d)
    for (const LinkDef &l : defs_->devices[d].links)
      add(l, static_cast<int32_t>(d), deviceLinkIdx_[d], "device '" + defs_->devices[d].name + "'");
}

bool FabricExpander::resolveSlice(const PathElem &e, uint64_t count, llvm::StringRef owner,
                                  llvm::SmallVectorImpl<uint32_t> &out) {
  if (!e.slice) {
    for (uint64_t i = 0; i < count; ++i)
      out.push_back(static_cast<uint32_t>(i));
    return true;
  }
  const Slice &s = *e.slice;
  std::string valid = count ? fmt::format("valid indices are 0..{}", count - 1)
                            : std::string("it has no copies");
  if (s.isIndex) {
    int64_t i = s.start.value_or(0);
    if (i < 0 || uint64_t(i) >= count) {
      error(e.loc, fmt::format("index {} in '{}' is out of range: {} has count {}, {}", i,
                               describeSlice(e), owner.str(), count, valid));
      return false;
    }
    out.push_back(static_cast<uint32_t>(i));
    return true;
  }
  int64_t step = s.step.value_or(1);
  if (step <= 0) {
    error(e.loc, fmt::format("slice '{}' has step {}; the step must be positive", describeSlice(e),
                             step));
    return false;
  }
  int64_t start = s.start.value_or(0), stop = s.stop.value_or(int64_t(count));
  if (start < 0 || stop < 0 || uint64_t(stop) > count || start > stop) {
    error(e.loc, fmt::format("slice '{}' is out of range: {} has count {}, so a slice must lie "
                             "within [0:{}]",
                             describeSlice(e), owner.str(), count, count));
    return false;
  }
  if (start == stop) {
    error(e.loc, fmt::format("slice '{}' selects nothing", describeSlice(e)));
    return false;
  }
  for (int64_t i = start; i < stop; i += step)
    out.push_back(static_cast<uint32_t>(i));
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
    error(head.loc, "component '" + head.name + "' is not a component of device '" + dev.name +
                        "' (it has: " + joinNames(names) + ")" + didYouMean(head.name, names));
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
    for (uint32_t x : a)
      for (uint32_t y : b)
        if (x != y)
          add(x, y);
    return true;
  case Scheme::One2One:
  case Scheme::Ring:
    if (a.size() != b.size()) {
      error(loc, fmt::format("{} edge joins {} endpoint{} to {}; both sides must name the same "
                             "number of nodes (InfraGraph's reference would silently drop {})",
                             schemeName(scheme).str(), a.size(), a.size() == 1 ? "" : "s",
                             b.size(), a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()));
      return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      uint32_t x = a[i], y = scheme == Scheme::Ring ? b[(i + 1) % b.size()] : b[i];
      if (x == y) {
        error(loc, "edge joins '" + nameOf(x) + "' to itself");
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
  if (deviceEdgeCache_[d])
    return &*deviceEdgeCache_[d];
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
        edges.push_back({base + e.a, base + e.b, e.link});
    }
  }
  for (const DeviceEdge &e : dev.edges) {
    auto li = deviceLinkIdx_[d].find(e.link);
    if (li == deviceLinkIdx_[d].end()) {
      std::vector<std::string> names;
      for (const LinkDef &l : dev.links)
        names.push_back(l.name);
      error(e.linkLoc.isValid() ? e.linkLoc : e.loc,
            "link '" + e.link + "' is not a link of device '" + dev.name + "' (it has: " +
                (names.empty() ? std::string("none") : joinNames(names)) + ")" +
                didYouMean(e.link, names));
      ok = false;
      continue;
    }
    if (e.ep1.empty() || e.ep2.empty()) {
      error(e.loc, "device edge in '" + dev.name + "' has an empty endpoint");
      ok = false;
      continue;
    }
    std::vector<uint32_t> a, b;
    if (!resolvePath(d, e.ep1, 0, a) || !resolvePath(d, e.ep2, 0, b)) {
      ok = false;
      continue;
    }
    auto nameOf = [&](uint32_t local) { return localName(d, local); };
    if (!pairUp(a, b, e.scheme, li->second, e.loc,
                [&](uint32_t x, uint32_t y) { edges.push_back({x, y, li->second}); }, nameOf))
      ok = false;
  }
  if (!ok)
    return nullptr;
  deviceEdgeCache_[d] = std::move(edges);
  return &*deviceEdgeCache_[d];
}

void FabricExpander::expandEdges() {
  deviceEdgeCache_.resize(defs_->devices.size());
  // Device-internal edges, instance by instance, copy by copy.
  for (const auto &inst : g_->instances_) {
    if (inst.count == 0 || inst.nodesPerCopy == 0)
      continue;
    const auto *local = deviceEdges(inst.device);
    if (!local)
      continue;
    raw_.reserve(raw_.size() + local->size() * inst.count);
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId base = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      for (const LocalEdge &e : *local) {
        NodeId u = base + e.a, v = base + e.b;
        raw_.push_back({std::min(u, v), std::max(u, v), e.link});
      }
    }
  }
  // Infrastructure edges.
  std::vector<std::string> instNames, linkNames;
  for (const Instance &i : defs_->instances)
    instNames.push_back(i.name);
  for (const LinkDef &l : defs_->links)
    linkNames.push_back(l.name);
  auto resolveEndpoint = [&](const InfraEndpoint &ep, std::vector<uint32_t> &out) -> bool {
    auto it = g_->instanceByName_.find(ep.instance.name);
    if (it == g_->instanceByName_.end()) {
      error(ep.instance.loc, "instance '" + ep.instance.name + "' is not defined (instances: " +
                                 joinNames(instNames) + ")" + didYouMean(ep.instance.name, instNames));
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
  };
  for (const InfraEdge &e : defs_->edges) {
    if (diags_.shouldStop())
      return;
    auto li = infraLinkIdx_.find(e.link);
    bool ok = true;
    if (li == infraLinkIdx_.end()) {
      error(e.linkLoc.isValid() ? e.linkLoc : e.loc,
            "link '" + e.link + "' is not defined among the infrastructure links (" +
                (linkNames.empty() ? std::string("there are none") : joinNames(linkNames)) + ")" +
                didYouMean(e.link, linkNames));
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

void FabricExpander::dedupAndBuildAdjacency() {
  auto &edges = g_->edges_;
  // Duplicate pairs collapse into one edge, as in the reference's networkx Graph, where
  // the attributes of the last insertion win.
  std::stable_sort(raw_.begin(), raw_.end(), [](const auto &x, const auto &y) {
    return x.u != y.u ? x.u < y.u : x.v < y.v;
  });
  edges.reserve(raw_.size());
  size_t conflicting = 0;
  std::optional<FabricGraph::EdgeRec> firstConflict;
  LinkId firstConflictOther = 0;
  for (size_t i = 0; i < raw_.size();) {
    size_t j = i;
    while (j + 1 < raw_.size() && raw_[j + 1].u == raw_[i].u && raw_[j + 1].v == raw_[i].v)
      ++j;
    for (size_t k = i; k < j; ++k)
      if (raw_[k].link != raw_[j].link) {
        if (!conflicting++) {
          firstConflict = raw_[j];
          firstConflictOther = raw_[k].link;
        }
        break;
      }
    edges.push_back(raw_[j]);
    i = j + 1;
  }
  if (conflicting)
    warning(llvm::SMLoc(),
            fmt::format("{} node pair{} joined by edges of different links; the last one declared "
                        "is kept, e.g. '{}' -- '{}' uses link '{}', not '{}'",
                        conflicting, conflicting == 1 ? " is" : "s are",
                        g_->name(firstConflict->u), g_->name(firstConflict->v),
                        g_->links_[firstConflict->link].name, g_->links_[firstConflictOther].name));
  std::vector<FabricGraph::EdgeRec>().swap(raw_);
  if (edges.size() > 0xFFFFFFFEull) {
    error(llvm::SMLoc(), "the fabric has more than 4294967294 edges");
    return;
  }
  uint32_t n = g_->numNodes_;
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
  }
  for (const auto &inst : g_->instances_) {
    if (inst.nodesPerCopy == 0)
      continue;
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId base = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      if (anyXpu) {
        std::vector<uint32_t> &xs = localXpus[inst.device];
        std::sort(xs.begin(), xs.end());
        for (uint32_t x : xs)
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

void FabricExpander::applyAnnotations() {
  const Annotations &ann = defs_->annotations;
  static const char *immutable[] = {"type", "instance", "instance_idx", "device",
                                    "composed_device", "link"};
  auto filtered = [&](const std::vector<Attribute> &attrs) {
    std::vector<Attribute> out;
    for (const Attribute &a : attrs) {
      if (llvm::is_contained(immutable, a.key)) {
        warning(a.loc, "attribute '" + a.key + "' is set by the expansion and cannot be "
                       "annotated; ignored");
        continue;
      }
      out.push_back(a);
    }
    return out;
  };
  for (const auto &na : ann.nodes) {
    std::vector<Attribute> attrs = filtered(na.attributes);
    std::vector<NodeId> matched;
    if (auto exact = g_->lookup(na.name)) {
      matched.push_back(*exact);
    } else {
      // A prefix: every node whose name starts with `name.`.
      std::string prefix = na.name + ".";
      llvm::SmallString<64> buf;
      for (NodeId v = 0; v < g_->numNodes_; ++v) {
        buf.clear();
        g_->appendName(v, buf);
        if (llvm::StringRef(buf).starts_with(prefix))
          matched.push_back(v);
      }
    }
    if (matched.empty()) {
      error(na.loc, "annotation names '" + na.name + "', which matches no node");
      continue;
    }
    for (NodeId v : matched) {
      auto &dst = g_->nodeAttrs_[v];
      dst.insert(dst.end(), attrs.begin(), attrs.end());
    }
  }
  for (const auto &ea : ann.edges) {
    auto a = g_->lookup(ea.ep1), b = g_->lookup(ea.ep2);
    if (!a || !b) {
      error(ea.loc, "edge annotation names '" + (a ? ea.ep2 : ea.ep1) + "', which is not a node");
      continue;
    }
    std::optional<EdgeId> found;
    for (const auto &adj : g_->neighbours(*a))
      if (adj.node == *b)
        found = adj.edge;
    if (!found) {
      error(ea.loc, "edge annotation names '" + ea.ep1 + "' -- '" + ea.ep2 +
                        "', but there is no edge between them");
      continue;
    }
    auto attrs = filtered(ea.attributes);
    auto &dst = g_->edgeAttrs_[*found];
    dst.insert(dst.end(), attrs.begin(), attrs.end());
  }
  for (const auto &la : ann.links) {
    std::vector<LinkId> ids;
    for (LinkId l = 0; l < g_->links_.size(); ++l)
      if (g_->links_[l].name == la.name)
        ids.push_back(l);
    if (ids.empty()) {
      error(la.loc, "link annotation names '" + la.name + "', which is not a link");
      continue;
    }
    auto attrs = filtered(la.attributes);
    for (EdgeId e = 0; e < g_->edges_.size(); ++e)
      if (llvm::is_contained(ids, g_->edges_[e].link)) {
        auto &dst = g_->edgeAttrs_[e];
        dst.insert(dst.end(), attrs.begin(), attrs.end());
      }
  }
  g_->graphAttrs_ = ann.graph;
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
  return FabricExpander(std::move(defs), diags, opts).run();
}

} // namespace infracc
