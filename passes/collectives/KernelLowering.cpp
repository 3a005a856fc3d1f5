#include "passes/collectives/KernelLowering.h"

#include "ir/Collectives.h"
#include "ir/Kernels.h"
#include "passes/Pass.h"
#include "passes/collectives/Emitter.h"
#include "passes/collectives/Lowering.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <map>
#include <optional>

namespace infracc::coll {
namespace {

struct Slice {
  uint64_t off = 0, len = 0;
};

/// The kernels of one collective instance, one per member, built phase by phase.
class KernelBuilder {
public:
  KernelBuilder(KernelLevel &k, uint32_t instance, llvm::ArrayRef<uint32_t> ranks, uint32_t W)
      : k_(k), instance_(instance), ranks_(ranks), W_(W),
        ops_(ranks.size(), std::vector<std::vector<GpuOp>>(W)) {}

  uint32_t P() const { return uint32_t(ranks_.size()); }
  uint32_t W() const { return W_; }
  /// Workgroup w's part of a slice.
  Slice part(Slice s, uint32_t w) const {
    return {s.off + pieceOffset(s.len, W_, w), pieceSize(s.len, W_, w)};
  }
  BufferRef at(uint32_t member, BufferKind b, uint64_t off) const {
    BufferRef r;
    r.gpu = ranks_[member];
    r.buffer = b;
    r.offset = off;
    return r;
  }
  void copy(uint32_t i, uint32_t w, const BufferRef &src, const BufferRef &dst, uint64_t n) {
    if (!n)
      return;
    GpuOp o;
    o.kind = GpuOpKind::Memcpy;
    o.src = src;
    o.dst = dst;
    o.bytes = n;
    ops_[i][w].push_back(o);
  }
  void reduce(uint32_t i, uint32_t w, llvm::ArrayRef<BufferRef> srcs,
              llvm::ArrayRef<BufferRef> dsts, uint64_t n) {
    if (!n)
      return;
    auto add = [&](GpuOpKind kind, const BufferRef *r) {
      GpuOp o;
      o.kind = kind;
      o.flags = gpuop::FusedWithNext;
      o.bytes = n;
      if (kind == GpuOpKind::Load)
        o.src = *r;
      if (kind == GpuOpKind::Store)
        o.dst = *r;
      if (kind == GpuOpKind::Reduce)
        o.id = uint32_t(srcs.size());
      ops_[i][w].push_back(o);
    };
    for (const BufferRef &r : srcs)
      add(GpuOpKind::Load, &r);
    add(GpuOpKind::Reduce, nullptr);
    for (const BufferRef &r : dsts)
      add(GpuOpKind::Store, &r);
    ops_[i][w].back().flags = 0;
  }
  /// Workgroup w of member i releases the semaphore towards j on channel `channel`
  /// (by default its own index: workgroup w of each member pairs with workgroup w).
  void signal(uint32_t i, uint32_t w, uint32_t j, std::optional<uint32_t> channel = {}) {
    sem(i, w, GpuOpKind::SemRelease, sem(i, j, channel.value_or(w)));
  }
  void wait(uint32_t i, uint32_t w, uint32_t j, std::optional<uint32_t> channel = {}) {
    sem(i, w, GpuOpKind::SemAcquire, sem(j, i, channel.value_or(w)));
  }
  /// Every workgroup of member i's kernel meets at barrier `id` (MSCCL++'s DeviceSyncer).
  void barrier(uint32_t i, uint32_t w, uint32_t id) {
    GpuOp o;
    o.kind = GpuOpKind::Barrier;
    o.id = id;
    o.count = W_;
    ops_[i][w].push_back(o);
  }

