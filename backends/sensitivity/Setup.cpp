#include "backends/sensitivity/Setup.h"

#include "backends/sim/SimModel.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

#include <cctype>

namespace infracc::sens {
namespace cl = llvm::cl;

static cl::opt<std::string> OptParam(
    "param", cl::init("L"), cl::value_desc("L|o|G|link:NAME|switch"),
    cl::desc("Parameter -emit=sensitivity and -emit=lp vary: L (latency, ns), o (overhead, ns), "
             "G (gap per byte, ns/byte), or with a fabric and -sim-model=topo link:NAME (the "
             "latency of every link named NAME, ns) or switch (the latency of every switch, "
             "ns) (default L)"),
    cl::cat(opts::simCategory()));
static cl::opt<std::string> OptRange(
    "range", cl::init("0:100us"), cl::value_desc("lo:hi"),
    cl::desc("Range of the parameter for -emit=sensitivity and -emit=lp, with time units "
             "(ps, ns, us, ms, s; bare numbers are ns, or ns/byte for G); its start is the "
             "baseline L0 (default 0:100us)"),
    cl::cat(opts::simCategory()));

static cl::list<std::string> OptTolerance(
    "tolerance", cl::CommaSeparated, cl::value_desc("x,..."),
    cl::desc("Tolerances -emit=sensitivity reports (-emit=lp -lp-objective=tolerance takes "
             "one): x (percent: the largest parameter value with T <= (1+x/100)*T(L0)), or "
             "a time (T <= that time, e.g. 2us) (default 1,2,5)"),
    cl::cat(opts::simCategory()));

std::vector<std::string> toleranceOptions() {
  if (OptTolerance.empty())
    return {"1", "2", "5"};
  return {OptTolerance.begin(), OptTolerance.end()};
}

llvm::Expected<ToleranceBound> toleranceBound(llvm::StringRef given, const Rational &T0) {
  llvm::StringRef text = given.trim();
  bool absolute = !text.empty() && !text.ends_with("%") && std::isalpha(text.back());
  auto v = parseQuantity(text.ends_with("%") ? text.drop_back() : text, absolute);
  if (!v)
    return usageError("-tolerance=" + given.str() + ": write a percentage (1, 2.5%) or a "
                      "runtime bound with a unit (2us)");
  if (absolute)
    return ToleranceBound{formatDecimal(*v) + " ns", *v};
  return ToleranceBound{formatDecimal(*v) + "%", T0 * (Rational(1) + *v / Rational(100))};
}

std::optional<Rational> parseQuantity(llvm::StringRef text, bool timeUnits) {
  text = text.trim();
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                               text[end] == '.'))
    ++end;
  llvm::StringRef number = text.take_front(end), unit = text.drop_front(end).trim();
  if (number.empty() || number.count('.') > 1 || number == ".")
    return std::nullopt;
  // Exactly: digits / 10^decimals.
  auto [whole, frac] = number.split('.');
  if (whole.size() + frac.size() > 30)
    return std::nullopt;
  Int128 n = 0, d = 1;
  for (char ch : whole)
    n = n * 10 + (ch - '0');
  for (char ch : frac) {
    n = n * 10 + (ch - '0');
    d *= 10;
  }
  Rational v(n, d);
  if (unit.empty())
    return v;
  if (!timeUnits)
    return std::nullopt;
  static const std::pair<const char *, Rational> units[] = {
      {"ps", Rational(1, 1000)}, {"ns", Rational(1)},          {"us", Rational(1000)},
      {"\xC2\xB5s", Rational(1000)}, {"ms", Rational(1000000)}, {"s", Rational(1000000000)}};
  for (const auto &[name, mult] : units)
    if (unit == name)
      return v * mult;
  return std::nullopt;
}

std::vector<std::string> defaultPipeline(const Module &m) {
  auto model = sim::chooseSimModel(m);
  if (!model) {
    llvm::consumeError(model.takeError());
    return {};
  }
  return m.hasFabric() ? (*model)->pipeline : std::vector<std::string>();
}

