// A symbolic executor of the kernel level, for tests: every byte of every buffer holds
// the set of input bytes it is made of (input byte x of GPU r is element r*n + x, n =
// input bytes per GPU). Copies move sets, reductions join them (and report a byte
// counted twice), LL packets are valid only once written (reading them waits, as the
// flags make the GPU wait), semaphores and barriers block. Workgroups run round-robin,
// one operation (or fused group) at a time, until all finish or none can move.
#pragma once

#include "ir/Kernels.h"

#include <bitset>
#include <string>
#include <vector>

namespace infracc::test {

using Elems = std::bitset<1024>;

struct ExecResult {
  bool finished = false;
  std::string error;   // deadlock, double reduction, out of range
  // mem[gpu][buffer][byte] (one kernel per GPU)
  std::vector<std::vector<std::vector<Elems>>> mem;
  uint64_t inputBytes = 0;
  /// The set expected for an element range.
  Elems elems(uint32_t gpu, uint64_t from, uint64_t count) const;
};

/// Runs a kernel level with one kernel per GPU.
ExecResult execute(const KernelLevel &k);

/// Checks the result of collective `kind` ("allreduce", "allgather", "reducescatter",
/// "alltoall") with block size `block` (the GOAL statement's size); "" when correct,
/// else the first wrong byte.
std::string checkCollective(const ExecResult &r, const std::string &kind, uint64_t block);

} // namespace infracc::test
