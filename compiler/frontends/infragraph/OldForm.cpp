#include "compiler/frontends/infragraph/OldForm.h"

#include "ir/Topology.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSwitch.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace infracc::infragraph {

namespace {

using llvm::SMLoc;
using llvm::StringRef;

constexpr uint64_t MaxIndex = 2147483646;   // the copy count (index + 1) is an int32

const char *const DeviceShape = "component.index.link.component.index, e.g. xpu.0.pcie.nic.0";
const char *const InfraShape = "instance.index.component.index.link.instance.index.component."
                               "index, e.g. server.0.nic.0.eth1.leafsw.0.port.0";

// Keys that make a document the infrastructure rather than a file of devices.
const StringRef InfraKeys[] = {"instances", "links", "edges", "connections"};

// The older form spells some bandwidth units with an extra underscore.
StringRef currentUnit(StringRef unit) {
  return llvm::StringSwitch<StringRef>(unit)
      .Case("giga_bits_per_second", "gigabits_per_second")
      .Case("giga_bytes_per_second", "gigabytes_per_second")
      .Case("giga_transfers_per_second", "gigatransfers_per_second")
      .Default(unit);
}

std::string joinQuoted(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + ("'" + names[i] + "'");
  return out;
}

/// One connection string split at its dots; every other part is an index.
struct Connection {
  const YamlNode *node;
  std::vector<StringRef> parts;
  std::vector<size_t> offsets;
  std::vector<uint64_t> index;   // for the index parts, 0 elsewhere
};

class Combiner {
public:
  Combiner(std::deque<YamlNode> &pool, DiagEngine &diags) : pool_(pool), diags_(diags) {}
  const YamlNode *run(llvm::ArrayRef<SourceDoc> docs, std::string *origin);

private:
  struct ComponentUse {
    YamlNode *node = nullptr;   // the converted component, when its count is implied
    uint64_t copies = 0;        // highest index used + 1
  };
  struct DeviceInfo {
    std::map<std::string, ComponentUse, std::less<>> components;
  };

  YamlNode *make(YamlNode::Kind kind, SMLoc loc) {
    YamlNode &n = pool_.emplace_back();
    n.kind = kind;
    n.loc = loc;
    return &n;
  }
  YamlNode *scalar(std::string value, SMLoc loc, bool quoted = true) {
    YamlNode *n = make(YamlNode::Scalar, loc);
    n->value = std::move(value);
    n->quoted = quoted;   // a name such as "1" or "true" stays a string
    return n;
  }
  static void add(YamlNode *m, StringRef key, const YamlNode *value, SMLoc keyLoc) {
    m->entries.push_back({key.str(), keyLoc, value});
  }
  void sawOldForm(SMLoc loc) {
    if (!oldFormAt_.isValid())
      oldFormAt_ = loc;
  }

  const YamlNode *body(const YamlNode *root) const {
    if (root && root->kind == YamlNode::Map)
      if (const YamlNode *b = root->get("infrastructure"))
        return b->kind == YamlNode::Map ? b : nullptr;
    return root && root->kind == YamlNode::Map ? root : nullptr;
  }
  const YamlNode *convertDevice(const YamlNode *dev);
  const YamlNode *convertComponent(const YamlNode *comp, const std::string &device,
                                   DeviceInfo &info);
  const YamlNode *convertLink(const YamlNode *link);
  const YamlNode *convertLinks(const YamlNode *links);
  std::optional<Connection> parseConnection(const YamlNode *n, bool infra, const std::string &what);
  YamlNode *endpoint(const Connection &c, size_t first, bool infra);
  YamlNode *edge(const Connection &c, bool infra);
  void appendEdges(YamlNode *edges, const YamlNode *connections, bool infra,
                   const std::string &what, std::vector<Connection> &parsed);
  bool mergeEdges(YamlNode *out, const YamlNode::Entry &e, YamlNode *&edges, bool infra,
                  const std::string &what, std::vector<Connection> &parsed);
  bool checkDevicesDefined(const YamlNode *infra, llvm::ArrayRef<SourceDoc> docs);

