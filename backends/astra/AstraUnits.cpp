#include "backends/astra/AstraUnits.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace infracc::astra {

double analyticalBandwidth(double bytesPerSecond) { return bytesPerSecond / 1073741824.0; }
double bytesPerSecondOfAnalytical(double gbps) { return gbps * 1073741824.0; }

std::string ns3DataRate(double bitsPerSecond) {
  const auto bps = static_cast<uint64_t>(std::llround(bitsPerSecond));
  for (auto [div, unit] : {std::pair<uint64_t, const char *>{1000000000, "Gbps"},
                           {1000000, "Mbps"},
                           {1000, "Kbps"}})
    if (bps != 0 && bps % div == 0)
      return fmt::format("{}{}", bps / div, unit);
  return fmt::format("{}bps", bps);
}

std::string ns3Time(int64_t ps) {
  if (ps == 0)
    return "0ns";
  for (auto [div, unit] : {std::pair<int64_t, const char *>{1000000000, "ms"},
                           {1000000, "us"},
                           {1000, "ns"}})
    if (ps % div == 0)
      return fmt::format("{}{}", ps / div, unit);
  return fmt::format("{}ps", ps);
}

namespace {
// "<number><suffix>" with the number read in full and the suffix one of `units`.
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
} // namespace

std::optional<double> parseNs3DataRate(const std::string &text) {
  static const std::pair<const char *, double> units[] = {
      {"bps", 1}, {"b/s", 1}, {"Kbps", 1e3}, {"Kb/s", 1e3}, {"Mbps", 1e6},
      {"Mb/s", 1e6}, {"Gbps", 1e9}, {"Gb/s", 1e9}};
  return parseWithUnit<double>(text, units);
}

std::optional<int64_t> parseNs3Time(const std::string &text) {
  static const std::pair<const char *, double> units[] = {
      {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
  return parseWithUnit<int64_t>(text, units);
}

} // namespace infracc::astra
