// Helpers for the simulator tests.
#pragma once

#include "backends/sim/Report.h"
#include "backends/sim/Simulator.h"
#include "ir/Schedule.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <sstream>
#include <string>
#include <vector>

namespace infracc::test {

/// LogGOPSim-style parameter flags ("-S 0 -L 100 -G 0.5") on top of the defaults.
inline sim::LogGPParams params(const std::string &flags) {
  sim::LogGPParams p;
  std::istringstream in(flags);
  std::string flag, value;
  while (in >> flag >> value) {
    if (flag == "-L")
      p.L = std::stoull(value);
    else if (flag == "-o")
      p.o = std::stoull(value);
    else if (flag == "-g")
      p.g = std::stoull(value);
    else if (flag == "-G")
      p.G = sim::PerByte(std::stod(value));
    else if (flag == "-O")
      p.O = sim::PerByte(std::stod(value));
    else if (flag == "-S")
      p.S = std::stoull(value);
  }
  return p;
}

inline sim::SimResult runLgs(const Schedule &s, const std::string &flags = "",
                             sim::SimTrace *trace = nullptr, bool path = false) {
  sim::SimOptions o;
  o.params = params(flags);
  o.trace = trace;
  o.criticalPath = path;
  return sim::simulate(s, o);
}

inline sim::SimResult runAtlahs(const Schedule &s, const std::string &flags = "",
                                sim::SimTrace *trace = nullptr, bool path = false) {
  sim::SimOptions o;
  o.engine = sim::Engine::Atlahs;
  o.params = params(flags);
  o.trace = trace;
  o.criticalPath = path;
  return sim::simulate(s, o);
}

/// The text report without the PERFORMANCE line (its wall-clock fields vary).
inline std::string textWithoutPerformance(const sim::SimResult &r, const sim::LogGPParams &p,
                                          bool atlahs = false) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (atlahs)
    sim::printAtlahsText(os, r, p, {});
  else
    sim::printLgsText(os, r, p, {});
  os.flush();
  std::string kept;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(out), '\n'))
    if (!line.starts_with("PERFORMANCE:") && !line.empty())
      kept += line.str() + "\n";
  return kept;
}

/// The trace message sent by op `sendOp` (global index).
inline const sim::TraceMessage *messageOf(const sim::SimTrace &t, uint32_t sendOp) {
  for (const sim::TraceMessage &m : t.messages)
    if (m.sendOp == sendOp)
      return &m;
  return nullptr;
}

} // namespace infracc::test
