#include "passes/KernelVerifier.h"

#include "ir/Kernels.h"
#include "ir/Schedule.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/Twine.h>

#include <map>
#include <numeric>

namespace infracc {
namespace {

class KernelVerifier {
public:
  KernelVerifier(const Schedule &s, DiagEngine &diags, llvm::StringRef where)
      : s_(s), k_(*s.kernels()), diags_(diags), where_(where), lookup_(k_) {}

  bool run(Statistics *stats);

private:
  void error(uint32_t kernel, uint32_t wg, uint32_t op, const llvm::Twine &msg) {
    const GpuOp &o = k_.ops[k_.workgroups[k_.kernels[kernel].firstWorkgroup + wg].firstOp + op];
    if (o.loc.isValid())
      diags_.error(o.loc, msg);
    else
      diags_.error(where_, describeGpuOp(k_, kernel, wg, op) + ": " + msg);
  }
  bool checkLaunches();
  bool checkTables();
  void checkWorkgroup(uint32_t kernel, uint32_t wg);
  void checkRange(uint32_t kernel, uint32_t wg, uint32_t op, const BufferRef &r, uint64_t bytes,
                  llvm::StringRef what);
  void checkFusedGroup(uint32_t kernel, uint32_t wg, uint32_t first, uint32_t end);
  void checkSemaphoresAndBarriers();
  std::string gpuName(uint32_t kernel) const;

  const Schedule &s_;
  const KernelLevel &k_;
  DiagEngine &diags_;
  llvm::StringRef where_;
  KernelLookup lookup_;
  const GpuOp *loop_ = nullptr;   // the loop the op being checked is in

  struct SemUse {
    uint64_t acquires = 0, releases = 0;
    uint32_t firstAcquire[3] = {~0u, 0, 0};   // kernel, workgroup, op of the first acquire
  };
  std::vector<SemUse> semUse_;
  // (kernel, barrier id) -> per workgroup: times reached; and the counts waited for.
  struct BarrierUse {
    std::map<uint32_t, uint64_t> perWorkgroup;
    uint32_t count = 0, kernelWg = 0, op = 0;
    bool countsDiffer = false;
  };
  std::map<std::pair<uint32_t, uint32_t>, BarrierUse> barriers_;
};

std::string KernelVerifier::gpuName(uint32_t kernel) const {
  return "gpu " + std::to_string(k_.kernels[kernel].gpu);
}

bool KernelVerifier::checkLaunches() {
  unsigned before = diags_.errorCount();
  std::vector<uint32_t> launches(k_.kernels.size(), 0);
  for (uint32_t r = 0; r < s_.numRanks(); ++r)
    for (uint32_t g = s_.rankBegin(r), e = g + s_.numOps(r); g < e; ++g) {
      if (s_.kind(g) != OpKind::Kernel)
        continue;
      uint32_t kn = s_.peer(g);
      if (kn >= k_.kernels.size())
        continue;   // reported by the operand check
      ++launches[kn];
      if (k_.kernels[kn].gpu != r)
        diags_.error(where_, "rank " + llvm::Twine(r) + ": " + s_.opName(g) + " launches a kernel of gpu " +
                                 llvm::Twine(k_.kernels[kn].gpu) + "; a rank launches its own GPU's kernels");
    }
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn)
    if (launches[kn] != 1)
      diags_.error(where_, "kernel " + llvm::Twine(kn) + " (" + gpuName(kn) + ", instance " +
                               llvm::Twine(k_.kernels[kn].instance) + ") is launched " +
                               llvm::Twine(launches[kn]) + " times; each kernel runs exactly once");
  return diags_.errorCount() == before;
}

bool KernelVerifier::checkTables() {
  unsigned before = diags_.errorCount();
  if (k_.numGpus != s_.numRanks())
    diags_.error(where_, "the kernel level has " + llvm::Twine(k_.numGpus) +
                             " GPUs but the schedule " + llvm::Twine(s_.numRanks()) + " ranks");
  llvm::DenseMap<uint64_t, uint32_t> seen;
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
    const Kernel &K = k_.kernels[kn];
    if (K.gpu >= k_.numGpus)
      diags_.error(where_, "kernel " + llvm::Twine(kn) + " runs on gpu " + llvm::Twine(K.gpu) +
                               ", but there are " + llvm::Twine(k_.numGpus) + " GPUs");
    if (!seen.try_emplace((uint64_t(K.instance) << 32) | K.gpu, kn).second)
      diags_.error(where_, "gpu " + llvm::Twine(K.gpu) + " has two kernels of instance " +
                               llvm::Twine(K.instance));
    if (uint64_t(K.firstWorkgroup) + K.numWorkgroups > k_.workgroups.size()) {
      diags_.error(where_, "kernel " + llvm::Twine(kn) + "'s workgroups run past the table");
      continue;
    }
    for (const Workgroup &wg : k_.workgroupsOf(K))
      if (wg.kernel != kn || uint64_t(wg.firstOp) + wg.numOps > k_.ops.size())
        diags_.error(where_, "kernel " + llvm::Twine(kn) + " has a malformed workgroup");
  }
  for (uint32_t i = 0; i < k_.semaphores.size(); ++i) {
    const Semaphore &S = k_.semaphores[i];
    bool peerBad = S.kind != SemaphoreKind::Device && S.peer >= k_.numGpus;
    if (S.gpu >= k_.numGpus || peerBad)
      diags_.error(where_, "semaphore s" + llvm::Twine(i) + " names gpu " +
                               llvm::Twine(peerBad ? S.peer : S.gpu) + ", but there are " +
                               llvm::Twine(k_.numGpus) + " GPUs");
  }
  for (uint32_t i = 0; i < k_.groups.size(); ++i)
    for (uint32_t g : k_.groups[i].gpus)
      if (g >= k_.numGpus)
        diags_.error(where_, "multicast group mc" + llvm::Twine(i) + " names gpu " + llvm::Twine(g) +
                                 ", but there are " + llvm::Twine(k_.numGpus) + " GPUs");
  semUse_.assign(k_.semaphores.size(), SemUse{});
  return diags_.errorCount() == before;
}

