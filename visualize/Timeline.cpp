#include "visualize/Timeline.h"

#include "visualize/Graphviz.h"
#include "visualize/Style.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

namespace infracc::viz {

std::pair<const char *, double> timeUnitFor(double span) {
  if (span < 1e4)
    return {"ns", 1};
  if (span < 1e7)
    return {"µs", 1e3};
  if (span < 1e10)
    return {"ms", 1e6};
  return {"s", 1e9};
}

double niceTickStep(double span, unsigned ticks) {
  if (span <= 0 || ticks == 0)
    return 1;
  double raw = span / ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw)
      return std::max(1.0, m * mag);   // time is in whole ns
  return std::max(1.0, 10 * mag);
}

namespace {

struct Colours {
  const char *fill, *name;
};
// Compute green, overheads in the hue of their direction, gaps as lighter tints.
constexpr Colours ActivityStyle[NumActivities] = {
    {"#59A14F", "computation"},
    {"#F28E2B", "send overhead (o)"},
    {"#4E79A7", "receive overhead (o)"},
    {"#F9C48F", "send gap (g, G)"},
    {"#A7BFDB", "receive gap (g, G)"},
};
constexpr const char *CriticalColour = "#D62728";
constexpr const char *MessageColour = "#555555";

constexpr double MarginLeft = 100, MarginRight = 30;

std::string num(double v) {
  if (std::fabs(v - std::round(v)) < 0.05)
    return fmt::format("{}", static_cast<long long>(std::round(v)));
  return fmt::format("{:.1f}", v);
}

std::string axisLabel(double ns, double unitNs) {
  double v = ns / unitNs;
  std::string s = fmt::format("{:.6g}", v);
  return s;
}

class Svg {
public:
  void line(double x1, double y1, double x2, double y2, llvm::StringRef attrs) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", num(x1), num(y1),
                       num(x2), num(y2), attrs.str());
  }
  void rect(double x, double y, double w, double h, llvm::StringRef attrs,
            llvm::StringRef tooltip = {}) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}", num(x), num(y),
                       num(w), num(h), attrs.str());
    if (tooltip.empty())
      out += "/>\n";
    else
      out += fmt::format("><title>{}</title></rect>\n", htmlEscape(tooltip));
  }
  void text(double x, double y, llvm::StringRef s, llvm::StringRef attrs = {}) {
    out += fmt::format("<text x=\"{}\" y=\"{}\"{}{}>{}</text>\n", num(x), num(y),
                       attrs.empty() ? "" : " ", attrs.str(), htmlEscape(s));
  }
  std::string out;
};

std::string header(double width, double height) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\" font-size=\"11\">\n"
      "<defs>\n"
      "<marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" "
      "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"{3}\"/></marker>\n"
      "<marker id=\"arrow-critical\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"5\" "
      "markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"{4}\"/></marker>\n"
      "</defs>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      num(width), num(height), FontName, MessageColour, CriticalColour);
}

/// Title and notes; returns the y below them.
double drawTitle(Svg &svg, const TimelineData &d, double y) {
  svg.text(12, y + 16, d.title.empty() ? "timeline" : d.title,
           "font-size=\"16\" font-weight=\"bold\"");
  y += 24;
  for (const std::string &n : d.notes) {
    svg.text(12, y + 12, n);
    y += 16;
  }
  return y + 4;
}

/// The time the drawing spans: the makespan, or later if a gap or a message ends later.
double spanOf(const TimelineData &d) {
  uint64_t end = d.makespan;
  for (const auto &iv : d.intervals)
    end = std::max(end, iv.end);
  for (const auto &m : d.messages)
    end = std::max(end, m.end);
  return std::max<double>(1, double(end));
}

/// A time axis along y, labels above it (`above`) or below, gridlines from
/// `gridFrom` to `gridTo`.
void drawAxis(Svg &svg, double span, double plotWidth, double y, bool above, double gridFrom,
              double gridTo) {
  auto [unit, unitNs] = timeUnitFor(span);
  double step = niceTickStep(span, std::max(2u, static_cast<unsigned>(plotWidth / 90)));
  auto x = [&](double t) { return MarginLeft + t / span * plotWidth; };
  svg.line(MarginLeft, y, MarginLeft + plotWidth, y, "stroke=\"#333\"");
  for (double t = 0; t <= span + step * 1e-9; t += step) {
    if (gridTo > gridFrom)
      svg.line(x(t), gridFrom, x(t), gridTo, "stroke=\"#E5E5E5\"");
    svg.line(x(t), y, x(t), above ? y - 4 : y + 4, "stroke=\"#333\"");
    svg.text(x(t), above ? y - 6 : y + 15, axisLabel(t, unitNs),
             "text-anchor=\"middle\" font-size=\"10\"");
  }
  svg.text(MarginLeft - 8, above ? y - 6 : y + 15, fmt::format("time ({})", unit),
           "text-anchor=\"end\" font-size=\"10\"");
}

