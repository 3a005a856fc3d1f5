// T(p) over an interval, exactly: one pass over the model carries every element's time
// as the upper envelope of its path lines over the interval (Model::envelope); T's
// envelope gives the segments, whose ends are the breakpoints. Contention is checked
// by evaluating the two ends. Then tolerances, sensitivities and ratios read off the
// segments.
#pragma once

#include "backends/sensitivity/Model.h"

#include <optional>
#include <vector>

namespace infracc::sens {

struct Segment {
  Rational start, end;
  PathLine line;   // T = line on [start, end]
  Rational valueAt(const Rational &p) const { return line.at(p); }
};

struct Curve {
  Rational lo, hi;
  std::vector<Segment> segments;      // in order, covering [lo, hi]
  uint64_t sweeps = 0;                // passes over the model
  Model::EnvelopeStats envelope;      // what the curve's envelope pass did
  // Contention seen at the ends of the range (the first one found, and where).
  std::optional<ContentionNote> contention;
  Rational contentionAt;
  uint64_t pointsChecked = 0;

  Rational valueAt(const Rational &p) const;
  /// The slope just right of p (at hi: just left of it).
  int64_t slopeAt(const Rational &p) const;
  /// The critical parameter values: interior segment boundaries.
  std::vector<Rational> breakpoints() const;
};

/// Traces T over [lo, hi] (lo <= hi); pruneByTails as in Model::envelope().
Curve traceCurve(Model &m, const Rational &lo, const Rational &hi, bool checkContention,
                 bool pruneByTails = true);

/// The largest p in [lo, hi] with T(p) <= target; `beyondRange` when T(hi) <= target
/// (the tolerance is at least hi). None when T(lo) > target already.
struct Tolerance {
  Rational target;
  std::optional<Rational> value;
  bool beyondRange = false;
};
Tolerance toleranceFor(const Curve &c, const Rational &target);

} // namespace infracc::sens