  std::deque<YamlNode> &pool_;
  DiagEngine &diags_;
  SMLoc oldFormAt_;
  llvm::StringMap<DeviceInfo> devices_;
};

std::optional<Connection> Combiner::parseConnection(const YamlNode *n, bool infra,
                                                    const std::string &what) {
  const char *shape = infra ? InfraShape : DeviceShape;
  if (n->kind != YamlNode::Scalar || n->isNullScalar()) {
    diags_.error(n->loc, "a connection of " + what + " must be a string written " + shape +
                             ", not " + n->describe());
    return std::nullopt;
  }
  Connection c{n, {}, {}, {}};
  StringRef s(n->value);
  llvm::SmallVector<StringRef, 9> parts;
  s.split(parts, '.');
  size_t want = infra ? 9 : 5;
  if (parts.size() != want) {
    diags_.error(n->loc, fmt::format("connection '{}' of {} has {} parts; write {}", n->value, what,
                                     parts.size(), shape));
    return std::nullopt;
  }
  size_t offset = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    StringRef p = parts[i];
    // Names at 0,2,4(link),5,7 for an infrastructure; 0,2(link),3 for a device.
    bool isIndex = infra ? (i == 1 || i == 3 || i == 6 || i == 8) : (i == 1 || i == 4);
    uint64_t v = 0;
    if (p.empty()) {
      diags_.error(n->locAt(offset), fmt::format("connection '{}' of {} has an empty part; write {}",
                                                 n->value, what, shape));
      return std::nullopt;
    }
    if (isIndex && (!llvm::all_of(p, llvm::isDigit) || p.getAsInteger(10, v))) {
      diags_.error(n->locAt(offset),
                   fmt::format("'{}' in connection '{}' of {} is not an index (a whole number); "
                               "write {}",
                               p.str(), n->value, what, shape));
      return std::nullopt;
    }
    if (isIndex && v > MaxIndex) {
      diags_.error(n->locAt(offset), fmt::format("index {} in connection '{}' of {} is more than "
                                                 "the {} InfraGraph allows",
                                                 v, n->value, what, MaxIndex));
      return std::nullopt;
    }
    c.parts.push_back(p);
    c.offsets.push_back(offset);
    c.index.push_back(v);
    offset += p.size() + 1;
  }
  return c;
}

// `server.0.nic.3` -> {instance: server[0], component: nic[3]}; in a device
// `nic.3` -> {component: nic[3]}. Each new scalar sits where its name was written.
YamlNode *Combiner::endpoint(const Connection &c, size_t first, bool infra) {
  YamlNode *ep = make(YamlNode::Map, c.node->locAt(c.offsets[first]));
  auto elem = [&](size_t i) {
    return scalar(fmt::format("{}[{}]", c.parts[i].str(), c.index[i + 1]),
                  c.node->locAt(c.offsets[i]));
  };
  if (infra) {
    add(ep, "instance", elem(first), ep->loc);
    add(ep, "component", elem(first + 2), ep->loc);
  } else {
    add(ep, "component", elem(first), ep->loc);
  }
  return ep;
}

YamlNode *Combiner::edge(const Connection &c, bool infra) {
  size_t linkAt = infra ? 4 : 2;
  YamlNode *e = make(YamlNode::Map, c.node->loc);
  add(e, "ep1", endpoint(c, 0, infra), e->loc);
  add(e, "ep2", endpoint(c, linkAt + 1, infra), e->loc);
  add(e, "scheme", scalar("one2one", c.node->loc), e->loc);
  add(e, "link", scalar(c.parts[linkAt].str(), c.node->locAt(c.offsets[linkAt])), e->loc);
  return e;
}