void KernelVerifier::checkRange(uint32_t kernel, uint32_t wg, uint32_t op, const BufferRef &r,
                                uint64_t bytes, llvm::StringRef what) {
  const Kernel &K = k_.kernels[kernel];
  uint64_t end = r.offset + r.footprint(bytes);
  if (loop_ && K.scratchWrap && r.buffer == BufferKind::Scratch) {
    // Slices wrap around: the furthest one ends where some iteration's slice ends.
    uint64_t unit = loop_->bytes, n = std::min<uint64_t>(loop_->count, (bytes + unit - 1) / unit);
    end = 0;
    if (n <= 65536)
      for (uint64_t i = 0; i < n; ++i)
        end = std::max(end, sliceOffset(r, i * unit, K.scratchWrap) +
                                r.footprint(loopSliceBytes(bytes, unit, i)));
    else   // beyond that, the furthest start any iteration can have
      end = r.offset + r.footprint(K.scratchWrap - std::gcd(unit, K.scratchWrap) + unit);
  }
  auto inBounds = [&](uint32_t gpu, uint32_t kn) {
    uint64_t size = k_.kernels[kn].buffer(r.buffer);
    if (end > size || end < r.offset)
      error(kernel, wg, op,
            what + " range " + bufferKindName(r.buffer) + "+" + llvm::Twine(r.offset) + " of " +
                llvm::Twine(r.footprint(bytes)) + " bytes on gpu " + llvm::Twine(gpu) +
                " ends at " + llvm::Twine(end) + ", past the " + bufferKindName(r.buffer) +
                " buffer's " + llvm::Twine(size) + " bytes");
  };
  if (!r.multicast) {
    if (r.gpu >= k_.numGpus) {
      error(kernel, wg, op, what + " is on gpu " + llvm::Twine(r.gpu) + ", but there are " +
                                llvm::Twine(k_.numGpus) + " GPUs (0.." +
                                llvm::Twine(k_.numGpus - 1) + ")");
      return;
    }
    uint32_t kn = lookup_.find(r.gpu, K.instance);
    if (kn == ~0u) {
      error(kernel, wg, op, what + " is on gpu " + llvm::Twine(r.gpu) +
                                ", which runs no kernel of instance " + llvm::Twine(K.instance));
      return;
    }
    inBounds(r.gpu, kn);
    return;
  }
  if (r.gpu >= k_.groups.size()) {
    error(kernel, wg, op, what + " uses multicast group mc" + llvm::Twine(r.gpu) +
                              ", but there are " + llvm::Twine(k_.groups.size()));
    return;
  }
  const MulticastGroup &G = k_.groups[r.gpu];
  if (G.instance != K.instance || G.buffer != r.buffer) {
    error(kernel, wg, op, what + " names multicast group mc" + llvm::Twine(r.gpu) + " with the " +
                              bufferKindName(r.buffer) + " buffer, but the group joins the " +
                              bufferKindName(G.buffer) + " buffers of instance " +
                              llvm::Twine(G.instance));
    return;
  }
  if (!llvm::is_contained(G.gpus, K.gpu))
    error(kernel, wg, op, what + " uses multicast group mc" + llvm::Twine(r.gpu) + ", which " +
                              gpuName(kernel) + " is not a member of");
  for (uint32_t g : G.gpus) {
    uint32_t kn = g < k_.numGpus ? lookup_.find(g, K.instance) : ~0u;
    if (kn == ~0u)
      error(kernel, wg, op, what + " multicasts to gpu " + llvm::Twine(g) +
                                ", which runs no kernel of instance " + llvm::Twine(K.instance));
    else
      inBounds(g, kn);
  }
}

