// Collective lowering throughput: ops produced per second.
//   1. generation: a 4096-rank ring allreduce with 8 channels, every rank's ops
//      generated (the algorithm code and the Emitter, tags included) and dropped
//      rank by rank: the whole schedule would not fit a small machine (537 M ops);
//   2. the full pass (lowerCollectives: generation plus building the Schedule with its
//      dependencies) on as many ranks as fit (-full-ranks, default 1024: 33.5 M ops);
//   3. the same with the semantic checker's recording on, on a small case.
//
//   build/bench_lowering [-ranks=4096] [-channels=8] [-bytes=1073741824] [-full-ranks=1024]
#include "passes/collectives/Algorithms.h"
#include "passes/collectives/Lowering.h"
#include "passes/collectives/SemanticChecker.h"
#include "support/Diagnostics.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>

#include <sys/resource.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Ranks("ranks", cl::init(4096), cl::desc("Ranks (default 4096)"));
static cl::opt<unsigned> Channels("channels", cl::init(8), cl::desc("Channels (default 8)"));
static cl::opt<uint64_t> Bytes("bytes", cl::init(1ull << 30),
                               cl::desc("Allreduce size in bytes (default 1 GiB)"));
static cl::opt<unsigned> FullRanks("full-ranks", cl::init(1024),
                                   cl::desc("Ranks for the full pass (default 1024)"));

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
double peakRssMB() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

Schedule allreduceSchedule(uint32_t P, CollAlgorithm a) {
  ScheduleBuilder b(P);
  Communicator world;
  for (uint32_t r = 0; r < P; ++r)
    world.ranks.push_back(r);
  uint32_t comm = b.addCommunicator(world);
  for (uint32_t r = 0; r < P; ++r) {
    b.beginRank(r);
    CollectiveInfo info;
    info.communicator = comm;
    info.algorithm = uint32_t(a);
    info.bytes = Bytes;
    b.addOp(OpKind::Collective, b.addCollective(info), Bytes);
    b.endRank();
  }
  return b.finish();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "collective lowering throughput\n");
  llvm::outs() << "ring allreduce of " << Bytes << " bytes, " << Channels << " channels\n";

  // 1. Generation for every rank, dropped rank by rank.
  {
    uint32_t P = Ranks;
    std::vector<uint32_t> ranks(P);
    for (uint32_t r = 0; r < P; ++r)
      ranks[r] = r;
    coll::Fragment frag;
    coll::EmitOptions eo;
    coll::Emitter e(frag, eo);
    coll::Layout L;
    L.bytes = Bytes;
    L.members = P;
    L.channels = Channels;
    coll::AlgoParams p;
    uint64_t ops = 0, deps = 0;
    auto t0 = Clock::now();
    for (uint32_t r = 0; r < P; ++r) {
      frag.clear();
      e.begin(0, 0, 0, false, CollProtocol::Simple);
      for (uint32_t ch = 0; ch < Channels; ++ch) {
        e.setChannel(ch);
        L.channel = ch;
        coll::generate(e, CollAlgorithm::Ring, coll::Group{ranks, r}, L, p);
      }
      ops += frag.ops.size();
      deps += frag.deps.size();
    }
    double s = since(t0);
    llvm::outs() << llvm::format("generation, %u ranks: %llu ops, %llu deps in %.2f s: %.1f M ops/s\n",
                                 P, (unsigned long long)ops, (unsigned long long)deps, s,
                                 double(ops) / s / 1e6);
  }

  // 2. The full pass.
  {
    Schedule s = allreduceSchedule(FullRanks, CollAlgorithm::Ring);
    coll::LoweringOptions o;
    o.channels = Channels;
    DiagEngine diags;
    auto t0 = Clock::now();
    std::optional<Schedule> out = coll::lowerCollectives(s, o, {}, diags, "bench");
    double sec = since(t0);
    if (!out)
      return 1;
    llvm::outs() << llvm::format(
        "full pass, %u ranks: %llu ops, %llu deps in %.2f s: %.1f M ops/s; %.0f MB schedule, "
        "peak RSS %.0f MB\n",
        unsigned(FullRanks), (unsigned long long)out->numOps(),
        (unsigned long long)out->numDependencies(), sec, double(out->numOps()) / sec / 1e6,
        double(out->memoryBytes()) / 1e6, peakRssMB());
  }

  // 3. Recording and the semantic checker (64 ranks).
  {
    Schedule s = allreduceSchedule(64, CollAlgorithm::Ring);
    coll::LoweringOptions o;
    o.channels = Channels;
    DiagEngine diags;
    coll::Recording rec;
    auto t0 = Clock::now();
    std::optional<Schedule> out = coll::lowerCollectives(s, o, {}, diags, "bench", &rec);
    double lower = since(t0);
    t0 = Clock::now();
    coll::CheckResult r = coll::checkCollectives(*out, rec, s.communicators());
    double check = since(t0);
    llvm::outs() << llvm::format("checker, 64 ranks: %llu ops lowered with recording in %.3f s, "
                                 "proven in %.3f s (%s)\n",
                                 (unsigned long long)out->numOps(), lower, check,
                                 r.ok() ? "ok" : "FAILED");
  }
  return 0;
}
