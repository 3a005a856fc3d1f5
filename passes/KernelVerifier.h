// The kernel-level verifier (run by `verify` when a schedule launches GPU kernels):
//   * every kernel is launched exactly once, by an op of its own GPU's rank;
//   * structure: workgroups and loops in range, no loop inside a loop, fused groups
//     made of loads, at most one reduce and stores of equal size;
//   * every buffer range names an existing GPU (or multicast group) that has a kernel
//     of the same instance, and lies inside that kernel's buffer;
//   * semaphores: a GPU waits only on its own, releases a channel semaphore only as
//     its releasing peer, and no semaphore is acquired more often than it starts with
//     plus is released (loops counted by their iterations) — else a wait never ends;
//   * barriers: every workgroup that meets at a barrier does so equally often, and as
//     many workgroups meet as each waits for.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace infracc {

class DiagEngine;
class Schedule;
class Statistics;

/// Checks the kernel level of `s` (nothing to do when it has none). Problems go to
/// `diags`, located at the op when it was read from a file, else at `where`.
/// Returns false if an error was reported.
bool verifyKernels(const Schedule &s, DiagEngine &diags, llvm::StringRef where,
                   Statistics *stats = nullptr);

} // namespace infracc
