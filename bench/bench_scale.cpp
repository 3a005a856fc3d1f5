// Schedules larger than memory, written without ever holding them: B dissemination
// barriers in sequence over P ranks (ceil(log2 P) rounds each; round k: send 1 byte to
// rank + 2^k, receive from rank - 2^k), Sendrecv style — each receive irequires its
// round's send, each send requires the previous round's receive — so a rank has one
// receive posted at a time and the simulator's own state stays small. 2 * P * rounds * B
// ops: 65,536 ranks and 477 barriers make 1.0 billion.
//
// Writes GOAL text (to measure the text -> binary conversion on inputs of any size) or
// binary GOAL (through the streaming writer, rank by rank), then the commands to time:
//
//   build/bench_scale -ranks=65536 -barriers=477 -write=bin -out=/big/dissem.bin
//   /usr/bin/time -v build/infracc /big/dissem.bin -emit=sim
//   build/bench_scale -ranks=65536 -barriers=60 -write=text -out=/big/dissem.goal
//   /usr/bin/time -v build/infracc /big/dissem.goal -emit=goal-bin -o /big/x.bin
//
// The two formats describe the same schedule: the binary written here and the one
// infracc converts from the text are byte-identical (checked with cmp at small sizes).
#include "backends/goal/GoalWriter.h"
#include "ir/Schedule.h"
#include "ir/TargetRegistry.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Ranks("ranks", cl::init(65536), cl::desc("Number of ranks"));
static cl::opt<unsigned> Barriers("barriers", cl::init(1),
                                  cl::desc("Dissemination barriers in sequence"));
static cl::opt<std::string> Format("write", cl::init("bin"), cl::desc("bin or text"));
static cl::opt<std::string> Out("out", cl::Required, cl::desc("Output file"));

namespace {

unsigned roundsFor(unsigned p) {
  unsigned r = 0;
  while ((uint64_t(1) << r) < p)
    ++r;
  return r;
}

uint32_t peerAt(uint32_t rank, uint64_t distance, uint32_t p, bool forward) {
  uint64_t d = distance % p;
  return forward ? uint32_t((rank + d) % p) : uint32_t((rank + p - d) % p);
}

void writeText(llvm::raw_ostream &os, unsigned p, unsigned rounds) {
  os << "num_ranks " << p << "\n";
  std::string buf;
  for (uint32_t r = 0; r < p; ++r) {
    buf.clear();
    fmt::format_to(std::back_inserter(buf), "\nrank {} {{\n", r);
    uint64_t label = 0;   // labels l1, l2, ...: send 2i+1, recv 2i+2
    for (unsigned b = 0; b < Barriers; ++b)
      for (unsigned k = 0; k < rounds; ++k) {
        uint64_t send = ++label, recv = ++label;
        fmt::format_to(std::back_inserter(buf), "l{}: send 1b to {} tag 0\n", send,
                       peerAt(r, uint64_t(1) << k, p, true));
        fmt::format_to(std::back_inserter(buf), "l{}: recv 1b from {} tag 0\n", recv,
                       peerAt(r, uint64_t(1) << k, p, false));
        if (send > 1)
          fmt::format_to(std::back_inserter(buf), "l{} requires l{}\n", send, send - 1);
        fmt::format_to(std::back_inserter(buf), "l{} irequires l{}\n", recv, send);
      }
    buf += "}\n";
    os << buf;
  }
}

bool writeBinary(llvm::raw_pwrite_stream &os, unsigned p, unsigned rounds) {
  auto writer = goal::binaryStreamWriter(os, p);
  ScheduleBuilder b(p);
  bool ok = true;
  b.streamTo([&](uint32_t r, const RankOps &ops) { ok = ok && writer->rank(r, ops); });
  for (uint32_t r = 0; r < p; ++r) {
    b.beginRank(r);
    uint32_t prevRecv = 0;
    bool first = true;
    for (unsigned bar = 0; bar < Barriers; ++bar)
      for (unsigned k = 0; k < rounds; ++k) {
        uint32_t send = b.addSend(1, peerAt(r, uint64_t(1) << k, p, true), 0);
        uint32_t recv = b.addRecv(1, peerAt(r, uint64_t(1) << k, p, false), 0);
        if (!first)
          b.addDependency(send, prevRecv, DepKind::Requires);
        b.addDependency(recv, send, DepKind::IRequires);
        prevRecv = recv;
        first = false;
      }
    b.endRank();
  }
  Schedule s = b.finish();
  if (!ok)
    return false;
  return !writer->finish(s);
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "Writes very large GOAL schedules\n");
  const unsigned p = Ranks, rounds = roundsFor(p);
  if (p < 2 || (Format != "bin" && Format != "text")) {
    std::fprintf(stderr, "bench_scale: -ranks must be at least 2, -write bin or text\n");
    return 2;
  }
  const uint64_t ops = uint64_t(2) * p * rounds * Barriers;
  auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  llvm::raw_fd_ostream os(Out, ec);
  if (ec) {
    std::fprintf(stderr, "bench_scale: %s: %s\n", Out.c_str(), ec.message().c_str());
    return 1;
  }
  bool ok = true;
  if (Format == "text")
    writeText(os, p, rounds);
  else
    ok = writeBinary(os, p, rounds);
  os.close();
  if (!ok || os.has_error()) {
    std::fprintf(stderr, "bench_scale: writing %s failed\n", Out.c_str());
    return 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %u ranks, %u barriers of %u rounds, %llu ops, %.2f GB, written in %.1f s\n",
              Out.c_str(), p, unsigned(Barriers), rounds, (unsigned long long)ops,
              double(os.tell()) / 1e9, secs);
  return 0;
}
