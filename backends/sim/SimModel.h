// Simulation models selectable with -sim-model=NAME. A model picks an engine and may
// supply per-pair L and G (e.g. the topology-aware model, from the fabric path between
// the endpoints of the two ranks). Register one next to its code:
//
//   static infracc::sim::RegisterSimModel X({
//       .name = "topo", .description = "...", .engine = infracc::sim::Engine::Lgs,
//       .costs = [](const infracc::Module &m, const infracc::sim::LogGPParams &p)
//           -> llvm::Expected<std::unique_ptr<infracc::sim::LinkCostModel>> { ... }});
#pragma once

#include "backends/sim/Simulator.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace infracc {
struct Module;
struct TargetContext;
}

namespace infracc::sim {

struct SimModel {
  std::string name;
  std::string description;
  Engine engine = Engine::Lgs;
  /// Per-pair costs for this run; null function or null result = uniform L and G.
  std::function<llvm::Expected<std::unique_ptr<LinkCostModel>>(const Module &, const LogGPParams &)>
      costs;
  /// Passes the model needs before it (run when -passes is not given), e.g. place.
  std::vector<std::string> pipeline;
  /// Set for a model that executes GPU kernels' instruction streams itself instead of
  /// messages (-sim-model=gpu): -emit=sim hands it the whole run, and the default
  /// pipeline unrolls kernels (unroll-loadstore) instead of lowering them to messages.
  std::function<llvm::Error(TargetContext &)> runKernels;
  /// Options only this model reads: giving one with another model is an error.
  std::vector<const llvm::cl::Option *> options;
};

/// Whether -L and -G were given on the command line: a fabric-priced model uses them
/// only where the fabric has no numbers, and refuses them when no path needs them.
bool latencyOptionGiven();
bool gapPerByteOptionGiven();

/// What the simulator options of the command line ask for, for every target that
/// simulates (-emit=sim, -emit=timeline): the checked LogGOPS parameters (-L -o/-sim-o
/// -g -G -O -S), the model (-sim-model, else topo with a fabric, else lgs; an unknown
/// name is a usage error listing the models) and the passes it needs first.
llvm::Expected<LogGPParams> simParams();
/// A usage error naming the first option of another model (-lb, -paths, -flow-mtu, ...
/// of flow; -max-outstanding, ... of gpu) given with the chosen one, which would ignore it.
llvm::Error checkModelOptions(const SimModel &chosen);
llvm::Expected<const SimModel *> chooseSimModel(const Module &m);
/// The report format asked for: -sim-report, else the -o file's extension ("" = text).
std::string reportFormat();
std::vector<std::string> simPipeline(const Module &m);
/// The default pipeline of the targets that simulate: simPipeline, after lower-kernels
/// for GPU kernels (their messages), or just unroll-loadstore for a model that runs
/// kernels itself.
std::vector<std::string> simTargetPipeline(const Module &m);

class SimModelRegistry {
public:
  static void add(SimModel m);
  static const SimModel *find(llvm::StringRef name);
  static std::vector<const SimModel *> all();   // sorted by name
};

struct RegisterSimModel {
  explicit RegisterSimModel(SimModel m) { SimModelRegistry::add(std::move(m)); }
};

} // namespace infracc::sim
