#include "compiler/frontends/infragraph/InfraGraphReader.h"

#include "blueprints/Blueprint.h"
#include "compiler/frontends/infragraph/OldForm.h"
#include "compiler/frontends/infragraph/YamlTree.h"
#include "ir/InputRegistry.h"
#include "support/Diagnostics.h"
#include "support/InputFile.h"
#include "support/Units.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>

namespace infracc::infragraph {

namespace {

using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

constexpr int64_t MaxCount = 2147483647;   // InfraGraph counts are int32

std::string quoteList(llvm::ArrayRef<StringRef> names) {
  std::string out;
  for (StringRef n : names) {
    if (!out.empty())
      out += ", ";
    out += n.str();
  }
  return out;
}

const StringRef ComponentKinds[] = {"custom", "device", "cpu",  "xpu",
                                    "nic",    "memory", "port", "switch"};
const StringRef BandwidthUnits[] = {"gigabits_per_second", "gigabytes_per_second",
                                    "gigatransfers_per_second"};
const StringRef LatencyUnits[] = {"ms", "us", "ns"};
const StringRef Schemes[] = {"one2one", "many2many", "ring"};

class Reader {
public:
  explicit Reader(DiagEngine &diags) : diags_(diags) {}
  std::shared_ptr<Infrastructure> document(const YamlNode *root, SMLoc fileStart,
                                           StringRef origin);

private:
  // --- Shape and scalar checks; each reports and returns empty on a mismatch. ---
  const YamlNode *map(const YamlNode *n, const Twine &what);
  const std::vector<const YamlNode *> *list(const YamlNode *n, const Twine &what);
  void checkKeys(const YamlNode *m, llvm::ArrayRef<StringRef> allowed, const Twine &what);
  const YamlNode *require(const YamlNode *m, StringRef key, const Twine &what);
  std::optional<std::string> identifier(const YamlNode *n, StringRef key, const Twine &what);
  std::optional<std::string> text(const YamlNode *n, StringRef key, const Twine &what);
  std::optional<int64_t> count(const YamlNode *n, StringRef key, const Twine &what);
  std::optional<double> number(const YamlNode *n, StringRef key, const Twine &what);
  std::optional<std::string> enumValue(const YamlNode *n, StringRef key, const Twine &what,
                                       llvm::ArrayRef<StringRef> valid, StringRef validText);
  bool emptyMap(const YamlNode *n) {
    return n->kind == YamlNode::Null || (n->kind == YamlNode::Map && n->entries.empty());
  }

  // --- Elements ---
  /// What every named element starts with: a map with `name` (from then on the
  /// element is called "<kind> '<name>'<suffix>" in messages, else `what` stays) and an
  /// optional `description`; the keys are checked against `keys`. False when `n` is
  /// not a map.
  template <class Elem>
  bool readNamed(const YamlNode *n, std::string &what, StringRef kind, const std::string &suffix,
                 llvm::ArrayRef<StringRef> keys, Elem &e);
  /// Calls fn(item, index) for every item of the list `n` until errors stop the read.
  template <class Fn> void forEachItem(const YamlNode *n, const Twine &what, Fn &&fn);
  /// An edge endpoint `key` of `edge`: a map with the keys `epKeys`, or null.
  const YamlNode *readEndpointMap(const YamlNode *edge, StringRef key, const std::string &what,
                                  llvm::ArrayRef<StringRef> epKeys, std::string &epWhat);
  /// What every edge ends with: its scheme and link.
  template <class Edge> void readSchemeAndLink(const YamlNode *n, const std::string &what, Edge &e);
  void readDevice(const YamlNode *n, size_t index, DeviceDef &dev);
  void readComponent(const YamlNode *n, const std::string &owner, size_t index, Component &c);
  void readLink(const YamlNode *n, const std::string &scope, size_t index, LinkDef &l);
  void readPhysical(const YamlNode *n, const std::string &what, LinkDef &l);
  void readDeviceEdge(const YamlNode *n, const std::string &device, size_t index,
                      DeviceEdge &e);
  void readInstance(const YamlNode *n, size_t index, Instance &inst);
  void readInfraEdge(const YamlNode *n, size_t index, InfraEdge &e);
  std::optional<Scheme> readScheme(const YamlNode *edge, const std::string &what);
  void readAnnotations(const YamlNode *n, Annotations &out);
  void readAttributes(const YamlNode *n, const std::string &what, std::vector<Attribute> &out);
  void readInfrastructureBody(const YamlNode *m, Infrastructure &in);
  void readDevices(const YamlNode *n, std::vector<DeviceDef> &out);
  std::shared_ptr<Infrastructure> readBlueprint(const YamlNode *m, StringRef origin);

  // --- Endpoint strings: `name[slice].name[slice]...` ---
  bool parsePath(const YamlNode *n, const std::string &what, ComponentPath &out);
  bool parseElem(const YamlNode *n, StringRef s, size_t offset, const std::string &what,
                 PathElem &out);

  bool stop() const { return diags_.shouldStop(); }
  void error(SMLoc loc, const Twine &msg) { diags_.error(loc, msg); }

