// lower-kernels: replaces every GPU kernel launch by sends, recvs and calcs, so that
// plain-GOAL tools (LogGOPSim, htsim, the built-in simulator, the sensitivity
// analyses) can run a kernel-level schedule. Each workgroup becomes a chain of ops on
// its own compute stream (the launch's cpu + workgroup index):
//
//   MemcpyOp/StoreOp to a peer (put)   send here; the peer posts the recv when its
//                                      kernel starts (data arrives one-sided)
//   MemcpyOp/LoadOp from a peer (get)  a request here -> recv there -> the data sent
//                                      back -> recv here (a remote load is a round trip)
//   local MemcpyOp                     calc of bytes x -gpu-copy-ns-per-byte
//   ReduceOp                           calc of bytes x (inputs-1) x -gpu-reduce-ns-per-byte
//   channel SemaphoreReleaseOp         8-byte send to the semaphore's GPU
//   channel SemaphoreAcquireOp         the matching recv (the k-th acquire takes the
//                                      (k - init)-th release); it also waits for the data
//                                      the releasing workgroup sent before releasing
//   device semaphores                  a calc 0 that requires the matching release's
//   BarrierOp                          one calc 0 the meeting workgroups pass through
//   reading LL packets                 waits for the puts that wrote them (the flags)
//   multicast (NVLS)                   the same per member of the group
//   NopOp, FlushOp                     nothing (a workgroup's chain is in order anyway)
//   LoopOp                             its body once per iteration, on that slice
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "passes/Pass.h"
#include "passes/collectives/Splice.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"
#include "support/Options.h"

#include <fmt/format.h>
#include <llvm/ADT/DenseMap.h>

#include <cmath>
#include <map>
#include <tuple>

namespace infracc {
namespace {

namespace cl = llvm::cl;
using coll::Fragment;

cl::opt<double> CopyNsPerByte("gpu-copy-ns-per-byte", cl::init(0), cl::value_desc("ns"),
                              cl::desc("lower-kernels: cost of a GPU-local copy per byte, as a "
                                       "calc (default 0)"),
                              cl::cat(opts::passCategory()));
cl::opt<double> ReduceNsPerByte("gpu-reduce-ns-per-byte", cl::init(0), cl::value_desc("ns"),
                                cl::desc("lower-kernels: cost of combining one byte of one more "
                                         "input in a ReduceOp, as a calc (default 0)"),
                                cl::cat(opts::passCategory()));

/// Bytes of a control message: a semaphore update or a remote-load request.
constexpr uint64_t ControlBytes = 8;
/// What an operation of the lowered schedule costs while it is built, as for lowered
/// collectives (docs/reliability.md, "Limits").
constexpr uint64_t BytesPerLoweredOp = 40;
constexpr uint32_t TagBase = 0x80000000u;

class KernelLowerer {
public:
  KernelLowerer(const Schedule &s, DiagEngine &diags, llvm::StringRef where)
      : s_(s), k_(*s.kernels()), diags_(diags), where_(where), lookup_(k_) {}
  bool prepare();
  Schedule run(Statistics &stats);
  /// False, with an error, when the lowered schedule would not fit in -max-memory:
  /// loops are lowered once per iteration, so a small plan or kernel file with a large
  /// buffer (-msg-size) can mean billions of operations.
  bool fitsInMemory();

private:
  struct Incoming {           // a put's recv on the receiving side, for packet readers
    BufferKind buffer;
    uint64_t lo, hi;
    uint32_t recv;
  };
  struct PacketRead {         // a workgroup reading LL packets of its own GPU
    uint32_t kernel, wg, op;  // op: the calc that waits for the packets
    BufferKind buffer;
    uint64_t lo, hi;
  };
  struct Release {
    uint32_t op;              // channel: the send; device: the calc
    uint32_t tag = 0;
    std::vector<uint32_t> carried;   // data recvs (in the acquirer's fragment)
  };
  struct Acquire {
    uint32_t kernel, op;
  };
  struct KernelState {
    Fragment frag;
    uint16_t cpu = 0, nic = 0;
    std::vector<uint32_t> tail;                 // per workgroup: its chain's last op
    std::vector<Incoming> incoming;
    // (workgroup, peer) -> data recvs (in the peer's fragment) a release will carry
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> unsignalled;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> barrierNode;   // (id, occurrence)
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> barrierSeen;   // (workgroup, id)
  };

