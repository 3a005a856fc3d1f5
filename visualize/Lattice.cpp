#include "visualize/Lattice.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace infracc::viz {

namespace {

bool matches(const std::vector<std::vector<uint32_t>> &neighbours, const Lattice &l) {
  uint32_t n = static_cast<uint32_t>(neighbours.size());
  size_t k = l.dims.size();
  std::vector<uint32_t> stride(k, 1);
  for (size_t i = k - 1; i-- > 0;)
    stride[i] = stride[i + 1] * l.dims[i + 1];
  std::vector<uint32_t> expected;
  for (uint32_t v = 0; v < n; ++v) {
    expected.clear();
    for (size_t i = 0; i < k; ++i) {
      uint32_t d = l.dims[i], c = (v / stride[i]) % d;
      if (c + 1 < d)
        expected.push_back(v + stride[i]);
      else if (l.wrap)
        expected.push_back(v - c * stride[i]);
      if (c > 0)
        expected.push_back(v - stride[i]);
      else if (l.wrap)
        expected.push_back(v + (d - 1) * stride[i]);
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    expected.erase(std::remove(expected.begin(), expected.end(), v), expected.end());
    if (expected != neighbours[v])
      return false;
  }
  return true;
}

} // namespace

std::optional<Lattice> detectLattice(const std::vector<std::vector<uint32_t>> &neighbours) {
  uint32_t n = static_cast<uint32_t>(neighbours.size());
  if (n < 3)
    return std::nullopt;
  std::optional<Lattice> found;
  std::vector<uint32_t> dims;
  // Ordered factorisations of n into exactly `left` factors >= 2.
  std::function<void(uint32_t, size_t)> search = [&](uint32_t rest, size_t left) {
    if (found)
      return;
    if (left == 1) {
      if (rest < 2)
        return;
      dims.push_back(rest);
      for (bool wrap : {true, false}) {
        Lattice l{dims, wrap};
        if (!found && matches(neighbours, l))
          found = l;
      }
      dims.pop_back();
      return;
    }
    for (uint32_t f = 2; f <= rest / 2; ++f)
      if (rest % f == 0) {
        dims.push_back(f);
        search(rest / f, left - 1);
        dims.pop_back();
      }
  };
  for (size_t k = 1; k <= 4 && !found; ++k)
    search(n, k);
  return found;
}

std::vector<std::pair<double, double>> latticePositions(const Lattice &l, double dx, double dy) {
  uint32_t n = 1;
  for (uint32_t d : l.dims)
    n *= d;
  std::vector<std::pair<double, double>> pos(n);
  if (l.dims.size() == 1 && l.wrap) {
    double r = std::max(1.0, n * std::max(dx, dy) / (2 * M_PI));
    for (uint32_t v = 0; v < n; ++v)
      pos[v] = {r * std::sin(2 * M_PI * v / n), r * std::cos(2 * M_PI * v / n)};
    return pos;
  }
  // Extent of one block along x and y for each level, from the last dimension up.
  size_t k = l.dims.size();
  for (uint32_t v = 0; v < n; ++v) {
    double x = 0, y = 0, stepX = dx, stepY = dy;
    uint32_t rest = v;
    for (size_t i = k; i-- > 0;) {
      uint32_t c = rest % l.dims[i];
      rest /= l.dims[i];
      bool alongX = (k - 1 - i) % 2 == 0;
      if (alongX) {
        x += c * stepX;
        stepX = stepX * l.dims[i] + dx;   // the next x level: blocks with a gap
      } else {
        y -= c * stepY;
        stepY = stepY * l.dims[i] + dy;
      }
    }
    pos[v] = {x, y};
  }
  return pos;
}

} // namespace infracc::viz
