// The passes at scale: a DGX-style cluster (the host of examples/dgx_cluster.yaml,
// `hosts` of them, two per leaf, every leaf on two spines) and a llama-like per-GPU
// training step on all its GPUs (examples/gen_llama_like.py's structure: per layer a
// TP ring allreduce inside every node, and per layer a DP ring allreduce across the
// nodes). Measures, in this process, CPU seconds and throughput of
//   place, remap-gpus, intranode-calc, the verifier on the result,
//   the topology-aware cost model (paths for every communicating GPU pair), and
//   the simulation of the per-node schedule with -sim-model=topo's costs, and with
//   the uniform L and G for comparison,
// and the peak resident memory at the end.
//
//   build/bench_passes [-hosts=64] [-layers=4] [-dir=/tmp]
#include "backends/sim/SimModel.h"
#include "backends/sim/Simulator.h"
#include "compiler/frontends/infragraph/InfraGraphReader.h"
#include "ir/Module.h"
#include "passes/Pass.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <string>

#include <sys/resource.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Hosts("hosts", cl::init(64), cl::desc("DGX-style hosts (even; default 64)"));
static cl::opt<unsigned> Layers("layers", cl::init(4), cl::desc("Layers (default 4)"));
static cl::opt<std::string> Dir("dir", cl::init("/tmp"), cl::desc("Where the fabric file goes"));

namespace {

constexpr unsigned Gpus = 8;

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double peakMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

std::string fabricText(unsigned hosts) {
  unsigned leaves = hosts / 2, spinePorts = 4 * leaves;
  std::string s = fmt::format(R"(name: bench-dgx
devices:
- name: dgx
  components:
  - {{name: xpu, count: 8, choice: xpu}}
  - {{name: nvsw, count: 4, choice: switch}}
  - {{name: pciesw, count: 4, choice: switch}}
  - {{name: nic, count: 8, choice: nic}}
  links:
  - {{name: nvlink, physical: {{bandwidth: {{gigabytes_per_second: 200}}, latency: {{ns: 150}}}}}}
  - {{name: pcie, physical: {{bandwidth: {{gigabytes_per_second: 64}}, latency: {{ns: 250}}}}}}
  edges:
  - {{ep1: {{component: xpu}}, ep2: {{component: nvsw}}, scheme: many2many, link: nvlink}}
)");
  for (int k = 0; k < 4; ++k)
    s += fmt::format("  - {{ep1: {{component: \"pciesw[{0}]\"}}, ep2: {{component: \"xpu[{1}:{2}]\"}}, "
                     "scheme: many2many, link: pcie}}\n"
                     "  - {{ep1: {{component: \"pciesw[{0}]\"}}, ep2: {{component: \"nic[{1}:{2}]\"}}, "
                     "scheme: many2many, link: pcie}}\n",
                     k, 2 * k, 2 * k + 2);
  s += fmt::format(R"(- name: leaf
  components: [{{name: asic, count: 1, choice: switch}}, {{name: port, count: 24, choice: port}}]
  links: [{{name: ic}}]
  edges: [{{ep1: {{component: asic}}, ep2: {{component: port}}, scheme: many2many, link: ic}}]
- name: spine
  components: [{{name: asic, count: 1, choice: switch}}, {{name: port, count: {0}, choice: port}}]
  links: [{{name: ic}}]
  edges: [{{ep1: {{component: asic}}, ep2: {{component: port}}, scheme: many2many, link: ic}}]
links:
- {{name: host_link, physical: {{bandwidth: {{gigabits_per_second: 400}}, latency: {{ns: 500}}}}}}
instances:
- {{name: dgx, device: dgx, count: {1}}}
- {{name: leaf, device: leaf, count: {2}}}
- {{name: spine, device: spine, count: 2}}
edges:
)",
                   spinePorts, hosts, leaves);
  for (unsigned l = 0; l < leaves; ++l) {
    s += fmt::format("- {{ep1: {{instance: \"dgx[{}:{}]\", component: nic}}, ep2: {{instance: "
                     "\"leaf[{}]\", component: \"port[0:16]\"}}, scheme: one2one, link: "
                     "host_link}}\n",
                     2 * l, 2 * l + 2, l);
    for (unsigned sp = 0; sp < 2; ++sp)
      s += fmt::format("- {{ep1: {{instance: \"leaf[{}]\", component: \"port[{}:{}]\"}}, ep2: "
                       "{{instance: \"spine[{}]\", component: \"port[{}:{}]\"}}, scheme: "
                       "one2one, link: host_link}}\n",
                       l, 16 + 4 * sp, 20 + 4 * sp, sp, 4 * l, 4 * l + 4);
  }
  return s;
}

