#include "backends/astra/AstraUnits.h"

#include <fmt/format.h>

#include <cmath>

namespace infracc::astra {

double analyticalBandwidth(double bytesPerSecond) { return bytesPerSecond / 1073741824.0; }

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

} // namespace infracc::astra