void KernelVerifier::checkFusedGroup(uint32_t kernel, uint32_t wg, uint32_t first, uint32_t end) {
  llvm::ArrayRef<GpuOp> ops = k_.opsOf(k_.workgroups[k_.kernels[kernel].firstWorkgroup + wg]);
  // Loads (or memcpys) first, at most one reduce, then stores (or memcpys).
  uint32_t reduces = 0, loads = 0, stage = 0;
  for (uint32_t i = first; i < end; ++i) {
    const GpuOp &o = ops[i];
    if (!isDataOp(o.kind)) {
      error(kernel, wg, i, "a " + gpuOpKindName(o.kind) +
                               " cannot be fused with data operations (a fused group holds "
                               "loads, at most one reduce and stores)");
      return;
    }
    if (o.bytes != ops[first].bytes) {
      error(kernel, wg, i, gpuOpKindName(o.kind) + " is fused with an operation of " + llvm::Twine(ops[first].bytes) +
                               " bytes but moves " + llvm::Twine(o.bytes) +
                               "; a fused group works on equal sizes");
      return;
    }
    unsigned want = o.kind == GpuOpKind::Load ? 0 : o.kind == GpuOpKind::Reduce ? 1 : 2;
    if (o.kind == GpuOpKind::Memcpy)
      want = stage;   // a memcpy is a load and a store: anywhere without a reduce
    if (want < stage) {
      error(kernel, wg, i, "a fused group loads first, then reduces, then stores; this " +
                               gpuOpKindName(o.kind) + " comes too late");
      return;
    }
    stage = want;
    reduces += o.kind == GpuOpKind::Reduce;
    loads += o.kind == GpuOpKind::Load;
    if (o.kind == GpuOpKind::Memcpy && reduces) {
      error(kernel, wg, i, "a memcpy cannot be fused after a reduce");
      return;
    }
  }
  for (uint32_t i = first; i < end; ++i)
    if (ops[i].kind == GpuOpKind::Reduce) {
      if (reduces > 1) {
        error(kernel, wg, i, "a fused group has at most one reduce");
        return;
      }
      if (loads && ops[i].id != loads)
        error(kernel, wg, i, "reduce combines " + llvm::Twine(ops[i].id) + " inputs, but the group loads " +
                                 llvm::Twine(loads));
    }
}

