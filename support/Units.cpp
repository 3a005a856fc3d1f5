#include "support/Units.h"

#include <llvm/ADT/StringExtras.h>

#include <utility>

namespace infracc {

const char *const BandwidthSpellings =
    "write a number and a unit, e.g. 100Gbps, 100 Gb/s, 12.5GB/s, 400G or 1TiB/s (bits per "
    "second: bps, Kbps, Mbps, Gbps, Tbps, also written b/s, Kb/s, Mb/s, Gb/s, Tb/s, or K, M, G, "
    "T; bytes per second: Bps, KBps, MBps, GBps, TBps, also written B/s, KB/s, MB/s, GB/s, TB/s; "
    "KiB/s, MiB/s, GiB/s, TiB/s; MT/s, GT/s); a bare number is Gb/s";
const char *const DurationSpellings =
    "write a number and a unit, e.g. 500ns, 0.5us, 1.5 us or 2ms (ps, ns, us, \xC2\xB5s, ms, s); "
    "a bare number is ns";

namespace {

// The number at the start of `s` and the rest (trimmed): digits with an optional
// fraction and exponent (1e3, but not the unit "E...", which no unit starts with).
std::optional<std::pair<double, llvm::StringRef>> splitNumber(llvm::StringRef s) {
  s = s.trim();
  size_t i = 0;
  while (i < s.size() && (llvm::isDigit(s[i]) || s[i] == '.'))
    ++i;
  if (i < s.size() && s[i] == 'e' && i + 1 < s.size()) {
    size_t j = i + 1;
    if (s[j] == '-' || s[j] == '+')
      ++j;
    if (j < s.size() && llvm::isDigit(s[j])) {
      while (j < s.size() && llvm::isDigit(s[j]))
        ++j;
      i = j;
    }
  }
  double v;
  if (i == 0 || s.substr(0, i).getAsDouble(v) || !std::isfinite(v))
    return std::nullopt;
  return std::make_pair(v, s.substr(i).trim());
}

} // namespace

std::optional<Bandwidth> parseBandwidth(llvm::StringRef s) {
  auto num = splitNumber(s);
  if (!num)
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1e9},         {"bps", 1},         {"b/s", 1},         {"K", 1e3},
      {"Kbps", 1e3},     {"Kb/s", 1e3},      {"kbps", 1e3},      {"kb/s", 1e3},
      {"M", 1e6},        {"Mbps", 1e6},      {"Mb/s", 1e6},      {"G", 1e9},
      {"Gbps", 1e9},     {"Gb/s", 1e9},      {"T", 1e12},        {"Tbps", 1e12},
      {"Tb/s", 1e12},    {"Bps", 8},         {"B/s", 8},         {"KBps", 8e3},
      {"KB/s", 8e3},     {"kB/s", 8e3},      {"MBps", 8e6},      {"MB/s", 8e6},
      {"GBps", 8e9},     {"GB/s", 8e9},      {"TBps", 8e12},     {"TB/s", 8e12},
      {"KiB/s", 8.0 * 1024},                 {"MiB/s", 8.0 * (1 << 20)},
      {"GiB/s", 8.0 * (1ull << 30)},         {"TiB/s", 8.0 * (1ull << 40)},
      {"MT/s", 1e6},     {"GT/s", 1e9}};
  for (auto &[unit, mult] : units)
    if (num->second == unit)
      return Bandwidth::bitsPerSec(num->first * mult);
  return std::nullopt;
}

std::optional<Duration> parseDuration(llvm::StringRef s) {
  auto num = splitNumber(s);
  if (!num)
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1}, {"ps", 1e-3}, {"ns", 1}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (auto &[unit, mult] : units)
    if (num->second == unit)
      return Duration::nanoseconds(num->first * mult);
  return std::nullopt;
}

} // namespace infracc
