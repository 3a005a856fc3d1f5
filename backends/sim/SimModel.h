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
#include <llvm/Support/Error.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace infracc {
struct Module;
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
};

class SimModelRegistry {
public:
  static void add(SimModel m);
  static const SimModel *find(llvm::StringRef name);
  static std::vector<const SimModel *> all();   // sorted by name
};

struct RegisterSimModel {
  explicit RegisterSimModel(SimModel m) { SimModelRegistry::add(std::move(m)); }
};

/// The LogGOPS parameters given on the command line (-L -o/-sim-o -g -G -O -S), for
/// every target that simulates or analyses; a usage error for invalid values.
llvm::Expected<LogGPParams> readLogGPParams();
/// The model -sim-model names; a usage error listing the valid ones when unknown.
llvm::Expected<const SimModel *> selectedSimModel();

} // namespace infracc::sim
