// GOAL reading and writing at scale. Writes a large GOAL file itself (ring allreduce
// steps with a calc per step over many ranks, schedgen's style: labels l1.. per rank,
// each dependency right after its op), then measures, each in a fresh child process
// so that peak RSS belongs to that step alone:
//   * text parsing (MB/s, ops/s, peak RSS per op),
//   * -emit=goal and -emit=goal-bin writing speed,
//   * binary loading (GB/s, peak RSS per op),
//   * the verifier,
//   * `infracc x.goal -emit=goal-bin` end to end, and LogGOPSim's txt2bin on the same
//     file (if found), whose output must be byte-identical to ours.
// The files are in the page cache when read (just written): these are CPU figures.
//
//   build/bench_goal [-ranks=1024] [-iterations=8] [-dir=/tmp] [-txt2bin=PATH] [-keep]
#include "backends/goal/GoalWriter.h"
#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "compiler/frontends/goal/GoalTextParser.h"
#include "ir/Schedule.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <functional>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<unsigned> Ranks("ranks", cl::init(1024),
                               cl::desc("Number of ranks (default 1024)"));
static cl::opt<unsigned> Iterations("iterations", cl::init(8),
                                    cl::desc("Ring allreduces per rank (default 8: 50.3 M ops "
                                             "with 1024 ranks)"));
static cl::opt<std::string> Dir("dir", cl::init("/tmp"), cl::desc("Where the files go"));
static std::string fromEnvironment(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}
static cl::opt<std::string> Txt2bin("txt2bin", cl::init(fromEnvironment("LGS_TXT2BIN")),
                                    cl::desc("LogGOPSim's txt2bin to compare with (default "
                                             "$LGS_TXT2BIN; without it no comparison)"));
static cl::opt<bool> Keep("keep", cl::desc("Keep the generated files"));

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// CPU time (user + system) of this process: less disturbed than wall time when
// other jobs share the machine.
double cpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// A measured step: wall and CPU seconds.
struct Timer {
  Clock::time_point wall = Clock::now();
  double cpu = cpuSeconds();
  std::string stop() const {
    char b[64];
    std::snprintf(b, sizeof b, "%.3f %.3f", since(wall), cpuSeconds() - cpu);
    return b;
  }
};

// schedgen-style ring allreduce: per step send to the right, recv from the left,
// calc (the reduction); the send of step k requires the calc of step k-1 and the
// calc requires the recv.
uint64_t generate(const std::string &path, uint64_t &ops) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "cannot write " << path << ": " << ec.message() << "\n";
    std::exit(1);
  }
  std::string buf;
  buf.reserve(1 << 20);
  auto num = [&](uint64_t v) {
    char tmp[24];
    buf.append(tmp, std::to_chars(tmp, tmp + sizeof tmp, v).ptr);
  };
  uint32_t P = Ranks;
  uint64_t steps = uint64_t(2) * (P - 1) * Iterations;
  buf += "num_ranks ";
  num(P);
  buf += "\n";
  ops = 0;
  for (uint32_t r = 0; r < P; ++r) {
    buf += "\nrank ";
    num(r);
    buf += " {\n";
    uint64_t l = 0;
    for (uint64_t k = 0; k < steps; ++k) {
      uint64_t send = ++l, recv = ++l, calc = ++l;
      buf += "l";
      num(send);
      buf += ": send 65536b to ";
      num((r + 1) % P);
      buf += " tag 0\n";
      if (k) {
        buf += "l";
        num(send);
        buf += " requires l";
        num(send - 1);
        buf += "\n";
      }
      buf += "l";
      num(recv);
      buf += ": recv 65536b from ";
      num((r + P - 1) % P);
      buf += " tag 0\nl";
      num(calc);
      buf += ": calc 1200\nl";
      num(calc);
      buf += " requires l";
      num(recv);
      buf += "\n";
      if (buf.size() > (1 << 20) - 256) {
        os << buf;
        buf.clear();
      }
    }
    ops += l;
    buf += "}\n";
  }
  os << buf;
  os.close();
  uint64_t size = 0;
  llvm::sys::fs::file_size(path, size);
  return size;
}

struct ChildResult {
  std::string out;
  double seconds = 0;   // wall time of the whole child
  double cpu = 0;       // its user + system time
  long maxRssKb = 0;
  int status = -1;
};

