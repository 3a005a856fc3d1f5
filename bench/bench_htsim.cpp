// -emit=htsim at scale: recognising a fat tree (generate + expand + recognise) and
// turning a large workload into flows and triggers (build + write the .cm), with the
// process's peak memory. Each case runs in its own child process.
//
//   build/bench_htsim                 the default cases
//   build/bench_htsim ring 1024       one workload case: ring|permutation <ranks>
//   build/bench_htsim fabric clos:radix=64,levels=3,host=simple_host,...
#include "backends/htsim/ConnectionMatrix.h"
#include "backends/htsim/FatTree.h"
#include "blueprints/Blueprint.h"
#include "ir/Schedule.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <numeric>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace infracc;

namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
double peakMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

// Counts bytes instead of writing them.
class CountingStream : public llvm::raw_ostream {
public:
  CountingStream() { SetUnbuffered(); }
  uint64_t bytes = 0;

private:
  void write_impl(const char *, size_t n) override { bytes += n; }
  uint64_t current_pos() const override { return bytes; }
};

int fabricCase(const std::string &text) {
  DiagEngine diags(llvm::errs());
  auto t0 = Clock::now();
  auto spec = blueprints::parseFabricSpec(text, {}, diags);
  if (!spec)
    return 1;
  spec->origin = "-fabric";
  auto defs = blueprints::instantiateFabric(*spec, diags);
  auto g = defs ? expandFabric(defs, diags) : nullptr;
  if (!g)
    return 1;
  auto t1 = Clock::now();
  auto ft = htsim::recogniseFatTree(*g, diags, "bench", {});
  if (!ft)
    return 1;
  auto t2 = Clock::now();
  CountingStream os;
  htsim::writeTopo(*ft, {}, os);
  llvm::outs() << fmt::format("fabric {}\n  {} hosts, {} tiers, {} nodes, {} edges: generate and "
                              "expand {:.3f} s, recognise {:.3f} s; peak {:.0f} MiB\n",
                              text, ft->params.nodes, ft->params.tiers, g->numNodes(),
                              g->numEdges(), seconds(t0, t1), seconds(t1, t2), peakMiB());
  return 0;
}

// ring: allreduce in 2(P-1) steps, each send requiring the previous recv (as
// LogGOPSim's schedgen writes it); permutation: rank r sends to r + P/2 + 1.
Schedule workload(const std::string &kind, uint32_t P) {
  ScheduleBuilder b(P);
  for (uint32_t r = 0; r < P; ++r) {
    b.beginRank(r);
    if (kind == "ring") {
      for (uint32_t step = 0; step < 2 * (P - 1); ++step) {
        auto s = b.addSend(8192, (r + 1) % P, step);
        b.addRecv(8192, (r + P - 1) % P, step);
        if (step)
          b.addDependency(s, s - 1, DepKind::Requires);
      }
    } else {
      b.addSend(1 << 20, (r + P / 2 + 1) % P);
      b.addRecv(1 << 20, (r + P - P / 2 - 1) % P);
    }
    b.endRank();
  }
  return b.finish();
}

int workloadCase(const std::string &kind, uint32_t P) {
  DiagEngine diags(llvm::errs());
  auto t0 = Clock::now();
  Schedule s = workload(kind, P);
  auto t1 = Clock::now();
  // Rank r on host r, its ops on htsim node r.
  std::vector<uint32_t> host(P), node(s.numOps());
  std::iota(host.begin(), host.end(), 0);
  for (uint32_t r = 0; r < P; ++r)
    std::fill_n(node.begin() + s.rankBegin(r), s.numOps(r), r);
  auto cm = htsim::buildConnectionMatrix(s, htsim::FlowEnds{host, node}, P, diags, "bench");
  if (!cm)
    return 1;
  auto t2 = Clock::now();
  CountingStream os;
  htsim::writeConnectionMatrix(*cm, {}, os);
  auto t3 = Clock::now();
  llvm::outs() << fmt::format("{} {}\n  {} ops, {} flows, {} triggers, {:.1f} MB of .cm: schedule "
                              "{:.3f} s, flows and triggers {:.3f} s ({:.2f} M ops/s), write "
                              "{:.3f} s; peak {:.0f} MiB\n",
                              kind, P, s.numOps(), cm->flows.size(), cm->triggers.size(),
                              double(os.bytes) / 1e6, seconds(t0, t1), seconds(t1, t2),
                              double(s.numOps()) / seconds(t1, t2) / 1e6, seconds(t2, t3),
                              peakMiB());
  return 0;
}

int inChild(const std::function<int()> &f) {
  llvm::outs().flush();
  pid_t pid = fork();
  if (pid == 0) {
    int r = f();
    llvm::outs().flush(); // _exit skips the stream's destructor
    _exit(r);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 2 && a[0] == "fabric")
    return fabricCase(a[1]);
  if (a.size() == 2)
    return workloadCase(a[0], uint32_t(std::stoul(a[1])));
  int bad = 0;
  for (const char *spec : {"clos:radix=32,levels=3,host=simple_host,bw1=100G,bw2=100G,lat0=1us,"
                           "lat1=1us,lat2=1us",
                           "clos:radix=64,levels=3,host=simple_host,bw1=100G,bw2=100G,lat0=1us,"
                           "lat1=1us,lat2=1us"})
    bad |= inChild([&] { return fabricCase(spec); });
  bad |= inChild([] { return workloadCase("permutation", 65536); });
  bad |= inChild([] { return workloadCase("ring", 512); });
  bad |= inChild([] { return workloadCase("ring", 1024); });
  return bad;
}
