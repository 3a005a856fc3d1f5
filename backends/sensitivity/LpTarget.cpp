// -emit=lp: the model as LLAMP's linear program, in CPLEX LP format, for a solver
// (glpsol --lp, cbc, Gurobi, HiGHS) to check or extend. One variable per element
// that takes the maximum of several candidates (y<e>: its time in ns); elements with
// one candidate are folded into their successor's constraints, as LLAMP folds chains.
// Every constraint is y_e >= y_u + a + b*p. Objectives: runtime (min t, p >= L0)
// or tolerance (max p, t <= T_max, p within -range). docs/sensitivity.md.
#include "backends/sensitivity/Setup.h"

#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

namespace infracc::sens {
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> OptObjective(
    "lp-objective", cl::init("runtime"), cl::value_desc("runtime|tolerance"),
    cl::desc("Linear program -emit=lp writes: runtime (minimise t, the finishing time in "
             "ns, with the parameter at least the start of -range) or tolerance (maximise "
             "the parameter within -range with t at most the one -tolerance bound) "
             "(default runtime)"),
    cl::cat(opts::simCategory()));

/// A time as y<var> + a + b*p (var None: a + b*p).
struct Expr {
  uint32_t var = Model::None;
  int64_t a = 0, b = 0;
};

/// Candidates for one time, at most one per (variable, slope): the largest constant.
using Candidates = llvm::SmallVector<Expr, 8>;
void offer(Candidates &cs, Expr x) {
  for (Expr &c : cs)
    if (c.var == x.var && c.b == x.b) {
      c.a = std::max(c.a, x.a);
      return;
    }
  cs.push_back(x);
}

class LpWriter {
public:
  LpWriter(const Model &m, llvm::raw_ostream &os, std::string param)
      : m_(m), os_(os), param_(std::move(param)), expr_(m.numElements()) {}

  /// The constraints of every element and of t, "t >= ...".
  void writeConstraints() {
    Candidates cs;
    for (uint32_t e = 0; e < m_.numElements(); ++e) {
      cs.clear();
      m_.candidates(e, [&](uint32_t pred, Line c) { offer(cs, shifted(pred, c)); });
      if (cs.size() == 1) {
        expr_[e] = cs[0];
        continue;
      }
      expr_[e] = Expr{e, 0, 0};
      os_ << "\\ y" << e << ": " << m_.describe(e) << "\n";
      for (const Expr &c : cs)
        constraint(fmt::format("y{}", e), c);
    }
    cs.clear();
    m_.sinkCandidates([&](uint32_t pred, Line c) { offer(cs, shifted(pred, c)); });
    for (const Expr &c : cs)
      constraint("t", c);
  }
  uint64_t rows() const { return rows_; }
  bool negativeSlope() const { return negativeSlope_; }

private:
  Expr shifted(uint32_t pred, Line c) {
    Expr x = pred == Model::None ? Expr{} : expr_[pred];
    x.a += c.a;
    x.b += c.b;
    negativeSlope_ |= x.b < 0;
    return x;
  }
  /// lhs - y_u - b p >= a.
  void constraint(const std::string &lhs, const Expr &c) {
    os_ << " " << lhs;
    if (c.var != Model::None)
      os_ << " - y" << c.var;
    if (c.b != 0)
      os_ << (c.b > 0 ? " - " : " + ") << (c.b == 1 || c.b == -1 ? "" : fmt::format("{} ", std::abs(c.b)))
          << param_;
    os_ << " >= " << c.a << "\n";
    ++rows_;
  }

  const Model &m_;
  llvm::raw_ostream &os_;
  std::string param_;
  std::vector<Expr> expr_;
  uint64_t rows_ = 0;
  bool negativeSlope_ = false;
};

llvm::Error runLp(TargetContext &ctx) {
  Module &m = ctx.module;
  const bool tolerance = OptObjective == "tolerance";
  if (!tolerance && OptObjective != "runtime")
    return usageError("unknown objective '" + OptObjective +
                      "' for -lp-objective; valid are: runtime, tolerance");
  auto setup = setupFromOptions(m);
  if (!setup)
    return setup.takeError();
  const std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;
  auto model = buildModel(m, *setup, ctx.diags);
  if (!model)
    return model.takeError();
  // T(L0), for a percentage bound and to say where the simulator may order differently.
  const Evaluation at0 = (*model)->evaluate(setup->lo, true);
  std::optional<ToleranceBound> bound;
  if (tolerance) {
    std::vector<std::string> given = toleranceOptions();
    if (given.size() != 1)
      return usageError("-emit=lp -lp-objective=tolerance writes one linear program: give one "
                        "-tolerance value (a percentage over T(L0) such as 2, or a runtime "
                        "bound such as 2us)");
    auto b = toleranceBound(given[0], at0.value);
    if (!b)
      return b.takeError();
    bound = *b;
  }

  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  const std::string &p = setup->variable;
  const std::string lo = formatDecimal(setup->lo, 12), hi = formatDecimal(setup->hi, 12);
  *os << fmt::format("\\ infracc -emit=lp: {} as LLAMP's linear program (model {}).\n"
                     "\\ {} = the parameter {} ({}); y<e> = the time of element e; t = the "
                     "finishing time (ns).\n",
                     llvm::sys::path::filename(where).str(), setup->model, p, setup->param,
                     setup->unit);
  if (tolerance)
    *os << fmt::format("\\ The largest {} in [{}, {}] with T <= {} ns ({} tolerance).\n", p,
                       lo, hi, formatDecimal(bound->target, 12), bound->label);
  else
    *os << fmt::format("\\ T({} = {}) = min t = {} ns here.\n", p, lo,
                       formatDecimal(at0.value, 12));
  if (at0.contention)
    *os << "\\ The simulator may differ where operations contend: " << at0.contention->what
        << " (at " << p << " = " << lo << ").\n";
  *os << (tolerance ? "Maximize\n obj: " + p : std::string("Minimize\n obj: t")) << "\n"
      << "Subject To\n";
  LpWriter w(**model, *os, p);
  w.writeConstraints();
  if (tolerance)
    *os << " tmax: t <= " << formatDecimal(bound->target, 12) << "\n";
  *os << "Bounds\n";
  if (tolerance)
    *os << " " << lo << " <= " << p << " <= " << hi << "\n";
  else if (w.negativeSlope())   // T may fall as p grows (0-byte messages and G): fix p
    *os << " " << p << " = " << lo << "\n";
  else
    *os << " " << p << " >= " << lo << "\n";
  *os << "End\n";
  return llvm::Error::success();
}

RegisterTarget LpTarget({
    .name = "lp",
    .description = "LLAMP's linear program of the schedule in CPLEX LP format (min t with the "
                   "parameter >= L0, or with -lp-objective=tolerance max parameter with "
                   "t <= T_max), for glpsol, cbc or Gurobi",
    .needs = TargetNeeds::Workload,
    .writesDirectory = false,
    .pointToPoint = true,
    .defaultPipeline = defaultPipeline,
    .run = runLp,
});

} // namespace
} // namespace infracc::sens
