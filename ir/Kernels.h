// The kernel level of the schedule: what each GPU executes, in the terms of ASTRA-sim
// 3.0's load-store model (docs/loadstore.md).
//
//   GPU        runs kernels; a schedule op of kind OpKind::Kernel launches one
//   kernel     a set of workgroups running in parallel (one per compute unit), each
//              run by `wavefronts` wavefronts, with its own input/output/scratch buffers
//   workgroup  a sequence of GPU operations
//   GPU op     LoadOp, StoreOp, MemcpyOp (data: every wavefront, each its own part of
//              the range), ReduceOp (arithmetic), SemaphoreAcquireOp/ReleaseOp (control:
//              wavefront 0, one cache line), NopOp (the workgroup's wavefronts meet),
//              BarrierOp (workgroups meet), FlushOp (wait for in-flight requests) and
//              LoopOp (repeat the next ops over consecutive slices: MSCCL++'s pipeline)
//
// An operation names whole ranges (a MemcpyOp over 1 GiB is one 64-byte record); the
// unroll-loadstore pass turns them into cache-line instructions lazily (ir/LoadStore.h).
//
// Kernels of one collective launch on different GPUs share an `instance` number; a
// range on another GPU refers to that GPU's kernel of the same instance.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

enum class BufferKind : uint8_t { Input, Output, Scratch };
inline constexpr unsigned NumBufferKinds = 3;
llvm::StringRef bufferKindName(BufferKind b);   // "input", "output", "scratch"
std::optional<BufferKind> parseBufferKind(llvm::StringRef name);

/// Where a data operation reads or writes: `offset` bytes into buffer `buffer` of GPU
/// `gpu`'s kernel (same instance), or, when multicast, of every member of multicast
/// group `gpu` at once (NVLS: the switch reduces what is loaded and replicates what is
/// stored). A packet (LL) range holds its payload in 16-byte packets of 8 data and 8
/// flag bytes: an operation's `bytes` of payload occupy 2 x bytes from `offset`.
struct BufferRef {
  uint32_t gpu = 0;
  BufferKind buffer = BufferKind::Input;
  bool multicast = false;
  bool packet = false;
  uint64_t offset = 0;

  /// Bytes of memory that `payload` bytes occupy in this range.
  uint64_t footprint(uint64_t payload) const { return packet ? 2 * payload : payload; }
  friend bool operator==(const BufferRef &a, const BufferRef &b) {
    return a.gpu == b.gpu && a.buffer == b.buffer && a.multicast == b.multicast &&
           a.packet == b.packet && a.offset == b.offset;
  }
};

enum class GpuOpKind : uint8_t {
  Load,         // src
  Store,        // dst
  Memcpy,       // src -> dst: loads, wait, stores
  Reduce,       // `inputs` values of `bytes` combined (the CU computes)
  SemAcquire,   // wait until semaphore `id` can be taken, take it
  SemRelease,   // release semaphore `id` (after the wavefront's requests completed)
  Nop,          // the workgroup's wavefronts meet (__syncthreads)
  Barrier,      // `count` workgroups of the kernel meet at barrier `id`
  Flush,        // wait until every request in flight has completed (port flush to `id`)
  Loop,         // the next `id` ops, `count` times, each time `bytes` further along
};
llvm::StringRef gpuOpKindName(GpuOpKind k);   // "load", "memcpy", "sem_acquire", ...
std::optional<GpuOpKind> parseGpuOpKind(llvm::StringRef name);
inline bool isDataOp(GpuOpKind k) {
  return k == GpuOpKind::Load || k == GpuOpKind::Store || k == GpuOpKind::Memcpy ||
         k == GpuOpKind::Reduce;
}

namespace gpuop {
/// This op and the next run in lock-step, cache line by cache line: a fused group is
/// a run of Load/Memcpy, at most one Reduce, then Store/Memcpy ops of equal `bytes`
/// (MSCCL++'s reduce-and-send: load every input, reduce, store every output).
inline constexpr uint8_t FusedWithNext = 1;
/// Moved by a proxy (a DMA engine driven through MSCCL++'s port channels) rather than
/// by the compute unit's own loads and stores; modelled the same way, kept for writers.
inline constexpr uint8_t Proxy = 2;
/// Relaxed semaphore (MSCCL++'s rlxsignal/rlxwait: no memory fence).
inline constexpr uint8_t Relaxed = 4;
} // namespace gpuop

struct GpuOp {
  GpuOpKind kind = GpuOpKind::Nop;
  uint8_t flags = 0;      // gpuop::*
  uint32_t id = 0;        // SemAcquire/SemRelease: semaphore; Barrier: barrier id;
                          // Flush: peer GPU; Loop: number of ops in the body;
                          // Reduce: number of inputs
  uint32_t count = 0;     // Barrier: workgroups that meet; Loop: iterations
  uint64_t bytes = 0;     // data ops: payload bytes; Loop: bytes each iteration advances
  BufferRef src, dst;     // Load: src; Store: dst; Memcpy: both
  llvm::SMLoc loc;        // where the op was read, for messages (may be unset)

  bool fusedWithNext() const { return flags & gpuop::FusedWithNext; }
  bool readsMemory() const { return kind == GpuOpKind::Load || kind == GpuOpKind::Memcpy; }
  bool writesMemory() const { return kind == GpuOpKind::Store || kind == GpuOpKind::Memcpy; }
  /// Equal apart from the source location.
  friend bool operator==(const GpuOp &a, const GpuOp &b);
};

