// The sensitivity analysis at scale (issue 16, item 6): the full breakpoint set of T(L)
// over a range for a large schedule built here, on one core. The schedule: `iterations`
// rounds of a dissemination barrier over `ranks` ranks (round k: send 1 byte to
// rank+2^k, recv from rank-2^k, the recv irequires the send, the next send requires
// the recv, as Schedgen's Sendrecv pattern), each iteration after a calc of a
// pseudo-random 1-20 us per rank, so the critical path changes with L (equal calcs,
// -calc-min-us=-calc-max-us, give the barrier alone: few breakpoints).
// Reports events (ops + messages, LogGOPSim's count), the model's elements, sweeps
// (passes over the model), breakpoints, CPU seconds (user + system: the machine is
// shared) for building the schedule, the model and the curve, and peak RSS.
//
//   build/bench_sensitivity [-ranks=4096] [-iterations=64] [-range-us=100]
//                           [-calc-min-us=1] [-calc-max-us=20]
//                           [-contention=true] [-simulate=false]
#include "backends/sensitivity/Curve.h"
#include "backends/sim/Simulator.h"
#include "ir/Schedule.h"

#include <llvm/Support/CommandLine.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include <sys/resource.h>
#include <time.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Ranks("ranks", cl::init(4096), cl::desc("Number of ranks (default 4096)"));
static cl::opt<unsigned> Iterations("iterations", cl::init(64),
                                    cl::desc("Barriers in sequence (default 64)"));
static cl::opt<unsigned> RangeUs("range-us", cl::init(100),
                                 cl::desc("The range of L is 0 to this many us (default 100)"));
static cl::opt<unsigned> CalcMinUs("calc-min-us", cl::init(1),
                                   cl::desc("Each rank's calc before a barrier is drawn from "
                                            "[calc-min-us, calc-max-us] us (default 1)"));
static cl::opt<unsigned> CalcMaxUs("calc-max-us", cl::init(20),
                                   cl::desc("Upper end of the calc draw (default 20; equal to "
                                            "-calc-min-us: every rank alike)"));
static cl::opt<bool> Contention("contention", cl::init(true),
                                cl::desc("Check contention at every point, as -emit=sensitivity "
                                         "does by default (default true)"));
static cl::opt<bool> Prune("prune", cl::init(true),
                           cl::desc("Relevance pruning (a backward pass bounds the tails; "
                                    "default true, as -emit=sensitivity)"));
static cl::opt<unsigned> BudgetMiB("bound-budget-mib", cl::init(512),
                                   cl::desc("The most the merges' tail bounds may take at once "
                                            "(MiB; beyond it, chunks; default 512)"));
static cl::opt<bool> Compare("compare", cl::init(false),
                             cl::desc("Also trace the curve the other way (-prune flipped) and "
                                      "say whether the segments are identical (default false)"));
static cl::opt<bool> Simulate("simulate", cl::init(false),
                              cl::desc("Also simulate at L = 0 and report the CPU time "
                                       "(default false)"));

namespace {

double cpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}
double peakMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