void Combiner::appendEdges(YamlNode *edges, const YamlNode *connections, bool infra,
                           const std::string &what, std::vector<Connection> &parsed) {
  if (connections->isNullScalar())
    return;
  if (connections->kind != YamlNode::Seq) {
    diags_.error(connections->loc, "'connections' of " + what + " must be a list of strings " +
                                       "written " + (infra ? InfraShape : DeviceShape) +
                                       ", not " + connections->describe());
    return;
  }
  for (const YamlNode *item : connections->items)
    if (auto c = parseConnection(item, infra, what)) {
      edges->items.push_back(edge(*c, infra));
      parsed.push_back(std::move(*c));
    }
}

// `edges` and `connections` of a device or the infrastructure go into one `edges`
// list of `out`; false when `e` is neither.
bool Combiner::mergeEdges(YamlNode *out, const YamlNode::Entry &e, YamlNode *&edges, bool infra,
                          const std::string &what, std::vector<Connection> &parsed) {
  if (e.key != "connections" && (e.key != "edges" || e.value->kind != YamlNode::Seq))
    return false;
  if (!edges) {
    edges = make(YamlNode::Seq, e.value->loc);
    add(out, "edges", edges, e.keyLoc);
  }
  if (e.key == "edges") {
    llvm::append_range(edges->items, e.value->items);
  } else {
    sawOldForm(e.keyLoc);
    appendEdges(edges, e.value, infra, what, parsed);
  }
  return true;
}

const YamlNode *Combiner::convertComponent(const YamlNode *comp, const std::string &device,
                                           DeviceInfo &info) {
  const YamlNode::Entry *type = comp->kind == YamlNode::Map ? comp->entry("type") : nullptr;
  if (!type || comp->get("choice"))
    return comp;   // current form, or not a component: the reader checks it
  sawOldForm(type->keyLoc);
  // The reader would check the value as 'choice', a key the user did not write.
  const YamlNode *name = comp->get("name");
  if (type->value->kind == YamlNode::Scalar && !parseComponentKind(type->value->value)) {
    std::vector<StringRef> kinds;
    for (unsigned k = 0; k < NumComponentKinds; ++k)
      kinds.push_back(componentKindName(ComponentKind(k)));
    diags_.error(type->value->loc,
                 fmt::format("'type' of component '{}' of device '{}' is '{}'; valid values are "
                             "custom, device, cpu, xpu, nic, memory, port, switch{}",
                             name && name->kind == YamlNode::Scalar ? name->value : "?", device,
                             type->value->value, didYouMean(type->value->value, kinds)));
  }
  YamlNode *out = make(YamlNode::Map, comp->loc);
  for (const YamlNode::Entry &e : comp->entries) {
    if (e.key == "external")   // the older form's marker for ports leaving the device
      continue;
    if (&e == type) {
      add(out, "choice", e.value, e.keyLoc);
      // `type: custom` carried no type name: the component's name is the closest.
      if (e.value->value == "custom" && !comp->get("custom") && name &&
          name->kind == YamlNode::Scalar) {
        YamlNode *custom = make(YamlNode::Map, e.value->loc);
        add(custom, "type", name, e.keyLoc);
        add(out, "custom", custom, e.keyLoc);
      }
      continue;
    }
    out->entries.push_back(e);
  }
  if (!comp->get("count") && name && name->kind == YamlNode::Scalar)
    info.components[name->value].node = out;   // the count is filled in at the end
  return out;
}

const YamlNode *Combiner::convertLink(const YamlNode *link) {
  if (link->kind != YamlNode::Map || link->get("physical") ||
      (!link->get("bandwidth") && !link->get("latency")))
    return link;
  YamlNode *out = make(YamlNode::Map, link->loc);
  YamlNode *physical = make(YamlNode::Map, link->loc);
  for (const YamlNode::Entry &e : link->entries) {
    if (e.key != "bandwidth" && e.key != "latency") {
      out->entries.push_back(e);
      continue;
    }
    sawOldForm(e.keyLoc);
    if (physical->entries.empty())
      add(out, "physical", physical, e.keyLoc);
    const YamlNode *value = e.value;
    if (value->kind == YamlNode::Map) {
      YamlNode *renamed = make(YamlNode::Map, value->loc);
      for (const YamlNode::Entry &u : value->entries) {
        const YamlNode *v = u.value;
        if (u.key == "choice" && v->kind == YamlNode::Scalar &&
            currentUnit(v->value) != StringRef(v->value)) {
          YamlNode *s = make(YamlNode::Scalar, v->loc);
          s->value = currentUnit(v->value).str();
          v = s;
        }
        add(renamed, currentUnit(u.key), v, u.keyLoc);
      }
      value = renamed;
    }
    add(physical, e.key, value, e.keyLoc);
  }
  return out;
}