  uint32_t add(uint32_t kn, OpKind kind, uint32_t peer, uint64_t size, uint32_t tag, uint32_t cpu) {
    Fragment &f = ks_[kn].frag;
    f.ops.push_back({kind, peer, size, tag, uint16_t(cpu), ks_[kn].nic});
    return uint32_t(f.ops.size() - 1);
  }
  /// An op in workgroup wg's chain.
  uint32_t chain(uint32_t kn, uint32_t wg, OpKind kind, uint32_t peer, uint64_t size,
                 uint32_t tag = 0) {
    uint32_t op = add(kn, kind, peer, size, tag, ks_[kn].cpu + wg);
    after(kn, wg, op);
    return op;
  }
  void after(uint32_t kn, uint32_t wg, uint32_t op) {
    uint32_t &t = ks_[kn].tail[wg];
    if (t != ~0u)
      ks_[kn].frag.deps.push_back({op, t});
    t = op;
  }
  void req(uint32_t kn, uint32_t succ, uint32_t pred) { ks_[kn].frag.deps.push_back({succ, pred}); }
  uint32_t tag(uint32_t from, uint32_t to) { return TagBase | seq_[(uint64_t(from) << 32) | to]++; }
  uint32_t peerKernel(uint32_t kn, uint32_t gpu) const {
    return lookup_.find(gpu, k_.kernels[kn].instance);
  }
  uint64_t calcNs(double perByte, uint64_t bytes) const {
    return uint64_t(std::llround(double(bytes) * perByte));
  }

  void lowerKernel(uint32_t kn);
  void lowerGroup(uint32_t kn, uint32_t wg, llvm::ArrayRef<GpuOp> group, uint64_t shift,
                  uint64_t bytes);
  void put(uint32_t kn, uint32_t wg, const BufferRef &dst, uint32_t to, uint64_t wire,
           uint64_t lo);
  void get(uint32_t kn, uint32_t wg, uint32_t from, uint64_t wire);
  void resolveSemaphores();
  void resolvePacketReads();

