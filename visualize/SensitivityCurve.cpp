// -emit=sensitivity -o curve.svg: T against the parameter in LLAMP's Fig. 1 style: the
// curve through its breakpoints, the tolerance zones shaded (the parameter values whose
// T stays within each bound, nested, lighter for looser bounds), each bound as a dashed
// level, and the critical values as dotted verticals. Registers itself as the
// sensitivity report's plotter (backends/sensitivity/Report.h).
#include "backends/sensitivity/Report.h"
#include "visualize/Graphviz.h"
#include "visualize/Style.h"

#include <fmt/format.h>

#include <algorithm>

namespace infracc::viz {

namespace {

constexpr double Width = 720, Height = 440, Left = 90, Right = 30, Top = 50, Bottom = 60;
constexpr const char *ZoneFills[] = {"#A1D99B", "#C7E9C0", "#E5F5E0", "#F7FCF5"};
constexpr const char *CurveColour = "#1F4E79", *CriticalColour = "#D62728";

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string renderCurve(const sens::SensitivityReport &r) {
  const sens::Curve &c = r.curve;
  const double lo = c.lo.toDouble(), hi = c.hi.toDouble();
  double tMin = c.valueAt(c.lo).toDouble(), tMax = c.valueAt(c.hi).toDouble();
  for (const auto &t : r.tolerances)
    tMax = std::max(tMax, t.t.target.toDouble());
  const double pad = std::max((tMax - tMin) * 0.05, std::max(tMin * 0.01, 1.0));
  tMin -= pad;
  tMax += pad;
  const double plotW = Width - Left - Right, plotH = Height - Top - Bottom;
  auto x = [&](double p) { return Left + (hi > lo ? (p - lo) / (hi - lo) : 0) * plotW; };
  auto y = [&](double t) { return Top + (1 - (t - tMin) / (tMax - tMin)) * plotH; };

  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 "
      "{0} {1}\" font-family=\"{2}\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"24\" font-size=\"14\">{4}</text>\n",
      Width, Height, FontName, Left,
      htmlEscape(fmt::format("{}: T against {} ({} model)", r.workload, r.param, r.model)));

  // Zones, loosest first so the tighter ones are drawn over them.
  std::vector<size_t> order;
  for (size_t i = 0; i < r.tolerances.size(); ++i)
    if (r.tolerances[i].t.value)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.tolerances[a].t.target > r.tolerances[b].t.target;
  });
  for (size_t k = 0; k < order.size(); ++k) {
    const auto &t = r.tolerances[order[k]];
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                       num(Left), num(Top), num(x(t.t.value->toDouble()) - Left), num(plotH),
                       ZoneFills[std::min<size_t>(order.size() - 1 - k, 3)]);
  }
  // Each bound as a level, labelled where its zone ends.
  for (size_t i : order) {
    const auto &t = r.tolerances[i];
    const double end = t.t.value->toDouble(), level = t.t.target.toDouble();
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\" "
                       "stroke-dasharray=\"4 3\"/>\n",
                       num(Left), num(y(level)), num(x(end)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#333\">{}: {}</text>\n",
                       num(x(end) + 4), num(y(level) - 3), htmlEscape(t.label),
                       sens::formatDecimal(*t.t.value, 1));
  }
  // Critical values.
  for (const sens::Rational &b : c.breakpoints()) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" "
                       "stroke-dasharray=\"1 3\"/>\n",
                       num(x(b.toDouble())), num(Top), num(Top + plotH), CriticalColour);
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"><title>critical "
                       "value {} {}</title></circle>\n",
                       num(x(b.toDouble())), num(y(c.valueAt(b).toDouble())), CriticalColour,
                       sens::formatDecimal(b), htmlEscape(r.unit));
  }
  // The curve: its segments' ends.
  std::string points = num(x(lo)) + "," + num(y(c.valueAt(c.lo).toDouble()));
  for (const sens::Segment &s : c.segments)
    points += " " + num(x(s.end.toDouble())) + "," + num(y(s.valueAt(s.end).toDouble()));
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" "
                     "stroke-width=\"2\"/>\n",
                     points, CurveColour);
  // Axes with the values at their ends and the critical values.
  out += fmt::format("<path d=\"M{0},{1} V{2} H{3}\" fill=\"none\" stroke=\"#333\"/>\n",
                     num(Left), num(Top), num(Top + plotH), num(Left + plotW));
  auto xTick = [&](double p, const std::string &label) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x(p)),
                       num(Top + plotH + 15), htmlEscape(label));
  };
  xTick(lo, sens::formatDecimal(c.lo, 1));
  xTick(hi, sens::formatDecimal(c.hi, 1));
  for (const sens::Rational &b : c.breakpoints())
    xTick(b.toDouble(), sens::formatDecimal(b, 1));
  for (double t : {c.valueAt(c.lo).toDouble(), c.valueAt(c.hi).toDouble()})
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", num(Left - 6),
                       num(y(t) + 4), sens::formatDecimal(sens::Rational(int64_t(t + 0.5)), 0));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} ({}); critical values "
                     "dotted, tolerance zones shaded</text>\n",
                     num(Left + plotW / 2), num(Height - 18), htmlEscape(r.param),
                     htmlEscape(r.unit));
  out += fmt::format("<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" "
                     "text-anchor=\"middle\">T (ns)</text>\n",
                     num(Top + plotH / 2), num(Top + plotH / 2));
  return out + "</svg>\n";
}

const bool Registered = (sens::setCurvePlotter(&renderCurve), true);

} // namespace
} // namespace infracc::viz