  DiagEngine &diags_;
};

// ---------------------------------------------------------------------------------
// Shape and scalar checks
// ---------------------------------------------------------------------------------

const YamlNode *Reader::map(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Map)
    return n;
  error(n->loc, what + " must be a mapping (key: value ...), not " + n->describe());
  return nullptr;
}

const std::vector<const YamlNode *> *Reader::list(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Seq)
    return &n->items;
  if (n->isNullScalar())   // `edges:` with nothing after it: an empty list
    return &n->items;
  error(n->loc, what + " must be a list, not " + n->describe());
  return nullptr;
}

void Reader::checkKeys(const YamlNode *m, llvm::ArrayRef<StringRef> allowed, const Twine &what) {
  for (const YamlNode::Entry &e : m->entries)
    if (!llvm::is_contained(allowed, StringRef(e.key)))
      error(e.keyLoc, "unknown key '" + e.key + "' in " + what + didYouMean(e.key, allowed) +
                          " (valid keys: " + quoteList(allowed) + ")");
}

const YamlNode *Reader::require(const YamlNode *m, StringRef key, const Twine &what) {
  if (const YamlNode *v = m->get(key))
    return v;
  error(m->loc, what + " has no '" + key + "', which is required");
  return nullptr;
}

std::optional<std::string> Reader::identifier(const YamlNode *n, StringRef key,
                                              const Twine &what) {
  if (n->kind == YamlNode::Scalar && !n->isNullScalar() && !n->isBoolScalar() &&
      !n->isNumberScalar())
    return n->value;
  std::string hint = n->kind == YamlNode::Scalar && !n->isNullScalar()
                         ? fmt::format(" (write it in quotes, \"{}\", to use it as a name)", n->value)
                         : std::string();
  error(n->loc, "'" + key + "' of " + what + " must be a string, not " + n->describe() + hint);
  return std::nullopt;
}

std::optional<std::string> Reader::text(const YamlNode *n, StringRef key, const Twine &what) {
  if (n->kind == YamlNode::Scalar)
    return n->isNullScalar() ? std::string() : n->value;
  if (n->kind == YamlNode::Null)
    return std::string();
  error(n->loc, "'" + key + "' of " + what + " must be text, not " + n->describe());
  return std::nullopt;
}

