#include "visualize/SimTimeline.h"

#include "backends/gpu/GpuRun.h"
#include "backends/sim/Report.h"
#include "backends/sim/SimModel.h"
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "ir/Schedule.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"
#include "visualize/ScheduleView.h"
#include "visualize/Style.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <tuple>

namespace infracc::viz {

namespace {

Activity activityOf(sim::IntervalKind k) {
  switch (k) {
  case sim::IntervalKind::Compute: return Activity::Compute;
  case sim::IntervalKind::SendOverhead: return Activity::SendOverhead;
  case sim::IntervalKind::SendGap: return Activity::SendGap;
  case sim::IntervalKind::RecvOverhead: return Activity::RecvOverhead;
  case sim::IntervalKind::RecvGap: return Activity::RecvGap;
  }
  return Activity::Compute;
}

// Above this many intervals and messages the SVG carries no tooltips (they would
// dominate its size), so none are built.
constexpr size_t MaxTooltips = 20000;

} // namespace

TimelineData timelineFromSimulation(const Schedule &s, const sim::SimResult &r,
                                    const sim::SimTrace &trace, std::string title,
                                    std::vector<std::string> notes) {
  TimelineData d;
  d.title = std::move(title);
  d.notes = std::move(notes);
  d.numRanks = r.numRanks;
  d.cpusPerRank = std::max(1u, r.numCpus);
  d.nicsPerRank = std::max(1u, r.numNics);
  d.makespan = r.makespan;

  // Which (kind, rank, op) boxes and which messages (by send op) the critical path
  // runs through; each step names the op it accounts for.
  std::set<std::tuple<Activity, uint32_t, uint32_t>> criticalBoxes;
  std::set<uint32_t> criticalMessages, criticalRecvs;
  if (r.criticalPath.valid)
    for (const sim::PathStep &st : r.criticalPath.steps) {
      d.criticalPath.push_back({st.rank, st.start, st.end});
      switch (st.kind) {
      case sim::StepKind::Calc:
        criticalBoxes.insert({Activity::Compute, st.rank, st.op});
        break;
      case sim::StepKind::Send:
        criticalBoxes.insert({Activity::SendOverhead, st.rank, st.op});
        break;
      case sim::StepKind::Message:
        criticalBoxes.insert({Activity::RecvOverhead, st.rank, st.op});
        criticalMessages.insert(st.op);
        break;
      case sim::StepKind::Recv:
        criticalRecvs.insert(st.op);
        break;
      }
    }

  bool tooltips = trace.intervals.size() + trace.messages.size() <= MaxTooltips;
  // The receive overhead of a message is charged on a compute stream of the
  // receiver; its arrow ends on that stream's lane.
  std::vector<uint32_t> recvLaneOfSend;
  d.intervals.reserve(trace.intervals.size());
  for (const sim::TraceInterval &iv : trace.intervals) {
    TimelineData::Interval out;
    out.start = iv.start;
    // LogGOPSim's 0-byte wrap can make an end precede its start; draw nothing then.
    out.end = std::max(iv.start, iv.end);
    out.rank = iv.rank;
    out.unit = iv.unit;
    out.kind = activityOf(iv.kind);
    out.critical = criticalBoxes.count({out.kind, iv.rank, iv.op}) > 0;
    if (tooltips) {
      // Receive intervals name the send whose message they process.
      bool receiving = out.kind == Activity::RecvOverhead || out.kind == Activity::RecvGap;
      std::string what = receiving ? fmt::format("message of rank {} ({})", s.rankOf(iv.op),
                                                 opLabel(s, iv.op))
                                   : opLabel(s, iv.op);
      out.tooltip = fmt::format("rank {}: {}, {} – {}", iv.rank, what,
                                formatDuration(Duration::nanoseconds(double(iv.start))),
                                formatDuration(Duration::nanoseconds(double(out.end))));
    }
    if (out.kind == Activity::RecvOverhead) {
      if (recvLaneOfSend.size() <= iv.op)
        recvLaneOfSend.resize(size_t(iv.op) + 1, ~0u);
      recvLaneOfSend[iv.op] = iv.unit;
    }
    d.intervals.push_back(std::move(out));
  }
  d.messages.reserve(trace.messages.size());
  for (const sim::TraceMessage &m : trace.messages) {
    if (m.recvOp == ~0u)
      continue;   // never received (the run would not have finished)
    TimelineData::Message out;
    out.start = m.sendStart;
    out.end = std::max(m.sendStart, m.completed);
    out.src = m.src;
    out.dst = m.dst;
    out.srcCpu = s.cpu(m.sendOp);
    out.dstCpu = m.sendOp < recvLaneOfSend.size() && recvLaneOfSend[m.sendOp] != ~0u
                     ? recvLaneOfSend[m.sendOp]
                     : s.cpu(m.recvOp);
    out.bytes = m.bytes;
    out.critical = criticalMessages.count(m.sendOp) || criticalRecvs.count(m.recvOp);
    d.messages.push_back(out);
  }
  return d;
}

// ---------------------------------------------------------------------------------
// -emit=timeline
// ---------------------------------------------------------------------------------

namespace {
namespace cl = llvm::cl;

cl::opt<unsigned> TimelineRanks(
    "timeline-ranks", cl::init(64), cl::value_desc("n"),
    cl::desc("-emit=timeline: one lane per rank up to n ranks (default 64); more ranks are "
             "drawn as per-rank utilisation over time"),
    cl::cat(opts::simCategory()));

cl::opt<unsigned> TimelineWidth("timeline-width", cl::init(1000), cl::value_desc("px"),
                                cl::desc("-emit=timeline: width of the time axis in pixels "
                                         "(default 1000)"),
                                cl::cat(opts::simCategory()));

struct SimSettings {
  sim::LogGPParams params;
  const sim::SimModel *model = nullptr;
};

// The simulator's own options, as -emit=sim reads them: a timeline always shows the
// run -emit=sim would make with the same command line.
llvm::Expected<SimSettings> simSettings(const Module &m) {
  SimSettings out;
  auto params = sim::simParams();
  if (!params)
    return params.takeError();
  out.params = *params;
  auto model = sim::chooseSimModel(m);
  if (!model)
    return model.takeError();
  out.model = *model;
  if (llvm::Error e = sim::checkModelOptions(**model))
    return e;
  return out;
}

// The SVG, with -timeline-ranks and -timeline-width, to the target's output.
llvm::Error writeTimeline(TargetContext &ctx, const TimelineData &data) {
  TimelineOptions to;
  to.maxDetailedRanks = TimelineRanks;
  to.plotWidth = std::max(200u, unsigned(TimelineWidth));
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  *os << renderTimelineSvg(data, to);
  return llvm::Error::success();
}

// -sim-model=gpu: one row group per GPU, one row per compute unit that ran anything,
// a box per workgroup from its dispatch to its retirement.
llvm::Error gpuTimeline(TargetContext &ctx, const std::string &where) {
  const Module &m = ctx.module;
  auto run = gpu::runFromOptions(m, ctx.diags, where);
  if (!run)
    return run.takeError();
  const gpu::GpuRunResult &r = run->result;
  const KernelLevel &k = *m.schedule->kernels();
  TimelineData d;
  d.title = m.workloadSource.empty() ? std::string("timeline")
                                     : std::string(llvm::sys::path::filename(m.workloadSource));
  d.rankWord = "gpu";
  d.cpuWord = "cu";
  d.computeLegend = "a workgroup on a compute unit, from its dispatch to its retirement";
  d.numRanks = k.numGpus;
  d.nicsPerRank = 0;
  d.cpusPerRank = 1;
  auto ns = [](uint64_t ps) { return (ps + 500) / 1000; };
  for (const gpu::WorkgroupRun &w : r.workgroups) {
    d.cpusPerRank = std::max(d.cpusPerRank, w.cu + 1);
    TimelineData::Interval iv;
    iv.start = ns(w.startPs);
    iv.end = std::max(iv.start + 1, ns(w.endPs));
    iv.rank = w.gpu;
    iv.unit = w.cu;
    iv.tooltip = fmt::format("kernel {} workgroup {}: {:.3f} .. {:.3f} ns", w.kernel, w.workgroup,
                             w.startPs / 1000.0, w.endPs / 1000.0);
    d.intervals.push_back(std::move(iv));
  }
  d.makespan = ns(r.makespanPs);
  d.notes.push_back(fmt::format("model gpu · {} · {}-byte lines, unroll {}, max outstanding {}",
                                run->machineName, k.loadStore->cacheLine, k.loadStore->unroll,
                                run->options.maxOutstanding));
  d.notes.push_back(fmt::format("{} GPU{}, {} workgroups, {} requests · makespan {:.3f} ns",
                                k.numGpus, k.numGpus == 1 ? "" : "s", r.workgroups.size(),
                                r.requests(), r.makespanPs / 1000.0));
  return writeTimeline(ctx, d);
}

llvm::Error runTimeline(TargetContext &ctx) {
  Module &m = ctx.module;
  const Schedule &sched = *m.schedule;
  std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;
  if (std::string format = opts::outputFormat(); !format.empty() && format != "svg")
    return usageError("-emit=timeline writes SVG, not '" + format + "'");
  auto settings = simSettings(m);
  if (!settings)
    return settings.takeError();
  if (settings->model->runKernels)
    return gpuTimeline(ctx, where);
  if (llvm::Error e = sim::checkSimulatable(sched)) {
    ctx.diags.error(where, llvm::toString(std::move(e)));
    return reportedError();
  }
  std::unique_ptr<sim::LinkCostModel> costs;
  if (settings->model->costs) {
    auto c = settings->model->costs(m, settings->params);
    if (!c)
      return c.takeError();
    costs = std::move(*c);
  }
  sim::SimTrace trace;
  sim::SimOptions so;
  so.engine = settings->model->engine;
  so.params = settings->params;
  so.costs = costs.get();
  so.network = costs ? costs->network() : nullptr;
  so.trace = &trace;
  so.criticalPath = true;
  sim::SimResult r = sim::simulate(sched, so);
  if (!r.finished()) {
    sim::reportStuck(ctx.diags, where, r, sched, 50);
    return reportedError();
  }

  const sim::LogGPParams &p = settings->params;
  std::vector<std::string> notes;
  notes.push_back(fmt::format("model {} · L={} o={} g={} G={} O={} ns, S={} B",
                              settings->model->name, p.L, p.o, p.g, p.G.value(), p.O.value(),
                              p.S));
  notes.push_back(fmt::format("{} rank{}, {} message{} · makespan {} ns at rank {}", r.numRanks,
                              r.numRanks == 1 ? "" : "s", r.messages, r.messages == 1 ? "" : "s",
                              r.makespan, r.makespanRank));
  if (r.criticalPath.valid && r.makespan > 0) {
    std::vector<std::string> parts;
    for (unsigned c = 0; c < sim::NumCategories; ++c)
      if (r.criticalPath.total[c] > 0)
        parts.push_back(fmt::format("{} {:.0f}%", sim::categoryName(sim::Category(c)),
                                    100.0 * double(r.criticalPath.total[c]) / double(r.makespan)));
    notes.push_back("critical path: " + llvm::join(parts, ", "));
  }
  std::string title = m.workloadSource.empty()
                          ? std::string("timeline")
                          : std::string(llvm::sys::path::filename(m.workloadSource));
  TimelineData data = timelineFromSimulation(sched, r, trace, title, std::move(notes));
  return writeTimeline(ctx, data);
}

RegisterTarget TimelineTarget({
    .name = "timeline",
    .description = "space-time diagram (SVG) of the built-in simulator's run, critical path "
                   "in red (-timeline-ranks, -timeline-width; simulator options apply)",
    .needs = TargetNeeds::Workload,
    .writesDirectory = false,
    .pointToPoint = true,
    .defaultPipeline = sim::simTargetPipeline,
    .run = runTimeline,
});

} // namespace
} // namespace infracc::viz
