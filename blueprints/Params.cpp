#include "blueprints/Params.h"

#include "blueprints/Build.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace infracc::blueprints {

// Parameter and blueprint names are short words: allow about one edit in three.
static unsigned nameLimit(llvm::StringRef bad) { return std::max<unsigned>(2, bad.size() / 3) + 1; }

std::string closestName(llvm::StringRef bad, llvm::ArrayRef<std::string> names) {
  return infracc::closestName(bad, names, nameLimit(bad));
}

std::string didYouMean(llvm::StringRef bad, llvm::ArrayRef<std::string> names) {
  return infracc::didYouMean(bad, names, nameLimit(bad));
}

std::string suggestValues(uint64_t v, const std::function<bool(uint64_t)> &valid, uint64_t min,
                          uint64_t max) {
  // Search outwards a bounded distance: enough for every constraint a blueprint has.
  constexpr uint64_t Span = 1 << 16;
  std::optional<uint64_t> below, above, below2, above2;
  for (uint64_t x = v; x > min && v - x < Span;) {
    --x;
    if (valid(x)) {
      if (!below)
        below = x;
      else {
        below2 = x;
        break;
      }
    }
  }
  for (uint64_t x = v; x < max && x - v < Span;) {
    ++x;
    if (valid(x)) {
      if (!above)
        above = x;
      else {
        above2 = x;
        break;
      }
    }
  }
  std::vector<uint64_t> picks;
  if (below && above)
    picks = {*below, *above};
  else if (above)
    picks = above2 ? std::vector<uint64_t>{*above, *above2} : std::vector<uint64_t>{*above};
  else if (below)
    picks = below2 ? std::vector<uint64_t>{*below2, *below} : std::vector<uint64_t>{*below};
  if (picks.empty())
    return "";
  if (picks.size() == 1)
    return fmt::format("try {}", picks[0]);
  return fmt::format("try {} or {}", picks[0], picks[1]);
}

// ---------------------------------------------------------------------------------

ParamReader::ParamReader(const BlueprintSpec &spec, const std::vector<ParamInfo> &known,
                         std::string what, DiagEngine &diags)
    : spec_(spec), known_(known), what_(std::move(what)), diags_(diags) {
  std::vector<std::string> names;
  for (const ParamInfo &p : known_)
    names.push_back(p.key);
  std::set<std::string> seen;
  for (const Param &p : spec_.params) {
    llvm::SMLoc kl = keyLoc(p);
    auto report = [&](const std::string &msg) {
      ok_ = false;
      if (kl.isValid())
        diags_.error(kl, msg);
      else
        diags_.error(spec_.origin, msg);
    };
    if (!info(p.key)) {
      report("unknown parameter '" + p.key + "' for " + what_ + didYouMean(p.key, names) +
             " (its parameters: " + (names.empty() ? std::string("none") : llvm::join(names, ", ")) +
             ")");
      continue;
    }
    if (!seen.insert(p.key).second)
      report("parameter '" + p.key + "' is given twice");
  }
}

// `key=value` written in one buffer (the -fabric= syntax): the key's location; else the
// value's (a file's `key: value` has its own key positions, which the spec does not keep).
llvm::SMLoc ParamReader::keyLoc(const Param &p) const {
  if (!p.loc.isValid())
    return p.loc;
  unsigned id = diags_.sourceMgr().FindBufferContainingLoc(p.loc);
  if (!id)
    return p.loc;
  const char *start = diags_.sourceMgr().getMemoryBuffer(id)->getBufferStart();
  const char *v = p.loc.getPointer();
  if (size_t(v - start) < p.key.size() + 1 || v[-1] != '=' ||
      llvm::StringRef(v - 1 - p.key.size(), p.key.size()) != p.key)
    return p.loc;
  return llvm::SMLoc::getFromPointer(v - 1 - p.key.size());
}

const Param *ParamReader::find(llvm::StringRef key) const {
  for (const Param &p : spec_.params)
    if (p.key == key)
      return &p;
  return nullptr;
}

const ParamInfo *ParamReader::info(llvm::StringRef key) const {
  for (const ParamInfo &p : known_)
    if (p.key == key)
      return &p;
  return nullptr;
}

std::string ParamReader::text(llvm::StringRef key) const {
  if (const Param *p = find(key))
    return p->value;
  const ParamInfo *i = info(key);
  assert(i && "blueprint reads a parameter it does not declare");
  return i ? i->defaultValue : std::string();
}

llvm::SMLoc ParamReader::loc(llvm::StringRef key) const {
  if (const Param *p = find(key))
    return p->loc;
  return spec_.loc;
}

void ParamReader::error(llvm::StringRef key, const llvm::Twine &msg) {
  ok_ = false;
  llvm::SMLoc l = loc(key);
  if (l.isValid())
    diags_.error(l, msg);
  else
    diags_.error(spec_.origin, msg);
}

void ParamReader::error(const llvm::Twine &msg) {
  ok_ = false;
  if (spec_.loc.isValid())
    diags_.error(spec_.loc, msg);
  else
    diags_.error(spec_.origin, msg);
}

uint64_t ParamReader::uint(llvm::StringRef key, uint64_t min, uint64_t max) {
  std::string t = text(key);
  uint64_t v;
  if (llvm::StringRef(t).getAsInteger(10, v)) {
    error(key, fmt::format("{} '{}' is not a whole number", key.str(), t));
    return min;
  }
  if (v < min || v > max) {
    if (max == UINT64_MAX)
      error(key, fmt::format("{} {} is too small; it must be at least {}", key.str(), v, min));
    else
      error(key, fmt::format("{} {} is out of range; it must be between {} and {}", key.str(), v,
                             min, max));
    return min;
  }
  return v;
}