llvm::Expected<Setup> setupFromOptions(const Module &m) {
  Setup s;
  auto params = sim::simParams();
  if (!params)
    return params.takeError();
  auto model = sim::chooseSimModel(m);
  if (!model)
    return model.takeError();
  if ((*model)->engine != sim::Engine::Lgs || (*model)->runKernels)
    return usageError("-sim-model=" + (*model)->name +
                      ": the sensitivity analysis follows LogGOPSim's engine (models lgs and "
                      "topo)");
  if ((*model)->name == "flow")
    return usageError("-sim-model=flow: the sensitivity analysis needs runtimes that are "
                      "piecewise linear in the parameter, which bandwidth sharing is not; use "
                      "-sim-model=topo (or lgs)");
  s.model = (*model)->name;
  const bool topo = (*model)->costs != nullptr;
  s.param = OptParam;
  s.unit = "ns";
  ModelOptions &o = s.options;
  o.params = *params;
  llvm::StringRef p = s.param;
  if (p == "L") {
    o.param = ParamKind::L;
    s.variable = "l";
    s.slopeMeaning = "messages on the critical path";
  } else if (p == "o") {
    o.param = ParamKind::o;
    s.variable = "o";
    s.slopeMeaning = "overheads o on the critical path";
  } else if (p == "G") {
    o.param = ParamKind::G;
    s.variable = "G";
    s.unit = "ns/byte";
    s.slopeMeaning = "bytes (s-1 per message) on the critical path";
  } else if (p.starts_with("link:") || p == "switch") {
    if (!topo)
      return usageError("-param=" + s.param + " needs a fabric and -sim-model=topo (message "
                        "latencies from the fabric's paths)");
    if (p == "link:")
      return usageError("-param=link: needs a link name, e.g. -param=link:tier_1_link");
    o.param = ParamKind::Path;
    s.variable = p == "switch" ? "l_switch" : "l_link";
    s.slopeMeaning = p == "switch" ? "switches passed on the critical path"
                                   : "traversals of " + p.drop_front(5).str() +
                                         " links on the critical path";
  } else {
    return usageError("unknown parameter '" + s.param +
                      "' for -param; valid are: L, o, G, link:NAME, switch");
  }
  if (topo) {
    auto costs = fabricMessageCosts(m, o.params, p);
    if (!costs)
      return costs.takeError();
    o.messages = std::move(*costs);
  }

  auto [loText, hiText] = llvm::StringRef(OptRange).split(':');
  auto lo = parseQuantity(loText, s.unit == "ns"), hi = parseQuantity(hiText, s.unit == "ns");
  if (!lo || !hi || *hi < *lo)
    return usageError(fmt::format("-range={}: write lo:hi with lo <= hi, e.g. 0:100us{}",
                                  std::string(OptRange),
                                  s.unit == "ns" ? "" : " (G in ns/byte: 0:20)"));
  // The sweep works on 64-bit fractions.
  if (lo->num > INT64_MAX / 2 || hi->num > INT64_MAX / 2 || hi->den > 1000000000000)
    return usageError("-range=" + OptRange + ": out of range");
  s.lo = *lo;
  s.hi = *hi;
  return s;
}

llvm::Expected<std::unique_ptr<Model>> buildModel(const Module &m, const Setup &s,
                                                  DiagEngine &diags) {
  auto model = Model::build(*m.schedule, s.options);
  if (!model) {
    diags.error(m.workloadSource.empty() ? "workload" : m.workloadSource,
                llvm::toString(model.takeError()));
    return reportedError();
  }
  return model;
}

namespace {
/// The simulator's per-message costs with the parameter at p.
class CostsAt : public sim::LinkCostModel {
public:
  CostsAt(const MessageCosts &mc, ParamKind k, const Rational &p) : mc_(mc) {
    for (const MessageCost &c : mc.costs) {
      sim::PairCost pc;
      pc.L = static_cast<uint64_t>(
          (Rational(c.L.a) + Rational(c.L.b) * (k == ParamKind::o ? Rational(0) : p)).num);
      pc.G = c.gIsParam ? sim::PerByte(p.toDouble()) : c.G;
      costs_.push_back(pc);
    }
  }
  sim::PairCost cost(uint32_t, uint32_t) const override { return costs_[0]; }
  sim::PairCost costOfSend(uint32_t, uint32_t, uint32_t op) const override {
    return mc_.costOfSend.empty() ? costs_[0] : costs_[mc_.costOfSend[op]];
  }

private:
  const MessageCosts &mc_;
  std::vector<sim::PairCost> costs_;
};
} // namespace

llvm::Expected<SimAt> simulatorAt(const Setup &s, const Rational &p) {
  SimAt at;
  at.params = s.options.params;
  const ParamKind k = s.options.param;
  if (k == ParamKind::G) {
    at.params.G = sim::PerByte(p.toDouble());
  } else if (!p.isInteger() || p.num < 0) {
    return usageError("the simulator takes whole nanoseconds; " + s.param + " = " +
                      formatDecimal(p) + " is not one");
  } else if (k == ParamKind::L) {
    at.params.L = static_cast<uint64_t>(p.num);
  } else if (k == ParamKind::o) {
    at.params.o = static_cast<uint64_t>(p.num);
  }
  // Per-message costs from the fabric (L where the fabric has no latency for a path).
  if (!s.options.messages.costs.empty())
    at.costs = std::make_unique<CostsAt>(s.options.messages, k, p);
  return at;
}

} // namespace infracc::sens
