// Recognising tori, meshes and rings among n nodes numbered 0..n-1, so that the
// overview can draw them as the grids people picture instead of a force-directed
// tangle. A node's copy number is read as its row-major coordinate (last dimension
// fastest), which is how the torus and mesh blueprints, and hand-written documents
// with slices, number them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace infracc::viz {

struct Lattice {
  std::vector<uint32_t> dims;   // e.g. {4, 8}: 4 rows of 8
  bool wrap = false;            // torus / ring (true) or mesh / path (false)
};

/// The lattice whose neighbour relation is exactly `neighbours` (distinct neighbours
/// of each node), trying 1 to 4 dimensions of size >= 2 (fewest dimensions first);
/// nothing if none fits.
std::optional<Lattice> detectLattice(const std::vector<std::vector<uint32_t>> &neighbours);

/// Positions (in inches) of the nodes of a lattice: the last dimension runs along x,
/// the one before along y, further ones as blocks of those grids; a ring is a circle.
std::vector<std::pair<double, double>> latticePositions(const Lattice &l, double dx, double dy);

} // namespace infracc::viz
