// How ASTRA-sim's backends read the numbers infracc writes, restated in the tests so that
// the writers (backends/astra/AstraUnits.h) are checked against an independent reader:
// the analytical backend's bw_GBps_to_Bpns (value * 2^30 / 10^9 bytes per ns) and ns-3's
// DataRate and Time attribute strings.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace infracc::test {

/// What the analytical backend takes a "GB/s" value to mean, in bytes per second.
inline double bytesPerSecondOfAnalytical(double gbps) { return gbps * 1073741824.0; }

/// "<number><suffix>" with the number read in full and the suffix one of `units`.
template <typename T, size_t N>
std::optional<T> parseWithUnit(const std::string &text,
                               const std::pair<const char *, double> (&units)[N]) {
  const char *begin = text.c_str();
  char *end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(v) || v < 0)
    return std::nullopt;
  std::string unit(end);
  for (const auto &[name, scale] : units)
    if (unit == name)
      return static_cast<T>(std::llround(v * scale));
  return std::nullopt;
}

/// An ns-3 DataRate string in bits per second (the bit suffixes ns-3 accepts).
inline std::optional<double> parseNs3DataRate(const std::string &text) {
  static const std::pair<const char *, double> units[] = {
      {"bps", 1}, {"b/s", 1}, {"Kbps", 1e3}, {"Kb/s", 1e3}, {"Mbps", 1e6},
      {"Mb/s", 1e6}, {"Gbps", 1e9}, {"Gb/s", 1e9}};
  return parseWithUnit<double>(text, units);
}

/// An ns-3 Time string (s, ms, us, ns, ps) in picoseconds.
inline std::optional<int64_t> parseNs3Time(const std::string &text) {
  static const std::pair<const char *, double> units[] = {
      {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
  return parseWithUnit<int64_t>(text, units);
}

} // namespace infracc::test
