// -emit=sim: the built-in LogGOPS simulator on the module's schedule.
//
// Parameters keep LogGOPSim's names and defaults (-L -g -G -O -S, ns and ns/byte),
// written -L2500, -L 2500 or -L=2500. The driver owns -o (the output file): the
// overhead is -sim-o, or -o <number> with -lgs-compat.
#include "backends/sim/Report.h"
#include "backends/sim/SimModel.h"
#include "backends/sim/Simulator.h"

#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"
#include "support/Progress.h"

#include <llvm/ADT/Statistic.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>
#include <deque>

namespace infracc::sim {
namespace cl = llvm::cl;

// --- model registry ---------------------------------------------------------------------

static std::deque<SimModel> &models() {
  static std::deque<SimModel> m;
  return m;
}
void SimModelRegistry::add(SimModel m) { models().push_back(std::move(m)); }
const SimModel *SimModelRegistry::find(llvm::StringRef name) {
  for (const SimModel &m : models())
    if (m.name == name)
      return &m;
  return nullptr;
}
std::vector<const SimModel *> SimModelRegistry::all() {
  std::vector<const SimModel *> out;
  for (const SimModel &m : models())
    out.push_back(&m);
  std::sort(out.begin(), out.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return out;
}

static RegisterSimModel LgsModel({
    .name = "lgs",
    .description = "LogGOPSim v1, bit for bit (default without a fabric)",
    .engine = Engine::Lgs,
    .costs = nullptr,
    .pipeline = {},
    .runKernels = nullptr,
    .options = {},
});
static RegisterSimModel AtlahsModel({
    .name = "atlahs",
    .description = "ATLAHS's modified LogGOPSim (carried finish times, G at the sender, "
                   "exact-key matching)",
    .engine = Engine::Atlahs,
    .costs = nullptr,
    .pipeline = {},
    .runKernels = nullptr,
    .options = {},
});

// --- options ----------------------------------------------------------------------------

namespace {

cl::opt<uint64_t> OptL("L", cl::init(2500), cl::value_desc("ns"),
                       cl::desc("LogGP latency L in ns (default 2500)"),
                       cl::Prefix, cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptSimO("sim-o", cl::value_desc("ns"),
                          cl::desc("LogGP overhead o in ns per message, paid by sender and "
                                   "receiver (default 1500; -lgs-compat -o 1500 also works)"),
                          cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptG("g", cl::init(1000), cl::value_desc("ns"),
                       cl::desc("LogGP gap g in ns per message (default 1000)"),
                       cl::Prefix, cl::cat(opts::simCategory()));
cl::opt<double> OptBigG("G", cl::init(6), cl::value_desc("ns/byte"),
                        cl::desc("LogGP gap per byte G in ns/byte, may be fractional (default 6)"),
                        cl::Prefix, cl::cat(opts::simCategory()));
cl::opt<double> OptBigO("O", cl::init(0), cl::value_desc("ns/byte"),
                        cl::desc("LogGOPS overhead per byte O in ns/byte, may be fractional "
                                 "(default 0)"),
                        cl::Prefix, cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptS("S", cl::init(65535), cl::value_desc("bytes"),
                       cl::desc("Eager limit in bytes: messages of at most S bytes are eager, "
                                "larger ones rendezvous (default 65535)"),
                       cl::Prefix, cl::cat(opts::simCategory()));
cl::opt<std::string> OptModel("sim-model", cl::value_desc("name"),
                              cl::desc("Simulation model: lgs (LogGOPSim v1, the default without "
                                       "a fabric), topo (L and G per message from the fabric, "
                                       "the default with one), flow (messages as flows sharing "
                                       "the fabric's links max-min fairly), atlahs (ATLAHS's "
                                       "variant), gpu (GPU kernels' load-store instructions on "
                                       "NoC-level GPUs), or another one registered (an unknown "
                                       "name lists them)"),
                              cl::cat(opts::simCategory()));
cl::opt<std::string> OptReport("sim-report", cl::value_desc("text|json"),
                               cl::desc("Report format: text (LogGOPSim's output, default) or "
                                        "json (finish times, counters, critical path); a .json "
                                        "-o file implies json"),
                               cl::cat(opts::simCategory()));
cl::opt<bool> OptBatch("sim-batch",
                       cl::desc("Print only the line with the maximum finishing time, also "
                                "for 16 ranks or fewer (with -lgs-compat: LogGOPSim -b's "
                                "report, parameter and PERFORMANCE lines included)"),
                       cl::cat(opts::simCategory()));
cl::opt<unsigned> OptMaxStuck("sim-max-stuck", cl::init(50), cl::value_desc("n"),
                              cl::desc("List at most n stuck operations when a schedule cannot "
                                       "finish (0: all; default 50)"),
                              cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptMaxEvents("sim-max-events", cl::init(0), cl::value_desc("n"),
                               cl::desc("Stop with an error once more than n events "
                                        "(LogGOPSim's count: ops made executable and messages) "
                                        "have been scheduled, for a bounded look at a big run; "
                                        "no report is written (default 0: no limit)"),
                               cl::cat(opts::simCategory()));

// -sim-model as given, else topo with a fabric (it prices messages by it), else lgs.
std::string modelName(const Module &m) {
  if (OptModel.getNumOccurrences())
    return OptModel;
  return m.hasFabric() ? "topo" : "lgs";
}

} // namespace

llvm::Expected<LogGPParams> simParams() {
  LogGPParams p;
  p.L = OptL;
  p.g = OptG;
  p.S = OptS;
  std::optional<double> numericO = opts::numericOverhead();
  if (OptSimO.getNumOccurrences() && numericO)
    return usageError(fmt::format("the overhead is given twice (-o {} and -sim-o={}); give one",
                                  *numericO, uint64_t(OptSimO)));
  if (OptSimO.getNumOccurrences()) {
    p.o = OptSimO;
  } else if (numericO) {
    double v = *numericO;
    if (!(v >= 0) || std::trunc(v) != v || v >= 18446744073709551616.0)
      return usageError(
          fmt::format("-o {}: the overhead o must be a whole number of nanoseconds", v));
    p.o = static_cast<uint64_t>(v);
  }
  for (auto [name, opt] : {std::pair{"G", &OptBigG}, std::pair{"O", &OptBigO}}) {
    double v = *opt;
    if (!std::isfinite(v) || v < 0)
      return usageError(
          fmt::format("-{}={}: must be a non-negative number of ns per byte", name, v));
  }
  p.G = PerByte(OptBigG);
  p.O = PerByte(OptBigO);
  return p;
}

llvm::Expected<const SimModel *> chooseSimModel(const Module &m) {
  std::string name = modelName(m);
  if (const SimModel *model = SimModelRegistry::find(name))
    return model;
  std::string names;
  for (const SimModel *k : SimModelRegistry::all())
    names += (names.empty() ? "" : ", ") + k->name;
  return usageError("unknown model '" + name + "' for -sim-model; valid models are: " + names);
}

std::vector<std::string> simPipeline(const Module &m) {
  const SimModel *model = SimModelRegistry::find(modelName(m));
  if (!model || !m.hasFabric() || (!m.schedule && m.jobs.empty()))
    return {};
  return model->pipeline;
}

llvm::Error checkModelOptions(const SimModel &chosen) {
  for (const SimModel *other : SimModelRegistry::all()) {
    if (other == &chosen)
      continue;
    for (const cl::Option *o : other->options)
      if (o->getNumOccurrences())
        return usageError(fmt::format("-{} applies to -sim-model={}, not to -sim-model={}",
                                      o->ArgStr.str(), other->name, chosen.name));
  }
  return llvm::Error::success();
}

std::string reportFormat() {
  return OptReport.getNumOccurrences() ? std::string(OptReport) : opts::outputFormat();
}

std::vector<std::string> simTargetPipeline(const Module &m) {
  std::vector<std::string> passes;
  if (m.schedule && m.schedule->kernels()) {
    auto model = chooseSimModel(m);
    if (!model)
      llvm::consumeError(model.takeError());   // reported when the target runs
    else if ((*model)->runKernels)
      return {"unroll-loadstore"};             // run as instructions
    passes.push_back("lower-kernels");         // GPU kernels run as their messages
  }
  llvm::append_range(passes, simPipeline(m));
  return passes;
}

bool latencyOptionGiven() { return OptL.getNumOccurrences() != 0; }
bool gapPerByteOptionGiven() { return OptBigG.getNumOccurrences() != 0; }

namespace {

llvm::Error runSim(TargetContext &ctx) {
  Module &m = ctx.module;
  const Schedule &sched = *m.schedule;
  const std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;

  auto params = simParams();
  if (!params)
    return params.takeError();
  auto chosen = chooseSimModel(m);
  if (!chosen)
    return chosen.takeError();
  const SimModel *model = *chosen;
  if (llvm::Error e = checkModelOptions(*model))
    return e;
  if (model->runKernels)
    return model->runKernels(ctx);
  bool json = false;
  std::string format = reportFormat();
  if (format == "json")
    json = true;
  else if (!format.empty() && format != "text")
    return usageError("-emit=sim writes text or json, not '" + format + "'");

  if (llvm::Error e = checkSimulatable(sched)) {
    ctx.diags.error(where, llvm::toString(std::move(e)));
    return reportedError();
  }
  std::unique_ptr<LinkCostModel> costs;
  if (model->costs) {
    auto c = model->costs(m, *params);
    if (!c)
      return c.takeError();
    costs = std::move(*c);
  }

  SimOptions so;
  so.engine = model->engine;
  so.params = *params;
  so.costs = costs.get();
  so.network = costs ? costs->network() : nullptr;
  if (m.timedWorkload && so.engine == Engine::Lgs && !so.network)
    ctx.diags.warning(where, fmt::format(
        "the workload's messages start at generated times, which -sim-model={} does not "
        "keep: LogGOPSim v1 does not carry a time to another cpu, so a message starts as "
        "soon as its own cpu is free; -sim-model=atlahs or flow keeps the times "
        "(docs/workloads.md, \"Timed workloads\")",
        model->name));
  so.criticalPath = json;
  so.maxEvents = OptMaxEvents;
  if (so.network && json)
    so.network->keepRecords();
  Progress progress("simulating", sched.numOps(), "ops");
  if (progress.enabled())
    so.progress = &progress;
  SimResult r = simulate(sched, so);
  progress.finish();
  if (!r.finished()) {
    reportStuck(ctx.diags, where, r, sched, OptMaxStuck);
    return reportedError();
  }

  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  if (so.network && llvm::AreStatisticsEnabled())
    so.network->printStats(llvm::errs(), r.makespan);
  if (json) {
    nlohmann::json report = jsonReport(r, sched, *params, model->name);
    if (so.network)
      so.network->report(report, sched, r.makespan);
    *os << report.dump(2) << "\n";
  } else if (OptBatch && !opts::lgsCompat()) {
    printMaximum(*os, r);
  } else {
    // With a fabric, say which model ran and what it did with the fabric (without one
    // the output stays LogGOPSim's, byte for byte).
    if (so.network)
      *os << so.network->summary(m.fabricSource);
    else if (m.hasFabric()) {
      if (model->costs)
        *os << "Model: " << model->name << ", per-message L and G from the fabric '"
            << m.fabricSource << "'; the L and G below apply only where it has none\n";
      else
        *os << "Model: " << model->name << "; the fabric '" << m.fabricSource
            << "' is not used (-sim-model=topo prices messages by it)\n";
    }
    TextOptions to;
    to.batch = OptBatch || opts::lgsBatch();
    if (model->engine == Engine::Atlahs)
      printAtlahsText(*os, r, *params, to);
    else
      printLgsText(*os, r, *params, to);
  }
  return llvm::Error::success();
}

RegisterTarget SimTarget({
    .name = "sim",
    .description = "simulate the workload with the built-in LogGOPS simulator (LogGOPSim-exact "
                   "output; -sim-model, -sim-report=json)",
    .needs = TargetNeeds::Workload,
    .writesDirectory = false,
    .pointToPoint = true,
    .defaultPipeline = simTargetPipeline,
    .run = runSim,
});

} // namespace
} // namespace infracc::sim