struct Workgroup {
  uint32_t kernel = 0;
  uint32_t firstOp = 0, numOps = 0;   // into KernelLevel::ops
  friend bool operator==(const Workgroup &, const Workgroup &) = default;
};

struct Kernel {
  uint32_t gpu = 0;
  uint32_t instance = 0;
  uint32_t wavefronts = 0;   // 0: chosen by unroll-loadstore (-wavefronts)
  uint32_t firstWorkgroup = 0, numWorkgroups = 0;
  uint64_t bufferBytes[NumBufferKinds] = {0, 0, 0};
  /// In LoopOps, ranges in the scratch buffer advance modulo this many bytes (MSCCL++'s
  /// reuse_resources: a pipeline's iterations reuse one scratch chunk); 0: no wrap.
  uint64_t scratchWrap = 0;
  uint64_t buffer(BufferKind b) const { return bufferBytes[unsigned(b)]; }
  friend bool operator==(const Kernel &, const Kernel &) = default;
};

enum class SemaphoreKind : uint8_t {
  Device,    // a GPU's own semaphore, shared by its workgroups (MSCCL++ sem_acquire/release)
  Channel,   // released by GPU `peer` over a memory channel, acquired where it lives
  Proxy,     // the same over a port channel (released through the proxy)
};
llvm::StringRef semaphoreKindName(SemaphoreKind k);   // "device", "channel", "proxy"

struct Semaphore {
  uint32_t gpu = 0;        // where it lives (who acquires it)
  uint32_t instance = 0;
  uint32_t init = 0;       // initial count
  SemaphoreKind kind = SemaphoreKind::Device;
  uint32_t peer = 0;       // Channel/Proxy: the GPU that releases it
  uint32_t index = 0;      // Device: its number on the GPU; Channel/Proxy: which of the
                           // channels from `peer` to `gpu` (0 = the first)
  friend bool operator==(const Semaphore &, const Semaphore &) = default;
};

struct MulticastGroup {
  uint32_t instance = 0;
  BufferKind buffer = BufferKind::Input;
  std::vector<uint32_t> gpus;   // members, in the order given
  friend bool operator==(const MulticastGroup &, const MulticastGroup &) = default;
};

/// Parameters of the load-store unrolling, recorded by unroll-loadstore.
struct LoadStoreParams {
  uint32_t cacheLine = 128;   // bytes per Load/Store request
  uint32_t unroll = 1;        // requests a wavefront issues before it waits
  friend bool operator==(const LoadStoreParams &, const LoadStoreParams &) = default;
};

class KernelLevel {
public:
  uint32_t numGpus = 0;
  std::vector<Kernel> kernels;
  std::vector<Workgroup> workgroups;
  std::vector<GpuOp> ops;
  std::vector<Semaphore> semaphores;
  std::vector<MulticastGroup> groups;
  // What the kernels implement, as the input named it (an execution plan's name and
  // collective, whether it runs in place); kept for writers.
  std::string name, collective;
  bool inPlace = false;
  std::optional<LoadStoreParams> loadStore;   // set by unroll-loadstore

  llvm::ArrayRef<GpuOp> opsOf(const Workgroup &wg) const {
    return llvm::ArrayRef<GpuOp>(ops).slice(wg.firstOp, wg.numOps);
  }
  llvm::ArrayRef<Workgroup> workgroupsOf(const Kernel &k) const {
    return llvm::ArrayRef<Workgroup>(workgroups).slice(k.firstWorkgroup, k.numWorkgroups);
  }
  /// The kernels of `gpu`, in order (indices into `kernels`).
  std::vector<uint32_t> kernelsOfGpu(uint32_t gpu) const;

  /// Renumbers semaphores and multicast groups into a canonical order (by their
  /// fields), so that two readings of equivalent inputs compare equal.
  void canonicalize();

  /// Equal apart from source locations.
  friend bool operator==(const KernelLevel &a, const KernelLevel &b);
};

/// Finds the kernel of an instance on a GPU (what a remote range refers to).
class KernelLookup {
public:
  explicit KernelLookup(const KernelLevel &k);
  /// The kernel of `instance` on `gpu`, or ~0u.
  uint32_t find(uint32_t gpu, uint32_t instance) const {
    auto it = index_.find((uint64_t(instance) << 32) | gpu);
    return it == index_.end() ? ~0u : it->second;
  }

private:
  llvm::DenseMap<uint64_t, uint32_t> index_;
};

/// How messages name a GPU op: "gpu 1 kernel 0 workgroup 2 op 5 (memcpy)".
std::string describeGpuOp(const KernelLevel &k, uint32_t kernel, uint32_t workgroup,
                          uint32_t op);

/// Where range `r` of a LoopOp's body starts when the loop has advanced `shift` bytes
/// (iteration i: i * unit), in a kernel with `scratchWrap` (Kernel::scratchWrap).
inline uint64_t sliceOffset(const BufferRef &r, uint64_t shift, uint64_t scratchWrap) {
  if (scratchWrap && r.buffer == BufferKind::Scratch)
    shift %= scratchWrap;
  return r.offset + r.footprint(shift);
}

/// The size of iteration `i` of a LoopOp's body op of `bytes`: MSCCL++'s
/// min(bytes - i*unit, unit), 0 when the op is already done.
inline uint64_t loopSliceBytes(uint64_t bytes, uint64_t unit, uint64_t i) {
  uint64_t start = i * unit;
  return start >= bytes ? 0 : std::min(bytes - start, unit);
}

} // namespace infracc
