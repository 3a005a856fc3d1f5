// The simulator's event loop at scale. Builds large schedules itself and simulates
// them, each in a fresh child process so that peak RSS belongs to that run alone:
//   * ring:    ring allreduce over N ranks, 2(N-1) steps of d/N bytes, each step a
//              send to rank+1 and a recv from rank-1 that irequires the step's send
//              (MPI_Sendrecv style: schedgen's allreduce_ring posts all recvs at
//              once and deadlocks in LogGOPSim for N >= 9), the next send requires
//              the recv;
//   * recdoub: recursive-halving reduce-scatter + recursive-doubling allgather
//              (schedgen's allreduce_recdoub sizes), Sendrecv style, repeated K times,
//              each repetition after the previous one.
// For each it reports events, events/s of the event loop, and peak RSS; with
// -goal-dir it also writes the schedule as GOAL text, converts it with LogGOPSim's
// txt2bin and times `infracc x.bin -emit=sim` and LogGOPSim on that same .bin (wall
// time of the whole process, peak RSS from wait4). Speeds are events per CPU second.
//
//   build/bench_sim [-ranks=1024] [-bytes=1048576] [-iterations=64] [-model=lgs|atlahs]
//                   [-goal-dir=/tmp/simbench -txt2bin=PATH -loggopsim=PATH]
// The reference tools default to $LGS_TXT2BIN and $LGS_SIM; without LogGOPSim only
// infracc's figures are printed, without txt2bin infracc converts the text itself.
#include "backends/goal/GoalWriter.h"
#include "backends/sim/Simulator.h"
#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "ir/Schedule.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Ranks("ranks", cl::init(1024), cl::desc("Number of ranks (default 1024)"));
static cl::opt<uint64_t> Bytes("bytes", cl::init(1 << 20),
                               cl::desc("Allreduce size in bytes (default 1 MiB)"));
static cl::opt<unsigned> Iterations("iterations", cl::init(64),
                                    cl::desc("Recursive-doubling allreduces in sequence "
                                             "(default 64)"));
static cl::opt<std::string> Model("model", cl::init("lgs"),
                                  cl::desc("lgs or atlahs (default lgs)"));
static cl::opt<std::string> GoalDir("goal-dir", cl::desc("Write the schedules here as GOAL and "
                                                         "compare with LogGOPSim"));
static std::string fromEnvironment(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}
static cl::opt<std::string> Txt2bin("txt2bin", cl::init(fromEnvironment("LGS_TXT2BIN")),
                                    cl::desc("LogGOPSim's txt2bin to convert with (default "
                                             "$LGS_TXT2BIN; without it infracc -emit=goal-bin "
                                             "converts, which writes the same bytes)"));
static cl::opt<std::string> LogGOPSim("loggopsim", cl::init(fromEnvironment("LGS_SIM")),
                                      cl::desc("LogGOPSim to compare with (default $LGS_SIM; "
                                               "without it only infracc's figures)"));
static cl::opt<std::string> File("file", cl::desc("Time reading, verifying and simulating this "
                                                  "binary GOAL file, phase by phase"));
static cl::opt<std::string> Infracc("infracc", cl::init(""),
                                    cl::desc("infracc binary (default: next to this program)"));

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double peakMiB(const struct rusage &ru) { return double(ru.ru_maxrss) / 1024.0; }

// CPU time (user + system): the machine is shared, and wall time then measures the
// other jobs as much as this one.
double cpuSeconds(const struct rusage &ru) {
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}
double processCpuSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

Schedule ringAllreduce(uint32_t n, uint64_t bytes) {
  ScheduleBuilder b(n);
  const uint64_t chunk = bytes / n;
  const uint64_t steps = 2ull * (n - 1);
  b.reserve(uint64_t(n) * steps * 2, uint64_t(n) * steps * 2);
  for (uint32_t r = 0; r < n; ++r) {
    b.beginRank(r);
    int64_t lastRecv = -1;
    for (uint64_t k = 0; k < steps; ++k) {
      auto s = b.addSend(chunk, (r + 1) % n);
      if (lastRecv >= 0)
        b.addDependency(s, uint32_t(lastRecv), DepKind::Requires);
      auto v = b.addRecv(chunk, (r + n - 1) % n);
      b.addDependency(v, s, DepKind::IRequires);
      lastRecv = v;
    }
    b.endRank();
  }
  return b.finish();
}

