// What -emit=sensitivity and -emit=lp share: the parameter (-param), its range
// (-range), the LogGP values and the simulation model, turned into ModelOptions; and
// the per-message costs at one value of the parameter, for running the simulator.
#pragma once

#include "backends/sensitivity/Model.h"
#include "backends/sim/Simulator.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
struct Module;
}

namespace infracc::sens {

struct Setup {
  ModelOptions options;
  std::string param;          // as given: L, o, G, link:NAME, switch
  std::string unit;           // "ns" or "ns/byte"
  std::string slopeMeaning;
  std::string variable;       // its LP variable name
  std::string model;          // -sim-model
  Rational lo, hi;            // -range
};

/// The passes before the analysis: the simulation model's with a fabric, else none.
std::vector<std::string> defaultPipeline(const Module &m);

/// Reads -param, -range, the LogGP options and -sim-model for the module.
llvm::Expected<Setup> setupFromOptions(const Module &m);

/// The model of the module's schedule; a schedule the analysis cannot take is
/// reported on `diags`, named by the workload file.
llvm::Expected<std::unique_ptr<Model>> buildModel(const Module &m, const Setup &s,
                                                  DiagEngine &diags);

/// A number with an optional time unit (ps, ns, us, µs, ms, s; bare: ns), exactly.
std::optional<Rational> parseQuantity(llvm::StringRef text, bool timeUnits);

/// -tolerance as given (default 1,2,5).
std::vector<std::string> toleranceOptions();
/// A -tolerance value as a bound on T: x or x% (T <= (1+x/100)*T0) or a time (2us).
struct ToleranceBound {
  std::string label;   // "1%", "2000 ns"
  Rational target;     // ns
};
llvm::Expected<ToleranceBound> toleranceBound(llvm::StringRef text, const Rational &T0);

/// The simulator's parameters and per-message costs with the parameter at p.
struct SimAt {
  sim::LogGPParams params;
  std::unique_ptr<sim::LinkCostModel> costs;   // null: uniform
};
/// Fails when p is not a value the simulator can take (L and o are whole ns).
llvm::Expected<SimAt> simulatorAt(const Setup &s, const Rational &p);

/// The latency of every message as a line in the parameter, from the fabric path the
/// topology-aware model uses (-param=link:NAME: traversals of links named NAME;
/// switch: switches passed; L, G: the messages the fabric gives no latency or
/// bandwidth for follow the global value).
llvm::Expected<MessageCosts> fabricMessageCosts(const Module &m, const sim::LogGPParams &p,
                                                llvm::StringRef param);

} // namespace infracc::sens
