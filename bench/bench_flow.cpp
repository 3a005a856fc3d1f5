// -sim-model=flow at scale: flows per second and peak memory for 10^4, 10^5 and 10^6
// flows on a radix-32 3-level Clos (8192 hosts) and a 16x16x16 torus (4096 xpus).
//
// The workload: every rank sends `rounds` messages of -bytes, round k to the rank
// shift(k) places on (a permutation per round, shifts from a fixed pseudo-random
// sequence); a rank's send of round k requires its send of round k - window (rendezvous
// messages complete when received), so about ranks * window flows are in flight. All
// receives are posted at the start. Each case runs `infracc <fabric> w.goal
// -sim-model=flow -stats` as a child process (wall time, CPU time, peak RSS from wait4)
// and, for the set-up cost, the same with -sim-model=topo (placement, paths, no
// sharing).
//
//   build/bench_flow [-on=SPEC ...] [-count=N ...] [-in-flight=1] [-ranks=N] [-message-bytes=1048576]
//                    [-balance=ecmp|spray] [-resolution=0 -resolution=10us ...]
//                    [-work-dir=/tmp/bench_flow]
// (option names differ from infracc's, whose options the program links in)
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cl = llvm::cl;

static cl::list<std::string> Fabrics("on", cl::desc("Fabric blueprints (default: "
                                                         "clos:radix=32,levels=3,host=simple_host "
                                                         "and torus:dims=16x16x16)"));
static cl::list<uint64_t> Flows("count", cl::desc("Flow counts (default 10000 100000 1000000)"));
static cl::opt<unsigned> Window("in-flight", cl::init(1),
                                cl::desc("Sends in flight per rank (default 1)"));
static cl::opt<uint64_t> MaxRanks("ranks", cl::init(0),
                                  cl::desc("Use at most this many ranks (default: every "
                                           "endpoint); flows in flight = ranks x in-flight"));
static cl::opt<uint64_t> Bytes("message-bytes", cl::init(1 << 20),
                               cl::desc("Message size in bytes (default 1 MiB)"));
static cl::opt<std::string> Lb("balance", cl::init("ecmp"), cl::desc("ecmp or spray (default ecmp)"));
static cl::list<std::string> Resolutions("resolution",
                                          cl::desc("-flow-resolution values to run (default: "
                                                   "0 and 10us)"));
static cl::opt<std::string> Dir("work-dir", cl::init("/tmp/bench_flow"),
                                cl::desc("Where the workloads are written"));

namespace {

struct Run {
  double wall = 0, cpu = 0, peakMiB = 0;
  int status = -1;
  std::string err;
};

Run runInfracc(const std::string &infracc, const std::vector<std::string> &args,
               const std::string &errFile) {
  Run r;
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    int fd = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    std::vector<char *> argv{const_cast<char *>(infracc.c_str())};
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  struct rusage ru {};
  wait4(pid, &r.status, 0, &ru);
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  r.peakMiB = double(ru.ru_maxrss) / 1024.0;
  if (auto buf = llvm::MemoryBuffer::getFile(errFile))
    r.err = (*buf)->getBuffer().str();
  return r;
}

/// The endpoint count `infracc -emit=stats` reports for a blueprint.
uint64_t endpointsOf(const std::string &infracc, const std::string &fabric) {
  std::string out = Dir + "/stats.txt";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out), std::nullopt};
  llvm::sys::ExecuteAndWait(infracc, {infracc, "-fabric=" + fabric, "-emit=stats"}, std::nullopt,
                            redirects);
  auto buf = llvm::MemoryBuffer::getFile(out);
  if (!buf)
    return 0;
  llvm::StringRef text = (*buf)->getBuffer();
  size_t at = text.find("endpoints");
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef rest = text.drop_front(at);
  rest = rest.drop_front(rest.find(':') + 1).ltrim();
  uint64_t n = 0;
  rest.consumeInteger(10, n);
  return n;
}

