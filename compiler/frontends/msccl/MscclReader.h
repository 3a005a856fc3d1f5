// Reads an MSCCL++ execution plan (JSON) into a schedule with a kernel level: one rank
// and one kernel per GPU, one workgroup per threadblock, each MSCCL++ operation mapped
// to GPU operations as docs/loadstore.md's table says. Byte sizes come from the
// message size, as MSCCL++'s executor computes them from the buffers it is given.
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/StringRef.h>

#include <optional>

namespace infracc {
class DiagEngine;
}

namespace infracc::msccl {

/// The collective's buffer size in bytes, as MSCCL++'s executor tests give it: the
/// output for allgather, the input for reducescatter, both for the others.
struct ReadOptions {
  uint64_t messageBytes = 1 << 20;
};

/// Whether `head` (a file's first bytes) looks like an execution plan.
bool looksLikePlan(llvm::StringRef head);

/// Reads the plan at `path`; problems are reported through `diags` at their line and
/// column. nullopt after errors.
std::optional<Schedule> readPlan(llvm::StringRef path, const ReadOptions &opts,
                                 DiagEngine &diags);

} // namespace infracc::msccl
