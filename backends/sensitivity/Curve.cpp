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

Curve traceCurve(Model &m, const Rational &lo, const Rational &hi, bool checkContention) {
  assert(lo <= hi);
  Curve c;
  c.lo = lo;
  c.hi = hi;
  const uint64_t sweeps0 = m.sweeps();
  auto eval = [&](const Rational &p) {
    Evaluation e = m.evaluate(p, checkContention);
    c.pointsChecked += e.checked;
    if (e.contention && !c.contention) {
      c.contention = e.contention;
      c.contentionAt = p;
    }
    return e;
  };
  Evaluation a = eval(lo);
  if (lo == hi) {
    c.segments.push_back({lo, hi, a.right});
    c.sweeps = m.sweeps() - sweeps0;
    return c;
  }
  Evaluation b = eval(hi);
  struct Interval {
    Rational a, b;
    PathLine la, lb;   // right tangent at a, left tangent at b
  };
  // Depth first, left half first, so the segments come out in order.
  std::vector<Interval> stack{{lo, hi, a.right, b.left}};
  while (!stack.empty()) {
    Interval iv = stack.back();
    stack.pop_back();
    if (iv.la.B == iv.lb.B) {
      assert(iv.la.A == iv.lb.A && "tangents of equal slope on a convex curve coincide");
      c.segments.push_back({iv.a, iv.b, iv.la});
      continue;
    }
    // Where the two tangents cross; strictly inside (a, b) for a convex T.
    Rational x(iv.la.A - iv.lb.A, Int128(iv.lb.B) - iv.la.B);
    assert(iv.a < x && x < iv.b);
    Evaluation ex = eval(x);
    if (ex.value == iv.la.at(x)) {
      c.segments.push_back({iv.a, x, iv.la});
      c.segments.push_back({x, iv.b, iv.lb});
      continue;
    }
    stack.push_back({x, iv.b, ex.right, iv.lb});
    stack.push_back({iv.a, x, iv.la, ex.left});
  }
  // Merge neighbours on one line (a breakpoint found twice).
  std::vector<Segment> merged;
  for (const Segment &s : c.segments) {
    if (!merged.empty() && merged.back().line.A == s.line.A && merged.back().line.B == s.line.B)
      merged.back().end = s.end;
    else
      merged.push_back(s);
  }
  c.segments = std::move(merged);
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
