// -sim-model=gpu under -emit=sim: the options of the GPU model, the machine it runs on
// (the fabric's NoC-level GPUs, or the paper's generic GPUs on one scale-up switch
// when there is no fabric) and its report (text, or JSON with -sim-report=json).
#include "backends/gpu/GpuRun.h"
#include "backends/sim/SimModel.h"

#include "blueprints/Blueprint.h"
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"
#include "support/Output.h"
#include "support/Progress.h"

#include <llvm/ADT/Statistic.h>
#include <llvm/Support/CommandLine.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infracc::gpu {
namespace {

namespace cl = llvm::cl;

cl::opt<unsigned> OptWgPerCu("wg-per-cu", cl::init(1), cl::value_desc("n"),
                             cl::desc("-sim-model=gpu: workgroups a compute unit holds at once "
                                      "(1..64, default 1)"),
                             cl::cat(opts::simCategory()));
cl::opt<double> OptClock("gpu-clock", cl::init(1.0), cl::value_desc("GHz"),
                         cl::desc("-sim-model=gpu: compute-unit clock in GHz; a CU issues at "
                                  "most one request per cycle (default 1)"),
                         cl::cat(opts::simCategory()));
cl::opt<unsigned> OptMaxOutstanding("max-outstanding", cl::init(64), cl::value_desc("n"),
                                    cl::desc("-sim-model=gpu: requests a compute unit keeps in "
                                             "flight at most (1..65536, default 64)"),
                                    cl::cat(opts::simCategory()));
cl::opt<unsigned> OptReduceCycles("reduce-cycles-per-line", cl::init(1), cl::value_desc("n"),
                                  cl::desc("-sim-model=gpu: cycles a Reduce of one cache line "
                                           "occupies the compute unit (0..65536, default 1)"),
                                  cl::cat(opts::simCategory()));
cl::opt<std::string> OptArbitration("noc-arbitration", cl::init("fifo"),
                                    cl::value_desc("fifo|fair"),
                                    cl::desc("-sim-model=gpu: how a link serves waiting packets: "
                                             "fifo (arrival order, default) or fair (control and "
                                             "data alternately)"),
                                    cl::cat(opts::simCategory()));
cl::opt<unsigned> OptControlBytes("gpu-control-bytes", cl::init(16), cl::value_desc("bytes"),
                                  cl::desc("-sim-model=gpu: bytes of a packet without data (a "
                                           "load request, a store's ack, a semaphore access; "
                                           "1..4096, default 16)"),
                                  cl::cat(opts::simCategory()));

cl::opt<uint64_t> OptMaxRequests("gpu-max-requests", cl::init(0), cl::value_desc("n"),
                                  cl::desc("-sim-model=gpu: stop with an error once the kernels "
                                           "have issued n requests, for a bounded look at a big "
                                           "run (default 0: no limit; -progress shows the total)"),
                                  cl::cat(opts::simCategory()));

/// The paper's generic GPU (§5.1): gpu_noc's defaults, its I/O ports on one switch.
std::string genericFabric(uint32_t gpus) {
  return fmt::format("single_tier:hosts={},host=gpu_noc,bw=128GiB/s", gpus);
}

llvm::Expected<GpuModelOptions> options() {
  GpuModelOptions o;
  if (OptWgPerCu < 1 || OptWgPerCu > 64)
    return usageError(fmt::format("-wg-per-cu={}: must be from 1 to 64", unsigned(OptWgPerCu)));
  if (!(OptClock > 0) || OptClock > 1000)
    return usageError(fmt::format("-gpu-clock={}: must be a clock in GHz above 0 and at most "
                                  "1000",
                                  double(OptClock)));
  if (OptMaxOutstanding < 1 || OptMaxOutstanding > 65536)
    return usageError(fmt::format("-max-outstanding={}: must be from 1 to 65536",
                                  unsigned(OptMaxOutstanding)));
  if (OptReduceCycles > 65536)
    return usageError(fmt::format("-reduce-cycles-per-line={}: must be at most 65536",
                                  unsigned(OptReduceCycles)));
  if (OptControlBytes < 1 || OptControlBytes > 4096)
    return usageError(fmt::format("-gpu-control-bytes={}: must be from 1 to 4096",
                                  unsigned(OptControlBytes)));
  if (OptArbitration != "fifo" && OptArbitration != "fair")
    return usageError("-noc-arbitration=" + OptArbitration + ": must be fifo or fair");
  o.workgroupsPerCu = OptWgPerCu;
  o.cyclePs = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(1000.0 / OptClock)));
  o.maxOutstanding = OptMaxOutstanding;
  o.reduceCycles = OptReduceCycles;
  o.fairArbitration = OptArbitration == "fair";
  o.controlBytes = OptControlBytes;
  o.maxRequests = OptMaxRequests;
  return o;
}