// ------------------------------------------------------------------------------
// Detailed view
// ------------------------------------------------------------------------------

struct Lanes {
  double cpuHeight, nicHeight, rankGap;
  std::vector<double> rankTop;   // y of each rank's first lane
  double height(const TimelineData &d) const {
    return d.cpusPerRank * cpuHeight + d.nicsPerRank * nicHeight + rankGap;
  }
  double cpuY(const TimelineData &, uint32_t rank, uint32_t cpu) const {
    return rankTop[rank] + cpu * cpuHeight;
  }
  double nicY(const TimelineData &d, uint32_t rank, uint32_t nic) const {
    return rankTop[rank] + d.cpusPerRank * cpuHeight + nic * nicHeight;
  }
};

/// Legend entries laid out left to right, wrapping at `width`: each is a symbol
/// `symbolWidth` wide (drawn by `symbol` at x, y) followed by its text.
class LegendFlow {
public:
  LegendFlow(Svg &svg, double y, double width) : svg_(svg), y_(y), width_(width) {}
  template <typename DrawSymbol>
  void add(double symbolWidth, llvm::StringRef text, DrawSymbol symbol) {
    // About 6.5 px per character at 11 px in the sans fonts used.
    double w = symbolWidth + 4 + 6.5 * double(text.size()) + 16;
    if (x_ > 12 && x_ + w > width_) {
      x_ = 12;
      y_ += 18;
    }
    symbol(x_, y_);
    svg_.text(x_ + symbolWidth + 4, y_ + 11, text);
    x_ += w;
  }
  double bottom() const { return y_ + 20; }

private:
  Svg &svg_;
  double y_, width_, x_ = 12;
};

double drawLegend(Svg &svg, const TimelineData &d, double y, double width) {
  LegendFlow legend(svg, y, width);
  if (!d.computeLegend.empty()) {   // a timeline of compute only (the GPU model's)
    legend.add(14, d.computeLegend, [&](double x, double y) {
      svg.rect(x, y + 2, 14, 10, fmt::format("fill=\"{}\"", ActivityStyle[0].fill));
    });
    return legend.bottom();
  }
  for (unsigned k = 0; k < NumActivities; ++k)
    legend.add(14, ActivityStyle[k].name, [&](double x, double y) {
      svg.rect(x, y + 2, 14, 10, fmt::format("fill=\"{}\"", ActivityStyle[k].fill));
    });
  legend.add(24, "message (send start → receive completion)", [&](double x, double y) {
    svg.line(x, y + 7, x + 24, y + 7,
             fmt::format("stroke=\"{}\" marker-end=\"url(#arrow)\"", MessageColour));
  });
  legend.add(14, "critical path", [&](double x, double y) {
    svg.rect(x, y + 2, 14, 10,
             fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\"", CriticalColour));
  });
  return legend.bottom();
}

constexpr size_t MaxArrows = 3000;

std::string mix(const char *hex, double f);

