#include "backends/sensitivity/Rational.h"

#include <cassert>

namespace infracc::sens {

Int128 absolute(Int128 v) { return v < 0 ? -v : v; }
Int128 gcd(Int128 a, Int128 b) {
  a = absolute(a);
  b = absolute(b);
  while (b) {
    Int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Rational::Rational(Int128 n, Int128 d) {
  assert(d != 0);
  if (d < 0) {
    n = -n;
    d = -d;
  }
  Int128 g = gcd(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  num = n;
  den = d;
}

Int128 Rational::floor() const {
  Int128 q = num / den;
  return (num % den != 0 && num < 0) ? q - 1 : q;
}
Int128 Rational::ceil() const {
  Int128 q = num / den;
  return (num % den != 0 && num > 0) ? q + 1 : q;
}

Rational operator+(const Rational &a, const Rational &b) {
  return Rational(a.num * b.den + b.num * a.den, a.den * b.den);
}
Rational operator-(const Rational &a, const Rational &b) {
  return Rational(a.num * b.den - b.num * a.den, a.den * b.den);
}
Rational operator*(const Rational &a, const Rational &b) {
  return Rational(a.num * b.num, a.den * b.den);
}
Rational operator/(const Rational &a, const Rational &b) {
  return Rational(a.num * b.den, a.den * b.num);
}

std::string formatInt(Int128 v) {
  if (v == 0)
    return "0";
  bool neg = v < 0;
  std::string s;
  while (v != 0) {
    int digit = static_cast<int>(v % 10);
    s.insert(s.begin(), char('0' + (digit < 0 ? -digit : digit)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

std::string formatDecimal(const Rational &r, unsigned digits) {
  Int128 scale = 1;
  for (unsigned i = 0; i < digits; ++i)
    scale *= 10;
  // Round to nearest at `digits` decimals (halves away from zero).
  Int128 n = absolute(r.num) * scale;
  Int128 q = (2 * n + r.den) / (2 * r.den);
  Int128 whole = q / scale, frac = q % scale;
  std::string out = (r.num < 0 && q != 0 ? "-" : "") + formatInt(whole);
  if (frac == 0)
    return out;
  std::string f = formatInt(frac);
  f.insert(f.begin(), digits - f.size(), '0');
  while (!f.empty() && f.back() == '0')
    f.pop_back();
  return out + "." + f;
}

} // namespace infracc::sens
