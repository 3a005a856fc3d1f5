#include "visualize/Lattice.h"

#include <gtest/gtest.h>

using namespace infracc::viz;

namespace {

using Adjacency = std::vector<std::vector<uint32_t>>;

// Neighbours of a rows x cols grid numbered row by row, with or without wrap-around.
Adjacency grid(uint32_t rows, uint32_t cols, bool wrap) {
  Adjacency adj(rows * cols);
  auto link = [&](uint32_t a, uint32_t b) {
    if (a == b)
      return;
    adj[a].push_back(b);
    adj[b].push_back(a);
  };
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) {
      if (c + 1 < cols || (wrap && cols > 2))
        link(r * cols + c, r * cols + (c + 1) % cols);
      if (r + 1 < rows || (wrap && rows > 2))
        link(r * cols + c, ((r + 1) % rows) * cols + c);
    }
  for (auto &a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return adj;
}

} // namespace

TEST(Lattice, FindsMeshesAndTori) {
  auto mesh = detectLattice(grid(3, 4, false));
  ASSERT_TRUE(mesh);
  EXPECT_EQ(mesh->dims, (std::vector<uint32_t>{3, 4}));
  EXPECT_FALSE(mesh->wrap);
  auto torus = detectLattice(grid(4, 5, true));
  ASSERT_TRUE(torus);
  EXPECT_EQ(torus->dims, (std::vector<uint32_t>{4, 5}));
  EXPECT_TRUE(torus->wrap);
}

TEST(Lattice, RingAndHypercube) {
  auto ring = detectLattice(grid(1, 7, true));
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->dims, (std::vector<uint32_t>{7}));
  EXPECT_TRUE(ring->wrap);
  // Binary numbering of the 3-cube: v and v^1, v^2, v^4 are neighbours.
  Adjacency cube(8);
  for (uint32_t v = 0; v < 8; ++v)
    cube[v] = {v ^ 1u, v ^ 2u, v ^ 4u};
  for (auto &a : cube)
    std::sort(a.begin(), a.end());
  auto q3 = detectLattice(cube);
  ASSERT_TRUE(q3);
  EXPECT_EQ(q3->dims, (std::vector<uint32_t>{2, 2, 2}));
}

TEST(Lattice, RejectsOtherShapes) {
  Adjacency star(5);
  for (uint32_t v = 1; v < 5; ++v) {
    star[0].push_back(v);
    star[v].push_back(0);
  }
  EXPECT_FALSE(detectLattice(star));
  // A torus numbered column by column is not recognised (copy order is the rule).
  Adjacency shuffled = grid(3, 4, true);
  std::vector<uint32_t> perm = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};
  Adjacency relabelled(12);
  for (uint32_t v = 0; v < 12; ++v)
    for (uint32_t w : shuffled[v])
      relabelled[perm[v]].push_back(perm[w]);
  for (auto &a : relabelled)
    std::sort(a.begin(), a.end());
  auto l = detectLattice(relabelled);
  // Column-major 3x4 is row-major 4x3: found, with the dimensions swapped.
  ASSERT_TRUE(l);
  EXPECT_EQ(l->dims, (std::vector<uint32_t>{4, 3}));
}

TEST(Lattice, PositionsRowByRow) {
  auto pos = latticePositions({{2, 3}, false}, 1.4, 1.0);
  ASSERT_EQ(pos.size(), 6u);
  EXPECT_DOUBLE_EQ(pos[4].first, 1.4);    // row 1, column 1
  EXPECT_DOUBLE_EQ(pos[4].second, -1.0);
  // Three dimensions: blocks of 2x2 side by side, one empty column apart.
  auto cube = latticePositions({{2, 2, 2}, false}, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(cube[4].first, 3.0);   // block 1 starts at 2 x 1.0 + 1.0
  EXPECT_DOUBLE_EQ(cube[7].first, 4.0);
  EXPECT_DOUBLE_EQ(cube[7].second, -1.0);
}
