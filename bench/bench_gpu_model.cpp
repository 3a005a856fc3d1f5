// The GPU model at scale (ASTRA-sim 3.0 §5.4): a direct put all-gather lowered to
// kernels with 32 workgroups per GPU, unrolled and run with -sim-model=gpu on the
// paper's generic GPUs (448 endpoints each), for every GPU count x output buffer size
// asked. Each run is a fresh child process, so its peak RSS is its own; printed per run:
// wavefront requests, wall seconds, requests per wall second, simulated ns per wall
// second, peak RSS.
//
//   build/bench_gpu_model [-gpus=2,8,32,128] [-sizes-mib=1,4,16,64,256] [-bench-unroll=8]
//                         [-dir=/tmp]
#include "compiler/Driver.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace infracc;
namespace cl = llvm::cl;

static cl::list<unsigned> Gpus("gpus", cl::CommaSeparated, cl::desc("GPU counts (default 2,8,32)"));
static cl::list<unsigned> SizesMiB("sizes-mib", cl::CommaSeparated,
                                   cl::desc("all-gather output buffer sizes in MiB (default "
                                            "1,4,16)"));
static cl::opt<unsigned> BenchUnroll("bench-unroll", cl::init(8), cl::desc("unroll factor (default 8)"));
static cl::opt<std::string> Dir("dir", cl::init("/tmp"), cl::desc("Where the files go"));

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "GPU model benchmark\n");
  std::vector<unsigned> gpus(Gpus.begin(), Gpus.end()), sizes(SizesMiB.begin(), SizesMiB.end());
  if (gpus.empty())
    gpus = {2, 8, 32};
  if (sizes.empty())
    sizes = {1, 4, 16};
  std::string dir = Dir + "/bench-gpu-model";
  llvm::sys::fs::create_directories(dir);
  llvm::outs() << fmt::format("{:>5} {:>8} {:>12} {:>9} {:>12} {:>14} {:>9}\n", "GPUs",
                              "output", "requests", "wall s", "requests/s", "sim ns/wall s",
                              "peak MiB");
  for (unsigned n : gpus)
    for (unsigned mib : sizes) {
      std::string goal = dir + "/allgather.goal", report = dir + "/report.json";
      {
        std::ofstream f(goal);
        f << "num_ranks " << n << "\n";
        uint64_t block = (uint64_t(mib) << 20) / n;
        for (unsigned r = 0; r < n; ++r)
          f << "rank " << r << " {\nl1: allgather " << block << "b algo direct\n}\n";
      }
      llvm::outs().flush();
      auto t0 = std::chrono::steady_clock::now();
      pid_t pid = fork();
      if (pid == 0)
        _exit(runDriverInProcess({goal, "-passes=lower-collectives,unroll-loadstore",
                                  "-coll-target=kernels", "-workgroups=32",
                                  "-unroll=" + std::to_string(BenchUnroll), "-sim-model=gpu",
                                  "-sim-report=json", "-o", report}));
      int status = 0;
      struct rusage ru {};
      wait4(pid, &status, 0, &ru);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        llvm::outs() << fmt::format("{:>5} {:>5} MiB  FAILED\n", n, mib);
        continue;
      }
      auto text = llvm::MemoryBuffer::getFile(report);
      nlohmann::json j = nlohmann::json::parse((*text)->getBuffer().str());
      uint64_t requests = j["requests"]["loads"].get<uint64_t>() +
                          j["requests"]["stores"].get<uint64_t>() +
                          j["requests"]["semaphore_accesses"].get<uint64_t>();
      double simNs = j["makespan_ns"].get<double>();
      llvm::outs() << fmt::format("{:>5} {:>4} MiB {:>12} {:>9.2f} {:>12.3g} {:>14.4g} {:>9.1f}\n",
                                  n, mib, requests, wall, requests / wall, simNs / wall,
                                  double(ru.ru_maxrss) / 1024);
    }
  llvm::sys::fs::remove_directories(dir);
  return 0;
}