  /// Appends the kernels; kernelOf[member] = its kernel's index.
  void finish(const uint64_t buffers[NumBufferKinds], std::vector<uint32_t> &kernelOf) {
    kernelOf.clear();
    for (uint32_t i = 0; i < P(); ++i) {
      Kernel K;
      K.gpu = ranks_[i];
      K.instance = instance_;
      K.firstWorkgroup = uint32_t(k_.workgroups.size());
      K.numWorkgroups = W_;
      for (unsigned b = 0; b < NumBufferKinds; ++b)
        K.bufferBytes[b] = buffers[b];
      uint32_t kn = uint32_t(k_.kernels.size());
      for (uint32_t w = 0; w < W_; ++w) {
        k_.workgroups.push_back({kn, uint32_t(k_.ops.size()), uint32_t(ops_[i][w].size())});
        k_.ops.insert(k_.ops.end(), ops_[i][w].begin(), ops_[i][w].end());
      }
      k_.kernels.push_back(K);
      kernelOf.push_back(kn);
    }
  }

private:
  /// The semaphore member `from` releases towards member `to` on workgroup w's channel.
  uint32_t sem(uint32_t from, uint32_t to, uint32_t w) {
    auto [it, fresh] = sems_.try_emplace({from, to, w}, uint32_t(k_.semaphores.size()));
    if (fresh) {
      Semaphore s;
      s.gpu = ranks_[to];
      s.instance = instance_;
      s.kind = SemaphoreKind::Channel;
      s.peer = ranks_[from];
      s.index = w;
      k_.semaphores.push_back(s);
    }
    return it->second;
  }
  void sem(uint32_t i, uint32_t w, GpuOpKind kind, uint32_t id) {
    GpuOp o;
    o.kind = kind;
    o.id = id;
    ops_[i][w].push_back(o);
  }