/// A lane with more boxes than pixels: per column of 2 pixels, the busy time of each
/// activity; runs of columns with the same dominant activity and the same busy level
/// (in quarters) become one rectangle, its colour lighter the less busy the column.
template <typename LaneBox>
void drawDenseLane(Svg &svg, const std::vector<const TimelineData::Interval *> &list,
                   double span, double plotWidth, LaneBox laneBox) {
  uint32_t columns = std::max(1u, static_cast<uint32_t>(plotWidth / 2));   // 2 px each
  double colNs = span / columns;
  std::vector<std::array<double, NumActivities>> busy(columns);
  for (auto &b : busy)
    b.fill(0);
  for (const auto *iv : list) {
    double s = double(iv->start), e = double(iv->end);
    for (auto c = static_cast<uint32_t>(s / colNs); c < columns && c * colNs < e; ++c) {
      double lo = std::max(s, c * colNs), hi = std::min(e, (c + 1) * colNs);
      if (hi > lo)
        busy[c][unsigned(iv->kind)] += hi - lo;
    }
  }
  // On a NIC lane the two gaps have halves of their own; on a compute lane the
  // activities share it.
  bool nicLane = list.front()->kind == Activity::SendGap || list.front()->kind == Activity::RecvGap;
  std::vector<std::vector<unsigned>> groups =
      nicLane ? std::vector<std::vector<unsigned>>{{unsigned(Activity::SendGap)},
                                                   {unsigned(Activity::RecvGap)}}
              : std::vector<std::vector<unsigned>>{{unsigned(Activity::Compute),
                                                    unsigned(Activity::SendOverhead),
                                                    unsigned(Activity::RecvOverhead)}};
  for (const auto &kinds : groups) {
    auto cell = [&](uint32_t c) {
      unsigned dominant = kinds.front();
      double total = 0;
      for (unsigned k : kinds) {
        total += busy[c][k];
        if (busy[c][k] > busy[c][dominant])
          dominant = k;
      }
      int level = static_cast<int>(std::ceil(std::min(1.0, total / colNs) * 4 - 1e-9));
      return std::pair{dominant, level};
    };
    for (uint32_t c = 0; c < columns;) {
      auto [kind, level] = cell(c);
      uint32_t e = c + 1;
      while (e < columns && cell(e) == std::pair{kind, level})
        ++e;
      if (level > 0) {
        double by, bh;
        laneBox(Activity(kind), by, bh);
        svg.rect(MarginLeft + c * plotWidth / columns, by, (e - c) * plotWidth / columns, bh,
                 fmt::format("fill=\"{}\"", mix(ActivityStyle[kind].fill, level / 4.0)));
      }
      c = e;
    }
  }
}

