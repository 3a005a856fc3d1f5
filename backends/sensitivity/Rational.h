// Exact rational numbers for the sensitivity analysis: parameter values where two
// path lines cross (critical latencies) and runtimes there are fractions of
// nanoseconds in general, and comparing them exactly is what makes the breakpoints
// exact. 128-bit numerator and denominator; every value is kept reduced with a
// positive denominator.
#pragma once

#include <cstdint>
#include <string>

namespace infracc::sens {

using Int128 = __int128;

struct Rational {
  Int128 num = 0, den = 1;

  Rational() = default;
  Rational(Int128 n, Int128 d = 1);   // reduces; d != 0

  bool isInteger() const { return den == 1; }
  double toDouble() const { return static_cast<double>(num) / static_cast<double>(den); }
  /// The largest integer <= this, and the smallest integer >= this.
  Int128 floor() const;
  Int128 ceil() const;

  friend Rational operator+(const Rational &a, const Rational &b);
  friend Rational operator-(const Rational &a, const Rational &b);
  friend Rational operator*(const Rational &a, const Rational &b);
  friend Rational operator/(const Rational &a, const Rational &b);
  friend bool operator==(const Rational &a, const Rational &b) {
    return a.num == b.num && a.den == b.den;
  }
  friend bool operator<(const Rational &a, const Rational &b) {
    return a.num * b.den < b.num * a.den;
  }
  friend bool operator<=(const Rational &a, const Rational &b) { return !(b < a); }
  friend bool operator>(const Rational &a, const Rational &b) { return b < a; }
  friend bool operator>=(const Rational &a, const Rational &b) { return !(a < b); }
};

/// |v|, and the greatest common divisor of |a| and |b| (std's do not take __int128).
Int128 absolute(Int128 v);
Int128 gcd(Int128 a, Int128 b);

/// Decimal text: "400", "884.5", "333.333333" (at most `digits` decimals, rounded to
/// nearest, trailing zeros dropped).
std::string formatDecimal(const Rational &r, unsigned digits = 6);
/// An integer as text (fmt does not print __int128).
std::string formatInt(Int128 v);

} // namespace infracc::sens