const YamlNode *Combiner::convertLinks(const YamlNode *links) {
  if (links->kind != YamlNode::Seq)
    return links;
  YamlNode *out = make(YamlNode::Seq, links->loc);
  for (const YamlNode *l : links->items)
    out->items.push_back(convertLink(l));
  return out;
}

const YamlNode *Combiner::convertDevice(const YamlNode *dev) {
  if (dev->kind != YamlNode::Map)
    return dev;
  const YamlNode *name = dev->get("name");
  std::string devName = name && name->kind == YamlNode::Scalar ? name->value : "";
  DeviceInfo &info = devices_[devName];
  YamlNode *out = make(YamlNode::Map, dev->loc);
  YamlNode *edges = nullptr;
  std::vector<Connection> parsed;
  for (const YamlNode::Entry &e : dev->entries) {
    if (e.key == "components" && e.value->kind == YamlNode::Seq) {
      YamlNode *comps = make(YamlNode::Seq, e.value->loc);
      for (const YamlNode *c : e.value->items)
        comps->items.push_back(convertComponent(c, devName, info));
      add(out, e.key, comps, e.keyLoc);
    } else if (e.key == "links") {
      add(out, e.key, convertLinks(e.value), e.keyLoc);
    } else if (!mergeEdges(out, e, edges, false, "device '" + devName + "'", parsed)) {
      out->entries.push_back(e);
    }
  }
  for (const Connection &c : parsed)
    for (size_t i : {size_t(0), size_t(3)}) {
      ComponentUse &use = info.components[c.parts[i].str()];
      use.copies = std::max(use.copies, c.index[i + 1] + 1);
    }
  return out;
}

bool Combiner::checkDevicesDefined(const YamlNode *infra, llvm::ArrayRef<SourceDoc> docs) {
  const YamlNode *instances = infra->get("instances");
  if (!instances || instances->kind != YamlNode::Seq)
    return true;
  std::vector<std::string> missing;
  std::map<std::string, std::vector<std::string>> users;
  SMLoc first;
  for (const YamlNode *inst : instances->items) {
    if (inst->kind != YamlNode::Map)
      continue;
    const YamlNode *dev = inst->get("device"), *name = inst->get("name");
    if (!dev || dev->kind != YamlNode::Scalar || !name || name->kind != YamlNode::Scalar ||
        devices_.count(dev->value))
      continue;
    if (!users.count(dev->value))
      missing.push_back(dev->value);
    users[dev->value].push_back(name->value);
    if (!first.isValid())
      first = dev->loc;
  }
  if (missing.empty())
    return true;
  std::string what;
  for (size_t i = 0; i < missing.size(); ++i) {
    const auto &u = users[missing[i]];
    what += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") +
            fmt::format("'{}' (instance{} {})", missing[i], u.size() == 1 ? "" : "s",
                        joinQuoted(u));
  }
  bool one = missing.size() == 1;
  std::string files;
  for (const SourceDoc &d : docs)
    files += " " + d.path;
  std::string given = docs.size() == 1 ? docs.front().path + " does not define"
                                       : std::string("none of the files given defines");
  diags_.error(first, fmt::format("device{} {} {} defined elsewhere: {} {}; give the file{} "
                                  "that define{} {} together with {}, e.g. 'infracc DEVICES.yaml{}' "
                                  "(files given together combine their devices)",
                                  one ? "" : "s", what, one ? "is" : "are", given,
                                  one ? "it" : "them", one ? "" : "s", one ? "s" : "",
                                  one ? "it" : "them", docs.size() == 1 ? "this one" : "these",
                                  files));
  return false;
}