std::string renderDetailed(const TimelineData &d, const TimelineOptions &o) {
  Svg svg;
  double plotWidth = o.plotWidth;
  double span = spanOf(d);
  auto x = [&](double t) { return MarginLeft + t / span * plotWidth; };

  // Beyond MaxArrows the arrows would cover the lanes; only critical ones are drawn.
  bool allArrows = d.messages.size() <= MaxArrows;
  TimelineData titled;
  titled.title = d.title;
  titled.notes = d.notes;
  if (!allArrows)
    titled.notes.push_back(fmt::format("{} messages: only those on the critical path are drawn "
                                       "(arrows for all are drawn up to {})",
                                       d.messages.size(), MaxArrows));
  double y = drawTitle(svg, titled, 0);
  y = drawLegend(svg, d, y, MarginLeft + plotWidth + MarginRight);
  double plotTop = y + 28;

  Lanes lanes;
  bool small = d.numRanks <= 16;
  lanes.cpuHeight = small ? 18 : 11;
  lanes.nicHeight = small ? 8 : 5;
  lanes.rankGap = small ? 8 : 5;
  for (uint32_t r = 0; r < d.numRanks; ++r)
    lanes.rankTop.push_back(plotTop + r * lanes.height(d));
  double plotBottom = plotTop + d.numRanks * lanes.height(d);

  // Background stripes and lane labels.
  for (uint32_t r = 0; r < d.numRanks; ++r) {
    double top = lanes.rankTop[r] - lanes.rankGap / 2;
    if (r % 2 == 0)
      svg.rect(MarginLeft, top, plotWidth, lanes.height(d), "fill=\"#F6F6F6\"");
    double labelY = lanes.cpuY(d, r, 0) + lanes.cpuHeight / 2 + 4;
    svg.text(MarginLeft - 8, labelY, fmt::format("{} {}", d.rankWord, r),
             fmt::format("text-anchor=\"end\"{}", small ? "" : " font-size=\"9\""));
    if (d.cpusPerRank > 1 && small)
      for (uint32_t c = 0; c < d.cpusPerRank; ++c)
        svg.text(MarginLeft - 50, lanes.cpuY(d, r, c) + lanes.cpuHeight / 2 + 3,
                 fmt::format("{} {}", d.cpuWord, c),
                 "text-anchor=\"end\" font-size=\"8\" fill=\"#777\"");
  }
  drawAxis(svg, span, plotWidth, plotTop - 6, true, plotTop - 6, plotBottom);

  // Boxes: adjacent boxes of one kind closer than half a pixel are merged, and a lane
  // with more boxes than a third of its pixels is drawn in columns of 2 pixels (the
  // dominant activity, shaded by how busy the column is), so the file stays
  // proportional to the picture, not to the trace.
  double mergeNs = span / plotWidth / 2;
  using LaneKey = std::tuple<uint32_t, bool, uint32_t>;   // rank, on nic, unit
  std::map<LaneKey, std::vector<const TimelineData::Interval *>> byLane;
  for (const auto &iv : d.intervals) {
    bool nic = iv.kind == Activity::SendGap || iv.kind == Activity::RecvGap;
    byLane[{iv.rank, nic, iv.unit}].push_back(&iv);
  }
  bool tooltips = d.intervals.size() + d.messages.size() <= 20000;
  std::vector<std::tuple<double, double, double, double>> criticalBoxes;
  auto laneBox = [&](uint32_t rank, bool nic, uint32_t unit, Activity kind, double &by,
                     double &bh) {
    if (nic) {
      double half = lanes.nicHeight / 2;
      by = lanes.nicY(d, rank, unit) + (kind == Activity::RecvGap ? half : 0);
      bh = half - 0.5;
    } else {
      by = lanes.cpuY(d, rank, unit) + 1;
      bh = lanes.cpuHeight - 2;
    }
  };
  for (auto &[key, list] : byLane) {
    auto [rank, nic, unit] = key;
    std::stable_sort(list.begin(), list.end(),
                     [](auto *a, auto *b) { return a->start < b->start; });
    if (list.size() * 3 > plotWidth) {
      drawDenseLane(svg, list, span, plotWidth, [&](Activity kind, double &by, double &bh) {
        laneBox(rank, nic, unit, kind, by, bh);
      });
      for (const auto *iv : list)
        if (iv->critical) {
          double by, bh;
          laneBox(rank, nic, unit, iv->kind, by, bh);
          double bx = x(iv->start);
          criticalBoxes.emplace_back(bx, by, std::max(0.6, x(iv->end) - bx), bh);
        }
      continue;
    }
    for (size_t i = 0; i < list.size();) {
      const auto *first = list[i];
      uint64_t end = std::max(first->start, first->end);
      size_t j = i + 1;
      if (!first->critical)
        while (j < list.size() && list[j]->kind == first->kind && !list[j]->critical &&
               double(list[j]->start) - double(end) < mergeNs) {
          end = std::max(end, std::max(list[j]->start, list[j]->end));
          ++j;
        }
      double bx = x(first->start), bw = std::max(0.6, x(end) - bx);
      double by, bh;
      laneBox(rank, nic, unit, first->kind, by, bh);
      std::string tip;
      if (tooltips)
        tip = j - i > 1 ? fmt::format("{} {} operations", j - i,
                                      ActivityStyle[unsigned(first->kind)].name)
                        : (first->tooltip.empty()
                               ? fmt::format("{}: {} – {}", ActivityStyle[unsigned(first->kind)].name,
                                             formatDuration(Duration::nanoseconds(first->start)),
                                             formatDuration(Duration::nanoseconds(end)))
                               : first->tooltip);
      svg.rect(bx, by, bw, bh, fmt::format("fill=\"{}\"", ActivityStyle[unsigned(first->kind)].fill),
               tip);
      if (first->critical)
        criticalBoxes.emplace_back(bx, by, bw, bh);
      i = j;
    }
  }

  // Messages, the critical ones last so that they stay on top.
  auto arrow = [&](const TimelineData::Message &m) {
    double y1 = lanes.cpuY(d, m.src, m.srcCpu) + lanes.cpuHeight / 2;
    double y2 = lanes.cpuY(d, m.dst, m.dstCpu) + lanes.cpuHeight / 2;
    std::string attrs =
        m.critical ? fmt::format("stroke=\"{}\" stroke-width=\"2\" "
                                 "marker-end=\"url(#arrow-critical)\"",
                                 CriticalColour)
                   : fmt::format("stroke=\"{}\" stroke-width=\"0.8\" stroke-opacity=\"0.7\" "
                                 "marker-end=\"url(#arrow)\"",
                                 MessageColour);
    if (tooltips)
      svg.out += fmt::format("<g><title>{} → {}: {} ({} – {})</title>", m.src, m.dst,
                             htmlEscape(formatBytes(m.bytes)),
                             htmlEscape(formatDuration(Duration::nanoseconds(m.start))),
                             htmlEscape(formatDuration(Duration::nanoseconds(m.end))));
    svg.line(x(m.start), y1, x(m.end), y2, attrs);
    if (tooltips)
      svg.out += "</g>\n";
  };
  if (allArrows)
    for (const auto &m : d.messages)
      if (!m.critical)
        arrow(m);
  for (auto &[bx, by, bw, bh] : criticalBoxes)
    svg.rect(bx, by, bw, bh,
             fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"", CriticalColour));
  for (const auto &m : d.messages)
    if (m.critical)
      arrow(m);

  drawAxis(svg, span, plotWidth, plotBottom + 2, false, 0, 0);
  double height = plotBottom + 30;
  return header(MarginLeft + plotWidth + MarginRight, height) + svg.out + "</svg>\n";
}