  KernelLevel &k_;
  uint32_t instance_;
  llvm::ArrayRef<uint32_t> ranks_;
  uint32_t W_;
  std::vector<std::vector<std::vector<GpuOp>>> ops_;   // [member][workgroup]
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> sems_;
};

constexpr BufferKind In = BufferKind::Input, Out = BufferKind::Output, Scr = BufferKind::Scratch;

/// Where the blocks of a block collective live: block b of the input (reduce-scatter)
/// or of the output (all-gather), where member b's result lands, and the scratch slots.
struct Blocks {
  std::function<Slice(uint32_t)> in, out;
  uint64_t slot = 0;   // bytes per scratch slot
  /// An all-reduce's all-gather half: its blocks were reduced into the output, part by
  /// part, by every workgroup of the reduce-scatter half.
  bool afterReduceScatter = false;
};

// --- reduce-scatter phases: member i ends with block i reduced, at out(i) ----------

void rsRing(KernelBuilder &kb, uint32_t i, uint32_t w, const Blocks &B, Transfer t) {
  uint32_t P = kb.P(), next = (i + 1) % P, prev = (i + P - 1) % P;
  auto within = [&](uint32_t b) { return kb.part(B.in(b), w).off - B.in(b).off; };
  if (t == Transfer::Put) {
    uint32_t b0 = (i + P - 1) % P;
    Slice s = kb.part(B.in(b0), w);
    kb.copy(i, w, kb.at(i, In, s.off), kb.at(next, Scr, within(b0)), s.len);
    kb.signal(i, w, next);
  } else {
    kb.signal(i, w, next);   // my input is there to read
  }
  for (uint32_t k = 0; k + 1 < P; ++k) {
    kb.wait(i, w, prev);
    uint32_t b = (i + 2 * P - k - 2) % P;
    Slice s = kb.part(B.in(b), w);
    uint64_t off = within(b);
    BufferRef mine = kb.at(i, In, s.off);
    BufferRef result = k + 2 < P ? kb.at(i, Scr, k * B.slot + off) : kb.at(i, Out, B.out(b).off + off);
    if (t == Transfer::Put) {
      BufferRef received = kb.at(i, Scr, k * B.slot + off);
      if (k + 2 < P)
        kb.reduce(i, w, {mine, received}, {received, kb.at(next, Scr, (k + 1) * B.slot + off)}, s.len);
      else
        kb.reduce(i, w, {mine, received}, {result}, s.len);
    } else {
      BufferRef theirs = k == 0 ? kb.at(prev, In, s.off) : kb.at(prev, Scr, (k - 1) * B.slot + off);
      kb.reduce(i, w, {mine, theirs}, {result}, s.len);
    }
    if (k + 2 < P)
      kb.signal(i, w, next);
  }
}

void rsDirect(KernelBuilder &kb, uint32_t i, uint32_t w, const Blocks &B, Transfer t) {
  uint32_t P = kb.P();
  Slice s = kb.part(B.in(i), w);
  uint64_t off = s.off - B.in(i).off;
  std::vector<BufferRef> srcs{kb.at(i, In, s.off)};
  if (t == Transfer::Put) {
    for (uint32_t d = 1; d < P; ++d) {
      uint32_t j = (i + d) % P;
      Slice sj = kb.part(B.in(j), w);
      uint32_t slot = (i + P - j - 1) % P;   // at j, the slot of what i sends
      kb.copy(i, w, kb.at(i, In, sj.off), kb.at(j, Scr, slot * B.slot + (sj.off - B.in(j).off)), sj.len);
      kb.signal(i, w, j);
    }
    for (uint32_t d = 1; d < P; ++d) {
      uint32_t j = (i + d) % P;
      kb.wait(i, w, j);
      srcs.push_back(kb.at(i, Scr, ((j + P - i - 1) % P) * B.slot + off));
    }
  } else {
    for (uint32_t d = 1; d < P; ++d)
      kb.signal(i, w, (i + d) % P);
    for (uint32_t d = 1; d < P; ++d) {
      uint32_t j = (i + d) % P;
      kb.wait(i, w, j);
      srcs.push_back(kb.at(j, In, s.off));
    }
  }
  kb.reduce(i, w, srcs, {kb.at(i, Out, B.out(i).off + off)}, s.len);
}

// --- all-gather phases: member i's block at out(i) reaches every member's out(i) ---

void agRing(KernelBuilder &kb, uint32_t i, uint32_t w, const Blocks &B, Transfer t) {
  uint32_t P = kb.P(), next = (i + 1) % P, prev = (i + P - 1) % P;
  if (t == Transfer::Put) {
    for (uint32_t s = 0; s + 1 < P; ++s) {
      Slice b = kb.part(B.out((i + P - s) % P), w);
      kb.copy(i, w, kb.at(i, Out, b.off), kb.at(next, Out, b.off), b.len);
      kb.signal(i, w, next);
      kb.wait(i, w, prev);
    }
    return;
  }
  kb.signal(i, w, next);   // my block is there to read
  for (uint32_t s = 0; s + 1 < P; ++s) {
    Slice b = kb.part(B.out((i + 2 * P - 1 - s) % P), w);
    kb.wait(i, w, prev);
    kb.copy(i, w, kb.at(prev, Out, b.off), kb.at(i, Out, b.off), b.len);
    if (s + 2 < P)
      kb.signal(i, w, next);
  }
}

/// Which peers workgroup w serves in a direct all-gather, and which part of the block:
/// workgroups are dealt to peers round-robin, as MSCCL++'s all-gather kernels deal thread
/// blocks (test/mscclpp-test/allgather_test.cu, localAllGatherSm: peer blockIdx % nPeer,
/// part blockIdx / nPeer), so every peer is served at once and a workgroup synchronises
/// with one peer only; with fewer workgroups than peers a workgroup serves several, whole.
struct PeerTask {
  uint32_t distance, part, parts;   // the peer is member (i + distance) mod P
};
llvm::SmallVector<PeerTask, 4> peerTasks(uint32_t P, uint32_t W, uint32_t w) {
  const uint32_t peers = P - 1;
  llvm::SmallVector<PeerTask, 4> tasks;
  if (W >= peers) {
    uint32_t k = w % peers;
    tasks.push_back({k + 1, w / peers, W / peers + (W % peers > k ? 1u : 0u)});
  } else {
    for (uint32_t k = w; k < peers; k += W)
      tasks.push_back({k + 1, 0, 1});
  }
  return tasks;
}

void agDirect(KernelBuilder &kb, uint32_t i, uint32_t w, const Blocks &B, Transfer t) {
  const uint32_t P = kb.P();
  const auto tasks = peerTasks(P, kb.W(), w);
  // The part of member m's block that the workgroups at one distance move, as an offset
  // in the block. Semaphores go by part: i's workgroup for distance d pairs with the one
  // for distance d at each peer (it writes to i + d, the one at i - d writes to i), so
  // both count the same parts.
  auto partOf = [&](uint32_t m, const PeerTask &x) {
    uint64_t len = B.out(m).len;
    return Slice{pieceOffset(len, x.parts, x.part), pieceSize(len, x.parts, x.part)};
  };
  // An all-gather sends each member's input (its block in the output is copied there by
  // the other workgroups); an all-reduce the reduced block, once every workgroup has
  // reduced its part. That barrier also puts each member's reduce-scatter signals and
  // waits before its all-gather ones, so the two phases may share channels: a semaphore
  // counts, and each phase's waits match its own signals.
  auto source = [&](uint32_t m, uint64_t off) {
    return B.afterReduceScatter ? kb.at(m, Out, B.out(m).off + off) : kb.at(m, In, off);
  };
  if (B.afterReduceScatter)
    kb.barrier(i, w, 0);
  if (t == Transfer::Put) {
    for (const PeerTask &x : tasks) {
      uint32_t j = (i + x.distance) % P;
      Slice b = partOf(i, x);
      kb.copy(i, w, source(i, b.off), kb.at(j, Out, B.out(i).off + b.off), b.len);
      kb.signal(i, w, j, x.part);
    }
    for (const PeerTask &x : tasks)
      kb.wait(i, w, (i + P - x.distance) % P, x.part);
    return;
  }
  for (const PeerTask &x : tasks)   // my part is there to read
    kb.signal(i, w, (i + P - x.distance) % P, x.part);
  for (const PeerTask &x : tasks) {
    uint32_t j = (i + x.distance) % P;
    kb.wait(i, w, j, x.part);
    Slice b = partOf(j, x);
    kb.copy(i, w, source(j, b.off), kb.at(i, Out, B.out(j).off + b.off), b.len);
  }
}

void alltoallDirect(KernelBuilder &kb, uint32_t i, uint32_t w, uint64_t bytes, Transfer t) {
  uint32_t P = kb.P();
  auto block = [&](uint32_t b) { return kb.part(Slice{b * bytes, bytes}, w); };
  uint64_t off = block(0).off;   // within a block
  kb.copy(i, w, kb.at(i, In, block(i).off), kb.at(i, Out, block(i).off), block(i).len);
  if (t == Transfer::Put) {
    for (uint32_t d = 1; d < P; ++d) {
      uint32_t j = (i + d) % P;
      kb.copy(i, w, kb.at(i, In, block(j).off), kb.at(j, Out, i * bytes + off), block(j).len);
      kb.signal(i, w, j);
    }
    for (uint32_t d = 1; d < P; ++d)
      kb.wait(i, w, (i + d) % P);
    return;
  }
  for (uint32_t d = 1; d < P; ++d)
    kb.signal(i, w, (i + d) % P);
  for (uint32_t d = 1; d < P; ++d)
    kb.wait(i, w, (i + d) % P);
  for (uint32_t d = 1; d < P; ++d) {
    uint32_t j = (i + d) % P;
    kb.copy(i, w, kb.at(j, In, i * bytes + off), kb.at(i, Out, block(j).off), block(j).len);
  }
}

/// Why collective `k` with algorithm `a` has no kernel form ("" when it has one).
std::string whyNoKernel(CollectiveKind k, CollAlgorithm a) {
  bool blocks = k == CollectiveKind::Allgather || k == CollectiveKind::Reducescatter ||
                k == CollectiveKind::Allreduce;
  if (!blocks && k != CollectiveKind::Alltoall)
    return "lower-collectives -coll-target=kernels builds allgather, reducescatter, allreduce "
           "and alltoall; lower " + collectiveKindName(k).str() + " to messages (the default "
           "-coll-target=messages)";
  if (k == CollectiveKind::Alltoall && a != CollAlgorithm::Direct)
    return "an alltoall kernel is built with the direct algorithm, not " +
           collAlgorithmName(a).str();
  if (blocks && a != CollAlgorithm::Ring && a != CollAlgorithm::Direct)
    return "a " + collectiveKindName(k).str() + " kernel is built with ring or direct, not " +
           collAlgorithmName(a).str();
  return "";
}

/// Builds every member's kernel of one instance; returns the kernel of each member.
std::vector<uint32_t> buildInstance(KernelLevel &k, uint32_t instance, CollectiveKind kind,
                                    CollAlgorithm a, uint64_t B, llvm::ArrayRef<uint32_t> ranks,
                                    const KernelLoweringOptions &o) {
  KernelBuilder kb(k, instance, ranks, o.workgroups);
  uint32_t P = kb.P();
  uint64_t buffers[NumBufferKinds] = {0, 0, 0};
  Blocks blocks;
  auto inPart = [&](uint32_t b) { return Slice{pieceOffset(B, P, b), pieceSize(B, P, b)}; };
  auto stride = [&](uint32_t b) { return Slice{b * B, B}; };
  auto whole = [&](uint32_t) { return Slice{0, B}; };
  bool ring = a == CollAlgorithm::Ring;
  bool put = o.transfer == Transfer::Put;
  // Scratch slots a reduce-scatter phase needs: ring put P-1, ring get P-2, direct put P-1.
  uint64_t slots = P < 2 ? 0 : !put && ring ? P - 2 : put ? P - 1 : 0;
  for (uint32_t i = 0; i < P; ++i)
    for (uint32_t w = 0; w < kb.W(); ++w) {
      if (P == 1 || kind == CollectiveKind::Alltoall) {
        if (kind == CollectiveKind::Alltoall)
          alltoallDirect(kb, i, w, B, o.transfer);
        else {
          Slice s = kb.part(Slice{0, B}, w);
          kb.copy(i, w, kb.at(i, In, s.off), kb.at(i, Out, s.off), s.len);
        }
        continue;
      }
      auto rs = ring ? rsRing : rsDirect;
      auto ag = ring ? agRing : agDirect;
      switch (kind) {
      case CollectiveKind::Allgather: {
        blocks.out = stride;
        Slice s = kb.part(Slice{0, B}, w);
        kb.copy(i, w, kb.at(i, In, s.off), kb.at(i, Out, i * B + s.off), s.len);
        ag(kb, i, w, blocks, o.transfer);
        break;
      }
      case CollectiveKind::Reducescatter:
        blocks.in = stride;
        blocks.out = whole;
        blocks.slot = B;
        rs(kb, i, w, blocks, o.transfer);
        break;
      default:   // allreduce: reduce-scatter blocks of B/P, then all-gather them
        blocks.in = blocks.out = inPart;
        blocks.slot = (B + P - 1) / P;
        blocks.afterReduceScatter = true;
        rs(kb, i, w, blocks, o.transfer);
        ag(kb, i, w, blocks, o.transfer);
        break;
      }
    }
  switch (kind) {
  case CollectiveKind::Allgather:
    buffers[0] = B;
    buffers[1] = P * B;
    break;
  case CollectiveKind::Reducescatter:
    buffers[0] = P * B;
    buffers[1] = B;
    buffers[2] = slots * B;
    break;
  case CollectiveKind::Alltoall:
    buffers[0] = buffers[1] = P * B;
    break;
  default:
    buffers[0] = buffers[1] = B;
    buffers[2] = slots * ((B + P - 1) / P);
    break;
  }
  std::vector<uint32_t> kernelOf;
  kb.finish(buffers, kernelOf);
  return kernelOf;
}

} // namespace

std::optional<Schedule> lowerToKernels(const Schedule &s, const KernelLoweringOptions &opts,
                                       DiagEngine &diags, llvm::StringRef where,
                                       Statistics *stats) {
  unsigned before = diags.errorCount();
  std::vector<uint64_t> base = instanceBases(s);
  llvm::ArrayRef<Communicator> comms = s.communicators();
  auto k = std::make_shared<KernelLevel>();
  k->numGpus = s.numRanks();
  // instance -> kernel of each communicator member; built when first met.
  std::vector<std::vector<uint32_t>> kernelsOf(base.back());
  std::vector<uint32_t> seq;
  std::vector<uint32_t> kernelOfOp(s.numOps(), ~0u);
  std::string lastKind;
  for (uint32_t r = 0; r < s.numRanks() && !diags.shouldStop(); ++r) {
    seq.assign(comms.size(), 0);
    for (uint32_t g = s.rankBegin(r), e = g + s.numOps(r); g < e; ++g) {
      if (s.kind(g) != OpKind::Collective)
        continue;
      const CollectiveInfo &c = s.collectives()[s.peer(g)];
      uint64_t inst = base[c.communicator] + seq[c.communicator]++;
      const std::vector<uint32_t> &ranks = comms[c.communicator].ranks;
      if (kernelsOf[inst].empty()) {
        CollAlgorithm a = CollAlgorithm(c.algorithm);
        if (a == CollAlgorithm::Auto)
          a = c.kind == CollectiveKind::Alltoall ? CollAlgorithm::Direct : CollAlgorithm::Ring;
        std::string why = whyNoKernel(c.kind, a);
        if (!why.empty()) {
          if (c.loc.isValid())
            diags.error(c.loc, why);
          else
            diags.error(where, "rank " + llvm::Twine(r) + ": " + s.opName(g) + ": " + why);
          kernelsOf[inst].assign(ranks.size(), ~0u);
          continue;
        }
        kernelsOf[inst] = buildInstance(*k, uint32_t(inst), c.kind, a, c.bytes, ranks, opts);
        lastKind = (collectiveKindName(c.kind) + "_" + collAlgorithmName(a) + "_" +
                    (opts.transfer == Transfer::Put ? "put" : "get")).str();
      }
      auto pos = llvm::find(ranks, r);
      if (pos != ranks.end())
        kernelOfOp[g] = kernelsOf[inst][pos - ranks.begin()];
    }
  }
  if (diags.errorCount() != before)
    return std::nullopt;
  if (base.back() == 1 && !k->kernels.empty()) {
    // One collective: name the kernels after it (an MSCCL++ plan's name and collective).
    k->name = lastKind;
    k->collective = lastKind.substr(0, lastKind.find('_'));
  }
  k->canonicalize();
  ScheduleBuilder b(s.numRanks(), s.hasLabels());
  b.reserve(s.numOps(), s.numDependencies());
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    b.beginRank(r);
    for (uint32_t g = s.rankBegin(r), e = g + s.numOps(r); g < e; ++g) {
      std::string label = s.hasLabels() ? s.label(g) : std::string();
      if (s.kind(g) == OpKind::Collective)
        b.addOp(OpKind::Kernel, kernelOfOp[g], 0, 0, s.cpu(g), s.nic(g), label);
      else
        b.addOp(s.kind(g), s.peer(g), s.size(g), s.tag(g), s.cpu(g), s.nic(g), label);
    }
    for (uint32_t i = 0; i < s.numOps(r); ++i)
      for (uint32_t raw : s.successorsRaw(s.rankBegin(r) + i))
        b.addDependency(raw & ~Schedule::IRequiresBit, i,
                        (raw & Schedule::IRequiresBit) ? DepKind::IRequires : DepKind::Requires);
    b.endRank();
  }
  if (stats) {
    stats->add("lower-collectives", "kernels", "GPU kernels built for collectives", k->kernels.size());
    stats->add("lower-collectives", "gpu-ops", "GPU operations in them", k->ops.size());
  }
  b.setKernels(std::move(k));
  return b.finish();
}

} // namespace infracc::coll
