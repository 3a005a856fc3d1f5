// Blueprint scale: for each -fabric= spec, the time to generate the definitions, to
// expand them into the fully qualified graph and to analyse its structure (the sizing
// report), and the process's peak memory. Each spec runs in its own child process so
// that the peak memory is that spec's alone.
//
//   build/bench_blueprints                      the default cases
//   build/bench_blueprints clos:radix=32,levels=3 ...
#include "blueprints/Blueprint.h"
#include "ir/FabricGraph.h"
#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace infracc;

namespace {

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double peakMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;   // Linux reports KiB
}

int runOne(const std::string &text) {
  DiagEngine diags(llvm::errs());
  auto t0 = std::chrono::steady_clock::now();
  auto spec = blueprints::parseFabricSpec(text, {}, diags);
  if (!spec)
    return 1;
  spec->origin = "-fabric";
  auto defs = blueprints::instantiateFabric(*spec, diags);
  if (!defs)
    return 1;
  auto t1 = std::chrono::steady_clock::now();
  size_t instances = defs->instances.size(), infraEdges = defs->edges.size();
  auto g = expandFabric(defs, diags);
  if (!g)
    return 1;
  auto t2 = std::chrono::steady_clock::now();
  double expandedPeak = peakMiB();
  FabricStructure s = analyzeFabricStructure(*g);
  auto t3 = std::chrono::steady_clock::now();
  llvm::outs() << fmt::format(
      "{}\n  definitions: {} instances, {} edge statements\n"
      "  graph:       {} nodes, {} edges, {} hosts, {} switches\n"
      "  generate {:.3f} s, expand {:.3f} s, analyse {:.3f} s (diameter {}{}, bisection {} "
      "links)\n  peak memory {:.0f} MiB after expansion, {:.0f} MiB after analysis\n",
      text, instances, infraEdges, g->numNodes(), g->numEdges(), s.hosts, s.switches,
      seconds(t0, t1), seconds(t1, t2), seconds(t2, t3), s.diameterIsLowerBound ? ">= " : "",
      s.diameterHops ? std::to_string(*s.diameterHops) : "-",
      s.bisection ? s.bisection->links : 0, expandedPeak, peakMiB());
  llvm::outs().flush();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> specs(argv + 1, argv + argc);
  if (specs.empty())
    specs = {"clos:radix=64,levels=3",            // 65 536 host NICs
             "clos:radix=64,levels=3,host=dgx_h100",
             "torus:dims=32x32x32",
             "torus:dims=32x32x32,of=switch",
             "dragonfly:a=16,p=8,h=8",
             "rail:radix=64"};
  int status = 0;
  for (const std::string &s : specs) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(runOne(s));
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
      status = 1;
  }
  return status;
}
