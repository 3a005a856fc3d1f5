// What -emit=sensitivity reports: the curve T(p), tolerances and ratios, and how it
// compares with the simulator; written as text, JSON or CSV here, drawn as SVG by
// the visualiser (which registers itself as the plotter: it sits on a floor above).
#pragma once

#include "backends/sensitivity/Curve.h"

#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>
#include <vector>

namespace infracc::sens {

struct SensitivityReport {
  std::string workload;     // file name, for titles
  std::string param;        // "L", "o", "G", "link:tier_1_link", "switch"
  std::string unit;         // of the parameter: "ns" or "ns/byte"
  std::string slopeMeaning; // "messages on the critical path", ...
  std::string model;        // the simulation model whose semantics are used
  Curve curve;

  struct ToleranceRow {
    std::string label;      // "1%", "2 us"
    Tolerance t;
  };
  std::vector<ToleranceRow> tolerances;

  struct RatioRow {
    Rational delta, at, value;   // p = lo + delta, T(p)
    int64_t slope = 0;           // just right of p
    Rational increase;           // T(p) / T(lo) - 1
    Rational ratio;              // slope * p / T(p): the share of T due to p on the critical path
  };
  std::vector<RatioRow> ratios;

  std::optional<Rational> simulated;   // -emit=sim's finishing time at lo, when compared
  uint64_t elements = 0, messages = 0;
};

void writeText(llvm::raw_ostream &os, const SensitivityReport &r);
void writeJson(llvm::raw_ostream &os, const SensitivityReport &r);
/// The stable CSV: `start,end,T_start,slope`, one line per segment, in order.
void writeCsv(llvm::raw_ostream &os, const SensitivityReport &r);

/// Renders the report as an SVG document; set by the visualiser.
using CurvePlotter = std::string (*)(const SensitivityReport &);
void setCurvePlotter(CurvePlotter p);
CurvePlotter curvePlotter();

} // namespace infracc::sens