void writeWorkload(const std::string &path, uint64_t P, uint64_t rounds) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  std::vector<uint64_t> shift(rounds);
  uint64_t x = 88172645463325252ull;   // xorshift64: the same shifts on every run
  for (uint64_t k = 0; k < rounds; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    shift[k] = 1 + x % (P - 1);
  }
  os << "num_ranks " << P << "\n";
  for (uint64_t r = 0; r < P; ++r) {
    os << "rank " << r << " {\n";
    for (uint64_t k = 0; k < rounds; ++k) {
      os << "s" << k << ": send " << Bytes << "b to " << (r + shift[k]) % P << " tag " << k << "\n";
      os << "r" << k << ": recv " << Bytes << "b from " << (r + P - shift[k]) % P << " tag " << k
         << "\n";
      if (k >= Window)
        os << "s" << k << " requires s" << k - Window << "\n";
    }
    os << "}\n";
  }
}

std::string statsLine(const std::string &err) {
  for (llvm::StringRef line : llvm::split(llvm::StringRef(err), '\n'))
    if (line.starts_with("flow model:"))
      return line.str();
  return "(no flow statistics)";
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "bench_flow: -sim-model=flow at scale\n");
  std::string exe = llvm::sys::fs::getMainExecutable(argv[0], (void *)&writeWorkload);
  std::string infracc = exe.substr(0, exe.rfind('/')) + "/infracc";
  std::vector<std::string> fabrics(Fabrics.begin(), Fabrics.end());
  if (fabrics.empty())
    fabrics = {"clos:radix=32,levels=3,host=simple_host", "torus:dims=16x16x16"};
  static const uint64_t DefaultCounts[] = {10000, 100000, 1000000};
  std::vector<uint64_t> counts;
  if (Flows.empty())
    counts.assign(std::begin(DefaultCounts), std::end(DefaultCounts));
  else
    counts.assign(Flows.begin(), Flows.end());
  std::vector<std::string> resolutions(Resolutions.begin(), Resolutions.end());
  if (resolutions.empty())
    resolutions = {"0", "10us"};
  llvm::sys::fs::create_directories(Dir);

  for (const std::string &fabric : fabrics) {
    uint64_t hosts = endpointsOf(infracc, fabric);
    if (hosts < 2) {
      llvm::errs() << "bench_flow: cannot tell the endpoints of " << fabric << "\n";
      return 1;
    }
    llvm::outs() << fmt::format("{}: {} endpoints, {} B messages, window {}, -lb={}\n", fabric,
                                hosts, uint64_t(Bytes), unsigned(Window), Lb.getValue());
    for (uint64_t flows : counts) {
      uint64_t P = std::min(MaxRanks ? std::min<uint64_t>(MaxRanks, hosts) : hosts, flows);
      uint64_t rounds = (flows + P - 1) / P;
      std::string goal = Dir + "/w.goal";
      writeWorkload(goal, P, rounds);
      std::vector<std::string> common = {"-fabric=" + fabric, goal, "-sim-batch", "-stats"};
      std::vector<std::string> topoArgs = common;
      topoArgs.push_back("-sim-model=topo");
      Run t = runInfracc(infracc, topoArgs, Dir + "/topo.err");
      const uint64_t n = P * rounds;
      llvm::outs() << fmt::format("  {:>8} flows ({} ranks x {} rounds); topo (set-up, no "
                                  "sharing): {:.2f} s CPU, {:.0f} MiB\n",
                                  n, P, rounds, t.cpu, t.peakMiB);
      for (const std::string &res : resolutions) {
        std::vector<std::string> flowArgs = common;
        flowArgs.insert(flowArgs.end(),
                        {"-sim-model=flow", "-lb=" + Lb, "-flow-resolution=" + res});
        Run f = runInfracc(infracc, flowArgs, Dir + "/flow.err");
        if (f.status != 0) {
          llvm::outs() << fmt::format("    resolution {}: failed (status {}):\n{}", res,
                                      f.status, f.err);
          continue;
        }
        llvm::outs() << fmt::format("    resolution {:>5}: {:.2f} s wall, {:.2f} s CPU = {:.0f} "
                                    "flows/s, peak {:.0f} MiB\n      {}\n",
                                    res, f.wall, f.cpu, double(n) / f.cpu, f.peakMiB,
                                    statsLine(f.err));
        llvm::outs().flush();
      }
    }
  }
  return 0;
}
