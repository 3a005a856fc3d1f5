// Instruction streams of the load-store model (ASTRA-sim 3.0 §4.1, §4.4): what each
// wavefront of a workgroup issues, cache line by cache line, for the GPU operations of
// the kernel level (ir/Kernels.h) once unroll-loadstore has fixed the cache line, the
// unroll factor and every kernel's wavefront count.
//
// Nothing is materialised: a 256 MiB all-gather on 128 GPUs is ~10^8 cache lines, so a
// stream is produced on demand from the GPU operations, as counted loops.
//
//   WavefrontStream s(kernels, params, kernel, workgroup, wavefront);
//   Segment seg;
//   while (s.next(seg))                   // one counted loop at a time
//     for (uint64_t i = 0; i < seg.iterations; ++i)
//       for (size_t j = 0; j < seg.body.size(); ++j)
//         issue(seg.at(i, j));            // (kind, gpu/buffer/address, bytes, ...)
//
// or InstructionIterator for one instruction at a time. A simulator keeps one stream
// (a few hundred bytes) per wavefront and pulls segments as the wavefront advances;
// the cost per instruction is one multiply-add.
//
// What a GPU operation becomes, per wavefront (W wavefronts, U = unroll, L = cache line):
//   data (Memcpy, Load, Store, Reduce, and fused groups of them): the range is cut into
//     lines of L bytes of payload (L/2 when a range holds LL packets, so that a packet
//     line is L bytes); wavefront w takes the w-th of W nearly equal runs of lines.
//     Each iteration: U Loads per source, Waitcnt(loads <= 0), U Reduces (fused groups
//     with a ReduceOp), U Stores per destination (Figure 7). A last, shorter iteration
//     takes the remaining lines, the last possibly partial.
//   SemaphoreAcquireOp: wavefront 0: SemaphoreAcquire.
//   SemaphoreReleaseOp: wavefront 0: Waitcnt(all <= 0), SemaphoreRelease (the fence);
//     releases that follow one another share the first one's fence (a workgroup that
//     signals every peer does not wait for each signal's acknowledgement in turn).
//   NopOp: every wavefront: Waitcnt(all <= 0), Nop (meet the workgroup's wavefronts).
//   BarrierOp: every wavefront: Waitcnt(all <= 0), Barrier (meet the other workgroups).
//   FlushOp: every wavefront: Waitcnt(all <= 0).
//   LoopOp: its body, once per iteration, each data op on its next slice.
#pragma once

#include "ir/Kernels.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <vector>

namespace infracc {

enum class InstrKind : uint8_t {
  Load,               // gpu/buffer/address, bytes: one request (at most a cache line)
  Store,              // the same, writing
  SemaphoreAcquire,   // arg: semaphore; gpu: where it lives (the wavefront's own GPU)
  SemaphoreRelease,   // arg: semaphore; gpu: where it lives (a peer's for channels)
  Reduce,             // bytes combined from arg inputs; occupies the compute unit
  Waitcnt,            // wait until at most arg loads and arg2 stores are in flight
  Nop,                // wait for the workgroup's other wavefronts
  Barrier,            // barrier arg: wait for arg2 workgroups of the kernel
};
llvm::StringRef instrKindName(InstrKind k);   // "Load", "Store", "SemaphoreAcquire", ...

namespace instr {
inline constexpr uint8_t Multicast = 1;   // gpu is a multicast group (KernelLevel::groups)
inline constexpr uint8_t Packet = 2;      // the line holds LL packets (half payload)
inline constexpr uint8_t Proxy = 4;       // moved through a port channel's proxy
inline constexpr uint32_t Unlimited = ~0u;   // Waitcnt: no limit on this kind
} // namespace instr

struct Instruction {
  InstrKind kind = InstrKind::Nop;
  BufferKind buffer = BufferKind::Input;
  uint8_t flags = 0;        // instr::*
  uint32_t gpu = 0;         // whose memory; remote when it is not the wavefront's GPU
  uint64_t address = 0;     // byte offset in that GPU's buffer
  uint32_t bytes = 0;
  uint32_t arg = 0, arg2 = 0;
  friend bool operator==(const Instruction &, const Instruction &) = default;
};

/// A counted loop: `iterations` times the body; slot j of iteration i is body[j] with
/// its address advanced by i * stride[j].
struct Segment {
  uint64_t iterations = 0;
  uint32_t op = 0;               // the GPU op (index into KernelLevel::ops) it comes from
  uint64_t loopIteration = 0;    // the enclosing LoopOp's iteration (0 outside loops)
  std::vector<Instruction> body;
  std::vector<uint64_t> stride;

  Instruction at(uint64_t i, size_t j) const {
    Instruction x = body[j];
    x.address += i * stride[j];
    return x;
  }
  uint64_t instructions() const { return iterations * body.size(); }
};

/// The stream of one wavefront of one workgroup. The kernel's wavefront count and
/// `params` must be set (unroll-loadstore does both); the kernel level must have
/// passed the verifier.
class WavefrontStream {
public:
  WavefrontStream(const KernelLevel &k, const LoadStoreParams &params, uint32_t kernel,
                  uint32_t workgroup, uint32_t wavefront);
  /// Fills `seg` with the next non-empty counted loop; false at the end of the stream.
  bool next(Segment &seg);

private:
  bool dataSegment(Segment &seg);
  bool controlSegment(const GpuOp &op, Segment &seg);

  const KernelLevel &k_;
  LoadStoreParams p_;
  llvm::ArrayRef<GpuOp> ops_;
  uint32_t firstOp_, gpu_, wavefront_, wavefronts_;
  uint64_t scratchWrap_;
  uint32_t pc_ = 0;
  // The enclosing loop, if any.
  uint32_t loopBegin_ = 0, loopEnd_ = 0;
  uint64_t loopIter_ = 0, loopCount_ = 0, loopUnit_ = 0;
  // Within a data group: 0 = main loop next, 1 = tail next.
  unsigned phase_ = 0;
  // The last segment was a semaphore release (fenced), nothing issued since.
  bool fenced_ = false;
};

/// One instruction at a time.
class InstructionIterator {
public:
  explicit InstructionIterator(WavefrontStream s) : s_(std::move(s)) {}
  bool next(Instruction &out);
  const Segment &segment() const { return seg_; }

private:
  WavefrontStream s_;
  Segment seg_;
  uint64_t i_ = 0;
  size_t j_ = 0;
  bool started_ = false;
};

/// Instructions by kind over a whole workgroup's wavefronts (counted, not expanded).
struct InstructionCounts {
  uint64_t byKind[8] = {};
  uint64_t segments = 0;
  uint64_t total() const;
  InstructionCounts &operator+=(const InstructionCounts &o);
};
InstructionCounts countInstructions(WavefrontStream s);

} // namespace infracc
