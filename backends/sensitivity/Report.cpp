#include "backends/sensitivity/Report.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

namespace infracc::sens {

static CurvePlotter &plotterSlot() {
  static CurvePlotter p = nullptr;
  return p;
}
void setCurvePlotter(CurvePlotter p) { plotterSlot() = p; }
CurvePlotter curvePlotter() { return plotterSlot(); }

namespace {
std::string dec(const Rational &r) { return formatDecimal(r); }
std::string percent(const Rational &r) { return formatDecimal(r * Rational(100), 4) + "%"; }
} // namespace

void writeText(llvm::raw_ostream &os, const SensitivityReport &r) {
  const Curve &c = r.curve;
  const std::string &p = r.param, &u = r.unit;
  os << fmt::format("Sensitivity of the finishing time T to {} over [{}, {}] {} (LogGOPSim "
                    "semantics of -sim-model={})\n",
                    p, dec(c.lo), dec(c.hi), u, r.model);
  os << fmt::format("T({}={} {}) = {} ns\n", p, dec(c.lo), u, dec(c.valueAt(c.lo)));
  os << fmt::format("segments (slope = dT/d{}: {}):\n", p, r.slopeMeaning);
  os << fmt::format("  {:>14} {:>14} {:>16} {:>12}\n", "from " + u, "to " + u, "T at start ns",
                    "slope");
  for (const Segment &s : c.segments)
    os << fmt::format("  {:>14} {:>14} {:>16} {:>12}\n", dec(s.start), dec(s.end),
                      dec(s.valueAt(s.start)), s.line.B);
  std::vector<Rational> bps = c.breakpoints();
  std::string list;
  for (const Rational &b : bps)
    list += (list.empty() ? "" : ", ") + dec(b);
  os << fmt::format("critical values of {} ({}): {}\n", p, u, bps.empty() ? "none" : list);
  if (!r.tolerances.empty()) {
    os << fmt::format("tolerances (largest {} with T <= target):\n", p);
    for (const auto &t : r.tolerances) {
      std::string v = !t.t.value ? "none (T at the start of the range is above the target)"
                      : t.t.beyondRange ? ">= " + dec(*t.t.value) + " " + u + " (beyond the range)"
                                        : dec(*t.t.value) + " " + u;
      os << fmt::format("  {:>8}  T <= {} ns: {} = {}\n", t.label, dec(t.t.target), p, v);
    }
  }
  if (!r.ratios.empty()) {
    // A one-letter parameter is its own symbol (L0 + dL); a longer name (link:NAME,
    // switch) is called x, which the header says.
    const std::string x = p.size() == 1 ? p : "x";
    os << fmt::format("at {0}0 + d{0}{1}: T, its increase over T({0}0), the slope and the ratio "
                      "slope*{0}/T:\n",
                      x, x == p ? "" : ", x = " + p);
    for (const auto &x0 : r.ratios)
      os << fmt::format("  d{}={} {}: T = {} ns, +{}, slope {}, ratio {}\n", x, dec(x0.delta), u,
                        dec(x0.value), percent(x0.increase), x0.slope, percent(x0.ratio));
  }
  if (c.pointsChecked) {
    if (c.contention)
      os << fmt::format("contention at {}={} {}: {}; the analysis keeps the order of the "
                        "dependencies and ignores it\n",
                        p, dec(c.contentionAt), u, c.contention->what);
    else
      os << fmt::format("contention: none at {}={}{} {}, the ends of the range checked (T equals "
                        "the simulator's there)\n",
                        p, dec(c.lo), c.hi == c.lo ? "" : " and " + dec(c.hi), u);
  }
  if (r.simulated) {
    Rational diff = c.valueAt(c.lo) - *r.simulated;
    os << fmt::format("simulator at {}={} {}: {} ns ({})\n", p, dec(c.lo), u, dec(*r.simulated),
                      diff == Rational(0) ? "equal"
                                          : fmt::format("the analysis differs by {} ns", dec(diff)));
  }
  const char *bounding = !c.envelope.pruned        ? ""
                         : c.envelope.chunks > 1 ? ", two bounding every element's path to the end "
                                                   "(the second chunk by chunk)"
                                                 : ", one bounding every element's path to the end";
  os << fmt::format("{} sweeps over {} elements ({} messages){}\n", c.sweeps, r.elements,
                    r.messages, bounding);
}

void writeJson(llvm::raw_ostream &os, const SensitivityReport &r) {
  const Curve &c = r.curve;
  auto num = [](const Rational &x) { return x.toDouble(); };
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["parameter"] = r.param;
  j["unit"] = r.unit;
  j["model"] = r.model;
  j["slope_meaning"] = r.slopeMeaning;
  j["range"] = {num(c.lo), num(c.hi)};
  j["T_start_ns"] = num(c.valueAt(c.lo));
  nlohmann::ordered_json segs = nlohmann::ordered_json::array();
  for (const Segment &s : c.segments)
    segs.push_back({{"start", num(s.start)},
                    {"end", num(s.end)},
                    {"T_start_ns", num(s.valueAt(s.start))},
                    {"T_end_ns", num(s.valueAt(s.end))},
                    {"slope", s.line.B},
                    {"intercept_ns", formatInt(s.line.A)}});
  j["segments"] = segs;
  nlohmann::ordered_json bps = nlohmann::ordered_json::array();
  for (const Rational &b : c.breakpoints())
    bps.push_back(num(b));
  j["critical_values"] = bps;
  nlohmann::ordered_json tol = nlohmann::ordered_json::array();
  for (const auto &t : r.tolerances) {
    nlohmann::ordered_json x = {{"label", t.label}, {"target_ns", num(t.t.target)}};
    x["value"] = t.t.value ? nlohmann::ordered_json(num(*t.t.value)) : nlohmann::ordered_json();
    x["beyond_range"] = t.t.beyondRange;
    tol.push_back(x);
  }
  j["tolerances"] = tol;
  nlohmann::ordered_json rat = nlohmann::ordered_json::array();
  for (const auto &x : r.ratios)
    rat.push_back({{"delta", num(x.delta)},
                   {"at", num(x.at)},
                   {"T_ns", num(x.value)},
                   {"increase", num(x.increase)},
                   {"slope", x.slope},
                   {"ratio", num(x.ratio)}});
  j["ratios"] = rat;
  nlohmann::ordered_json con;
  con["points_checked"] = c.pointsChecked;
  if (c.contention) {
    con["at"] = num(c.contentionAt);
    con["rank"] = c.contention->rank;
    con["what"] = c.contention->what;
  }
  j["contention"] = con;
  if (r.simulated)
    j["simulated_T_start_ns"] = num(*r.simulated);
  j["sweeps"] = c.sweeps;
  if (c.envelope.pruned) {
    nlohmann::ordered_json pr;
    pr["samples"] = c.envelope.samples;
    pr["merges"] = c.envelope.merges;
    pr["lines_merged"] = c.envelope.linesMerged;
    pr["lines_dropped"] = c.envelope.linesPruned;
    j["pruning"] = pr;
  }
  j["elements"] = r.elements;
  j["messages"] = r.messages;
  os << j.dump(2) << "\n";
}

void writeCsv(llvm::raw_ostream &os, const SensitivityReport &r) {
  os << "start,end,T_start,slope\n";
  for (const Segment &s : r.curve.segments)
    os << fmt::format("{},{},{},{}\n", dec(s.start), dec(s.end), dec(s.valueAt(s.start)),
                      s.line.B);
}

} // namespace infracc::sens