std::optional<int64_t> Reader::count(const YamlNode *n, StringRef key, const Twine &what) {
  llvm::StringRef s(n->value);
  int64_t v = 0;
  bool isInt = n->kind == YamlNode::Scalar && !n->quoted && !s.empty();
  if (isInt) {
    llvm::StringRef digits = s;
    bool neg = digits.consume_front("-");
    if (!neg)
      digits.consume_front("+");
    isInt = !digits.empty() && llvm::all_of(digits, llvm::isDigit);
    if (isInt) {
      uint64_t u = 0;
      if (digits.getAsInteger(10, u) || u > uint64_t(MaxCount) + 1) {
        error(n->loc, fmt::format("'{}' of {} is {}, more than the {} InfraGraph allows (counts "
                                  "are 32-bit)",
                                  key.str(), what.str(), s.str(), MaxCount));
        return std::nullopt;
      }
      v = neg ? -int64_t(u) : int64_t(u);
    }
  }
  if (!isInt) {
    bool quotedDigits = n->kind == YamlNode::Scalar && n->quoted && !s.empty() &&
                        llvm::all_of(s, llvm::isDigit);
    std::string hint = quotedDigits ? " (remove the quotes)" : "";
    error(n->loc, "'" + key + "' of " + what + " must be a whole number, not " + n->describe() +
                      hint);
    return std::nullopt;
  }
  if (v < 0) {
    error(n->loc, fmt::format("'{}' of {} is {}; a count must be 0 or more", key.str(),
                              what.str(), v));
    return std::nullopt;
  }
  if (v > MaxCount) {
    error(n->loc, fmt::format("'{}' of {} is {}, more than the {} InfraGraph allows (counts are "
                              "32-bit)",
                              key.str(), what.str(), v, MaxCount));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Reader::number(const YamlNode *n, StringRef key, const Twine &what) {
  if (n->kind == YamlNode::Scalar && n->isNumberScalar()) {
    llvm::StringRef s(n->value);
    double d = 0;
    bool bad;
    if (s.starts_with("0x") || s.starts_with("0o")) {
      uint64_t u = 0;
      bad = s.drop_front(2).getAsInteger(s[1] == 'x' ? 16 : 8, u);
      d = static_cast<double>(u);
    } else {
      std::string t = s.str();
      if (t.find(".inf") != std::string::npos || t.find(".Inf") != std::string::npos ||
          t.find(".INF") != std::string::npos || t.find(".nan") != std::string::npos ||
          t.find(".NaN") != std::string::npos || t.find(".NAN") != std::string::npos)
        bad = true;
      else
        bad = s.getAsDouble(d);
    }
    if (!bad && std::isfinite(d))
      return d;
    error(n->loc, "'" + key + "' of " + what + " is " + n->value + ", which is not a finite number");
    return std::nullopt;
  }
  std::string hint;
  if (n->kind == YamlNode::Scalar && n->quoted) {
    YamlNode probe = *n;
    probe.quoted = false;
    if (probe.isNumberScalar())
      hint = " (remove the quotes)";
  }
  error(n->loc, "'" + key + "' of " + what + " must be a number, not " + n->describe() + hint);
  return std::nullopt;
}

std::optional<std::string> Reader::enumValue(const YamlNode *n, StringRef key, const Twine &what,
                                             llvm::ArrayRef<StringRef> valid,
                                             StringRef validText) {
  auto s = identifier(n, key, what);
  if (!s)
    return std::nullopt;
  if (llvm::is_contained(valid, StringRef(*s)))
    return s;
  error(n->loc, "'" + key + "' of " + what + " is '" + *s + "'; valid values are " + validText +
                    didYouMean(*s, valid));
  return std::nullopt;
}

// ---------------------------------------------------------------------------------
// Endpoint strings
// ---------------------------------------------------------------------------------

// One element: `name` or `name[slice]`; `offset` is where `s` starts in n->value.
bool Reader::parseElem(const YamlNode *n, StringRef s, size_t offset, const std::string &what,
                       PathElem &out) {
  out.loc = n->locAt(offset);
  size_t open = s.find('[');
  out.name = s.substr(0, open).str();
  if (out.name.empty()) {
    error(out.loc, "missing name in '" + n->value + "' (" + what +
                       "); an endpoint is written name or name[slice], e.g. xpu[0:4]");
    return false;
  }
  if (out.name.find(']') != std::string::npos) {
    error(n->locAt(offset + out.name.find(']')),
          "unexpected ']' in '" + n->value + "' (" + what + ")");
    return false;
  }
  if (open == StringRef::npos)
    return true;
  size_t close = s.find(']', open);
  if (close == StringRef::npos) {
    error(n->locAt(offset + open), "slice in '" + n->value + "' (" + what + ") has no closing ']'");
    return false;
  }
  if (close + 1 != s.size()) {
    error(n->locAt(offset + close + 1),
          "unexpected text '" + s.substr(close + 1) + "' after the slice in '" + n->value + "' (" +
              what + "); separate the parts of a composed path with '.'");
    return false;
  }
  StringRef body = s.slice(open + 1, close);
  llvm::SmallVector<StringRef, 3> parts;
  body.split(parts, ':');
  if (parts.size() > 3) {
    error(n->locAt(offset + open), "slice '[" + body + "]' in '" + n->value + "' (" + what +
                                       ") has more than two ':'; write [start:stop:step]");
    return false;
  }
  Slice slice;
  std::optional<int64_t> values[3];
  size_t pos = open + 1;
  for (size_t i = 0; i < parts.size(); ++i) {
    StringRef p = parts[i].trim(" \t");
    if (!p.empty()) {
      StringRef digits = p;
      bool neg = digits.consume_front("-");
      if (!neg)
        digits.consume_front("+");
      uint64_t u = 0;
      if (digits.empty() || !llvm::all_of(digits, llvm::isDigit) || digits.getAsInteger(10, u) ||
          u > uint64_t(INT64_MAX)) {
        error(n->locAt(offset + pos), "'" + p + "' in slice '[" + body + "]' of '" + n->value +
                                          "' (" + what + ") is not a whole number");
        return false;
      }
      values[i] = neg ? -int64_t(u) : int64_t(u);
    }
    pos += parts[i].size() + 1;
  }
  if (parts.size() == 1) {
    if (!values[0]) {
      error(n->locAt(offset + open), "empty slice '[]' in '" + n->value + "' (" + what +
                                         "); write an index [i] or a range [start:stop]");
      return false;
    }
    slice.isIndex = true;
    slice.start = values[0];
  } else {
    slice.start = values[0];
    slice.stop = values[1];
    slice.step = values[2];
  }
  out.slice = slice;
  return true;
}

bool Reader::parsePath(const YamlNode *n, const std::string &what, ComponentPath &out) {
  StringRef s(n->value);
  size_t offset = 0;
  bool ok = true;
  for (;;) {
    size_t dot = s.find('.', offset);
    StringRef part = s.slice(offset, dot == StringRef::npos ? s.size() : dot);
    PathElem e;
    if (!parseElem(n, part, offset, what, e)) {
      ok = false;
      break;
    }
    out.push_back(std::move(e));
    if (dot == StringRef::npos)
      break;
    offset = dot + 1;
  }
  return ok;
}

// ---------------------------------------------------------------------------------
// Elements
// ---------------------------------------------------------------------------------

template <class Elem>
bool Reader::readNamed(const YamlNode *n, std::string &what, StringRef kind,
                       const std::string &suffix, llvm::ArrayRef<StringRef> keys, Elem &e) {
  if (!map(n, what))
    return false;
  e.loc = n->loc;
  if (const YamlNode *v = require(n, "name", what))
    if (auto s = identifier(v, "name", what)) {
      e.name = *s;
      e.loc = v->loc;
      what = fmt::format("{} '{}'{}", kind.str(), e.name, suffix);
    }
  checkKeys(n, keys, what);
  if (const YamlNode *v = n->get("description"))
    if (auto s = text(v, "description", what))
      e.description = *s;
  return true;
}

template <class Fn> void Reader::forEachItem(const YamlNode *n, const Twine &what, Fn &&fn) {
  if (auto *items = list(n, what))
    for (size_t i = 0; i < items->size() && !stop(); ++i)
      fn((*items)[i], i);
}

const YamlNode *Reader::readEndpointMap(const YamlNode *edge, StringRef key,
                                        const std::string &what,
                                        llvm::ArrayRef<StringRef> epKeys, std::string &epWhat) {
  const YamlNode *ep = require(edge, key, what);
  epWhat = "'" + key.str() + "' of " + what;
  if (!ep || !map(ep, epWhat))
    return nullptr;
  checkKeys(ep, epKeys, epWhat);
  return ep;
}

template <class Edge>
void Reader::readSchemeAndLink(const YamlNode *n, const std::string &what, Edge &e) {
  if (auto s = readScheme(n, what))
    e.scheme = *s;
  if (const YamlNode *v = require(n, "link", what)) {
    e.linkLoc = v->loc;
    if (auto s = identifier(v, "link", what))
      e.link = *s;
  }
}

void Reader::readComponent(const YamlNode *n, const std::string &owner, size_t index,
                           Component &c) {
  std::string what = fmt::format("component #{} of {}", index + 1, owner);
  static const StringRef keys[] = {"name",   "description", "count", "choice", "custom", "device",
                                   "cpu",    "xpu",         "nic",   "memory", "port",   "switch"};
  if (!readNamed(n, what, "component", " of " + owner, keys, c))
    return;
  if (const YamlNode *v = require(n, "count", what)) {
    c.countLoc = v->loc;
    if (auto k = count(v, "count", what))
      c.count = static_cast<uint64_t>(*k);
  }
  // The choice, and at most one member object that goes with it.
  std::optional<std::string> choice;
  const YamlNode *choiceNode = n->get("choice");
  if (choiceNode)
    choice = enumValue(choiceNode, "choice", what, ComponentKinds,
                       "custom, device, cpu, xpu, nic, memory, port, switch");
  const YamlNode::Entry *member = nullptr;
  for (const YamlNode::Entry &e : n->entries)
    if (e.key != "choice" && llvm::is_contained(ComponentKinds, StringRef(e.key))) {
      if (member) {
        error(e.keyLoc, what + " has both '" + member->key + "' and '" + e.key +
                            "'; a component is of one kind");
        return;
      }
      member = &e;
    }
  if (!choiceNode) {
    if (!member) {
      error(n->loc, what + " has no 'choice'; give one of custom, device, cpu, xpu, nic, memory, "
                           "port, switch");
      return;
    }
    choice = member->key;   // {custom: {type: x}} alone implies choice: custom
  }
  if (!choice)
    return;
  if (member && member->key != *choice) {
    error(member->keyLoc, what + " has choice '" + *choice + "' but a '" + member->key +
                              "' member; remove one of them");
    return;
  }
  c.kind = *parseComponentKind(*choice);
  if (c.kind == ComponentKind::Custom) {
    if (!member) {
      error(choiceNode ? choiceNode->loc : n->loc,
            what + " has choice 'custom' but no 'custom: {type: ...}' giving its type");
      return;
    }
    const YamlNode *custom = member->value;
    std::string cwhat = "'custom' of " + what;
    if (!map(custom, cwhat))
      return;
    static const StringRef ckeys[] = {"type"};
    checkKeys(custom, ckeys, cwhat);
    if (const YamlNode *t = require(custom, "type", cwhat))
      if (auto s = identifier(t, "type", cwhat)) {
        if (s->empty())
          error(t->loc, "'type' of " + cwhat + " is empty");
        c.customType = *s;
      }
  } else if (member && !emptyMap(member->value)) {
    error(member->value->loc, "'" + member->key + "' of " + what +
                                  " must be empty ({}); only custom components carry data");
  }
}

void Reader::readPhysical(const YamlNode *n, const std::string &what, LinkDef &l) {
  std::string pwhat = "'physical' of " + what;
  if (n->kind == YamlNode::Null)
    return;
  if (!map(n, pwhat))
    return;
  static const StringRef keys[] = {"bandwidth", "latency"};
  checkKeys(n, keys, pwhat);
  // Both follow the same pattern: {choice: unit, <unit>: value}; the choice may be
  // left out when exactly one unit is given. An empty mapping means "not given" (the
  // reference writes empty objects out for links without values).
  auto readUnit = [&](StringRef key, llvm::ArrayRef<StringRef> units, StringRef unitsText,
                      const YamlNode *v) -> std::optional<std::pair<std::string, double>> {
    std::string uwhat = "'" + key.str() + "' of " + what;
    if (emptyMap(v))
      return std::nullopt;
    if (!map(v, uwhat))
      return std::nullopt;
    llvm::SmallVector<StringRef, 4> allowed{"choice"};
    allowed.append(units.begin(), units.end());
    checkKeys(v, allowed, uwhat);
    std::optional<std::string> unit;
    const YamlNode *choiceNode = v->get("choice");
    if (choiceNode) {
      auto s = identifier(choiceNode, "choice", uwhat);
      if (!s)
        return std::nullopt;
      if (!llvm::is_contained(units, StringRef(*s))) {
        error(choiceNode->loc, key + " unit '" + *s + "' of " + what + " is not known; valid " +
                                   "units are " + unitsText + didYouMean(*s, units));
        return std::nullopt;
      }
      unit = *s;
    }
    const YamlNode::Entry *value = nullptr;
    for (const YamlNode::Entry &e : v->entries)
      if (llvm::is_contained(units, StringRef(e.key))) {
        if (value) {
          error(e.keyLoc, uwhat + " gives both '" + value->key + "' and '" + e.key +
                              "'; give the value in one unit");
          return std::nullopt;
        }
        value = &e;
      }
    if (!value) {
      error(v->loc, uwhat + " has no value; write e.g. {choice: " + units[0] + ", " + units[0] +
                        ": " + (key == "bandwidth" ? "100" : "500") + "}");
      return std::nullopt;
    }
    if (unit && *unit != value->key) {
      error(value->keyLoc, uwhat + " has choice '" + *unit + "' but its value is given as '" +
                               value->key + "'");
      return std::nullopt;
    }
    auto d = number(value->value, value->key, uwhat);
    if (!d)
      return std::nullopt;
    return std::make_pair(value->key, *d);
  };
  // `bandwidth: 100Gbps`, `latency: 500ns`: the unit grammar of support/Units.h.
  auto scalar = [&](const YamlNode *v) {
    return v->kind == YamlNode::Scalar && !v->isNullScalar();
  };
  if (const YamlNode *bw = n->get("bandwidth"); bw && scalar(bw)) {
    std::optional<Bandwidth> b = parseBandwidth(bw->value);
    if (!b)
      error(bw->loc, "bandwidth '" + bw->value + "' of " + what + " is not a bandwidth; " +
                         BandwidthSpellings);
    else if (!(b->bitsPerSecond > 0))
      error(bw->loc, "bandwidth of " + what + " is " + bw->value + "; it must be more than 0");
    else
      l.bandwidth = b;
  } else if (bw)
    if (auto u = readUnit("bandwidth", BandwidthUnits,
                          "gigabits_per_second, gigabytes_per_second, gigatransfers_per_second",
                          bw)) {
      const YamlNode *valueNode = bw->get(u->first);
      if (!(u->second > 0)) {
        error(valueNode->loc, fmt::format("bandwidth of {} is {}; it must be more than 0", what,
                                          valueNode->value));
      } else if (u->first == "gigabits_per_second") {
        l.bandwidth = Bandwidth::gigabitsPerSec(u->second);
      } else if (u->first == "gigabytes_per_second") {
        l.bandwidth = Bandwidth::gigabytesPerSec(u->second);
      } else {
        l.bandwidth = Bandwidth::gigatransfersPerSec(u->second);
      }
    }
  if (const YamlNode *lat = n->get("latency"); lat && scalar(lat)) {
    std::optional<Duration> d = parseDuration(lat->value);
    if (!d)
      error(lat->loc, "latency '" + lat->value + "' of " + what + " is not a latency; " +
                          DurationSpellings);
    else if (!(d->ns >= 0))
      error(lat->loc, "latency of " + what + " is " + lat->value + "; it must be 0 or more");
    else
      l.latency = d;
  } else if (lat)
    if (auto u = readUnit("latency", LatencyUnits, "ms, us, ns", lat)) {
      const YamlNode *valueNode = lat->get(u->first);
      if (!(u->second >= 0)) {
        error(valueNode->loc, fmt::format("latency of {} is {}; it must be 0 or more", what,
                                          valueNode->value));
      } else if (u->first == "ms") {
        l.latency = Duration::milliseconds(u->second);
      } else if (u->first == "us") {
        l.latency = Duration::microseconds(u->second);
      } else {
        l.latency = Duration::nanoseconds(u->second);
      }
    }
}

void Reader::readLink(const YamlNode *n, const std::string &scope, size_t index, LinkDef &l) {
  std::string what = fmt::format("link #{} of {}", index + 1, scope);
  static const StringRef keys[] = {"name", "description", "physical"};
  if (!readNamed(n, what, "link", " of " + scope, keys, l))
    return;
  if (const YamlNode *v = n->get("physical"))
    readPhysical(v, what, l);
}

std::optional<Scheme> Reader::readScheme(const YamlNode *edge, const std::string &what) {
  // The reference has no default scheme: an edge without one fails there too.
  const YamlNode *v = require(edge, "scheme", what);
  if (!v)
    return std::nullopt;
  auto s = enumValue(v, "scheme", what, Schemes, "one2one, many2many, ring");
  if (!s)
    return std::nullopt;
  return parseScheme(*s);
}

void Reader::readDeviceEdge(const YamlNode *n, const std::string &device, size_t index,
                            DeviceEdge &e) {
  std::string what = fmt::format("edge #{} of device '{}'", index + 1, device);
  if (!map(n, what))
    return;
  e.loc = n->loc;
  static const StringRef keys[] = {"ep1", "ep2", "scheme", "link"};
  checkKeys(n, keys, what);
  auto endpoint = [&](StringRef key, ComponentPath &path) {
    static const StringRef epKeys[] = {"device", "component"};
    std::string ewhat;
    const YamlNode *ep = readEndpointMap(n, key, what, epKeys, ewhat);
    if (!ep)
      return;
    // `device: cx5[0:2]` + `component: pcie_endpoint[0]` is the same endpoint as
    // `component: cx5[0:2].pcie_endpoint[0]`.
    if (const YamlNode *d = ep->get("device"))
      if (auto s = identifier(d, "device", ewhat))
        if (!parsePath(d, ewhat, path))
          return;
    if (const YamlNode *c = require(ep, "component", ewhat))
      if (auto s = identifier(c, "component", ewhat))
        parsePath(c, ewhat, path);
  };
  endpoint("ep1", e.ep1);
  endpoint("ep2", e.ep2);
  readSchemeAndLink(n, what, e);
}

void Reader::readDevice(const YamlNode *n, size_t index, DeviceDef &dev) {
  std::string what = fmt::format("device #{}", index + 1);
  static const StringRef keys[] = {"name", "description", "components", "links", "edges"};
  if (!readNamed(n, what, "device", "", keys, dev))
    return;
  if (const YamlNode *v = require(n, "components", what))
    forEachItem(v, "'components' of " + what, [&](const YamlNode *item, size_t i) {
      readComponent(item, what, i, dev.components.emplace_back());
    });
  if (const YamlNode *v = n->get("links"))
    forEachItem(v, "'links' of " + what, [&](const YamlNode *item, size_t i) {
      readLink(item, what, i, dev.links.emplace_back());
    });
  if (const YamlNode *v = n->get("edges"))
    forEachItem(v, "'edges' of " + what, [&](const YamlNode *item, size_t i) {
      readDeviceEdge(item, dev.name, i, dev.edges.emplace_back());
    });
}

void Reader::readInstance(const YamlNode *n, size_t index, Instance &inst) {
  std::string what = fmt::format("instance #{}", index + 1);
  static const StringRef keys[] = {"name", "description", "device", "count"};
  if (!readNamed(n, what, "instance", "", keys, inst))
    return;
  if (const YamlNode *v = require(n, "device", what)) {
    inst.deviceLoc = v->loc;
    if (auto s = identifier(v, "device", what))
      inst.device = *s;
  }
  if (const YamlNode *v = require(n, "count", what)) {
    inst.countLoc = v->loc;
    if (auto k = count(v, "count", what))
      inst.count = static_cast<uint64_t>(*k);
  }
}

void Reader::readInfraEdge(const YamlNode *n, size_t index, InfraEdge &e) {
  std::string what = fmt::format("infrastructure edge #{}", index + 1);
  if (!map(n, what))
    return;
  e.loc = n->loc;
  static const StringRef keys[] = {"ep1", "ep2", "scheme", "link"};
  checkKeys(n, keys, what);
  auto endpoint = [&](StringRef key, InfraEndpoint &ep) {
    static const StringRef epKeys[] = {"instance", "component"};
    std::string ewhat;
    const YamlNode *m = readEndpointMap(n, key, what, epKeys, ewhat);
    if (!m)
      return;
    if (const YamlNode *v = require(m, "instance", ewhat))
      if (auto s = identifier(v, "instance", ewhat)) {
        StringRef str(*s);
        size_t dot = str.find('.');
        if (dot != StringRef::npos) {
          // The reference reads `host.0` as `host` (all copies): say what was meant.
          error(v->locAt(dot), "instance '" + *s + "' in " + ewhat + " contains '.'; name one " +
                                   "instance and select copies with a slice, e.g. '" +
                                   str.substr(0, dot) + "[0]'; components go in 'component'");
        } else {
          parseElem(v, str, 0, ewhat, ep.instance);
        }
      }
    if (const YamlNode *v = require(m, "component", ewhat))
      if (auto s = identifier(v, "component", ewhat))
        parsePath(v, ewhat, ep.component);
  };
  endpoint("ep1", e.ep1);
  endpoint("ep2", e.ep2);
  readSchemeAndLink(n, what, e);
}

void Reader::readAttributes(const YamlNode *n, const std::string &what,
                            std::vector<Attribute> &out) {
  auto *items = list(n, "'attributes' of " + what);
  if (!items)
    return;
  for (size_t i = 0; i < items->size() && !stop(); ++i) {
    const YamlNode *a = (*items)[i];
    std::string awhat = fmt::format("attribute #{} of {}", i + 1, what);
    if (!map(a, awhat))
      continue;
    static const StringRef keys[] = {"attribute", "value"};
    checkKeys(a, keys, awhat);
    Attribute attr;
    attr.loc = a->loc;
    const YamlNode *k = require(a, "attribute", awhat);
    const YamlNode *v = require(a, "value", awhat);
    if (!k || !v)
      continue;
    auto key = identifier(k, "attribute", awhat);
    // Values are strings in the schema; numbers are taken as written (rank: 0).
    auto value = text(v, "value", awhat);
    if (!key || !value)
      continue;
    attr.key = *key;
    attr.value = *value;
    attr.loc = k->loc;
    out.push_back(std::move(attr));
  }
}

void Reader::readAnnotations(const YamlNode *n, Annotations &out) {
  if (n->kind == YamlNode::Null)
    return;
  if (!map(n, "'annotations'"))
    return;
  static const StringRef keys[] = {"nodes", "edges", "links", "graph"};
  checkKeys(n, keys, "'annotations'");
  // Each of nodes/edges/links is a list of maps with known keys; fn reads one map.
  auto eachItem = [&](StringRef key, StringRef kind, llvm::ArrayRef<StringRef> itemKeys,
                      auto &&fn) {
    const YamlNode *v = n->get(key);
    if (!v)
      return;
    auto *items = list(v, "'" + key + "' of 'annotations'");
    if (!items)
      return;
    for (size_t i = 0; i < items->size() && !stop(); ++i) {
      const YamlNode *m = (*items)[i];
      std::string what = fmt::format("{} annotation #{}", kind.str(), i + 1);
      if (!map(m, what))
        continue;
      checkKeys(m, itemKeys, what);
      fn(m, what);
    }
  };
  auto attributesOf = [&](const YamlNode *m, const std::string &what, auto &a) {
    if (const YamlNode *at = m->get("attributes"))
      readAttributes(at, what, a.attributes);
  };
  // Node and link annotations: a name and attributes; the name locates diagnostics.
  auto named = [&](auto &a, const YamlNode *m, const std::string &what) {
    a.loc = m->loc;
    if (const YamlNode *nm = require(m, "name", what))
      if (auto s = identifier(nm, "name", what)) {
        a.name = *s;
        a.loc = nm->loc;
      }
    attributesOf(m, what, a);
  };
  static const StringRef namedKeys[] = {"name", "attributes"};
  static const StringRef edgeKeys[] = {"ep1", "ep2", "attributes"};
  eachItem("nodes", "node", namedKeys, [&](const YamlNode *m, const std::string &what) {
    Annotations::NodeAnn a;
    named(a, m, what);
    out.nodes.push_back(std::move(a));
  });
  eachItem("edges", "edge", edgeKeys, [&](const YamlNode *m, const std::string &what) {
    Annotations::EdgeAnn a;
    a.loc = m->loc;
    if (const YamlNode *e1 = require(m, "ep1", what))
      if (auto s = identifier(e1, "ep1", what))
        a.ep1 = *s;
    if (const YamlNode *e2 = require(m, "ep2", what))
      if (auto s = identifier(e2, "ep2", what))
        a.ep2 = *s;
    attributesOf(m, what, a);
    out.edges.push_back(std::move(a));
  });
  eachItem("links", "link", namedKeys, [&](const YamlNode *m, const std::string &what) {
    Annotations::LinkAnn a;
    named(a, m, what);
    out.links.push_back(std::move(a));
  });
  if (const YamlNode *v = n->get("graph"))
    readAttributes(v, "the graph annotation", out.graph);
}

void Reader::readDevices(const YamlNode *n, std::vector<DeviceDef> &out) {
  forEachItem(n, "'devices'",
              [&](const YamlNode *item, size_t i) { readDevice(item, i, out.emplace_back()); });
}

void Reader::readInfrastructureBody(const YamlNode *m, Infrastructure &in) {
  static const StringRef keys[] = {"name", "description", "devices", "links", "instances", "edges"};
  for (const YamlNode::Entry &e : m->entries)
    if (!llvm::is_contained(keys, StringRef(e.key))) {
      std::string hint;
      if (e.key == "annotations")
        hint = "; annotations go next to the infrastructure: {infrastructure: {...}, "
               "annotations: {...}}";
      else if (e.key == "blueprint")
        hint = "; a blueprint document has only 'blueprint' and 'devices'";
      else
        hint = didYouMean(e.key, keys);
      error(e.keyLoc, "unknown key '" + e.key + "' in the infrastructure" + hint +
                          " (valid keys: " + quoteList(keys) + ")");
    }
  if (const YamlNode *v = m->get("name"))
    if (auto s = identifier(v, "name", "the infrastructure"))
      in.name = *s;
  if (const YamlNode *v = m->get("description"))
    if (auto s = text(v, "description", "the infrastructure"))
      in.description = *s;
  if (const YamlNode *v = m->get("devices"))
    readDevices(v, in.devices);
  if (const YamlNode *v = m->get("links"))
    forEachItem(v, "'links'", [&](const YamlNode *item, size_t i) {
      readLink(item, "the infrastructure", i, in.links.emplace_back());
    });
  if (const YamlNode *v = m->get("instances"))
    forEachItem(v, "'instances'", [&](const YamlNode *item, size_t i) {
      readInstance(item, i, in.instances.emplace_back());
    });
  if (const YamlNode *v = m->get("edges"))
    forEachItem(v, "'edges'", [&](const YamlNode *item, size_t i) {
      readInfraEdge(item, i, in.edges.emplace_back());
    });
}

std::shared_ptr<Infrastructure> Reader::readBlueprint(const YamlNode *m, StringRef origin) {
  unsigned before = diags_.errorCount();
  static const StringRef keys[] = {"blueprint", "devices"};
  checkKeys(m, keys, "a blueprint document");
  blueprints::BlueprintSpec spec;
  spec.origin = origin.str();
  const YamlNode *bp = m->get("blueprint");
  spec.loc = bp->loc;
  if (bp->kind == YamlNode::Scalar) {
    // `blueprint: clos` is `blueprint: {name: clos}`.
    if (auto s = identifier(bp, "blueprint", "the document"))
      spec.name = *s;
  } else if (map(bp, "'blueprint'")) {
    for (const YamlNode::Entry &e : bp->entries) {
      const YamlNode *v = e.value;
      if (e.key == "name") {
        if (auto s = identifier(v, "name", "the blueprint")) {
          spec.name = *s;
          spec.loc = v->loc;
        }
        continue;
      }
      if (v->kind != YamlNode::Scalar || v->isNullScalar()) {
        error(v->loc, "blueprint parameter '" + e.key + "' must be a single value (a number or a "
                          "word), not " + v->describe());
        continue;
      }
      spec.params.push_back({e.key, v->value, v->loc});
    }
    if (!bp->get("name"))
      error(bp->loc, "'blueprint' has no 'name'; write e.g. blueprint: {name: clos, radix: 8}");
  }
  if (const YamlNode *v = m->get("devices"))
    readDevices(v, spec.devices);
  if (diags_.errorCount() != before || spec.name.empty())
    return nullptr;
  return blueprints::instantiateFabric(spec, diags_);
}

std::shared_ptr<Infrastructure> Reader::document(const YamlNode *root, SMLoc fileStart,
                                                 StringRef origin) {
  if (!root || root->isNullScalar()) {
    error(fileStart, "the file holds no document; an InfraGraph document is a mapping with "
                     "name, devices, links, instances and edges");
    return nullptr;
  }
  if (!map(root, "an InfraGraph document"))
    return nullptr;
  unsigned before = diags_.errorCount();
  if (root->get("blueprint"))
    return readBlueprint(root, origin);
  auto in = std::make_shared<Infrastructure>();
  in->origin = origin.str();
  if (const YamlNode *body = root->get("infrastructure")) {
    // The reference's get_graph(infragraph) form.
    static const StringRef keys[] = {"infrastructure", "annotations"};
    checkKeys(root, keys, "the document");
    if (map(body, "'infrastructure'"))
      readInfrastructureBody(body, *in);
    if (const YamlNode *ann = root->get("annotations"))
      readAnnotations(ann, in->annotations);
  } else {
    readInfrastructureBody(root, *in);
  }
  if (diags_.errorCount() != before)
    return nullptr;
  return in;
}

} // namespace

namespace {

// Reads parsed documents: combined and converted from the older form when needed.
std::shared_ptr<Infrastructure> readDocuments(llvm::ArrayRef<SourceDoc> docs, DiagEngine &diags) {
  unsigned before = diags.errorCount();
  std::deque<YamlNode> pool;
  std::string origin;
  const YamlNode *root = combineDocuments(docs, pool, diags, &origin);
  std::shared_ptr<Infrastructure> defs;
  if (diags.errorCount() == before)
    defs = Reader(diags).document(root, docs.front().start, origin);
  // The reader skips the rest of the document once the error limit is reached.
  if (diags.shouldStop())
    diags.announceStop();
  return diags.errorCount() == before ? defs : nullptr;
}

} // namespace

std::shared_ptr<Infrastructure> read(llvm::MemoryBufferRef buffer, Syntax syntax,
                                     DiagEngine &diags) {
  YamlTree tree;
  if (!(syntax == Syntax::Json ? tree.parseJson(buffer, diags) : tree.parse(buffer, diags)))
    return nullptr;
  SourceDoc doc{tree.root(), buffer.getBufferIdentifier().str(),
                SMLoc::getFromPointer(buffer.getBufferStart())};
  return readDocuments(doc, diags);
}

std::shared_ptr<Infrastructure> readFiles(llvm::ArrayRef<std::string> paths, DiagEngine &diags) {
  std::deque<YamlTree> trees;
  std::vector<SourceDoc> docs;
  bool ok = true;
  for (const std::string &path : paths) {
    auto buf = openInputFile(path, /*nulTerminated=*/false);
    if (!buf) {
      diags.error(path, "cannot read the file: " + buf.getError().message());
      ok = false;
      continue;
    }
    llvm::MemoryBufferRef ref = (*buf)->getMemBufferRef();
    std::string ext = llvm::sys::path::extension(path).lower();
    Syntax syntax = ext == ".json" ? Syntax::Json : Syntax::Yaml;
    if (ext != ".json" && ext != ".yaml" && ext != ".yml" &&
        ref.getBuffer().ltrim(" \t\r\n").starts_with("{"))
      syntax = Syntax::Json;
    diags.addBuffer(std::move(*buf));
    YamlTree &tree = trees.emplace_back();
    if (!(syntax == Syntax::Json ? tree.parseJson(ref, diags) : tree.parse(ref, diags))) {
      ok = false;
      continue;
    }
    docs.push_back({tree.root(), ref.getBufferIdentifier().str(),
                    SMLoc::getFromPointer(ref.getBufferStart())});
  }
  if (!ok)
    return nullptr;
  return readDocuments(docs, diags);
}

std::shared_ptr<Infrastructure> readFile(llvm::StringRef path, DiagEngine &diags) {
  return readFiles({path.str()}, diags);
}

} // namespace infracc::infragraph
