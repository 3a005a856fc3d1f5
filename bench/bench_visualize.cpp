// Pictures of large inputs: how long the overview takes to summarise and render
// fabrics with tens of thousands of boxes, and how long a timeline takes for a
// simulation with many messages (detailed) and many ranks (aggregated).
//
//   build/bench_visualize [-fabrics=clos:radix=32,levels=3;...] [-ranks=64] [-steps=2000]
//
// Figures are wall-clock seconds on whatever machine runs it; nothing is asserted.
#include "backends/sim/Simulator.h"
#include "blueprints/Blueprint.h"
#include "ir/FabricGraph.h"
#include "ir/Schedule.h"
#include "support/Diagnostics.h"
#include "visualize/FabricView.h"
#include "visualize/SimTimeline.h"
#include "visualize/Timeline.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <chrono>

using namespace infracc;
namespace cl = llvm::cl;

static cl::opt<std::string> Fabrics(
    "fabrics",
    cl::init("clos:radix=32,levels=3;clos:radix=64,levels=3;dragonfly:a=16,p=8,h=8;"
             "torus:dims=32x32x32;rail:radix=64"),
    cl::desc("Blueprint specs separated by ';'"));
static cl::opt<unsigned> Ranks("ranks", cl::init(64), cl::desc("Ranks of the detailed timeline"));
static cl::opt<unsigned> Steps("steps", cl::init(2000),
                               cl::desc("Ring steps per rank (one message each)"));
static cl::opt<unsigned> ManyRanks("many-ranks", cl::init(4096),
                                   cl::desc("Ranks of the aggregated timeline"));

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A ring: every step, send to the right, receive from the left, then compute.
Schedule ring(uint32_t ranks, uint32_t steps) {
  ScheduleBuilder b(ranks);
  b.reserve(uint64_t(ranks) * steps * 3, uint64_t(ranks) * steps * 4);
  for (uint32_t r = 0; r < ranks; ++r) {
    b.beginRank(r);
    int64_t prev = -1;
    for (uint32_t s = 0; s < steps; ++s) {
      auto send = b.addSend(4096, (r + 1) % ranks, s);
      auto recv = b.addRecv(4096, (r + ranks - 1) % ranks, s);
      auto calc = b.addCalc(1000 + (r * 7 + s) % 500);
      if (prev >= 0) {
        b.addDependency(send, uint32_t(prev), DepKind::Requires);
        b.addDependency(recv, uint32_t(prev), DepKind::Requires);
      }
      b.addDependency(calc, send, DepKind::Requires);
      b.addDependency(calc, recv, DepKind::Requires);
      prev = calc;
    }
    b.endRank();
  }
  return b.finish();
}

void timeline(uint32_t ranks, uint32_t steps) {
  Schedule s = ring(ranks, steps);
  sim::SimTrace trace;
  sim::SimOptions so;
  so.trace = &trace;
  so.criticalPath = true;
  auto t0 = Clock::now();
  sim::SimResult r = sim::simulate(s, so);
  double simSeconds = since(t0);
  t0 = Clock::now();
  viz::TimelineData d = viz::timelineFromSimulation(s, r, trace, "ring", {});
  double convert = since(t0);
  t0 = Clock::now();
  std::string svg = viz::renderTimelineSvg(d);
  double draw = since(t0);
  llvm::outs() << fmt::format(
      "timeline {} ranks x {} steps: {} intervals, {} messages; simulate+trace {:.2f} s, "
      "convert {:.2f} s, SVG {:.2f} s, {:.1f} MB{}\n",
      ranks, steps, trace.intervals.size(), trace.messages.size(), simSeconds, convert, draw,
      svg.size() / 1e6, ranks > 64 ? " (aggregated)" : "");
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "visualisation at scale\n");
  llvm::SmallVector<llvm::StringRef, 8> specs;
  llvm::StringRef(Fabrics).split(specs, ';', -1, false);
  for (llvm::StringRef text : specs) {
    DiagEngine diags(llvm::errs());
    auto spec = blueprints::parseFabricSpec(text, llvm::SMLoc(), diags);
    if (!spec)
      return 1;
    auto t0 = Clock::now();
    auto defs = blueprints::instantiateFabric(*spec, diags);
    if (!defs)
      return 1;
    auto g = expandFabric(defs, diags, ExpandOptions{false});
    if (!g)
      return 1;
    double build = since(t0);
    t0 = Clock::now();
    auto d = viz::drawOverview(*g, {});
    double summarise = since(t0);
    if (!d) {
      llvm::errs() << llvm::toString(d.takeError()) << "\n";
      return 1;
    }
    t0 = Clock::now();
    auto svg = viz::render(*d, "svg");
    double render = since(t0);
    if (!svg) {
      llvm::errs() << llvm::toString(svg.takeError()) << "\n";
      return 1;
    }
    llvm::outs() << fmt::format("{}: {} boxes, {} nodes, {} edges; build+expand {:.2f} s, "
                                "overview {:.2f} s ({} drawn nodes), SVG {:.2f} s\n",
                                text.str(), g->numDeviceCopies(), g->numNodes(), g->numEdges(),
                                build, summarise, d->nodes.size(), render);
  }
  timeline(Ranks, Steps);
  timeline(ManyRanks, 50);
  return 0;
}