std::vector<uint64_t> ParamReader::dims(llvm::StringRef key, size_t minDims, size_t maxDims,
                                        uint64_t maxSize, llvm::StringRef form,
                                        llvm::StringRef example) {
  std::string t = text(key);
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(t).split(parts, 'x');
  std::vector<uint64_t> out;
  bool bad = parts.size() < minDims || parts.size() > maxDims;
  for (llvm::StringRef p : parts) {
    uint64_t v;
    if (p.trim().getAsInteger(10, v) || v < 1 || (maxSize && v > maxSize)) {
      bad = true;
      break;
    }
    out.push_back(v);
  }
  if (bad) {
    std::string shape = !form.empty() ? form.str()
                        : minDims == maxDims
                            ? fmt::format("{} sizes joined by 'x'", minDims)
                            : fmt::format("{} to {} sizes joined by 'x'", minDims, maxDims);
    std::string each = maxSize ? fmt::format("each between 1 and {}", maxSize)
                               : std::string("each a whole number of at least 1");
    error(key, fmt::format("{} '{}' is not valid; write {}, {}, e.g. {}", key.str(), t, shape, each,
                           example.str()));
    return std::vector<uint64_t>(std::max<size_t>(minDims, 1), 1);
  }
  return out;
}

std::optional<Bandwidth> ParamReader::bandwidth(llvm::StringRef key) {
  std::string t = text(key);
  if (t.empty() || t == "none")
    return std::nullopt;
  auto b = parseBandwidth(t);
  if (!b) {
    error(key, fmt::format("{} '{}' is not a bandwidth or none; {}", key.str(), t,
                           BandwidthSpellings));
    return std::nullopt;
  }
  if (!(b->bitsPerSecond > 0)) {
    error(key, fmt::format("{} '{}' must be positive", key.str(), t));
    return std::nullopt;
  }
  return b;
}

std::optional<Duration> ParamReader::latency(llvm::StringRef key) {
  std::string t = text(key);
  if (t.empty() || t == "none")
    return std::nullopt;
  auto d = parseDuration(t);
  if (!d) {
    error(key, fmt::format("{} '{}' is not a latency or none; {}", key.str(), t,
                           DurationSpellings));
    return std::nullopt;
  }
  return d;
}

std::string ParamReader::choice(llvm::StringRef key, llvm::ArrayRef<llvm::StringRef> choices) {
  std::string t = text(key);
  for (llvm::StringRef c : choices)
    if (c == t)
      return t;
  std::vector<std::string> names;
  for (llvm::StringRef c : choices)
    names.push_back(c.str());
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  std::string pick = closestName(t, names);
  error(key, fmt::format("{} '{}' is not valid; choose {}{}", key.str(), t, list,
                         pick.empty() ? "" : " (did you mean '" + pick + "'?)"));
  return choices.front().str();
}

// The definitions a file device composes, innermost first.
static bool collectParts(const DeviceDef &d, const std::vector<DeviceDef> &pool,
                         std::vector<DeviceDef> &parts, unsigned depth) {
  if (depth > 16)
    return false;
  for (const Component &c : d.components) {
    if (c.kind != ComponentKind::Device)
      continue;
    bool have = false;
    for (const DeviceDef &p : parts)
      have |= p.name == c.name;
    if (have)
      continue;
    for (const DeviceDef &p : pool)
      if (p.name == c.name) {
        if (!collectParts(p, pool, parts, depth + 1))
          return false;
        parts.push_back(p);
        break;
      }
  }
  return true;
}

std::optional<DeviceBuild> ParamReader::device(llvm::StringRef key) {
  std::string t = text(key);
  unsigned before = diags_.errorCount();
  llvm::SMLoc at = given(key) ? loc(key) : llvm::SMLoc();
  // A value quoted in a file: its text starts after the quote.
  if (at.isValid() && (*at.getPointer() == '"' || *at.getPointer() == '\''))
    at = llvm::SMLoc::getFromPointer(at.getPointer() + 1);
  auto sub = parseDeviceSpec(t, at, diags_);
  if (!sub) {
    if (diags_.errorCount() == before)
      error(key, key.str() + " '" + t + "' is not a device");
    ok_ = false;
    return std::nullopt;
  }
  sub->origin = spec_.origin;
  sub->devices = spec_.devices;
  for (const DeviceDef &d : spec_.devices) {
    if (d.name != sub->name)
      continue;
    if (!sub->params.empty()) {
      error(key, "device '" + d.name + "' is defined in the fabric file and takes no parameters");
      return std::nullopt;
    }
    DeviceBuild b{d, {}};
    collectParts(d, spec_.devices, b.parts, 0);
    return b;
  }
  if (!Registry::findDevice(sub->name)) {
    std::vector<std::string> names, fileNames;
    for (const DeviceBlueprint *d : Registry::devices())
      names.push_back(d->name);
    for (const DeviceDef &d : spec_.devices)
      fileNames.push_back(d.name);
    std::vector<std::string> every = names;
    every.insert(every.end(), fileNames.begin(), fileNames.end());
    std::string msg = "unknown device '" + sub->name + "' for " + key.str() +
                      didYouMean(sub->name, every) + " (device blueprints: " +
                      llvm::join(names, ", ");
    if (!fileNames.empty())
      msg += "; devices in the fabric file: " + llvm::join(fileNames, ", ");
    error(key, msg + ")");
    return std::nullopt;
  }
  auto b = instantiateDevice(*sub, diags_);
  if (!b)
    ok_ = false;
  return b;
}

} // namespace infracc::blueprints