Schedule dissemination(uint32_t n, unsigned iterations) {
  unsigned rounds = 0;
  while ((1u << rounds) < n)
    ++rounds;
  ScheduleBuilder b(n);
  b.reserve(uint64_t(n) * iterations * (2 * rounds + 1),
            uint64_t(n) * iterations * (2 * rounds + 1));
  std::mt19937_64 rng(16);
  std::uniform_int_distribution<uint64_t> calc(uint64_t(CalcMinUs) * 1000,
                                                uint64_t(std::max(CalcMinUs, CalcMaxUs)) * 1000);
  for (uint32_t r = 0; r < n; ++r) {
    b.beginRank(r);
    int64_t last = -1;
    for (unsigned it = 0; it < iterations; ++it) {
      uint32_t c = b.addCalc(calc(rng));
      if (last >= 0)
        b.addDependency(c, uint32_t(last), DepKind::Requires);
      last = c;
      for (unsigned k = 0; k < rounds; ++k) {
        uint32_t d = 1u << k;
        uint32_t s = b.addSend(1, (r + d) % n, it);
        b.addDependency(s, uint32_t(last), DepKind::Requires);
        uint32_t v = b.addRecv(1, (r + n - d % n) % n, it);
        b.addDependency(v, s, DepKind::IRequires);
        last = v;
      }
    }
    b.endRank();
  }
  return b.finish();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "sensitivity analysis benchmark\n");
  double c0 = cpuSeconds();
  Schedule s = dissemination(Ranks, Iterations);
  double c1 = cpuSeconds();
  sens::ModelOptions opts;   // LogGOPSim's defaults: o 1500, g 1000, G 6, S 65535
  auto model = sens::Model::build(s, opts);
  if (!model) {
    std::fprintf(stderr, "%s\n", llvm::toString(model.takeError()).c_str());
    return 1;
  }
  double c2 = cpuSeconds();
  (*model)->setPruningBudget(uint64_t(BudgetMiB) << 20);
  sens::Curve curve =
      sens::traceCurve(**model, sens::Rational(0), sens::Rational(int64_t(RangeUs) * 1000),
                       Contention, Prune);
  double c3 = cpuSeconds();
  const sens::Model::EnvelopeStats st = (*model)->lastEnvelope();
  const uint64_t events = s.numOps() + (*model)->numMessages();
  std::printf("dissemination: %u ranks, %u barriers: %llu ops, %llu messages, %llu events, "
              "%llu elements\n",
              unsigned(Ranks), unsigned(Iterations), (unsigned long long)s.numOps(),
              (unsigned long long)(*model)->numMessages(), (unsigned long long)events,
              (unsigned long long)(*model)->numElements());
  std::printf("L over [0, %u us]: %zu segments, %zu breakpoints, %llu sweeps, slopes %lld to "
              "%lld, T(0) = %s ns, contention %s\n",
              unsigned(RangeUs), curve.segments.size(), curve.breakpoints().size(),
              (unsigned long long)curve.sweeps, (long long)curve.segments.front().line.B,
              (long long)curve.segments.back().line.B,
              sens::formatDecimal(curve.valueAt(curve.lo)).c_str(),
              !Contention ? "not checked" : curve.contention ? "found" : "none");
  std::printf("CPU s: schedule %.2f, model %.2f (%.0f MiB), curve %.2f (%.3f per sweep); "
              "peak RSS %.0f MiB\n",
              c1 - c0, c2 - c1, (*model)->memoryBytes() / 1048576.0, c3 - c2,
              (c3 - c2) / double(curve.sweeps), peakMiB());
  std::printf("envelope: %llu merges reading %llu lines; pruning %s",
              (unsigned long long)st.merges, (unsigned long long)st.linesMerged,
              st.pruned ? "on" : "off");
  if (st.pruned)
    std::printf(" (%u samples, %llu lines dropped, tail bounds %.0f MiB in %llu chunk%s)",
                st.samples, (unsigned long long)st.linesPruned, st.boundBytes / 1048576.0,
                (unsigned long long)st.chunks, st.chunks == 1 ? "" : "s");
  std::printf("\n");
  if (Compare) {
    double t0 = cpuSeconds();
    sens::Curve other =
        sens::traceCurve(**model, sens::Rational(0), sens::Rational(int64_t(RangeUs) * 1000),
                         false, !Prune);
    bool same = other.segments.size() == curve.segments.size();
    for (size_t i = 0; same && i < curve.segments.size(); ++i)
      same = other.segments[i].start == curve.segments[i].start &&
             other.segments[i].end == curve.segments[i].end &&
             other.segments[i].line.A == curve.segments[i].line.A &&
             other.segments[i].line.B == curve.segments[i].line.B;
    std::printf("with pruning %s: %s segments (%.2f CPU s)\n", Prune ? "off" : "on",
                same ? "identical" : "DIFFERENT", cpuSeconds() - t0);
    if (!same)
      return 1;
  }
  if (Simulate) {
    sim::SimOptions so;
    so.params.L = 0;
    double t0 = cpuSeconds();
    sim::SimResult r = sim::simulate(s, so);
    std::printf("simulator at L = 0: %llu ns, %llu events, %.2f CPU s; peak RSS %.0f MiB\n",
                (unsigned long long)r.makespan, (unsigned long long)r.events,
                cpuSeconds() - t0, peakMiB());
  }
  return 0;
}