const YamlNode *Combiner::run(llvm::ArrayRef<SourceDoc> docs, std::string *origin) {
  bool several = docs.size() > 1;
  unsigned errorsBefore = diags_.errorCount();
  if (!several && !docs.empty())
    *origin = docs.front().path;
  // The file holding the infrastructure: the first with instances, links, edges or
  // connections at the top; the others may only hold devices.
  const SourceDoc *infraDoc = nullptr;
  for (const SourceDoc &d : docs) {
    const YamlNode *b = body(d.root);
    if (!b) {
      if (!several)
        return d.root;   // the reader says what is wrong with it
      diags_.error(d.root ? d.root->loc : d.start,
                   "the file holds no InfraGraph document (a mapping with devices, and for one "
                   "of the files given together, instances and connections or edges)");
      return nullptr;
    }
    if (b->get("blueprint") && several) {
      diags_.error(b->entry("blueprint")->keyLoc,
                   "a blueprint document cannot be combined with other files; give it alone");
      return nullptr;
    }
    const YamlNode::Entry *infraKey = nullptr;
    for (const YamlNode::Entry &e : b->entries)
      if (llvm::is_contained(InfraKeys, StringRef(e.key))) {
        infraKey = &e;
        break;
      }
    if (infraKey && infraDoc) {
      diags_.error(infraKey->keyLoc,
                   "'" + d.path + "' describes an infrastructure ('" + infraKey->key +
                       "'), and so does '" + infraDoc->path +
                       "'; of the files given together, one holds the infrastructure and the "
                       "others only devices");
      return nullptr;
    }
    if (infraKey)
      infraDoc = &d;
  }
  if (!infraDoc)
    infraDoc = &docs.front();
  *origin = infraDoc->path;

  // Every file's devices, converted, in the order given.
  YamlNode *devices = make(YamlNode::Seq, SMLoc());
  SMLoc devicesKeyLoc;
  for (const SourceDoc &d : docs) {
    const YamlNode *b = body(d.root);
    if (&d != infraDoc) {
      // A file of devices holds only devices, with nothing beside an
      // `infrastructure:` wrapper.
      auto unknown = [&](const YamlNode::Entry &e) {
        diags_.error(e.keyLoc, "unknown key '" + e.key + "' in '" + d.path + "', a file of " +
                                   "devices given together with '" + infraDoc->path +
                                   "' (valid keys: name, description, devices)");
      };
      for (const YamlNode::Entry &e : b->entries)
        if (e.key != "devices" && e.key != "name" && e.key != "description")
          unknown(e);
      if (b != d.root)
        for (const YamlNode::Entry &e : d.root->entries)
          if (e.key != "infrastructure")
            unknown(e);
    }
    const YamlNode::Entry *devs = b->entry("devices");
    if (!devs || devs->value->isNullScalar())
      continue;
    if (!devicesKeyLoc.isValid() || &d == infraDoc)
      devicesKeyLoc = devs->keyLoc;
    if (devs->value->kind != YamlNode::Seq) {
      if (!several)
        return d.root;
      diags_.error(devs->value->loc,
                   "'devices' must be a list, not " + devs->value->describe());
      return nullptr;
    }
    if (!devices->loc.isValid())
      devices->loc = devs->value->loc;
    for (const YamlNode *dev : devs->value->items)
      devices->items.push_back(convertDevice(dev));
  }

  // The infrastructure itself.
  const YamlNode *infra = body(infraDoc->root);
  YamlNode *out = make(YamlNode::Map, infra->loc);
  YamlNode *edges = nullptr;
  std::vector<Connection> parsed;
  bool devicesAdded = false;
  for (const YamlNode::Entry &e : infra->entries) {
    if (e.key == "devices") {
      if (!devicesAdded)
        add(out, "devices", devices, e.keyLoc);
      devicesAdded = true;
    } else if (e.key == "links") {
      add(out, e.key, convertLinks(e.value), e.keyLoc);
    } else if (!mergeEdges(out, e, edges, true, "the infrastructure", parsed)) {
      out->entries.push_back(e);
    }
  }
  if (!devicesAdded && !devices->items.empty())
    add(out, "devices", devices, devicesKeyLoc);

  bool oldForm = oldFormAt_.isValid();
  if (!several && !oldForm)
    return infraDoc->root;   // an ordinary document: read as written
  if (diags_.errorCount() != errorsBefore)
    return nullptr;   // malformed connections: their messages say what to write
  if (oldForm) {
    std::string files;
    for (const SourceDoc &d : docs)
      files += d.path + " ";
    diags_.warning(oldFormAt_,
                   "this is InfraGraph's older document form (connections written as strings, "
                   "components with 'type:', links with 'bandwidth:'), read by converting it to "
                   "the current schema; write the upgraded document with 'infracc " +
                       files + "-emit=infragraph -o upgraded.yaml'");
  }
  if (!checkDevicesDefined(infra, docs))
    return nullptr;

  // Counts the older form leaves out: the highest index used, plus one.
  llvm::StringMap<uint64_t> instanceCopies;
  llvm::StringMap<std::string> instanceDevice;
  if (const YamlNode *insts = infra->get("instances"); insts && insts->kind == YamlNode::Seq)
    for (const YamlNode *inst : insts->items)
      if (inst->kind == YamlNode::Map)
        if (const YamlNode *n = inst->get("name"), *d = inst->get("device");
            n && d && n->kind == YamlNode::Scalar && d->kind == YamlNode::Scalar)
          instanceDevice[n->value] = d->value;
  for (const Connection &c : parsed)
    for (size_t i : {size_t(0), size_t(5)}) {
      uint64_t &copies = instanceCopies[c.parts[i]];
      copies = std::max(copies, c.index[i + 1] + 1);
      auto dev = instanceDevice.find(c.parts[i]);
      if (dev != instanceDevice.end()) {
        ComponentUse &use = devices_[dev->second].components[c.parts[i + 2].str()];
        use.copies = std::max(use.copies, c.index[i + 3] + 1);
      }
    }
  for (auto &dev : devices_)
    for (auto &[name, use] : dev.second.components)
      if (use.node)
        add(use.node, "count",
            scalar(std::to_string(std::max<uint64_t>(1, use.copies)), use.node->loc, false),
            use.node->loc);
  for (YamlNode::Entry &insts : out->entries) {
    if (!oldForm || insts.key != "instances" || insts.value->kind != YamlNode::Seq)
      continue;
    YamlNode *list = make(YamlNode::Seq, insts.value->loc);
    for (const YamlNode *inst : insts.value->items) {
      const YamlNode *n = inst->kind == YamlNode::Map ? inst->get("name") : nullptr;
      if (!n || inst->get("count") || n->kind != YamlNode::Scalar) {
        list->items.push_back(inst);
        continue;
      }
      YamlNode *copy = make(YamlNode::Map, inst->loc);
      copy->entries = inst->entries;
      uint64_t copies = instanceCopies.lookup(n->value);
      add(copy, "count", scalar(std::to_string(std::max<uint64_t>(1, copies)), inst->loc, false),
          inst->loc);
      list->items.push_back(copy);
    }
    insts.value = list;
  }

  if (infraDoc->root->get("infrastructure")) {
    YamlNode *root = make(YamlNode::Map, infraDoc->root->loc);
    for (const YamlNode::Entry &e : infraDoc->root->entries)
      add(root, e.key, e.key == "infrastructure" ? out : e.value, e.keyLoc);
    return root;
  }
  return out;
}

} // namespace

const YamlNode *combineDocuments(llvm::ArrayRef<SourceDoc> docs, std::deque<YamlNode> &pool,
                                 DiagEngine &diags, std::string *origin) {
  return Combiner(pool, diags).run(docs, origin);
}

} // namespace infracc::infragraph
