// -sim-model=gpu: executes the unrolled load-store instruction streams (ir/LoadStore.h)
// on GPUs modelled at network-on-chip level, after ASTRA-sim 3.0 §4.4-4.5
// (docs/gpu-model.md has the rules with their reasons):
//
//   dispatch     a kernel's workgroups go to free compute units in round-robin order,
//                at most -wg-per-cu per CU; the rest wait for a CU to retire one
//   CU           runs its ready wavefronts greedily: the oldest ready one runs until it
//                stalls (Waitcnt, Nop, Barrier, a semaphore it waits for), then the next;
//                at most one request per cycle and -max-outstanding in flight; a Reduce
//                occupies the CU for -reduce-cycles-per-line cycles
//   requests     a Load is a control packet to the memory channel holding the line and
//                the line coming back; a Store the line there and a control ack back;
//                semaphores are one-line accesses to the memory of the GPU they live on
//                (an acquire that finds the count at 0 waits at the memory until a
//                release arrives)
//   links        every link on the route, in each direction, sends one packet at a time
//                at its bandwidth (cut-through: a packet's head moves on after the
//                link's latency, its end never before its tail arrived); waiting packets
//                are served in arrival order, or alternately control and data
//                (-noc-arbitration=fair)
//
// Times are integer picoseconds.
#pragma once

#include "backends/gpu/GpuMachine.h"

#include <llvm/Support/Error.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace infracc {
class Progress;
class Schedule;
}

namespace infracc::gpu {

struct GpuModelOptions {
  uint32_t workgroupsPerCu = 1;
  uint64_t cyclePs = 1000;          // one compute-unit cycle
  uint32_t maxOutstanding = 64;     // requests in flight per compute unit
  uint32_t reduceCycles = 1;        // per Reduce instruction (one cache line)
  bool fairArbitration = false;     // links alternate control and data
  uint32_t controlBytes = 16;       // a request without data, an ack, a semaphore access
  uint64_t maxRequests = 0;         // stop with an error beyond this many (0: no limit)
  Progress *progress = nullptr;     // -progress: requests issued of requestsTotal()
};

struct KernelRun {
  uint64_t startPs = 0, endPs = 0;
  bool finished = false;
};

struct LinkUse {
  uint64_t bytes = 0, packets = 0, busyPs = 0;
  uint32_t peakQueue = 0;
};

/// Where and when a workgroup ran: its CU (the GPU's n-th), dispatch to retirement.
struct WorkgroupRun {
  uint32_t gpu = 0, cu = 0, kernel = 0, workgroup = 0;
  uint64_t startPs = 0, endPs = 0;
};

struct GpuRunResult {
  std::vector<std::string> stuck;   // what waits forever, when not finished
  uint64_t makespanPs = 0;
  std::vector<KernelRun> kernels;   // per kernel of the kernel level
  std::vector<std::vector<uint64_t>> cuBusyPs;   // per machine GPU, per CU
  std::vector<LinkUse> links;       // per directed link (GpuMachine numbering)
  std::vector<WorkgroupRun> workgroups;   // in dispatch order
  uint64_t loads = 0, stores = 0, semaphoreAccesses = 0, events = 0;
  uint64_t requests() const { return loads + stores + semaphoreAccesses; }
  bool finished() const {
    return std::all_of(kernels.begin(), kernels.end(), [](const KernelRun &k) { return k.finished; });
  }
};

/// Checks that the schedule is one this model runs (unrolled kernel launches and
/// calcs; no multicast or LL-packet ranges); an error says what is missing.
llvm::Error checkRunnable(const Schedule &s);

/// The requests the kernels will issue (their Loads, Stores and semaphore accesses),
/// counted from the streams' counted loops without expanding them.
uint64_t requestsTotal(const Schedule &s);

/// Runs the schedule (checked by checkRunnable). Errors: fewer GPUs in the machine than
/// the kernels use, a route the fabric does not have, a link without a bandwidth on a
/// route.
llvm::Expected<GpuRunResult> runGpuModel(const Schedule &s, GpuMachine &m,
                                         const GpuModelOptions &o);

} // namespace infracc::gpu