// ------------------------------------------------------------------------------
// Aggregated view
// ------------------------------------------------------------------------------

std::string mix(const char *hex, double f) {
  unsigned r, g, b;
  std::sscanf(hex + 1, "%02x%02x%02x", &r, &g, &b);
  auto ch = [&](unsigned c) { return static_cast<unsigned>(std::lround(255 - (255 - c) * f)); };
  return fmt::format("#{:02X}{:02X}{:02X}", ch(r), ch(g), ch(b));
}

std::string renderAggregated(const TimelineData &d, const TimelineOptions &o) {
  Svg svg;
  double plotWidth = o.plotWidth;
  double span = spanOf(d);
  auto x = [&](double t) { return MarginLeft + t / span * plotWidth; };

  constexpr uint32_t MaxRows = 256;
  uint32_t perRow = (d.numRanks + MaxRows - 1) / MaxRows;
  uint32_t rows = (d.numRanks + perRow - 1) / perRow;
  uint32_t bins = o.plotWidth / 2;
  double binNs = span / bins;

  // Busy time per (row, bin): computation and overheads on the compute streams.
  std::vector<double> compute(size_t(rows) * bins), overhead(size_t(rows) * bins);
  for (const auto &iv : d.intervals) {
    if (iv.kind != Activity::Compute && iv.kind != Activity::SendOverhead &&
        iv.kind != Activity::RecvOverhead)
      continue;
    if (iv.end <= iv.start)
      continue;
    auto &target = iv.kind == Activity::Compute ? compute : overhead;
    uint32_t row = iv.rank / perRow;
    double s = double(iv.start), e = double(iv.end);
    for (auto b = static_cast<uint32_t>(s / binNs); b < bins && b * binNs < e; ++b) {
      double lo = std::max(s, b * binNs), hi = std::min(e, (b + 1) * binNs);
      if (hi > lo)
        target[size_t(row) * bins + b] += hi - lo;
    }
  }

  double y = drawTitle(svg, d, 0);
  // Legend: the colour scales.
  {
    LegendFlow legend(svg, y, MarginLeft + plotWidth + MarginRight);
    for (auto [name, colour] : {std::pair{"computation", ActivityStyle[0].fill},
                                std::pair{"overheads", ActivityStyle[1].fill}})
      legend.add(60, fmt::format("{} 0–100% of the compute streams", name),
                 [&, colour = colour](double x, double y) {
                   for (int k = 0; k <= 4; ++k)
                     svg.rect(x + k * 12, y + 2, 12, 10,
                              fmt::format("fill=\"{}\"", mix(colour, k / 4.0)));
                 });
    legend.add(24, "critical path", [&](double x, double y) {
      svg.line(x, y + 7, x + 24, y + 7,
               fmt::format("stroke=\"{}\" stroke-width=\"2\"", CriticalColour));
    });
    y = legend.bottom() + 2;
  }

  // Machine-wide utilisation curve.
  double chartTop = y + 4, chartHeight = 70;
  double capacity = binNs * d.numRanks * std::max(1u, d.cpusPerRank);
  std::string comp = fmt::format("M{},{}", num(x(0)), num(chartTop + chartHeight));
  std::string both = comp;
  for (uint32_t b = 0; b < bins; ++b) {
    double c = 0, ov = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      c += compute[size_t(r) * bins + b];
      ov += overhead[size_t(r) * bins + b];
    }
    double yc = chartTop + chartHeight * (1 - std::min(1.0, c / capacity));
    double yb = chartTop + chartHeight * (1 - std::min(1.0, (c + ov) / capacity));
    double x0 = x(b * binNs), x1 = x((b + 1) * binNs);
    comp += fmt::format(" L{},{} L{},{}", num(x0), num(yc), num(x1), num(yc));
    both += fmt::format(" L{},{} L{},{}", num(x0), num(yb), num(x1), num(yb));
  }
  std::string close = fmt::format(" L{},{} Z", num(x(span)), num(chartTop + chartHeight));
  svg.out += fmt::format("<path d=\"{}{}\" fill=\"{}\"/>\n", both, close, ActivityStyle[1].fill);
  svg.out += fmt::format("<path d=\"{}{}\" fill=\"{}\"/>\n", comp, close, ActivityStyle[0].fill);
  svg.rect(MarginLeft, chartTop, plotWidth, chartHeight, "fill=\"none\" stroke=\"#999\"");
  svg.text(MarginLeft - 8, chartTop + 10, "100%", "text-anchor=\"end\" font-size=\"9\"");
  svg.text(MarginLeft - 8, chartTop + chartHeight, "0%", "text-anchor=\"end\" font-size=\"9\"");
  svg.text(MarginLeft - 8, chartTop + chartHeight / 2 + 4, "all ranks",
           "text-anchor=\"end\" font-size=\"10\"");

  double plotTop = chartTop + chartHeight + 24;
  double rowHeight = std::clamp(800.0 / rows, 2.0, 8.0);
  double plotBottom = plotTop + rows * rowHeight;
  drawAxis(svg, span, plotWidth, plotTop - 2, true, plotTop, plotBottom);

  // Heat map: per cell the dominant activity's hue, its intensity the busy fraction.
  // Crisp edges: rows of fractional height would otherwise show seams.
  svg.out += "<g shape-rendering=\"crispEdges\">\n";
  for (uint32_t r = 0; r < rows; ++r) {
    uint32_t first = r * perRow, last = std::min(d.numRanks, first + perRow) - 1;
    double cellCapacity = binNs * (last - first + 1) * std::max(1u, d.cpusPerRank);
    double ry = plotTop + r * rowHeight;
    for (uint32_t b = 0; b < bins;) {
      double c = compute[size_t(r) * bins + b], ov = overhead[size_t(r) * bins + b];
      double f = std::min(1.0, (c + ov) / cellCapacity);
      // Quantised to 5% steps so that equal neighbours merge into one rectangle.
      int level = static_cast<int>(std::lround(f * 20));
      bool comp = c >= ov;
      uint32_t e = b + 1;
      while (e < bins) {
        double c2 = compute[size_t(r) * bins + e], o2 = overhead[size_t(r) * bins + e];
        int l2 = static_cast<int>(std::lround(std::min(1.0, (c2 + o2) / cellCapacity) * 20));
        if (l2 != level || (l2 && (c2 >= o2) != comp))
          break;
        ++e;
      }
      if (level > 0)
        svg.rect(x(b * binNs), ry, x(e * binNs) - x(b * binNs), rowHeight,
                 fmt::format("fill=\"{}\"", mix(ActivityStyle[comp ? 0 : 1].fill, level / 20.0)));
      b = e;
    }
  }
  svg.out += "</g>\n";
  // Row labels, spaced so that they do not overlap.
  uint32_t labelEvery = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(12 / rowHeight)));
  for (uint32_t r = 0; r < rows; r += labelEvery) {
    uint32_t first = r * perRow, last = std::min(d.numRanks, first + perRow) - 1;
    std::string label = first == last ? fmt::format("{} {}", d.rankWord, first)
                                      : fmt::format("{}s {}–{}", d.rankWord, first, last);
    svg.text(MarginLeft - 8, plotTop + r * rowHeight + rowHeight / 2 + 3, label,
             "text-anchor=\"end\" font-size=\"9\"");
    svg.line(MarginLeft - 4, plotTop + r * rowHeight + rowHeight / 2, MarginLeft,
             plotTop + r * rowHeight + rowHeight / 2, "stroke=\"#333\"");
  }
  svg.rect(MarginLeft, plotTop, plotWidth, plotBottom - plotTop, "fill=\"none\" stroke=\"#999\"");

  // The critical path as one trail.
  if (!d.criticalPath.empty()) {
    std::string path;
    for (const auto &s : d.criticalPath) {
      double ry = plotTop + (s.rank / perRow) * rowHeight + rowHeight / 2;
      path += fmt::format("{}{},{} L{},{}", path.empty() ? "M" : " L", num(x(s.start)), num(ry),
                          num(x(s.end)), num(ry));
    }
    svg.out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                           "stroke-linejoin=\"round\"/>\n",
                           path, CriticalColour);
  }
  drawAxis(svg, span, plotWidth, plotBottom + 2, false, 0, 0);
  return header(MarginLeft + plotWidth + MarginRight, plotBottom + 30) + svg.out + "</svg>\n";
}

} // namespace

std::string renderTimelineSvg(const TimelineData &d, const TimelineOptions &o) {
  if (d.numRanks <= o.maxDetailedRanks)
    return renderDetailed(d, o);
  return renderAggregated(d, o);
}

} // namespace infracc::viz
