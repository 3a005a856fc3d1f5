// Reports of a simulation: LogGOPSim's text (byte-identical result lines), ATLAHS's
// text, a JSON report, and the diagnostics for a schedule that cannot finish.
#pragma once

#include "backends/sim/Simulator.h"

#include <nlohmann/json_fwd.hpp>

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace infracc {
class DiagEngine;
class Schedule;
} // namespace infracc

namespace infracc::sim {

struct TextOptions {
  bool batch = false;   // LogGOPSim -b: the "Maximum finishing time" line for any rank count
};

/// LogGOPSim's output: the parameter line, the PERFORMANCE line (its Time and Speed
/// fields are our wall clock, in LogGOPSim's format), then `Times:` with one
/// `Host i: T` line per rank for up to 16 ranks, else the maximum line.
void printLgsText(llvm::raw_ostream &os, const SimResult &r, const LogGPParams &p,
                  const TextOptions &opt);

/// `Maximum finishing time at host H: T (x s)`, LogGOPSim's last line (-sim-batch).
void printMaximum(llvm::raw_ostream &os, const SimResult &r);

/// ATLAHS's LogGOPSim output (`size:` line with G as %f, PERFORMANCE, Average FCT, times).
void printAtlahsText(llvm::raw_ostream &os, const SimResult &r, const LogGPParams &p,
                     const TextOptions &opt);

/// The JSON report (schema in docs/sim.md).
nlohmann::ordered_json jsonReport(const SimResult &r, const Schedule &s, const LogGPParams &p,
                          const std::string &model);

/// One line describing an op: "l3 (op 2): send 8b to 1 tag 0".
std::string describeOp(const Schedule &s, uint32_t rank, uint32_t g);

/// Reports a run that did not finish (stuck operations, or the atlahs model's
/// causality abort): one error, then one note per stuck item
/// grouped by rank (at most `maxItems`, then a note with how many were left out).
void reportStuck(DiagEngine &diags, const std::string &where, const SimResult &r,
                 const Schedule &s, unsigned maxItems);

} // namespace infracc::sim