Schedule recDoubAllreduce(uint32_t n, uint64_t bytes, unsigned iterations) {
  ScheduleBuilder b(n);
  unsigned logn = 0;
  while ((1u << (logn + 1)) <= n)
    ++logn;
  b.reserve(uint64_t(n) * iterations * logn * 4, uint64_t(n) * iterations * logn * 4);
  for (uint32_t r = 0; r < n; ++r) {
    b.beginRank(r);
    int64_t lastRecv = -1;
    for (unsigned it = 0; it < iterations; ++it) {
      uint64_t size = bytes;
      auto step = [&](uint32_t mask) {
        uint32_t peer = r ^ mask;
        auto s = b.addSend(size, peer, it);
        if (lastRecv >= 0)
          b.addDependency(s, uint32_t(lastRecv), DepKind::Requires);
        auto v = b.addRecv(size, peer, it);
        b.addDependency(v, s, DepKind::IRequires);
        lastRecv = v;
      };
      for (unsigned k = 0; k < logn; ++k) {
        size /= 2;
        step(1u << k);
      }
      for (unsigned k = logn; k-- > 0;) {
        step(1u << k);
        size *= 2;
      }
    }
    b.endRank();
  }
  return b.finish();
}

/// Runs `fn` in a child process; returns the child's rusage.
struct rusage inChild(const std::function<void()> &fn) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fn();
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  return ru;
}

/// Runs a program with stdout to `outFile`; returns wall seconds and its rusage.
struct ProcessRun {
  double wall = 0;
  struct rusage ru {};
  int status = -1;
};
ProcessRun runProgram(const std::vector<std::string> &argv, const std::string &outFile) {
  ProcessRun pr;
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    // Both streams into the file: a failing conversion's messages are what the
    // bench points the reader to.
    int fd = open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  wait4(pid, &pr.status, 0, &pr.ru);
  pr.wall = since(t0);
  return pr;
}

uint64_t eventsIn(const std::string &file) {
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf)
    return 0;
  llvm::StringRef text = (*buf)->getBuffer();
  size_t at = text.find("Events: ");
  if (at == llvm::StringRef::npos)
    return 0;
  uint64_t v = 0;
  text.drop_front(at + 8).consumeInteger(10, v);
  return v;
}

void bench(const std::string &name, const std::function<Schedule()> &build) {
  sim::SimOptions opts;
  opts.engine = Model == "atlahs" ? sim::Engine::Atlahs : sim::Engine::Lgs;
  struct rusage ru = inChild([&] {
    auto t0 = Clock::now();
    Schedule s = build();
    double buildSecs = since(t0);
    double c0 = processCpuSeconds();
    sim::SimResult r = sim::simulate(s, opts);
    double cpu = processCpuSeconds() - c0;
    std::printf("%-8s %u ranks, %llu ops, %.2f MiB schedule (built in %.2f s)\n", name.c_str(),
                s.numRanks(), (unsigned long long)s.numOps(), s.memoryBytes() / 1048576.0,
                buildSecs);
    std::printf("  infracc  simulate(): %llu events, %.3f s CPU = %.2f M events/s (wall %.3f s); "
                "makespan %llu ns%s\n",
                (unsigned long long)r.events, cpu, r.events / cpu / 1e6, r.wallSeconds,
                (unsigned long long)r.makespan, r.finished() ? "" : " (did not finish)");
  });
  std::printf("  infracc  peak RSS (build + simulate): %.1f MiB\n", peakMiB(ru));

  if (GoalDir.empty())
    return;
  llvm::sys::fs::create_directories(GoalDir);
  std::string goal = GoalDir + "/" + name + ".goal", bin = GoalDir + "/" + name + ".bin";
  inChild([&] {
    Schedule s = build();
    std::error_code ec;
    llvm::raw_fd_ostream os(goal, ec);
    goal::printText(s, os);
  });
  std::string self = Infracc;
  if (self.empty()) {
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, (void *)&since);
    self = exe.substr(0, exe.rfind('/')) + "/infracc";
  }
  ProcessRun conv =
      Txt2bin.empty()
          ? runProgram({self, goal, "-emit=goal-bin", "-o", bin}, GoalDir + "/convert.out")
          : runProgram({Txt2bin, "-i", goal, "-o", bin}, GoalDir + "/txt2bin.out");
  if (conv.status != 0) {
    std::printf("  (converting %s to binary failed; see %s)\n", goal.c_str(),
                (GoalDir + (Txt2bin.empty() ? "/convert.out" : "/txt2bin.out")).c_str());
    return;
  }
  std::vector<std::string> ours = {self, bin, "-emit=sim"};
  if (Model == "atlahs")
    ours.push_back("-sim-model=atlahs");
  ProcessRun a = runProgram(ours, GoalDir + "/" + name + ".infracc.out");
  uint64_t ea = eventsIn(GoalDir + "/" + name + ".infracc.out");
  std::printf("  infracc  x.bin -emit=sim: %.3f s CPU = %.2f M events/s (wall %.3f s), "
              "peak RSS %.1f MiB\n",
              cpuSeconds(a.ru), ea / cpuSeconds(a.ru) / 1e6, a.wall, peakMiB(a.ru));
  if (Model != "lgs")
    return;
  if (LogGOPSim.empty()) {
    std::printf("  (no LogGOPSim to compare with: set LGS_SIM or -loggopsim=)\n");
    return;
  }
  ProcessRun l = runProgram({LogGOPSim, "-f", bin}, GoalDir + "/" + name + ".loggopsim.out");
  uint64_t el = eventsIn(GoalDir + "/" + name + ".loggopsim.out");
  std::printf("  LogGOPSim -f x.bin:     %.3f s CPU = %.2f M events/s (wall %.3f s), peak RSS %.1f "
              "MiB (events %s)\n",
              cpuSeconds(l.ru), el / cpuSeconds(l.ru) / 1e6, l.wall, peakMiB(l.ru),
              el == ea ? "equal" : "DIFFER");
  std::printf("  ratio: infracc runs in 1/%.2f of LogGOPSim's CPU time at %.0f%% of its peak RSS\n",
              cpuSeconds(l.ru) / cpuSeconds(a.ru), 100.0 * peakMiB(a.ru) / peakMiB(l.ru));
}

} // namespace