void KernelVerifier::checkWorkgroup(uint32_t kernel, uint32_t wg) {
  const Kernel &K = k_.kernels[kernel];
  llvm::ArrayRef<GpuOp> ops = k_.opsOf(k_.workgroups[K.firstWorkgroup + wg]);
  uint32_t loopEnd = 0;      // end of the current loop body (0: not in a loop)
  uint64_t times = 1;        // how often the current op runs
  uint32_t groupStart = ~0u;
  loop_ = nullptr;
  for (uint32_t i = 0; i < ops.size() && !diags_.shouldStop(); ++i) {
    if (loopEnd && i == loopEnd) {
      loopEnd = 0;
      times = 1;
      loop_ = nullptr;
    }
    const GpuOp &o = ops[i];
    // Fused groups: [groupStart, i] so far.
    if (groupStart == ~0u && o.fusedWithNext())
      groupStart = i;
    bool bodyEnds = loopEnd && i + 1 == loopEnd;
    if (o.fusedWithNext() && (i + 1 == ops.size() || bodyEnds)) {
      error(kernel, wg, i, gpuOpKindName(o.kind) + " is fused with the next operation, but it "
                               "is the last of its " + (bodyEnds ? "loop body" : "workgroup"));
      groupStart = ~0u;
    } else if (groupStart != ~0u && !o.fusedWithNext()) {
      checkFusedGroup(kernel, wg, groupStart, i + 1);
      groupStart = ~0u;
    }
    switch (o.kind) {
    case GpuOpKind::Load:
      checkRange(kernel, wg, i, o.src, o.bytes, "the source");
      break;
    case GpuOpKind::Store:
      checkRange(kernel, wg, i, o.dst, o.bytes, "the destination");
      break;
    case GpuOpKind::Memcpy:
      checkRange(kernel, wg, i, o.src, o.bytes, "the source");
      checkRange(kernel, wg, i, o.dst, o.bytes, "the destination");
      break;
    case GpuOpKind::Reduce:
      if (o.id == 0)
        error(kernel, wg, i, "a reduce combines at least one input");
      break;
    case GpuOpKind::SemAcquire:
    case GpuOpKind::SemRelease: {
      bool acquire = o.kind == GpuOpKind::SemAcquire;
      if (o.id >= k_.semaphores.size()) {
        error(kernel, wg, i, gpuOpKindName(o.kind) + " names semaphore s" + llvm::Twine(o.id) +
                                 ", but there are " + llvm::Twine(k_.semaphores.size()) +
                                 " semaphores");
        break;
      }
      const Semaphore &S = k_.semaphores[o.id];
      if (S.instance != K.instance)
        error(kernel, wg, i, gpuOpKindName(o.kind) + " names semaphore s" + llvm::Twine(o.id) + " of instance " +
                                 llvm::Twine(S.instance) + " in a kernel of instance " +
                                 llvm::Twine(K.instance));
      else if (acquire && S.gpu != K.gpu)
        error(kernel, wg, i, "sem_acquire waits on semaphore s" + llvm::Twine(o.id) + ", which lives on gpu " +
                                 llvm::Twine(S.gpu) + "; a GPU waits only on its own semaphores");
      else if (!acquire && S.kind == SemaphoreKind::Device && S.gpu != K.gpu)
        error(kernel, wg, i, "sem_release releases device semaphore s" + llvm::Twine(o.id) + " of gpu " +
                                 llvm::Twine(S.gpu) + "; device semaphores are released on their GPU");
      else if (!acquire && S.kind != SemaphoreKind::Device && S.peer != K.gpu)
        error(kernel, wg, i, "sem_release on gpu " + llvm::Twine(K.gpu) + " releases semaphore s" +
                                 llvm::Twine(o.id) + ", which only gpu " + llvm::Twine(S.peer) +
                                 " releases (it is gpu " + llvm::Twine(S.peer) +
                                 "'s channel to gpu " + llvm::Twine(S.gpu) + ")");
      SemUse &u = semUse_[o.id];
      (acquire ? u.acquires : u.releases) += times;
      if (acquire && u.firstAcquire[0] == ~0u) {
        u.firstAcquire[0] = kernel;
        u.firstAcquire[1] = wg;
        u.firstAcquire[2] = i;
      }
      break;
    }
    case GpuOpKind::Nop:
      break;
    case GpuOpKind::Barrier: {
      if (o.count == 0) {
        error(kernel, wg, i, "a barrier waits for at least one workgroup");
        break;
      }
      BarrierUse &b = barriers_[{kernel, o.id}];
      if (b.perWorkgroup.empty()) {
        b.count = o.count;
        b.kernelWg = wg;
        b.op = i;
      } else if (b.count != o.count) {
        b.countsDiffer = true;
        error(kernel, wg, i, "barrier " + llvm::Twine(o.id) + " waits for " +
                                 llvm::Twine(o.count) + " workgroups here but for " +
                                 llvm::Twine(b.count) + " elsewhere in the kernel");
      }
      b.perWorkgroup[wg] += times;
      break;
    }
    case GpuOpKind::Flush:
      if (o.id >= k_.numGpus)
        error(kernel, wg, i, "flush names the channel to gpu " + llvm::Twine(o.id) +
                                 ", but there are " + llvm::Twine(k_.numGpus) + " GPUs");
      break;
    case GpuOpKind::Loop:
      if (loopEnd) {
        error(kernel, wg, i, "a loop inside a loop (loops do not nest)");
        break;
      }
      if (o.id == 0 || uint64_t(i) + 1 + o.id > ops.size()) {
        error(kernel, wg, i, "the loop's body of " + llvm::Twine(o.id) +
                                 " operations runs past the workgroup's end");
        break;
      }
      if (o.count == 0 || o.bytes == 0) {
        error(kernel, wg, i, "a loop runs at least once and advances at least one byte");
        break;
      }
      loopEnd = i + 1 + o.id;
      times = o.count;
      loop_ = &o;
      break;
    }
  }
}