  const Schedule &s_;
  const KernelLevel &k_;
  DiagEngine &diags_;
  llvm::StringRef where_;
  KernelLookup lookup_;
  std::vector<KernelState> ks_;
  std::vector<PacketRead> packetReads_;
  llvm::DenseMap<uint64_t, uint32_t> seq_;
  std::vector<std::vector<Release>> releases_;
  std::vector<std::vector<Acquire>> acquires_;
  uint64_t messages_ = 0;
};

bool KernelLowerer::prepare() {
  unsigned before = diags_.errorCount();
  ks_.resize(k_.kernels.size());
  for (uint32_t r = 0; r < s_.numRanks(); ++r)
    for (uint32_t g = s_.rankBegin(r), e = g + s_.numOps(r); g < e; ++g) {
      OpKind kind = s_.kind(g);
      if ((kind == OpKind::Send || kind == OpKind::Recv) && s_.tag(g) != AnyTag &&
          (s_.tag(g) & TagBase))
        diags_.error(where_, "rank " + llvm::Twine(r) + ": " + opKindName(kind) + " " +
                                 s_.opName(g) + " uses tag " + llvm::Twine(s_.tag(g)) +
                                 ", but tags from 2147483648 up are reserved for lowered kernels");
      if (kind != OpKind::Kernel)
        continue;
      KernelState &st = ks_[s_.peer(g)];
      st.cpu = uint16_t(s_.cpu(g));
      st.nic = uint16_t(s_.nic(g));
      if (s_.cpu(g) + k_.kernels[s_.peer(g)].numWorkgroups > ScheduleBuilder::MaxCpu + 1)
        diags_.error(where_, "rank " + llvm::Twine(r) + ": the kernel's " +
                                 llvm::Twine(k_.kernels[s_.peer(g)].numWorkgroups) +
                                 " workgroups, one cpu each from cpu " + llvm::Twine(s_.cpu(g)) +
                                 ", exceed cpu " + llvm::Twine(ScheduleBuilder::MaxCpu));
    }
  releases_.resize(k_.semaphores.size());
  acquires_.resize(k_.semaphores.size());
  return diags_.errorCount() == before;
}

// The operations lowerKernel() makes for a kernel, counted without making them (at
// most that many: a data op of zero bytes makes none), saturating at 2^64 - 1. As in
// lowerGroup(): a group of fused data ops makes a wait for packets read here, 4 ops per
// remote source (the request, its recv, the reply, its recv), a calc per reduce, 2 per
// remote destination (the send and its recv) and a local copy; a release its send and
// perhaps an unmatched recv; an acquire or a barrier one op.
static uint64_t loweredOps(const KernelLevel &k, const Kernel &K) {
  auto remote = [&](const BufferRef &r) -> uint64_t {
    if (!r.multicast)
      return r.gpu != K.gpu;
    uint64_t n = 0;
    if (r.gpu < k.groups.size())
      for (uint32_t m : k.groups[r.gpu].gpus)
        n += m != K.gpu;
    return n;
  };
  auto group = [&](llvm::ArrayRef<GpuOp> g) -> uint64_t {
    const GpuOp &o = g[0];
    if (!isDataOp(o.kind)) {
      switch (o.kind) {
      case GpuOpKind::SemRelease:
        return 2;
      case GpuOpKind::SemAcquire:
      case GpuOpKind::Barrier:
        return 1;
      default:
        return 0;
      }
    }
    uint64_t n = 0;
    bool wait = false, reduce = false, remoteLoad = false, localWrite = false;
    for (const GpuOp &x : g) {
      reduce |= x.kind == GpuOpKind::Reduce;
      n += x.kind == GpuOpKind::Reduce;
      if (x.readsMemory()) {
        uint64_t r = remote(x.src);
        remoteLoad |= r > 0;
        n += 4 * r;
        wait |= x.src.packet && !x.src.multicast && x.src.gpu == K.gpu;
      }
      if (x.writesMemory()) {
        uint64_t r = remote(x.dst);
        n += 2 * r;
        localWrite |= x.dst.multicast ? x.dst.gpu < k.groups.size() &&
                                            r < k.groups[x.dst.gpu].gpus.size()
                                      : r == 0;
      }
    }
    return n + wait + (localWrite && !reduce && !remoteLoad);
  };
  // The ops of [begin, end), fused runs taken together.
  auto run = [&](llvm::ArrayRef<GpuOp> ops, uint32_t begin, uint32_t end) {
    uint64_t n = 0;
    for (uint32_t j = begin; j < end;) {
      uint32_t g = j;
      while (g + 1 < end && ops[g].fusedWithNext())
        ++g;
      n = saturatingAdd(n, group(ops.slice(j, g + 1 - j)));
      j = g + 1;
    }
    return n;
  };
  uint64_t total = 0;
  for (uint32_t wg = 0; wg < K.numWorkgroups; ++wg) {
    llvm::ArrayRef<GpuOp> ops = k.opsOf(k.workgroups[K.firstWorkgroup + wg]);
    for (uint32_t i = 0; i < ops.size();) {
      if (ops[i].kind != GpuOpKind::Loop) {
        uint32_t end = i + 1;
        while (end < ops.size() && ops[end - 1].fusedWithNext() &&
               ops[end].kind != GpuOpKind::Loop)
          ++end;
        total = saturatingAdd(total, run(ops, i, end));
        i = end;
        continue;
      }
      uint32_t end = std::min<uint32_t>(i + 1 + ops[i].id, ops.size());
      total = saturatingAdd(total, saturatingMul(run(ops, i + 1, end), ops[i].count));
      i = end;
    }
  }
  return total;
}

bool KernelLowerer::fitsInMemory() {
  uint64_t total = 0, largest = 0;
  uint32_t big = 0;
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
    uint64_t n = loweredOps(k_, k_.kernels[kn]);
    total = saturatingAdd(total, n);
    if (n > largest) {
      largest = n;
      big = kn;
    }
  }
  if (!largest)
    return true;
  const Kernel &K = k_.kernels[big];
  std::string what = fmt::format("lowering the kernels to messages (the largest: GPU {}'s "
                                 "kernel of {} workgroup{} over {} bytes of input, {} "
                                 "operations)",
                                 K.gpu, K.numWorkgroups, K.numWorkgroups == 1 ? "" : "s",
                                 K.buffer(BufferKind::Input), largest);
  if (std::optional<std::string> msg = exceedsMemory(what, total, BytesPerLoweredOp)) {
    diags_.error(where_, *msg);
    return false;
  }
  return true;
}

void KernelLowerer::put(uint32_t kn, uint32_t wg, const BufferRef &dst, uint32_t to,
                        uint64_t wire, uint64_t lo) {
  uint32_t me = k_.kernels[kn].gpu;
  uint32_t t = tag(me, to);
  chain(kn, wg, OpKind::Send, to, wire, t);
  uint32_t pk = peerKernel(kn, to);
  uint32_t recv = add(pk, OpKind::Recv, me, wire, t, ks_[pk].cpu);
  ks_[kn].unsignalled[{wg, to}].push_back(recv);
  if (dst.packet)
    ks_[pk].incoming.push_back({dst.buffer, lo, lo + wire, recv});
  ++messages_;
}

void KernelLowerer::get(uint32_t kn, uint32_t wg, uint32_t from, uint64_t wire) {
  uint32_t me = k_.kernels[kn].gpu;
  uint32_t pk = peerKernel(kn, from);
  uint32_t t1 = tag(me, from), t2 = tag(from, me);
  chain(kn, wg, OpKind::Send, from, ControlBytes, t1);
  uint32_t reqRecv = add(pk, OpKind::Recv, me, ControlBytes, t1, ks_[pk].cpu);
  uint32_t reply = add(pk, OpKind::Send, me, wire, t2, ks_[pk].cpu);
  req(pk, reply, reqRecv);
  chain(kn, wg, OpKind::Recv, from, wire, t2);
  messages_ += 2;
}

void KernelLowerer::lowerGroup(uint32_t kn, uint32_t wg, llvm::ArrayRef<GpuOp> group,
                               uint64_t shift, uint64_t bytes) {
  uint32_t me = k_.kernels[kn].gpu;
  auto members = [&](const BufferRef &r) -> std::vector<uint32_t> {
    if (r.multicast)
      return k_.groups[r.gpu].gpus;
    return {r.gpu};
  };
  // Reading LL packets waits for the puts that wrote them: a calc here, joined to
  // those puts' recvs once every kernel is lowered (resolvePacketReads; the writer may
  // be a kernel lowered later).
  uint32_t arrival = ~0u;
  bool remoteLoad = false, reduce = false;
  for (const GpuOp &o : group) {
    reduce |= o.kind == GpuOpKind::Reduce;
    if (!o.readsMemory())
      continue;
    for (uint32_t m : members(o.src))
      remoteLoad |= m != me;
    if (o.src.packet && !o.src.multicast && o.src.gpu == me) {
      uint64_t lo = sliceOffset(o.src, shift, k_.kernels[kn].scratchWrap);
      if (arrival == ~0u)
        arrival = chain(kn, wg, OpKind::Calc, 0, 0);
      packetReads_.push_back({kn, wg, arrival, o.src.buffer, lo, lo + o.src.footprint(bytes)});
    }
  }
  for (const GpuOp &o : group)
    if (o.readsMemory())
      for (uint32_t m : members(o.src))
        if (m != me)
          get(kn, wg, m, o.src.footprint(bytes));
  for (const GpuOp &o : group)
    if (o.kind == GpuOpKind::Reduce)
      chain(kn, wg, OpKind::Calc, 0,
            calcNs(ReduceNsPerByte, bytes * (o.id > 1 ? o.id - 1 : 1)));
  bool localCopyDone = false;
  for (const GpuOp &o : group) {
    if (!o.writesMemory())
      continue;
    for (uint32_t m : members(o.dst)) {
      if (m != me) {
        put(kn, wg, o.dst, m, o.dst.footprint(bytes),
            sliceOffset(o.dst, shift, k_.kernels[kn].scratchWrap));
      } else if (!reduce && !remoteLoad && !localCopyDone) {
        chain(kn, wg, OpKind::Calc, 0, calcNs(CopyNsPerByte, bytes));
        localCopyDone = true;
      }
    }
  }
}

void KernelLowerer::lowerKernel(uint32_t kn) {
  const Kernel &K = k_.kernels[kn];
  KernelState &st = ks_[kn];
  st.tail.assign(K.numWorkgroups, ~0u);
  for (uint32_t wg = 0; wg < K.numWorkgroups; ++wg) {
    llvm::ArrayRef<GpuOp> ops = k_.opsOf(k_.workgroups[K.firstWorkgroup + wg]);
    // A loop's body with its iterations, or one op with those fused to it (lowered
    // together, once): [begin, end) repeated `times`.
    for (uint32_t i = 0; i < ops.size();) {
      uint32_t begin = i, end = i + 1;
      uint64_t times = 1, unit = 0;
      if (ops[i].kind == GpuOpKind::Loop) {
        begin = i + 1;
        end = begin + ops[i].id;
        times = ops[i].count;
        unit = ops[i].bytes;
      } else {
        while (end < ops.size() && ops[end - 1].fusedWithNext() &&
               ops[end].kind != GpuOpKind::Loop)
          ++end;
      }
      for (uint64_t it = 0; it < times; ++it)
        for (uint32_t j = begin; j < end;) {
          uint32_t g = j;
          while (g + 1 < end && ops[g].fusedWithNext())
            ++g;
          llvm::ArrayRef<GpuOp> group = ops.slice(j, g + 1 - j);
          j = g + 1;
          const GpuOp &o = group[0];
          if (isDataOp(o.kind)) {
            uint64_t bytes = unit ? loopSliceBytes(o.bytes, unit, it) : o.bytes;
            if (bytes)
              lowerGroup(kn, wg, group, unit * it, bytes);
            continue;
          }
          switch (o.kind) {
          case GpuOpKind::SemRelease: {
            const Semaphore &S = k_.semaphores[o.id];
            Release rel;
            if (S.kind == SemaphoreKind::Device) {
              rel.op = chain(kn, wg, OpKind::Calc, 0, 0);
            } else {
              rel.tag = tag(K.gpu, S.gpu);
              rel.op = chain(kn, wg, OpKind::Send, S.gpu, ControlBytes, rel.tag);
              rel.carried = std::move(st.unsignalled[{wg, S.gpu}]);
              st.unsignalled.erase({wg, S.gpu});
              ++messages_;
            }
            releases_[o.id].push_back(std::move(rel));
            break;
          }
          case GpuOpKind::SemAcquire:
            // A placeholder; resolveSemaphores() makes it the matching recv (or keeps a
            // calc 0 when the semaphore's initial count covers it).
            acquires_[o.id].push_back({kn, chain(kn, wg, OpKind::Calc, 0, 0)});
            break;
          case GpuOpKind::Barrier: {
            uint32_t occurrence = st.barrierSeen[{wg, o.id}]++;
            auto [it2, fresh] = st.barrierNode.try_emplace({o.id, occurrence}, 0);
            if (fresh)
              it2->second = add(kn, OpKind::Calc, 0, 0, 0, st.cpu);
            uint32_t node = it2->second;
            uint32_t &t = st.tail[wg];
            if (t != ~0u)
              req(kn, node, t);
            t = node;
            break;
          }
          default:   // Nop, Flush: a workgroup's chain is in order already
            break;
          }
        }
      i = end;
    }
  }
}

// A workgroup's n-th read of a range of packets waits for the n-th put into that range
// (each put's range counted on its own when a read spans several): LL packets carry a
// flag per round, so a read takes the round it is in, whichever kernel wrote it and in
// whatever order the kernels were lowered. A read past the last put waits for the last.
void KernelLowerer::resolvePacketReads() {
  // Per kernel and put range, the puts' recvs in program order.
  std::vector<std::map<std::tuple<BufferKind, uint64_t, uint64_t>, std::vector<uint32_t>>> puts(
      ks_.size());
  for (uint32_t kn = 0; kn < ks_.size(); ++kn)
    for (const Incoming &in : ks_[kn].incoming)
      puts[kn][{in.buffer, in.lo, in.hi}].push_back(in.recv);
  // (kernel, workgroup, put range) -> reads of it so far.
  std::map<std::tuple<uint32_t, uint32_t, BufferKind, uint64_t, uint64_t>, size_t> seen;
  for (const PacketRead &r : packetReads_)
    for (const auto &[range, recvs] : puts[r.kernel]) {
      auto [buffer, lo, hi] = range;
      if (buffer != r.buffer || !(lo < r.hi && r.lo < hi))
        continue;
      size_t n = seen[{r.kernel, r.wg, buffer, lo, hi}]++;
      req(r.kernel, r.op, recvs[std::min(n, recvs.size() - 1)]);
    }
}

void KernelLowerer::resolveSemaphores() {
  for (uint32_t s = 0; s < k_.semaphores.size(); ++s) {
    const Semaphore &S = k_.semaphores[s];
    std::vector<Release> &rel = releases_[s];
    size_t used = 0;
    for (size_t j = 0; j < acquires_[s].size(); ++j) {
      if (j < S.init)
        continue;   // the initial count: no wait
      size_t r = j - S.init;
      if (r >= rel.size())
        break;      // the verifier rules this out
      const Acquire &a = acquires_[s][j];
      Fragment::Op &op = ks_[a.kernel].frag.ops[a.op];
      if (S.kind == SemaphoreKind::Device) {
        req(a.kernel, a.op, rel[r].op);
      } else {
        op.kind = OpKind::Recv;
        op.peer = S.peer;
        op.size = ControlBytes;
        op.tag = rel[r].tag;
        for (uint32_t d : rel[r].carried)
          req(a.kernel, a.op, d);
      }
      used = r + 1;
    }
    // Releases nobody waits for still need their recv.
    if (S.kind != SemaphoreKind::Device)
      for (size_t r = used; r < rel.size(); ++r) {
        uint32_t pk = lookup_.find(S.gpu, S.instance);
        add(pk, OpKind::Recv, S.peer, ControlBytes, rel[r].tag, ks_[pk].cpu);
      }
  }
}

Schedule KernelLowerer::run(Statistics &stats) {
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn)
    lowerKernel(kn);
  resolveSemaphores();
  resolvePacketReads();
  ScheduleBuilder b(s_.numRanks());
  coll::Splicer splicer;
  Fragment frag;
  for (uint32_t r = 0; r < s_.numRanks(); ++r)
    splicer.rank(s_, r, b, frag, [&](uint32_t g, uint32_t) {
      if (s_.kind(g) != OpKind::Kernel)
        return false;
      frag = std::move(ks_[s_.peer(g)].frag);
      return true;
    });
  Schedule out = b.finish();
  stats.add("lower-kernels", "kernels", "GPU kernels lowered to messages", k_.kernels.size());
  stats.add("lower-kernels", "messages", "Sends created by lowering kernels", messages_);
  stats.add("lower-kernels", "ops", "Operations after lowering kernels", out.numOps());
  return out;
}

class LowerKernelsPass : public Pass {
public:
  llvm::StringRef name() const override { return "lower-kernels"; }
  llvm::Error run(Module &m, PassContext &ctx) override {
    if (!m.schedule || !m.schedule->kernels())
      return llvm::Error::success();
    if (!(CopyNsPerByte >= 0) || !(ReduceNsPerByte >= 0))
      return usageError("-gpu-copy-ns-per-byte and -gpu-reduce-ns-per-byte must be 0 or more");
    KernelLowerer l(*m.schedule, ctx.diags, m.workloadSource);
    if (!l.prepare() || !l.fitsInMemory())
      return reportedError();
    m.schedule = l.run(ctx.stats);
    return llvm::Error::success();
  }
};

RegisterPass<LowerKernelsPass> X("lower-kernels",
                                 "replace GPU kernels by sends, recvs and calcs (remote copies "
                                 "become messages, local ones calcs)");

} // namespace
} // namespace infracc