std::string ns(uint64_t ps) { return fmt::format("{}.{:03}", ps / 1000, ps % 1000); }
double nsValue(uint64_t ps) { return double(ps) / 1000.0; }

} // namespace

llvm::Expected<GpuRun> runFromOptions(const Module &m, DiagEngine &diags,
                                      const std::string &where) {
  const Schedule &s = *m.schedule;
  auto opt = options();
  if (!opt)
    return opt.takeError();
  if (llvm::Error e = checkRunnable(s))
    return e;
  GpuRun run;
  run.options = *opt;
  run.machineName = m.fabricSource;
  const FabricGraph *graph = m.fabric.get();
  if (!graph) {
    run.machineName = genericFabric(s.kernels()->numGpus);
    auto spec = blueprints::parseFabricSpec(run.machineName, llvm::SMLoc(), diags);
    std::shared_ptr<Infrastructure> defs = spec ? blueprints::instantiateFabric(*spec, diags)
                                                : nullptr;
    if (defs)
      run.generic = expandFabric(defs, diags);
    if (!run.generic)
      return reportedError();
    graph = run.generic.get();
  }
  auto machine = GpuMachine::build(*graph, run.machineName);
  if (!machine)
    return machine.takeError();
  run.machine = std::move(*machine);
  Progress progress("simulating GPUs", opts::showProgress() ? requestsTotal(s) : 0, "requests");
  if (progress.enabled())
    run.options.progress = &progress;
  auto result = runGpuModel(s, *run.machine, run.options);
  run.options.progress = nullptr;
  if (!result)
    return result.takeError();
  progress.update(result->requests());
  progress.finish();
  run.result = std::move(*result);
  const GpuRunResult &r = run.result;
  if (!r.finished()) {
    diags.error(where, fmt::format("-sim-model=gpu: the kernels cannot finish; {} things wait "
                                   "forever",
                                   r.stuck.size()));
    size_t shown = 0;
    for (const std::string &st : r.stuck) {
      if (shown++ == 50) {
        diags.note(where, fmt::format("... and {} more", r.stuck.size() - 50));
        break;
      }
      diags.note(where, st);
    }
    return reportedError();
  }
  return run;
}

