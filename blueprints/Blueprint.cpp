#include "blueprints/Blueprint.h"

#include "blueprints/Params.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <algorithm>
#include <deque>

namespace infracc::blueprints {

static std::deque<FabricBlueprint> &fabricList() {
  static std::deque<FabricBlueprint> l;
  return l;
}
static std::deque<DeviceBlueprint> &deviceList() {
  static std::deque<DeviceBlueprint> l;
  return l;
}

void Registry::addFabric(FabricBlueprint b) { fabricList().push_back(std::move(b)); }

void Registry::addDevice(DeviceBlueprint b) {
  if (!b.build && b.buildWithParts) {
    auto full = b.buildWithParts;
    b.build = [full](const BlueprintSpec &s, DiagEngine &d) -> std::optional<DeviceDef> {
      auto r = full(s, d);
      if (!r)
        return std::nullopt;
      return std::move(r->device);
    };
  } else if (b.build && !b.buildWithParts) {
    auto plain = b.build;
    b.buildWithParts = [plain](const BlueprintSpec &s, DiagEngine &d) -> std::optional<DeviceBuild> {
      auto r = plain(s, d);
      if (!r)
        return std::nullopt;
      return DeviceBuild{std::move(*r), {}};
    };
  }
  deviceList().push_back(std::move(b));
}

const FabricBlueprint *Registry::findFabric(llvm::StringRef name) {
  for (const FabricBlueprint &b : fabricList())
    if (b.name == name)
      return &b;
  return nullptr;
}

const DeviceBlueprint *Registry::findDevice(llvm::StringRef name) {
  for (const DeviceBlueprint &b : deviceList())
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<const FabricBlueprint *> Registry::fabrics() {
  std::vector<const FabricBlueprint *> v;
  for (const FabricBlueprint &b : fabricList())
    v.push_back(&b);
  std::sort(v.begin(), v.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return v;
}

std::vector<const DeviceBlueprint *> Registry::devices() {
  std::vector<const DeviceBlueprint *> v;
  for (const DeviceBlueprint &b : deviceList())
    v.push_back(&b);
  std::sort(v.begin(), v.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return v;
}

static void reportAt(DiagEngine &diags, llvm::SMLoc loc, const std::string &origin,
                     const std::string &msg) {
  if (loc.isValid())
    diags.error(loc, msg);
  else
    diags.error(origin, msg);
}

std::shared_ptr<Infrastructure> instantiateFabric(const BlueprintSpec &spec, DiagEngine &diags) {
  const FabricBlueprint *b = Registry::findFabric(spec.name);
  if (!b) {
    std::vector<std::string> known;
    for (const FabricBlueprint *f : Registry::fabrics())
      known.push_back(f->name);
    std::string msg = "unknown fabric blueprint '" + spec.name + "'" + didYouMean(spec.name, known) +
                      " (fabric blueprints: " +
                      (known.empty() ? std::string("none") : llvm::join(known, ", ")) +
                      "; see infracc -list-blueprints)";
    reportAt(diags, spec.loc, spec.origin, msg);
    return nullptr;
  }
  unsigned before = diags.errorCount();
  auto result = b->build(spec, diags);
  if (diags.errorCount() != before)
    return nullptr;
  return result;
}

std::optional<DeviceBuild> instantiateDevice(const BlueprintSpec &spec, DiagEngine &diags) {
  const DeviceBlueprint *b = Registry::findDevice(spec.name);
  if (!b) {
    std::vector<std::string> known;
    for (const DeviceBlueprint *d : Registry::devices())
      known.push_back(d->name);
    reportAt(diags, spec.loc, spec.origin,
             "unknown device blueprint '" + spec.name + "'" + didYouMean(spec.name, known) +
                 " (device blueprints: " + llvm::join(known, ", ") + ")");
    return std::nullopt;
  }
  unsigned before = diags.errorCount();
  auto result = b->buildWithParts(spec, diags);
  if (diags.errorCount() != before)
    return std::nullopt;
  return result;
}

// ---------------------------------------------------------------------------------
// Spec text
// ---------------------------------------------------------------------------------

namespace {

struct SpecParser {
  llvm::StringRef text;
  llvm::SMLoc base;
  DiagEngine &diags;
  std::string origin;
  bool ok = true;

  llvm::SMLoc at(size_t offset) const {
    if (!base.isValid())
      return {};
    return llvm::SMLoc::getFromPointer(base.getPointer() + offset);
  }
  void error(size_t offset, const std::string &msg) {
    ok = false;
    reportAt(diags, at(offset), origin, msg);
  }

  static bool isNameChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '-'; }

  // [b, e) trimmed of blanks.
  void trim(size_t &b, size_t &e) const {
    while (b < e && llvm::isSpace(text[b]))
      ++b;
    while (e > b && llvm::isSpace(text[e - 1]))
      --e;
  }

  bool checkName(size_t b, size_t e, llvm::StringRef what) {
    if (b == e) {
      error(b, "expected a " + what.str() + " name");
      return false;
    }
    for (size_t i = b; i < e; ++i)
      if (!isNameChar(text[i])) {
        error(i, fmt::format("unexpected '{}' in {} name '{}' (names are letters, digits, '_' "
                             "and '-')",
                             text[i], what.str(), text.slice(b, e).str()));
        return false;
      }
    return true;
  }

  // key=value,key=value within [b, e).
  void params(size_t b, size_t e, std::vector<Param> &out) {
    trim(b, e);
    if (b == e)
      return;
    size_t start = b;
    int depth = 0;
    for (size_t i = b; i <= e; ++i) {
      char c = i < e ? text[i] : ',';
      if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (--depth < 0) {
          error(i, "unmatched ')'");
          return;
        }
      } else if (c == ',' && depth == 0) {
        param(start, i, out);
        start = i + 1;
      }
    }
    if (depth > 0)
      error(e, "missing ')'");
  }

  void param(size_t b, size_t e, std::vector<Param> &out) {
    trim(b, e);
    if (b == e) {
      error(b, "empty parameter; write key=value pairs separated by ','");
      return;
    }
    size_t eq = text.slice(b, e).find('=');
    if (eq == llvm::StringRef::npos) {
      error(b, "parameter '" + text.slice(b, e).str() + "' has no value; write key=value "
               "(e.g. radix=16)");
      return;
    }
    size_t ke = b + eq, vb = b + eq + 1, ve = e;
    size_t kb = b;
    trim(kb, ke);
    trim(vb, ve);
    if (!checkName(kb, ke, "parameter"))
      return;
    if (vb == ve) {
      error(vb, "parameter '" + text.slice(kb, ke).str() + "' has an empty value");
      return;
    }
    Param p;
    p.key = text.slice(kb, ke).str();
    p.value = text.slice(vb, ve).str();
    p.loc = at(vb);
    out.push_back(std::move(p));
  }
};

} // namespace

std::optional<BlueprintSpec> parseFabricSpec(llvm::StringRef text, llvm::SMLoc loc,
                                             DiagEngine &diags) {
  SpecParser p{text, loc, diags, "-fabric"};
  BlueprintSpec spec;
  size_t colon = text.find(':');
  size_t nb = 0, ne = colon == llvm::StringRef::npos ? text.size() : colon;
  p.trim(nb, ne);
  if (nb == ne) {
    p.error(nb, "expected a fabric blueprint name, e.g. -fabric=clos:radix=8,levels=2 (see "
                "infracc -list-blueprints)");
    return std::nullopt;
  }
  if (!p.checkName(nb, ne, "blueprint"))
    return std::nullopt;
  spec.name = text.slice(nb, ne).str();
  spec.loc = p.at(nb);
  if (colon != llvm::StringRef::npos)
    p.params(colon + 1, text.size(), spec.params);
  if (!p.ok)
    return std::nullopt;
  return spec;
}

std::optional<BlueprintSpec> parseDeviceSpec(llvm::StringRef text, llvm::SMLoc loc,
                                             DiagEngine &diags) {
  SpecParser p{text, loc, diags, "-fabric"};
  BlueprintSpec spec;
  size_t open = text.find('(');
  size_t nb = 0, ne = open == llvm::StringRef::npos ? text.size() : open;
  p.trim(nb, ne);
  if (!p.checkName(nb, ne, "device"))
    return std::nullopt;
  spec.name = text.slice(nb, ne).str();
  spec.loc = p.at(nb);
  if (open != llvm::StringRef::npos) {
    size_t close = text.rfind(')');
    size_t end = text.size();
    while (end > 0 && llvm::isSpace(text[end - 1]))
      --end;
    if (close == llvm::StringRef::npos || close < open) {
      p.error(text.size(), "missing ')' after the parameters of device '" + spec.name + "'");
      return std::nullopt;
    }
    if (close + 1 != end) {
      p.error(close + 1, "unexpected text after ')' in device spec '" + text.str() + "'");
      return std::nullopt;
    }
    p.params(open + 1, close, spec.params);
  }
  if (!p.ok)
    return std::nullopt;
  return spec;
}

// ---------------------------------------------------------------------------------
// -list-blueprints
// ---------------------------------------------------------------------------------

static void listParams(llvm::raw_ostream &os, const std::vector<ParamInfo> &params) {
  for (const ParamInfo &p : params) {
    std::string head = p.key + "=" + (p.defaultValue.empty() ? "<derived>" : p.defaultValue);
    os << "    " << fmt::format("{:<24}", head);
    if (head.size() > 24)
      os << "\n    " << std::string(24, ' ');
    os << " " << p.description << "\n";
  }
}

void listBlueprints(llvm::raw_ostream &os) {
  os << "Fabric blueprints (-fabric=<name>:<key>=<value>,..., or a fabric file's `blueprint:` "
        "mapping):\n";
  for (const FabricBlueprint *f : Registry::fabrics()) {
    os << "\n  " << f->name << ": " << f->description << "\n";
    listParams(os, f->params);
  }
  os << "\nDevice blueprints (host=<name>, host=<name>(<key>=<value>,...), likewise switch= "
        "and nic_device=):\n";
  for (const DeviceBlueprint *d : Registry::devices()) {
    os << "\n  " << d->name << ": " << d->description << "\n";
    listParams(os, d->params);
  }
}

} // namespace infracc::blueprints
