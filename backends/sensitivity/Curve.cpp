#include "backends/sensitivity/Curve.h"

#include <cassert>

namespace infracc::sens {

Rational Curve::valueAt(const Rational &p) const {
  for (const Segment &s : segments)
    if (p <= s.end)
      return s.valueAt(p);
  return segments.back().valueAt(p);
}

int64_t Curve::slopeAt(const Rational &p) const {
  for (const Segment &s : segments)
    if (p < s.end)
      return s.line.B;
  return segments.back().line.B;
}

std::vector<Rational> Curve::breakpoints() const {
  std::vector<Rational> out;
  for (size_t i = 1; i < segments.size(); ++i)
    out.push_back(segments[i].start);
  return out;
}

Curve traceCurve(Model &m, const Rational &lo, const Rational &hi, bool checkContention,
                 bool pruneByTails) {
  assert(lo <= hi);
  Curve c;
  c.lo = lo;
  c.hi = hi;
  const uint64_t sweeps0 = m.sweeps();
  // The ends first when contention is checked there: their tangents may settle the
  // curve (the same slope on both sides: one line) or show that it has few breakpoints
  // (slopes that differ little), when the plain pass is cheaper than pruning.
  std::vector<Evaluation> ends;
  if (checkContention)
    for (const Rational &p : lo == hi ? std::vector<Rational>{lo} : std::vector<Rational>{lo, hi}) {
      ends.push_back(m.evaluate(p, true));
      ++c.pointsChecked;
      if (ends.back().contention && !c.contention) {
        c.contention = ends.back().contention;
        c.contentionAt = p;
      }
    }
  std::vector<PathLine> lines;
  if (ends.size() == 2 && ends[0].right.B == ends[1].left.B) {
    lines.push_back(ends[0].right);   // convex with equal slopes at both ends: a line
  } else {
    constexpr int64_t FewBreakpoints = 64;   // the slope gap at or below which not to prune
    const bool few = ends.size() == 2 && m.slopesCountEvents() &&
                     ends[1].left.B - ends[0].right.B <= FewBreakpoints;
    lines = m.envelope(lo, hi, pruneByTails && !few);
    c.envelope = m.lastEnvelope();
  }
  // Consecutive lines (slopes rising) cross where the critical path changes.
  auto cross = [](const PathLine &u, const PathLine &v) {
    return Rational(u.A - v.A, Int128(v.B) - u.B);
  };
  for (size_t i = 0; i < lines.size(); ++i)
    c.segments.push_back({i ? cross(lines[i - 1], lines[i]) : lo,
                          i + 1 < lines.size() ? cross(lines[i], lines[i + 1]) : hi, lines[i]});
  for (const Evaluation &e : ends) {
    assert(e.value == c.valueAt(e.at) && "the envelope and a direct evaluation agree");
    (void)e;
  }
  c.sweeps = m.sweeps() - sweeps0;
  return c;
}

Tolerance toleranceFor(const Curve &c, const Rational &target) {
  Tolerance t;
  t.target = target;
  if (c.valueAt(c.lo) > target)
    return t;
  for (const Segment &s : c.segments) {
    if (s.valueAt(s.end) <= target)
      continue;
    // T(start) <= target < T(end): the line crosses the target inside, rising.
    assert(s.line.B > 0);
    t.value = (target - Rational(s.line.A)) / Rational(s.line.B);
    return t;
  }
  t.value = c.hi;
  t.beyondRange = true;
  return t;
}

} // namespace infracc::sens