/// examples/gen_llama_like.py's schedule for `nodes` nodes of 8 GPUs.
Schedule llamaLike(unsigned nodes, unsigned layers) {
  const unsigned P = nodes * Gpus;
  ScheduleBuilder b(P);
  for (unsigned r = 0; r < P; ++r) {
    const unsigned node = r / Gpus, gpu = r % Gpus;
    b.beginRank(r);
    auto ring = [&](unsigned n, unsigned me, auto member, uint64_t chunk, uint32_t tag,
                    int32_t after, uint32_t cpu) {
      uint32_t right = member((me + 1) % n), left = member((me + n - 1) % n);
      int32_t prev = after, lastSend = -1;
      for (unsigned s = 0; s < 2 * (n - 1); ++s) {
        uint32_t send = b.addSend(chunk, right, tag, cpu);
        uint32_t recv = b.addRecv(chunk, left, tag, cpu);
        if (prev >= 0) {
          b.addDependency(send, uint32_t(prev), DepKind::Requires);
          b.addDependency(recv, uint32_t(prev), DepKind::Requires);
        }
        prev = int32_t(recv);
        lastSend = int32_t(send);
      }
      return std::pair{prev, lastSend};
    };
    auto tp = [&](unsigned k) { return node * Gpus + k; };
    auto dp = [&](unsigned k) { return k * Gpus + gpu; };
    int32_t prev = -1;
    for (unsigned l = 0; l < layers; ++l) {
      uint32_t c = b.addCalc(500000);
      if (prev >= 0)
        b.addDependency(c, uint32_t(prev), DepKind::Requires);
      prev = ring(Gpus, gpu, tp, 2 << 20, l, int32_t(c), 0).first;
    }
    std::vector<int32_t> grads;
    for (unsigned l = layers; l-- > 0;) {
      uint32_t c = b.addCalc(1000000);
      b.addDependency(c, uint32_t(prev), DepKind::Requires);
      prev = ring(Gpus, gpu, tp, 2 << 20, layers + l, int32_t(c), 0).first;
      auto [done, last] = ring(nodes, node, dp, 12 << 20, 2 * layers + l, prev, 1);
      grads.push_back(done);
      grads.push_back(last);
    }
    uint32_t opt = b.addCalc(200000);
    b.addDependency(opt, uint32_t(prev), DepKind::Requires);
    for (int32_t g : grads)
      b.addDependency(opt, uint32_t(g), DepKind::Requires);
    b.endRank();
  }
  return b.finish();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "bench_passes: the passes and -sim-model=topo at scale\n");
  if (Hosts < 2 || Hosts % 2) {
    llvm::errs() << "-hosts must be even and at least 2\n";
    return 2;
  }
  DiagEngine diags(llvm::errs());
  Module m(diags);
  std::string path = Dir + "/bench_passes_fabric.yaml";
  std::ofstream(path) << fabricText(Hosts);
  double t0 = cpuSeconds();
  m.fabricDefs = infragraph::readFile(path, diags);
  if (!m.fabricDefs)
    return 1;
  m.fabric = expandFabric(m.fabricDefs, diags);
  if (!m.fabric)
    return 1;
  m.fabricSource = path;
  double tFabric = cpuSeconds() - t0;
  t0 = cpuSeconds();
  m.schedule = llamaLike(Hosts, Layers);
  m.workloadSource = "llama-like";
  double tGen = cpuSeconds() - t0;
  const uint64_t ops = m.schedule->numOps();
  fmt::print("fabric: {} hosts, {} nodes, {} edges (read + expand {:.3f} s)\n", unsigned(Hosts),
             m.fabric->numNodes(), m.fabric->numEdges(), tFabric);
  fmt::print("schedule: {} GPUs, {} ops, {} dependencies (built in {:.3f} s)\n",
             m.schedule->numRanks(), ops, m.schedule->numDependencies(), tGen);

  Statistics stats;
  PassContext ctx{diags, stats};
  for (const char *name : {"place", "remap-gpus", "intranode-calc"}) {
    auto pass = PassRegistry::find(name)->create();
    uint64_t before = m.schedule->numOps();
    t0 = cpuSeconds();
    if (llvm::Error e = pass->run(m, ctx)) {
      llvm::errs() << name << ": " << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    double t = cpuSeconds() - t0;
    fmt::print("{:<15} {:8.3f} s  {:8.2f} M ops/s\n", name, t, double(before) / t / 1e6);
  }
  t0 = cpuSeconds();
  bool ok = verifySchedule(*m.schedule, diags, "bench", VerifyOptions());
  fmt::print("{:<15} {:8.3f} s  ({})\n", "verify", cpuSeconds() - t0, ok ? "valid" : "INVALID");
  fmt::print("on-node: {} messages, {} bytes\n", stats.get("intranode-calc", "messages"),
             stats.get("intranode-calc", "bytes"));

  sim::LogGPParams params;
  t0 = cpuSeconds();
  auto costs = sim::SimModelRegistry::find("topo")->costs(m, params);
  if (!costs) {
    llvm::errs() << llvm::toString(costs.takeError()) << "\n";
    return 1;
  }
  fmt::print("{:<15} {:8.3f} s  (paths for every communicating GPU pair)\n", "topo costs",
             cpuSeconds() - t0);
  sim::SimOptions so;
  so.params = params;
  so.costs = costs->get();
  t0 = cpuSeconds();
  sim::SimResult r = sim::simulate(*m.schedule, so);
  double tSim = cpuSeconds() - t0;
  fmt::print("{:<15} {:8.3f} s  {:8.2f} M events/s, makespan {} ns{}\n", "simulate", tSim,
             double(r.events) / tSim / 1e6, r.makespan, r.finished() ? "" : " (STUCK)");
  // The same schedule with the uniform L and G, for comparison.
  so.costs = nullptr;
  t0 = cpuSeconds();
  sim::SimResult u = sim::simulate(*m.schedule, so);
  double tUniform = cpuSeconds() - t0;
  fmt::print("{:<15} {:8.3f} s  {:8.2f} M events/s, makespan {} ns (uniform L, G)\n",
             "simulate lgs", tUniform, double(u.events) / tUniform / 1e6, u.makespan);
  fmt::print("peak RSS {:.0f} MiB\n", peakMiB());
  return 0;
}