namespace {

llvm::Error runGpu(TargetContext &ctx) {
  Module &m = ctx.module;
  const std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;
  std::string format = sim::reportFormat();
  if (!format.empty() && format != "text" && format != "json")
    return usageError("-emit=sim writes text or json, not '" + format + "'");
  auto run = runFromOptions(m, ctx.diags, where);
  if (!run)
    return run.takeError();
  const KernelLevel *k = m.schedule->kernels();
  const GpuRunResult &r = run->result;
  const GpuModelOptions &opt = run->options;
  const std::string &machineName = run->machineName;
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  const GpuMachine &mc = *run->machine;
  // Where the maximum is.
  uint32_t last = 0;
  for (uint32_t kn = 0; kn < k->kernels.size(); ++kn)
    if (r.kernels[kn].endPs > r.kernels[last].endPs)
      last = kn;
  if (llvm::AreStatisticsEnabled()) {
    std::vector<uint32_t> hot;
    for (uint32_t l = 0; l < r.links.size(); ++l)
      if (r.links[l].packets)
        hot.push_back(l);
    std::stable_sort(hot.begin(), hot.end(), [&](uint32_t a, uint32_t b) {
      return r.links[a].busyPs > r.links[b].busyPs;
    });
    llvm::errs() << "Hottest links (busy time):\n";
    for (size_t i = 0; i < std::min<size_t>(5, hot.size()); ++i)
      llvm::errs() << fmt::format("  {}: {:.1f}% busy, {} bytes, {} packets, at most {} waiting\n",
                                  mc.graph().directedLinkName(hot[i]),
                                  r.makespanPs ? 100.0 * r.links[hot[i]].busyPs / r.makespanPs : 0.0,
                                  r.links[hot[i]].bytes, r.links[hot[i]].packets,
                                  r.links[hot[i]].peakQueue);
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["model"] = "gpu";
    j["machine"] = machineName;
    j["parameters"] = {{"cache_line_bytes", k->loadStore->cacheLine},
                       {"unroll", k->loadStore->unroll},
                       {"cycle_ps", opt.cyclePs},
                       {"workgroups_per_cu", opt.workgroupsPerCu},
                       {"max_outstanding", opt.maxOutstanding},
                       {"reduce_cycles_per_line", opt.reduceCycles},
                       {"noc_arbitration", opt.fairArbitration ? "fair" : "fifo"},
                       {"control_bytes", opt.controlBytes}};
    j["makespan_ns"] = nsValue(r.makespanPs);
    j["requests"] = {{"loads", r.loads},
                     {"stores", r.stores},
                     {"semaphore_accesses", r.semaphoreAccesses},
                     {"events", r.events}};
    nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
    for (uint32_t kn = 0; kn < k->kernels.size(); ++kn)
      kernels.push_back({{"kernel", kn},
                         {"gpu", k->kernels[kn].gpu},
                         {"start_ns", nsValue(r.kernels[kn].startPs)},
                         {"end_ns", nsValue(r.kernels[kn].endPs)},
                         {"time_ns", nsValue(r.kernels[kn].endPs - r.kernels[kn].startPs)}});
    j["kernels"] = std::move(kernels);
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (uint32_t gpu = 0; gpu < k->numGpus; ++gpu) {
      nlohmann::ordered_json busy = nlohmann::ordered_json::array();
      for (uint64_t ps : r.cuBusyPs[gpu])
        busy.push_back(r.makespanPs ? double(ps) / r.makespanPs : 0.0);
      gpus.push_back({{"gpu", gpu},
                      {"device", mc.graph().composedDeviceName(mc.gpus()[gpu].firstNode)},
                      {"cu_busy_fraction", std::move(busy)}});
    }
    j["gpus"] = std::move(gpus);
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (uint32_t l = 0; l < r.links.size(); ++l) {
      const LinkUse &u = r.links[l];
      if (!u.packets)
        continue;
      links.push_back({{"link", mc.graph().directedLinkName(l)},
                       {"kind", mc.graph().link(mc.graph().edge(l / 2).link).name},
                       {"bytes", u.bytes},
                       {"packets", u.packets},
                       {"busy_fraction", r.makespanPs ? double(u.busyPs) / r.makespanPs : 0.0},
                       {"peak_waiting", u.peakQueue}});
    }
    j["links"] = std::move(links);
    *os << j.dump(2) << "\n";
    return llvm::Error::success();
  }
  *os << fmt::format("Model: gpu, {} GPU{} of {}; {}-byte lines, unroll {}, {} ps cycle, {} "
                     "workgroup(s) per CU, {} requests in flight per CU, {} arbitration\n",
                     k->numGpus, k->numGpus == 1 ? "" : "s", m.fabric ? "the fabric '" + machineName + "'"
                                          : "the generic GPU (" + machineName + ")",
                     k->loadStore->cacheLine, k->loadStore->unroll, opt.cyclePs,
                     opt.workgroupsPerCu, opt.maxOutstanding,
                     opt.fairArbitration ? "fair" : "fifo");
  *os << "Kernels:\n";
  for (uint32_t kn = 0; kn < k->kernels.size(); ++kn)
    *os << fmt::format("  gpu {} kernel {}: {} ns .. {} ns ({} ns)\n", k->kernels[kn].gpu, kn,
                       ns(r.kernels[kn].startPs), ns(r.kernels[kn].endPs),
                       ns(r.kernels[kn].endPs - r.kernels[kn].startPs));
  *os << fmt::format("Requests: {} ({} loads, {} stores, {} semaphore accesses); {} events\n",
                     r.requests(), r.loads, r.stores, r.semaphoreAccesses, r.events);
  if (k->kernels.empty())
    *os << fmt::format("Maximum finishing time: {} ns (no kernels)\n", ns(r.makespanPs));
  else
    *os << fmt::format("Maximum finishing time: {} ns (gpu {} kernel {})\n", ns(r.makespanPs),
                       k->kernels[last].gpu, last);
  return llvm::Error::success();
}

sim::RegisterSimModel GpuModel({
    .name = "gpu",
    .description = "executes GPU kernels' load-store instruction streams on compute units, the "
                   "network on chip, HBM and scale-up links (ASTRA-sim 3.0's GPU model)",
    .engine = sim::Engine::Lgs,
    .costs = nullptr,
    .pipeline = {},
    .runKernels = runGpu,
    .options = {&OptWgPerCu, &OptClock, &OptMaxOutstanding, &OptReduceCycles, &OptArbitration,
                &OptControlBytes, &OptMaxRequests},
});

} // namespace
} // namespace infracc::gpu
