// lower-collectives -coll-target=kernels: every collective becomes a GPU kernel launch
// (OpKind::Kernel) of textbook algorithms written as GPU operations, so that put and
// get forms can be compared without writing an MSCCL++ plan:
//
//   allgather, reducescatter, allreduce   ring or direct, put or get form
//   alltoall                              direct, put or get form
//
// Every data transfer is split over the kernel's workgroups (each takes the same slice
// of every block and synchronises over its own channel: semaphore index = workgroup).
// Put form: write into the peer, then signal it; the peer waits before using the data.
// Get form: signal that the data is ready; the peer waits, then reads it (and reduces
// it in the same pass: MSCCL++'s read-reduce).
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/StringRef.h>

#include <optional>

namespace infracc {
class DiagEngine;
class Statistics;
}

namespace infracc::coll {

enum class Transfer : uint8_t { Put, Get };

struct KernelLoweringOptions {
  Transfer transfer = Transfer::Put;
  uint32_t workgroups = 1;
};

/// Replaces each collective of `s` by a kernel launch (same dependencies); other ops
/// stay. Problems (a collective or algorithm without a kernel form) are reported at
/// the statement; nullopt after errors.
std::optional<Schedule> lowerToKernels(const Schedule &s, const KernelLoweringOptions &opts,
                                       DiagEngine &diags, llvm::StringRef where,
                                       Statistics *stats = nullptr);

} // namespace infracc::coll