void printRss(const char *when) {
  auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!buf)
    return;
  llvm::StringRef text = (*buf)->getBuffer();
  std::string out;
  for (const char *key : {"VmHWM:", "RssAnon:", "RssFile:"}) {
    size_t at = text.find(key);
    if (at != llvm::StringRef::npos)
      out += " " + text.substr(at, text.find('\n', at) - at).str();
  }
  std::printf("  [%s]%s\n", when, out.c_str());
}

void benchFile() {
  struct rusage ru = inChild([&] {
    DiagEngine diags;
    double c0 = processCpuSeconds();
    auto buf = llvm::MemoryBuffer::getFile(File, false, false);
    if (!buf)
      return;
    printRss("mapped");
    std::unique_ptr<llvm::MemoryBuffer> mb = std::move(*buf);
    std::optional<Schedule> s = goal::readBinaryGoal(diags, std::move(mb));
    if (!s)
      return;
    double c1 = processCpuSeconds();
    printRss("read");
    verifySchedule(*s, diags, File, VerifyOptions());
    double c2 = processCpuSeconds();
    printRss("verified");
    sim::SimOptions opts;
    opts.engine = Model == "atlahs" ? sim::Engine::Atlahs : sim::Engine::Lgs;
    sim::SimResult r = sim::simulate(*s, opts);
    double c3 = processCpuSeconds();
    printRss("simulated");
    std::printf("%s: %llu ops, %llu events; CPU s: read %.3f, verify %.3f, simulate %.3f "
                "(event loop %.3f wall) = %.2f M events/s; makespan %llu\n",
                File.c_str(), (unsigned long long)s->numOps(), (unsigned long long)r.events,
                c1 - c0, c2 - c1, c3 - c2, r.wallSeconds, r.events / (c3 - c2) / 1e6,
                (unsigned long long)r.makespan);
  });
  std::printf("  peak RSS %.1f MiB, CPU %.3f s\n", peakMiB(ru), cpuSeconds(ru));
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "simulator benchmark\n");
  if (!File.empty()) {
    benchFile();
    return 0;
  }
  const uint32_t n = Ranks;
  std::printf("bench_sim: model %s, %u ranks, %llu bytes\n", Model.c_str(), n,
              (unsigned long long)uint64_t(Bytes));
  bench("ring", [&] { return ringAllreduce(n, Bytes); });
  if (n & (n - 1))
    std::printf("recdoub  skipped: recursive doubling pairs rank r with r xor 2^k, which needs "
                "a power-of-two -ranks (got %u)\n", n);
  else
    bench("recdoub", [&] { return recDoubAllreduce(n, Bytes, Iterations); });
  return 0;
}