void KernelVerifier::checkSemaphoresAndBarriers() {
  for (uint32_t i = 0; i < semUse_.size() && !diags_.shouldStop(); ++i) {
    const SemUse &u = semUse_[i];
    const Semaphore &S = k_.semaphores[i];
    if (u.acquires <= u.releases + S.init)
      continue;
    std::string which = "semaphore s" + std::to_string(i) + " (on gpu " + std::to_string(S.gpu) +
                        (S.kind == SemaphoreKind::Device
                             ? ""
                             : ", from gpu " + std::to_string(S.peer)) + ")";
    error(u.firstAcquire[0], u.firstAcquire[1], u.firstAcquire[2],
          which + " is acquired " + llvm::Twine(u.acquires) + " times but released " +
              llvm::Twine(u.releases) + " times and starts at " + llvm::Twine(S.init) +
              ": a wait would never end");
  }
  for (const auto &[key, b] : barriers_) {
    if (b.countsDiffer)
      continue;
    uint64_t times = b.perWorkgroup.begin()->second;
    bool uneven = false;
    for (const auto &[wg, n] : b.perWorkgroup)
      uneven |= n != times;
    if (uneven)
      error(key.first, b.kernelWg, b.op,
            "barrier " + llvm::Twine(key.second) +
                " is reached a different number of times by the workgroups that use it");
    else if (b.perWorkgroup.size() != b.count)
      error(key.first, b.kernelWg, b.op,
            "barrier " + llvm::Twine(key.second) + " waits for " + llvm::Twine(b.count) +
                " workgroups, but " + llvm::Twine(b.perWorkgroup.size()) + " of " +
                gpuName(key.first) + "'s kernel reach it");
  }
}

bool KernelVerifier::run(Statistics *stats) {
  unsigned before = diags_.errorCount();
  if (!checkTables() || !checkLaunches())
    return false;
  for (uint32_t kn = 0; kn < k_.kernels.size() && !diags_.shouldStop(); ++kn)
    for (uint32_t wg = 0; wg < k_.kernels[kn].numWorkgroups && !diags_.shouldStop(); ++wg)
      checkWorkgroup(kn, wg);
  if (!diags_.shouldStop())
    checkSemaphoresAndBarriers();
  if (stats) {
    stats->add("verify", "kernels", "GPU kernels verified", k_.kernels.size());
    stats->add("verify", "gpu-ops", "GPU operations verified", k_.ops.size());
  }
  return diags_.errorCount() == before;
}

} // namespace

bool verifyKernels(const Schedule &s, DiagEngine &diags, llvm::StringRef where,
                   Statistics *stats) {
  if (!s.kernels())
    return true;
  return KernelVerifier(s, diags, where).run(stats);
}

} // namespace infracc
