// How much an input may make infracc allocate. Sizes read from input (rank counts,
// fabric sizes, counts in binary headers, blueprint parameters) are checked against
// -max-memory before memory is reserved, so an absurd value is a located error naming
// the value and the limit — never std::bad_alloc, an OOM kill or a minutes-long stall.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>

namespace infracc {

/// The unsigned number a small system file holds (/sys, /proc: "8192\n"), or nullopt
/// when it cannot be read or holds something else ("max").
std::optional<uint64_t> readNumberFile(const std::string &path);

/// -max-memory in bytes (default: availableMemory()).
uint64_t maxMemoryBytes();

/// The memory this process may use: the machine's physical memory, or the memory limit
/// of its control group when that is smaller (a container, a batch job under SLURM).
uint64_t availableMemory();

/// The smallest memory limit on the path of a control group and its ancestors, or
/// nullopt when none is set. `procSelfCgroup` is the text of /proc/self/cgroup; `root`
/// is where the hierarchies are mounted (/sys/fs/cgroup): cgroup v2's `0::/path` with
/// `memory.max`, or v1's memory controller with `memory/<path>/memory.limit_in_bytes`.
std::optional<uint64_t> cgroupMemoryLimit(llvm::StringRef procSelfCgroup, llvm::StringRef root);

/// nullopt when `count` items of about `bytesEach` bytes fit in -max-memory; else a
/// message for the caller's located error: "<what> would need about 12.0 GiB
/// (3000000000 x 4 bytes), more than -max-memory (8.0 GiB); raise it with -max-memory=".
std::optional<std::string> exceedsMemory(llvm::StringRef what, uint64_t count,
                                         uint64_t bytesEach);

/// Counts of what an input stands for (operations, expanded nodes) may pass 2^64 on
/// hostile input; they stop at UINT64_MAX, which every limit refuses.
inline uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t saturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/// `1.5 GiB`, `512 MiB`, `12 bytes`: sizes in messages.
std::string formatBytes(uint64_t bytes);

/// A byte count as -max-memory takes it: a number and an optional binary suffix K, M, G,
/// T (each may be followed by `iB` or `B`: 512M, 512MiB, 512MB are all 512 * 2^20).
std::optional<uint64_t> parseByteSize(llvm::StringRef s);

} // namespace infracc