// Runs `body` in a forked child; what it prints to the pipe comes back.
ChildResult inChild(const std::function<std::string()> &body) {
  int fds[2];
  if (pipe(fds) != 0)
    std::exit(1);
  llvm::outs().flush();
  llvm::errs().flush();
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string s = body();
    if (write(fds[1], s.data(), s.size()) < 0)
      _exit(2);
    _exit(0);
  }
  close(fds[1]);
  ChildResult r;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    r.out.append(buf, size_t(n));
  close(fds[0]);
  struct rusage ru;
  int status = 0;
  wait4(pid, &status, 0, &ru);
  r.seconds = since(start);
  r.maxRssKb = ru.ru_maxrss;
  r.cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ChildResult runProgram(const std::vector<std::string> &argv) {
  return inChild([&]() -> std::string {
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execv(args[0], args.data());
    _exit(127);
  });
}

std::optional<Schedule> parseText(const std::string &path, DiagEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFile(path, false, /*RequiresNullTerminator=*/true);
  if (!buf)
    return std::nullopt;
  unsigned id = diags.addBuffer(std::move(*buf));
  return goal::TextParser(diags, id, goal::Dialect::plain()).parse();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "GOAL read/write benchmark\n");
  std::string text = Dir + "/bench_goal.goal", ours = Dir + "/bench_goal.bin",
              back = Dir + "/bench_goal.out.goal", ref = Dir + "/bench_goal.txt2bin.bin";

  auto t = Clock::now();
  uint64_t ops = 0;
  uint64_t textBytes = generate(text, ops);
  llvm::outs() << llvm::format("generated %s: %.1f MB, %llu ops, %u ranks (%.1f s)\n",
                               text.c_str(), textBytes / 1e6, (unsigned long long)ops,
                               unsigned(Ranks), since(t));

  // 1. Text parsing alone.
  ChildResult parse = inChild([&] {
    DiagEngine diags;
    Timer t0;
    std::optional<Schedule> s = parseText(text, diags);
    std::string times = t0.stop();
    if (!s)
      return std::string("failed");
    return times + " " + std::to_string(s->numOps()) + " " +
           std::to_string(s->memoryBytes()) + " " + std::to_string(s->numDependencies());
  });
  double parseSec = 0, parseCpu = 0;
  uint64_t parsedOps = 0, schedBytes = 0, deps = 0;
  std::sscanf(parse.out.c_str(), "%lf %lf %lu %lu %lu", &parseSec, &parseCpu, &parsedOps,
              &schedBytes, &deps);
  llvm::outs() << "                   wall s  CPU s  MB/s (by CPU s)  M ops/s (by CPU s)\n";
  auto line = [](const char *what, double wall, double cpu, double bytes, double n) {
    if (bytes > 0)
      llvm::outs() << llvm::format("%-18s %6.2f %6.2f  %8.1f          %7.2f", what, wall, cpu,
                                   bytes / 1e6 / cpu, n / 1e6 / cpu);
    else
      llvm::outs() << llvm::format("%-18s %6.2f %6.2f         -          %7.2f", what, wall,
                                   cpu, n / 1e6 / cpu);
  };
  line("text parse", parseSec, parseCpu, double(textBytes), double(parsedOps));
  llvm::outs() << llvm::format("   peak RSS %.1f MB = %.1f B/op (schedule arrays %.1f B/op, "
                               "%llu deps)\n",
                               parse.maxRssKb / 1024.0,
                               parse.maxRssKb * 1024.0 / double(parsedOps),
                               double(schedBytes) / double(parsedOps), (unsigned long long)deps);

  // 2. Writers and verifier (parse first, not timed).
  ChildResult write = inChild([&] {
    DiagEngine diags;
    std::optional<Schedule> s = parseText(text, diags);
    if (!s)
      return std::string("failed");
    std::error_code ec;
    std::string out;
    {
      Timer t0;
      llvm::raw_fd_ostream os("/dev/null", ec);
      goal::printText(*s, os);
      out += t0.stop() + " ";
    }
    {
      Timer t0;
      llvm::raw_fd_ostream os(back, ec);
      goal::printText(*s, os);
      os.close();
      out += t0.stop() + " ";
    }
    {
      Timer t0;
      llvm::raw_fd_ostream os("/dev/null", ec);
      goal::writeBinary(*s, os);
      out += t0.stop() + " ";
    }
    {
      Timer t0;
      llvm::raw_fd_ostream os(ours, ec);
      goal::writeBinary(*s, os);
      os.close();
      out += t0.stop() + " ";
    }
    Timer t0;
    DiagEngine quiet(llvm::nulls());
    bool ok = verifySchedule(*s, quiet, "bench", VerifyOptions());
    return out + t0.stop() + (ok ? " ok" : " errors");
  });
  double w[10] = {};
  char verdict[16] = "";
  std::sscanf(write.out.c_str(), "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %15s", &w[0], &w[1],
              &w[2], &w[3], &w[4], &w[5], &w[6], &w[7], &w[8], &w[9], verdict);
  uint64_t backBytes = 0, binBytes = 0;
  llvm::sys::fs::file_size(back, backBytes);
  llvm::sys::fs::file_size(ours, binBytes);
  line("-emit=goal to null", w[0], w[1], double(backBytes), double(ops));
  llvm::outs() << "\n";
  line("-emit=goal to file", w[2], w[3], double(backBytes), double(ops));
  llvm::outs() << llvm::format("   %.1f MB\n", backBytes / 1e6);
  line("-emit=goal-bin null", w[4], w[5], double(binBytes), double(ops));
  llvm::outs() << "\n";
  line("-emit=goal-bin file", w[6], w[7], double(binBytes), double(ops));
  llvm::outs() << llvm::format("   %.1f MB\n", binBytes / 1e6);
  line("verify", w[8], w[9], 0, double(ops));
  llvm::outs() << "   " << static_cast<const char *>(verdict) << "\n";

  // 3. Binary loading alone.
  ChildResult load = inChild([&] {
    DiagEngine diags;
    Timer t0;
    auto buf = llvm::MemoryBuffer::getFile(ours, false, false);
    if (!buf)
      return std::string("failed");
    std::optional<Schedule> s = goal::readBinaryGoal(diags, std::move(*buf));
    std::string times = t0.stop();
    return s ? times : std::string("failed");
  });
  double loadSec = 0, loadCpu = 0;
  std::sscanf(load.out.c_str(), "%lf %lf", &loadSec, &loadCpu);
  line("binary load", loadSec, loadCpu, double(binBytes), double(ops));
  llvm::outs() << llvm::format("   = %.2f GB/s; peak RSS %.1f MB = %.1f B/op\n",
                               binBytes / 1e9 / loadCpu, load.maxRssKb / 1024.0,
                               load.maxRssKb * 1024.0 / double(ops));

  // 4. The driver end to end (parse, verify, write binary), and txt2bin.
  llvm::SmallString<256> infracc(llvm::sys::path::parent_path(argv[0]));
  llvm::sys::path::append(infracc, "infracc");
  std::string e2eBin = Dir + "/bench_goal.e2e.bin";
  std::optional<ChildResult> e2e;
  if (llvm::sys::fs::exists(infracc)) {
    e2e = runProgram({std::string(infracc), text, "-emit=goal-bin", "-o", e2eBin});
    line("infracc -emit=goal-bin", e2e->seconds, e2e->cpu, double(textBytes), double(ops));
    llvm::outs() << llvm::format("   peak RSS %.1f MB = %.1f B/op%s (parse, verify, write)\n",
                                 e2e->maxRssKb / 1024.0, e2e->maxRssKb * 1024.0 / double(ops),
                                 e2e->status ? "  FAILED" : "");
  }
  if (!Txt2bin.empty() && llvm::sys::fs::exists(Txt2bin)) {
    ChildResult tb = runProgram({Txt2bin, "-i", text, "-o", ref});
    line("txt2bin", tb.seconds, tb.cpu, double(textBytes), double(ops));
    llvm::outs() << llvm::format("   peak RSS %.1f MB = %.1f B/op%s\n", tb.maxRssKb / 1024.0,
                                 tb.maxRssKb * 1024.0 / double(ops), tb.status ? "  FAILED" : "");
    auto a = llvm::MemoryBuffer::getFile(ref, false, false);
    auto b = llvm::MemoryBuffer::getFile(ours, false, false);
    bool same = a && b && (*a)->getBuffer() == (*b)->getBuffer();
    llvm::outs() << "txt2bin output vs -emit=goal-bin: " << (same ? "byte-identical" : "DIFFERENT")
                 << "\n";
    if (e2e && e2e->cpu > 0 && tb.maxRssKb > 0)
      llvm::outs() << llvm::format("ratio: infracc -emit=goal-bin takes 1/%.2f of txt2bin's CPU "
                                   "time at %.1f times its peak RSS\n",
                                   tb.cpu / e2e->cpu, double(e2e->maxRssKb) / tb.maxRssKb);
  }
  if (!Keep)
    for (const std::string &f : {text, ours, back, ref, e2eBin})
      llvm::sys::fs::remove(f);
  return 0;
}
