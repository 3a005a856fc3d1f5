// Collective algorithms, each written per rank (see Emitter.h), and the table of
// which algorithm applies to which collective. docs/collectives.md describes each.
#pragma once

#include "passes/collectives/Emitter.h"

#include <string>
#include <vector>

namespace infracc::coll {

/// Where each block of a collective's data lives in its logical buffer (the byte
/// space the semantic checker tracks), after slicing for a channel and a pipeline
/// loop. Whole-buffer collectives (allreduce, bcast, reduce) use whole(); block
/// collectives use block(i) for group member i; alltoall(v) use pair(src, dst);
/// barrier uses block(i) with one byte per member.
struct Layout {
  CollectiveKind kind = CollectiveKind::Allreduce;
  uint64_t bytes = 0;          // the statement's size
  uint32_t members = 1;        // communicator size
  llvm::ArrayRef<uint64_t> pairOffset;   // alltoallv: P*P+1 prefix sums, row = source
  uint32_t channel = 0, channels = 1;

  Interval slice(uint64_t lo, uint64_t len) const {
    uint64_t off = pieceOffset(len, channels, channel);
    return {lo + off, lo + off + pieceSize(len, channels, channel)};
  }
  Interval whole() const { return slice(0, bytes); }
  Interval block(uint32_t i) const {
    uint64_t n = kind == CollectiveKind::Barrier ? 1 : bytes;
    return kind == CollectiveKind::Barrier ? Interval{i, uint64_t(i) + 1} : slice(i * n, n);
  }
  Interval pair(uint32_t src, uint32_t dst) const {
    if (kind == CollectiveKind::Alltoallv) {
      size_t k = size_t(src) * members + dst;
      return slice(pairOffset[k], pairOffset[k + 1] - pairOffset[k]);
    }
    return slice((uint64_t(src) * members + dst) * bytes, bytes);
  }
  /// Total size of the logical buffer.
  uint64_t extent() const;
};

/// NCCL's Simple protocol: each step's data goes as up to `count` slices of
/// max(ceil(bytes / (count * align)) * align, minBytes) bytes (prims' SlicePerChunk,
/// 16 elements, a 32nd of a slice's buffer). count <= 1: one message per step.
struct Slicing {
  uint32_t count = 0;
  uint64_t align = 1, minBytes = 0;
};

struct AlgoParams {
  uint32_t root = 0;            // group index
  uint64_t chunkBytes = 0;      // pipelining unit for ring and dbtree (0: none)
  Slicing slicing;              // ring: the slices of each step
  bool schedgenDeps = false;    // only Schedgen's dependencies (no transitive data deps)
  /// Hierarchical: host of each group member (same order as the group).
  llvm::ArrayRef<uint32_t> hostOf;
  /// Tree: each member's parent (member index, -1 at the root), from the communicator,
  /// and this member's children in ascending order (found once per communicator: a
  /// search of every member per member was quadratic).
  llvm::ArrayRef<int32_t> treeUp;
  llvm::ArrayRef<uint32_t> treeDown;
  /// Hierarchical: the algorithm for the phase across hosts (chosen by the policy).
  CollAlgorithm acrossHosts = CollAlgorithm::Ring;
};

/// Does `a` implement collective `k`? (A few also need a power-of-two group or a
/// host map; see whyNot.)
bool applies(CollAlgorithm a, CollectiveKind k);
/// Why `a` cannot lower `k` on `members` ranks ("" when it can).
std::string whyNot(CollAlgorithm a, CollectiveKind k, uint32_t members, bool haveHosts);
/// The algorithms that implement `k`, in enum order.
std::vector<CollAlgorithm> algorithmsFor(CollectiveKind k);

/// Emits this rank's part of one channel of collective `kind` with algorithm `a`
/// (whyNot must be empty). The caller sets the channel on the emitter and layout.
void generate(Emitter &e, CollAlgorithm a, const Group &g, const Layout &L,
              const AlgoParams &p);

} // namespace infracc::coll
