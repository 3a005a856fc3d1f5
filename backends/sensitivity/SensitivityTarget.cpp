// -emit=sensitivity: T as an exact function of one parameter over a range, its
// critical values, tolerances and ratios; text, JSON, CSV, or an SVG picture.
#include "backends/sensitivity/Report.h"
#include "backends/sensitivity/Setup.h"

#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

namespace infracc::sens {
namespace cl = llvm::cl;

namespace {

cl::list<std::string> OptDelta(
    "delta", cl::CommaSeparated, cl::value_desc("d,..."),
    cl::desc("Increments over L0 at which -emit=sensitivity reports T, its relative increase, "
             "the slope and the ratio slope*p/T (units as -range; default 1%, 10% and 100% "
             "of the range)"),
    cl::cat(opts::simCategory()));
cl::opt<bool> OptContention(
    "sensitivity-contention", cl::init(true),
    cl::desc("Check at both ends of the range whether two operations compete for a cpu or "
             "nic (then the simulator may order them differently; one more pass over the "
             "schedule per end; default true)"),
    cl::cat(opts::simCategory()));
cl::opt<bool> OptPrune(
    "sensitivity-prune", cl::init(true),
    cl::desc("First bound every operation's longest path to the end at up to 34 points of the "
             "range (one backward pass; 4 bytes per message and point, in chunks beyond 512 "
             "MiB), then leave out of the envelopes the path lines no critical path goes "
             "through: the same curve, much faster when it has many breakpoints; skipped "
             "when the slopes at the ends, evaluated for the contention check, show few "
             "(default true)"),
    cl::cat(opts::simCategory()));
cl::opt<bool> OptCompare(
    "sensitivity-compare", cl::init(true),
    cl::desc("Also run the simulator at L0 and report its finishing time (default true)"),
    cl::cat(opts::simCategory()));

/// The largest finishing time of a simulation, or an error when it cannot finish.
llvm::Expected<Rational> simulate(const Schedule &s, const Setup &setup, const Rational &p) {
  auto at = simulatorAt(setup, p);
  if (!at)
    return at.takeError();
  sim::SimOptions so;
  so.params = at->params;
  so.costs = at->costs.get();
  sim::SimResult r = sim::simulate(s, so);
  if (!r.finished())
    return inputError("the simulator cannot finish the schedule (see -emit=sim)");
  return Rational(static_cast<Int128>(r.makespan));
}

llvm::Error runSensitivity(TargetContext &ctx) {
  Module &m = ctx.module;
  std::string format = opts::outputFormat();
  if (format.empty() && llvm::sys::path::extension(ctx.output.path()) == ".svg")
    format = "svg";
  if (llvm::sys::path::extension(ctx.output.path()) == ".csv" && format.empty())
    format = "csv";
  if (format.empty())
    format = "text";
  if (format != "text" && format != "json" && format != "csv" && format != "svg")
    return usageError("-emit=sensitivity writes text, json, csv or svg (-format, or the -o "
                      "file's extension), not '" + format + "'");

  auto setup = setupFromOptions(m);
  if (!setup)
    return setup.takeError();
  const std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;
  auto model = buildModel(m, *setup, ctx.diags);
  if (!model)
    return model.takeError();

  SensitivityReport rep;
  rep.workload = llvm::sys::path::filename(where).str();
  rep.param = setup->param;
  rep.unit = setup->unit;
  rep.slopeMeaning = setup->slopeMeaning;
  rep.model = setup->model;
  rep.curve = traceCurve(**model, setup->lo, setup->hi, OptContention, OptPrune);
  rep.elements = (*model)->numElements();
  rep.messages = (*model)->numMessages();
  const Curve &c = rep.curve;
  const Rational T0 = c.valueAt(c.lo);

  for (const std::string &t : toleranceOptions()) {
    auto bound = toleranceBound(t, T0);
    if (!bound)
      return bound.takeError();
    rep.tolerances.push_back({bound->label, toleranceFor(c, bound->target)});
  }
  std::vector<Rational> deltas;
  const Rational width = c.hi - c.lo;
  if (OptDelta.empty()) {
    for (int pct : {1, 10, 100})
      deltas.push_back(width * Rational(pct, 100));
  } else {
    for (const std::string &d : OptDelta) {
      auto v = parseQuantity(llvm::StringRef(d).trim(), setup->unit == "ns");
      if (!v || *v < Rational(0) || *v > width)
        return usageError(fmt::format("-delta={}: must be a value from 0 to the width of the "
                                      "range ({} {})",
                                      d, formatDecimal(width), setup->unit));
      deltas.push_back(*v);
    }
  }
  for (const Rational &d : deltas) {
    SensitivityReport::RatioRow row;
    row.delta = d;
    row.at = c.lo + d;
    row.value = c.valueAt(row.at);
    row.slope = c.slopeAt(row.at);
    row.increase = T0 == Rational(0) ? Rational(0) : row.value / T0 - Rational(1);
    row.ratio = row.value == Rational(0) ? Rational(0)
                                         : Rational(row.slope) * row.at / row.value;
    rep.ratios.push_back(row);
  }
  if (OptCompare) {
    auto t = simulate(*m.schedule, *setup, c.lo);
    if (!t)
      return t.takeError();
    rep.simulated = *t;
  }

  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  if (format == "json")
    writeJson(*os, rep);
  else if (format == "csv")
    writeCsv(*os, rep);
  else if (format == "svg") {
    CurvePlotter plot = curvePlotter();
    if (!plot)
      return usageError("-emit=sensitivity: this build has no plotter for svg");
    *os << plot(rep);
  } else
    writeText(*os, rep);
  return llvm::Error::success();
}

RegisterTarget SensitivityTarget({
    .name = "sensitivity",
    .description = "T as an exact function of L (or o, G, a link class, the switch latency; "
                   "-param, -range): critical values, slopes, tolerances; text, json, csv or "
                   "an svg curve",
    .needs = TargetNeeds::Workload,
    .writesDirectory = false,
    .pointToPoint = true,
    .defaultPipeline = defaultPipeline,
    .run = runSensitivity,
});

} // namespace
} // namespace infracc::sens
