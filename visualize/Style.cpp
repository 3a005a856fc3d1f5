#include "visualize/Style.h"

#include <fmt/format.h>

#include <cmath>

namespace infracc::viz {

namespace {
// Okabe-Ito and Tableau hues that stay distinct for the colour-blind and on paper.
constexpr const char *Palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                   "#56B4E9", "#7F3C8D", "#8C564B", "#555555"};
constexpr size_t PaletteSize = sizeof(Palette) / sizeof(Palette[0]);

// Up to 4 significant digits, without trailing zeros: 400, 499.2, 25.6, 0.125.
std::string shortNumber(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  std::string s = fmt::format("{:.4g}", v);
  if (s.find('e') != std::string::npos)
    s = fmt::format("{:.3f}", v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}
} // namespace

const char *linkColour(size_t i) { return Palette[i % PaletteSize]; }
bool linkDashed(size_t i) { return i >= PaletteSize; }

Attrs componentStyle(ComponentKind k) {
  switch (k) {
  case ComponentKind::Xpu:
    return {{"shape", "box"}, {"style", "rounded,filled"}, {"fillcolor", "#CDEBC5"}};
  case ComponentKind::Cpu:
    return {{"shape", "box"}, {"style", "rounded,filled"}, {"fillcolor", "#C9DDF2"}};
  case ComponentKind::Nic:
    return {{"shape", "box"}, {"style", "rounded,filled"}, {"fillcolor", "#FBE0BF"}};
  case ComponentKind::Memory:
    return {{"shape", "cylinder"}, {"style", "filled"}, {"fillcolor", "#E6D5EC"}};
  case ComponentKind::Port:
    return {{"shape", "box"},    {"style", "filled"}, {"fillcolor", "#EEEEEE"},
            {"fontsize", "9"},   {"height", "0.3"},   {"width", "0.5"}};
  case ComponentKind::Switch:
    return {{"shape", "box"}, {"style", "filled"}, {"fillcolor", "#F6CACA"}};
  case ComponentKind::Device:
  case ComponentKind::Custom:
    break;
  }
  return {{"shape", "ellipse"}, {"style", "filled"}, {"fillcolor", "#F2F2F2"}};
}

std::string formatBandwidth(Bandwidth b) {
  double gbps = b.inGigabitsPerSec();
  if (gbps >= 1000)
    return shortNumber(gbps / 1000) + " Tb/s";
  if (gbps >= 1)
    return shortNumber(gbps) + " Gb/s";
  if (b.inMegabitsPerSec() >= 1)
    return shortNumber(b.inMegabitsPerSec()) + " Mb/s";
  return shortNumber(b.bitsPerSecond) + " b/s";
}

std::string formatDuration(Duration d) {
  double ns = d.ns;
  double a = std::fabs(ns);
  if (a == 0)
    return "0 ns";
  if (a < 1e3)
    return shortNumber(ns) + " ns";
  if (a < 1e6)
    return shortNumber(ns / 1e3) + " µs";
  if (a < 1e9)
    return shortNumber(ns / 1e6) + " ms";
  return shortNumber(ns / 1e9) + " s";
}

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return shortNumber(u == 0 ? v : std::round(v * 100) / 100) + " " + units[u];
}

std::string formatLinkPhysics(const std::optional<Bandwidth> &bw,
                              const std::optional<Duration> &lat) {
  std::string s;
  if (bw)
    s = formatBandwidth(*bw);
  if (lat)
    s += (s.empty() ? "" : ", ") + formatDuration(*lat);
  return s;
}

std::string formatCount(uint64_t n) {
  if (n < 10000)
    return std::to_string(n);
  if (n < 10000000)
    return shortNumber(std::round(n / 100.0) / 10) + "k";
  return shortNumber(std::round(n / 100000.0) / 10) + "M";
}

} // namespace infracc::viz
