// NCCL traces at scale: writes Nsight Systems exports of a large made-up training run
// with tests/nccl/make_nsys_exports.py (default: the llama scenario at 16 nodes x 8 GPUs,
// 32 layers, 4 channels: 16 exports), then times, each in a fresh child process so that
// its peak RSS is its own:
//   * reading the exports alone (SQLite and the NVTX strings),
//   * `infracc <folder> -emit=goal-bin` (read, lower, write),
//   * `infracc <folder> -emit=goal` (the same, text),
//   * `-passes=lower-collectives,remap-gpus,intranode-calc -emit=sim`.
// docs/performance.md compares the figures with ATLAHS's generator on the same exports.
//
//   build/bench_nccl [-scenario=llama:nodes=16,gpus=8,layers=32,channels=4] [-dir=/tmp]
//                    [-script=tests/nccl/make_nsys_exports.py] [-keep]
#include "compiler/Driver.h"
#include "compiler/frontends/nccl/NcclTrace.h"
#include "compiler/frontends/nccl/NsysExport.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<std::string> Scenario("scenario",
                                     cl::init("llama:nodes=16,gpus=8,layers=32,channels=4"),
                                     cl::desc("make_nsys_exports.py scenario to write"));
static cl::opt<std::string> Dir("dir", cl::init("/tmp"), cl::desc("Where the files go"));
static cl::opt<std::string> Script("script", cl::init("tests/nccl/make_nsys_exports.py"),
                                   cl::desc("The fixture generator (run from the checkout)"));
static cl::opt<bool> Keep("keep", cl::desc("Keep the generated files"));

namespace {

/// Runs `step` in a child process: wall seconds and the child's peak RSS in MiB.
void measure(const std::string &what, const std::function<int()> &step) {
  llvm::outs().flush();   // the child would print the parent's buffered text again
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0)
    _exit(step());
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  llvm::outs() << fmt::format("{:<58} {:8.2f} s {:8.1f} MiB{}\n", what, s,
                              double(ru.ru_maxrss) / 1024,
                              WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  FAILED");
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "NCCL trace benchmark\n");
  auto python = llvm::sys::findProgramByName("python3");
  if (!python) {
    llvm::errs() << "bench_nccl: python3 is needed to write the exports\n";
    return 1;
  }
  std::string out = Dir + "/bench-nccl";
  llvm::sys::fs::remove_directories(out);
  llvm::StringRef args[] = {*python, Script, out, Scenario};
  std::string err;
  if (llvm::sys::ExecuteAndWait(*python, args, std::nullopt, {}, 0, 0, &err) != 0) {
    llvm::errs() << "bench_nccl: " << Script << " failed: " << err << "\n";
    return 1;
  }
  std::string folder = out + "/" + Scenario.substr(0, Scenario.find(':'));
  std::vector<std::string> files;
  uint64_t bytes = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder, ec), end; it != end && !ec; it.increment(ec)) {
    files.push_back(it->path());
    uint64_t size = 0;
    llvm::sys::fs::file_size(it->path(), size);
    bytes += size;
  }
  llvm::outs() << fmt::format("{}: {} exports, {:.1f} MB\n", Scenario.getValue(), files.size(),
                              double(bytes) / 1e6);
  measure("read the exports (SQLite, NVTX strings)", [&] {
    std::vector<nccl::GpuProcess> gpus;
    size_t events = 0;
    for (const std::string &f : files) {
      auto x = nccl::readNsysExport(f);
      if (!x) {
        llvm::errs() << llvm::toString(x.takeError()) << "\n";
        return 1;
      }
      events += x->nvtx.size() + x->kernels.size();
      if (llvm::Error e = nccl::parseNcclCalls(*x, gpus)) {
        llvm::errs() << llvm::toString(std::move(e)) << "\n";
        return 1;
      }
    }
    llvm::outs() << fmt::format("  {} NVTX events and kernels, {} GPUs\n", events, gpus.size());
    llvm::outs().flush();
    return 0;
  });
  measure("-emit=goal-bin", [&] {
    return runDriverInProcess({folder, "-emit=goal-bin", "-o", out + "/run.bin"});
  });
  measure("-emit=goal", [&] {
    return runDriverInProcess({folder, "-emit=goal", "-o", out + "/run.goal"});
  });
  measure("-passes=lower-collectives,remap-gpus,intranode-calc -emit=sim", [&] {
    return runDriverInProcess({folder, "-passes=lower-collectives,remap-gpus,intranode-calc",
                               "-intranode-bandwidth=300GB/s", "-emit=sim", "-o",
                               out + "/sim.txt"});
  });
  for (const char *f : {"run.bin", "run.goal"}) {
    uint64_t size = 0;
    llvm::sys::fs::file_size(out + "/" + f, size);
    llvm::outs() << fmt::format("{}: {:.1f} MB\n", f, double(size) / 1e6);
  }
  if (!Keep)
    llvm::sys::fs::remove_directories(out);
  return 0;
}
