// -emit=msccl: the kernel level as an MSCCL++ execution plan (formats/MscclPlan.h).
// Reading the plan back (with the -msg-size it names in min/max_message_size) gives
// an equal kernel level: the writer inverts the reader's op mapping (docs/loadstore.md).
//
// Byte ranges become chunk ranges of one chunk size: the greatest common divisor of
// every buffer size, offset, size and pipeline unit, so each range is exact.
// Channels are declared as the operations need them: the k-th channel from a to b
// carries semaphores numbered k (MSCCL++ pairs the k-th channel of each side).
#include "formats/MscclPlan.h"
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

namespace infracc::msccl {
namespace {

using json = nlohmann::ordered_json;

/// Where a GPU's channels and remote buffers are, as the writer declares them.
struct GpuPlan {
  // (type slot 0 memory / 1 port, peer) -> channels needed
  std::map<std::pair<int, uint32_t>, uint32_t> channelsTo;
  std::map<std::tuple<int, uint32_t, uint32_t>, uint32_t> channelIndex;   // (slot, peer, k)
  std::map<std::tuple<uint32_t, BufferKind, int>, uint32_t> remoteBuffer; // (peer, kind, slot)
  std::vector<std::tuple<uint32_t, BufferKind, int>> remoteList;
  std::vector<uint32_t> switchGroups;   // multicast groups, in switch-channel order
  json channels = json::array();
};

class PlanWriter {
public:
  PlanWriter(const KernelLevel &k, DiagEngine &diags, llvm::StringRef where)
      : k_(k), d_(diags), where_(where) {}
  std::optional<json> write();

private:
  bool fail(uint32_t kn, uint32_t wg, uint32_t op, const llvm::Twine &msg) {
    d_.error(where_, describeGpuOp(k_, kn, wg, op) + ": " + msg);
    return false;
  }
  bool checkShape();
  void chooseChunk();
  void declareChannels();
  bool writeGpu(uint32_t kn, json &out);
  bool writeOps(uint32_t kn, uint32_t wg, uint32_t begin, uint32_t end, json &ops);
  bool writeGroup(uint32_t kn, uint32_t wg, uint32_t first, uint32_t end, json &ops);

  // Per threadblock while it is written.
  struct Tb {
    std::vector<uint32_t> chans[3];   // gpu channel indices (memory, port) / switch entries
    std::vector<uint32_t> refs[2];    // gpu remote buffer ids per access type
  };
  uint32_t tbChannel(Tb &tb, int slot, uint32_t gpuIndex) {
    auto it = llvm::find(tb.chans[slot], gpuIndex);
    if (it != tb.chans[slot].end())
      return uint32_t(it - tb.chans[slot].begin());
    tb.chans[slot].push_back(gpuIndex);
    return uint32_t(tb.chans[slot].size() - 1);
  }
  json buff(uint32_t kn, Tb &tb, const BufferRef &r, uint64_t bytes, int slot);
  json channelIds(uint32_t kn, Tb &tb, int slot, uint32_t peer, uint32_t k = 0) {
    GpuPlan &gp = plans_[k_.kernels[kn].gpu];
    return json::array({tbChannel(tb, slot, gp.channelIndex.at({slot, peer, k}))});
  }

  const KernelLevel &k_;
  DiagEngine &d_;
  llvm::StringRef where_;
  uint64_t chunk_ = 1, alignment_ = 1;
  bool packets_ = false, reuse_ = false;
  std::vector<GpuPlan> plans_;
  std::vector<uint32_t> kernelOfGpu_;
  Tb *tb_ = nullptr;
};

int slotOf(uint8_t flags) { return (flags & gpuop::Proxy) ? 1 : 0; }

bool PlanWriter::checkShape() {
  kernelOfGpu_.assign(k_.numGpus, ~0u);
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
    const Kernel &K = k_.kernels[kn];
    if (K.instance != k_.kernels[0].instance || kernelOfGpu_[K.gpu] != ~0u) {
      d_.error(where_, "an MSCCL++ execution plan runs one kernel per GPU, all of one "
                       "collective; this kernel level has " + llvm::Twine(k_.kernels.size()) +
                       " kernels on " + llvm::Twine(k_.numGpus) + " GPUs (lower one collective "
                       "at a time)");
      return false;
    }
    kernelOfGpu_[K.gpu] = kn;
  }
  for (uint32_t g = 0; g < k_.numGpus; ++g)
    if (kernelOfGpu_[g] == ~0u) {
      d_.error(where_, "gpu " + llvm::Twine(g) + " runs no kernel; an MSCCL++ plan has one per GPU");
      return false;
    }
  for (uint32_t s = 0; s < k_.semaphores.size(); ++s) {
    const Semaphore &S = k_.semaphores[s];
    uint32_t expected = 0;
    for (uint32_t t = 0; t < s; ++t)
      expected += k_.semaphores[t].kind == SemaphoreKind::Device && k_.semaphores[t].gpu == S.gpu;
    if (S.kind == SemaphoreKind::Device && S.index != expected) {
      d_.error(where_, "gpu " + llvm::Twine(S.gpu) + "'s device semaphores are not numbered 0, "
                       "1, ... in order; MSCCL++ lists them by number");
      return false;
    }
    if (S.kind != SemaphoreKind::Device && S.init != 0) {
      d_.error(where_, "semaphore s" + llvm::Twine(s) + " of a channel starts at " +
                           llvm::Twine(S.init) + "; MSCCL++'s channel semaphores start at 0");
      return false;
    }
  }
  return true;
}

void PlanWriter::chooseChunk() {
  uint64_t g = 0;
  auto take = [&](uint64_t v) { g = std::gcd(g, v); };
  for (const Kernel &K : k_.kernels)
    for (unsigned b = 0; b < NumBufferKinds; ++b)
      take(K.bufferBytes[b]);
  for (const GpuOp &o : k_.ops) {
    packets_ |= (o.readsMemory() && o.src.packet) || (o.writesMemory() && o.dst.packet);
    if (o.kind == GpuOpKind::Loop) {
      take(o.bytes);
      continue;
    }
    if (!isDataOp(o.kind))
      continue;
    take(o.bytes);
    if (o.readsMemory())
      take(o.src.packet ? o.src.offset / 2 : o.src.offset);
    if (o.writesMemory())
      take(o.dst.packet ? o.dst.offset / 2 : o.dst.offset);
  }
  for (const Kernel &K : k_.kernels) {
    reuse_ |= K.scratchWrap != 0;
    take(K.scratchWrap);
    if (packets_)
      take(K.buffer(BufferKind::Scratch) / 2);
  }
  chunk_ = g ? g : 1;
  alignment_ = 1;
  while (alignment_ < DefaultBufferAlignment && chunk_ % (alignment_ * 2) == 0)
    alignment_ *= 2;
}

void PlanWriter::declareChannels() {
  plans_.assign(k_.numGpus, GpuPlan{});
  auto need = [&](uint32_t gpu, int slot, uint32_t peer, uint32_t k) {
    uint32_t &n = plans_[gpu].channelsTo[{slot, peer}];
    n = std::max(n, k + 1);
  };
  for (const Semaphore &S : k_.semaphores)
    if (S.kind != SemaphoreKind::Device) {
      int slot = S.kind == SemaphoreKind::Proxy ? 1 : 0;
      need(S.peer, slot, S.gpu, S.index);
      need(S.gpu, slot, S.peer, S.index);
    }
  for (const Kernel &K : k_.kernels)
    for (const Workgroup &wg : k_.workgroupsOf(K))
      for (const GpuOp &o : k_.opsOf(wg)) {
        if (o.kind == GpuOpKind::Flush)
          need(K.gpu, 1, o.id, 0);
        for (const BufferRef *r : {&o.src, &o.dst}) {
          bool used = r == &o.src ? o.readsMemory() : o.writesMemory();
          if (used && !r->multicast && r->gpu != K.gpu)
            need(K.gpu, slotOf(o.flags), r->gpu, 0);
        }
      }
  for (uint32_t g = 0; g < k_.numGpus; ++g) {
    GpuPlan &gp = plans_[g];
    for (int slot = 0; slot < 2; ++slot) {
      uint32_t levels = 0;
      for (auto &[key, n] : gp.channelsTo)
        if (key.first == slot)
          levels = std::max(levels, n);
      uint32_t index = 0;
      for (uint32_t level = 0; level < levels; ++level) {
        json peers = json::array();
        for (auto &[key, n] : gp.channelsTo)
          if (key.first == slot && n > level) {
            peers.push_back(key.second);
            gp.channelIndex[{slot, key.second, level}] = index++;
          }
        gp.channels.push_back({{"channel_type", slot ? "port" : "memory"}, {"connected_to", peers}});
      }
    }
    for (uint32_t i = 0; i < k_.groups.size(); ++i) {
      const MulticastGroup &G = k_.groups[i];
      if (!llvm::is_contained(G.gpus, g))
        continue;
      gp.switchGroups.push_back(i);
      gp.channels.push_back({{"channel_type", "switch"},
                             {"buffer_type", bufferLetter(G.buffer).str()},
                             {"rank_groups", json::array({{{"size", G.gpus.size()},
                                                           {"ranks", G.gpus}}})}});
    }
  }
}

json PlanWriter::buff(uint32_t kn, Tb &tb, const BufferRef &r, uint64_t bytes, int slot) {
  uint32_t me = k_.kernels[kn].gpu;
  GpuPlan &gp = plans_[me];
  uint64_t offset = r.packet ? r.offset / 2 : r.offset;
  json b;
  if (r.multicast) {
    uint32_t entry = uint32_t(llvm::find(gp.switchGroups, r.gpu) - gp.switchGroups.begin());
    b["switch_channel_id"] = tbChannel(tb, 2, entry);
  } else if (r.gpu == me) {
    b["type"] = bufferLetter(r.buffer).str();
  } else {
    auto key = std::make_tuple(r.gpu, r.buffer, slot);
    auto [it, fresh] = gp.remoteBuffer.try_emplace(key, uint32_t(gp.remoteList.size()));
    if (fresh)
      gp.remoteList.push_back(key);
    auto ref = llvm::find(tb.refs[slot], it->second);
    if (ref == tb.refs[slot].end()) {
      tb.refs[slot].push_back(it->second);
      ref = tb.refs[slot].end() - 1;
    }
    b["buffer_id"] = uint32_t(ref - tb.refs[slot].begin());
  }
  b["index"] = offset / chunk_;
  b["size"] = bytes / chunk_;
  return b;
}

/// A fused group of loads, at most one reduce and stores: MSCCL++'s reduce family
/// (re, res, rre, rres, repkt, respkt, recpkt, recspkt), or rppkt (no reduce).
bool PlanWriter::writeGroup(uint32_t kn, uint32_t wg, uint32_t first, uint32_t end, json &ops) {
  Tb &tb = *tb_;
  uint32_t me = k_.kernels[kn].gpu;
  llvm::ArrayRef<GpuOp> g = k_.opsOf(k_.workgroups[k_.kernels[kn].firstWorkgroup + wg])
                                .slice(first, end - first);
  auto isLocal = [&](const BufferRef &r) { return !r.multicast && r.gpu == me; };
  llvm::SmallVector<const BufferRef *, 4> loads, stores;
  bool reduce = false;
  for (const GpuOp &o : g) {
    if (o.kind == GpuOpKind::Memcpy || (o.flags & gpuop::Proxy))
      return fail(kn, wg, first, "a fused group with a memcpy or a proxy transfer has no MSCCL++ "
                                 "operation");
    if (o.kind == GpuOpKind::Load)
      loads.push_back(&o.src);
    if (o.kind == GpuOpKind::Store)
      stores.push_back(&o.dst);
    reduce |= o.kind == GpuOpKind::Reduce;
  }
  uint64_t bytes = g[0].bytes;
  auto nameFor = [&]() -> std::optional<Op> {
    if (!reduce) {
      // rppkt: one local packet source forwarded to peers' packet buffers.
      if (loads.size() == 1 && isLocal(*loads[0]) && loads[0]->packet && !stores.empty() &&
          llvm::all_of(stores, [&](const BufferRef *s) { return !isLocal(*s) && !s->multicast && s->packet; }))
        return Op::ReadPutPackets;
      return std::nullopt;
    }
    if (loads.empty() || stores.empty() || !isLocal(*loads[0]) || loads[0]->packet ||
        !isLocal(*stores[0]) || stores[0]->packet)
      return std::nullopt;
    auto rest = [](auto &v) { return llvm::ArrayRef<const BufferRef *>(v).drop_front(); };
    bool localData = llvm::all_of(rest(loads), [&](auto *r) { return isLocal(*r) && !r->packet; });
    bool localPkts = llvm::all_of(rest(loads), [&](auto *r) { return isLocal(*r) && r->packet; });
    bool remoteData = llvm::all_of(rest(loads), [&](auto *r) { return !isLocal(*r) && !r->multicast && !r->packet; });
    auto outs = rest(stores);
    bool keepsPkt = !outs.empty() && isLocal(*outs[0]) && outs[0]->packet;
    if (keepsPkt)
      outs = outs.drop_front();
    bool sendsData = llvm::all_of(outs, [&](auto *r) { return !isLocal(*r) && !r->multicast && !r->packet; });
    bool sendsPkts = llvm::all_of(outs, [&](auto *r) { return !isLocal(*r) && !r->multicast && r->packet; });
    if (loads.size() > 1 && localPkts && !localData) {
      if (!sendsPkts)
        return std::nullopt;
      if (keepsPkt)
        return outs.empty() ? Op::ReduceCopyPackets : Op::ReduceCopySendPackets;
      return outs.empty() ? Op::ReducePackets : Op::ReduceSendPackets;
    }
    if (keepsPkt || !sendsData)
      return std::nullopt;
    if (localData)   // also a lone local input
      return outs.empty() ? Op::Reduce : Op::ReduceSend;
    if (remoteData)
      return outs.empty() ? Op::ReadReduce : Op::ReadReduceSend;
    return std::nullopt;
  };
  std::optional<Op> op = nameFor();
  if (!op)
    return fail(kn, wg, first, "this fused group (" + llvm::Twine(loads.size()) + " loads, " +
                                   (reduce ? "a reduce, " : "no reduce, ") +
                                   llvm::Twine(stores.size()) + " stores) matches no MSCCL++ "
                                   "operation of the reduce family or rppkt");
  json j;
  j["name"] = opName(*op);
  json src = json::array(), dst = json::array();
  for (const BufferRef *r : loads)
    src.push_back(buff(kn, tb, *r, bytes, 0));
  for (const BufferRef *r : stores)
    dst.push_back(buff(kn, tb, *r, bytes, 0));
  j["src_buff"] = src;
  j["dst_buff"] = dst;
  bool remote = llvm::any_of(loads, [&](auto *r) { return !isLocal(*r); }) ||
                llvm::any_of(stores, [&](auto *r) { return !isLocal(*r); });
  if (remote)
    j["channel_type"] = "memory";
  if (reduce)
    j["reduce_op"] = "sum";
  ops.push_back(std::move(j));
  return true;
}

bool PlanWriter::writeOps(uint32_t kn, uint32_t wg, uint32_t begin, uint32_t end, json &ops) {
  Tb &tb = *tb_;
  const Kernel &K = k_.kernels[kn];
  uint32_t me = K.gpu;
  llvm::ArrayRef<GpuOp> all = k_.opsOf(k_.workgroups[K.firstWorkgroup + wg]);
  for (uint32_t i = begin; i < end;) {
    const GpuOp &o = all[i];
    if (o.fusedWithNext()) {
      uint32_t e = i;
      while (all[e].fusedWithNext())
        ++e;
      if (!writeGroup(kn, wg, i, e + 1, ops))
        return false;
      i = e + 1;
      continue;
    }
    json j;
    int slot = slotOf(o.flags);
    switch (o.kind) {
    case GpuOpKind::Loop: {
      json body = json::array();
      if (!writeOps(kn, wg, i + 1, i + 1 + o.id, body))
        return false;
      j["name"] = "pipeline";
      j["iter_context"] = {{"unit_size", o.bytes}, {"num_chunks", uint64_t(o.count) * o.bytes / chunk_}};
      j["ops"] = std::move(body);
      ops.push_back(std::move(j));
      i += 1 + o.id;
      continue;
    }
    case GpuOpKind::Nop:
      j["name"] = "nop";
      break;
    case GpuOpKind::Barrier:
      j["name"] = "barrier";
      j["barrier_id"] = o.id;
      j["num_threadblocks"] = o.count;
      break;
    case GpuOpKind::Flush:
      j["name"] = "flush";
      j["channel_ids"] = channelIds(kn, tb, 1, o.id);
      j["channel_type"] = "port";
      break;
    case GpuOpKind::SemAcquire:
    case GpuOpKind::SemRelease: {
      const Semaphore &S = k_.semaphores[o.id];
      bool acquire = o.kind == GpuOpKind::SemAcquire;
      if (S.kind == SemaphoreKind::Device) {
        j["name"] = acquire ? "sem_acquire" : "sem_release";
        j["semaphore_ids"] = json::array({S.index});
        break;
      }
      int s = S.kind == SemaphoreKind::Proxy ? 1 : 0;
      bool relaxed = o.flags & gpuop::Relaxed;
      if (relaxed && s == 1)
        return fail(kn, wg, i, "a relaxed semaphore over a port channel has no MSCCL++ operation");
      j["name"] = relaxed ? (acquire ? "rlxwait" : "rlxsignal") : (acquire ? "wait" : "signal");
      j["channel_ids"] = channelIds(kn, tb, s, acquire ? S.peer : S.gpu, S.index);
      j["channel_type"] = s ? "port" : "memory";
      break;
    }
    case GpuOpKind::Memcpy: {
      const BufferRef &s = o.src, &d = o.dst;
      bool srcLocal = !s.multicast && s.gpu == me, dstLocal = !d.multicast && d.gpu == me;
      bool proxy = o.flags & gpuop::Proxy;
      std::optional<Op> op;
      if (s.multicast && d.multicast && !s.packet && !d.packet && !proxy)
        op = Op::MultiLoadReduceStore;
      else if (srcLocal && d.multicast && !proxy)
        op = s.packet == d.packet ? (s.packet ? Op::MultiStorePackets : Op::MultiStore)
                                  : std::optional<Op>();
      else if (srcLocal && dstLocal && !proxy)
        op = !s.packet && !d.packet ? Op::Copy
             : !s.packet          ? Op::CopyPackets
             : !d.packet          ? Op::UnpackPackets
                                  : std::optional<Op>();
      else if (srcLocal && !dstLocal && !d.multicast)
        op = proxy ? (s.packet == d.packet ? (s.packet ? Op::PutPackets : Op::Put) : std::optional<Op>())
             : !s.packet && !d.packet ? Op::Put
             : !s.packet              ? Op::PutPackets
             : d.packet               ? Op::ReadPutPackets
                                      : std::optional<Op>();
      else if (!srcLocal && !s.multicast && dstLocal && !proxy && !s.packet && !d.packet)
        op = Op::Get;
      if (!op)
        return fail(kn, wg, i, "this copy (" + llvm::Twine(s.multicast ? "multicast" : srcLocal ? "local" : "remote") +
                                   (s.packet ? " packets" : "") + " to " +
                                   (d.multicast ? "multicast" : dstLocal ? "local" : "remote") +
                                   (d.packet ? " packets" : "") + (proxy ? ", by proxy" : "") +
                                   ") has no MSCCL++ operation");
      j["name"] = opName(*op);
      int bslot = *op == Op::MultiLoadReduceStore || *op == Op::MultiStore ||
                          *op == Op::MultiStorePackets
                      ? 2
                      : slot;
      j["src_buff"] = json::array({buff(kn, tb, s, o.bytes, slot)});
      j["dst_buff"] = json::array({buff(kn, tb, d, o.bytes, slot)});
      if (bslot == 2) {
        j["channel_type"] = "switch";
      } else if (!srcLocal || !dstLocal) {
        uint32_t peer = srcLocal ? d.gpu : s.gpu;
        j["channel_ids"] = channelIds(kn, tb, slot, peer);
        j["channel_type"] = slot ? "port" : "memory";
      }
      if (*op == Op::MultiLoadReduceStore)
        j["reduce_op"] = "sum";
      break;
    }
    case GpuOpKind::Load:
    case GpuOpKind::Store:
    case GpuOpKind::Reduce:
      return fail(kn, wg, i, "a lone " + gpuOpKindName(o.kind) + " (not fused with the loads, "
                             "reduce and stores of a copy or reduction) has no MSCCL++ operation");
    }
    ops.push_back(std::move(j));
    ++i;
  }
  return true;
}

bool PlanWriter::writeGpu(uint32_t kn, json &out) {
  const Kernel &K = k_.kernels[kn];
  GpuPlan &gp = plans_[K.gpu];
  json tbs = json::array();
  for (uint32_t wg = 0; wg < K.numWorkgroups; ++wg) {
    Tb tb;
    tb_ = &tb;
    json ops = json::array();
    if (!writeOps(kn, wg, 0, k_.workgroups[K.firstWorkgroup + wg].numOps, ops))
      return false;
    json chans = json::array();
    static const char *names[] = {"memory", "port", "switch"};
    for (int s = 0; s < 3; ++s)
      if (!tb.chans[s].empty())
        chans.push_back({{"channel_type", names[s]}, {"channel_ids", tb.chans[s]}});
    json refs = json::array();
    for (int s = 0; s < 2; ++s)
      if (!tb.refs[s].empty())
        refs.push_back({{"access_channel_type", names[s]}, {"remote_buffer_ids", tb.refs[s]}});
    tbs.push_back({{"id", wg}, {"ops", std::move(ops)}, {"channels", std::move(chans)},
                   {"remote_buffer_refs", std::move(refs)}});
  }
  json remotes = json::array();
  for (auto &[peer, kind, slot] : gp.remoteList)
    remotes.push_back({{"rank", peer},
                       {"type", bufferLetter(kind).str()},
                       {"access_channel_types", json::array({slot ? "port" : "memory"})}});
  json sems = json::array();
  for (const Semaphore &S : k_.semaphores)
    if (S.kind == SemaphoreKind::Device && S.gpu == K.gpu)
      sems.push_back({{"init_value", S.init}});
  uint64_t scratchChunks = K.buffer(BufferKind::Scratch) / (packets_ ? 2 : 1) / chunk_;
  if (reuse_) {
    // reuse_resources: the scratch is MSCCL++'s 64 MiB, cut into scratch_chunks pieces of
    // scratchWrap bytes (rounded up to the alignment).
    scratchChunks = 0;
    uint64_t S = PredefinedScratchBytes, W = K.scratchWrap;
    for (uint64_t sc = std::max<uint64_t>(1, W ? S / W : 1) - 1; W && sc <= S / W + 2; ++sc)
      if (sc && ((S + sc - 1) / sc + alignment_ - 1) / alignment_ * alignment_ == W) {
        scratchChunks = sc;
        break;
      }
    if ((W && (!scratchChunks || K.buffer(BufferKind::Scratch) != S)) ||
        (!W && K.buffer(BufferKind::Scratch))) {
      d_.error(where_, "gpu " + llvm::Twine(K.gpu) + "'s scratch (" +
                           llvm::Twine(K.buffer(BufferKind::Scratch)) + " bytes, reused every " +
                           llvm::Twine(W) + ") is not one MSCCL++'s reuse_resources can give");
      return false;
    }
  }
  out = {{"id", K.gpu},
         {"input_chunks", K.buffer(BufferKind::Input) / chunk_},
         {"output_chunks", K.buffer(BufferKind::Output) / chunk_},
         {"scratch_chunks", scratchChunks},
         {"threadblocks", std::move(tbs)},
         {"channels", gp.channels},
         {"remote_buffers", std::move(remotes)},
         {"semaphores", std::move(sems)}};
  return true;
}

std::optional<json> PlanWriter::write() {
  if (!checkShape())
    return std::nullopt;
  chooseChunk();
  declareChannels();
  const Kernel &K0 = k_.kernels[kernelOfGpu_[0]];
  uint64_t in = K0.buffer(BufferKind::Input), out = K0.buffer(BufferKind::Output);
  std::string coll = k_.collective.empty() ? "custom" : k_.collective;
  uint64_t P = k_.numGpus;
  // The message size the reader will be given (-msg-size): what MSCCL++'s executor tests
  // call the size. It must reproduce every kernel's input and output size.
  uint64_t msg = coll == "allgather" ? out : in;
  bool sizesFit = coll == "allgather"       ? out == in * P
                  : coll == "reducescatter" ? in == out * P
                                            : in == out;
  for (const Kernel &K : k_.kernels)
    sizesFit &= K.buffer(BufferKind::Input) == in && K.buffer(BufferKind::Output) == out;
  if (!sizesFit) {
    d_.error(where_, "the kernels' buffers (input " + llvm::Twine(in) + ", output " +
                         llvm::Twine(out) + " bytes on gpu 0) do not fit a '" + coll +
                         "' plan, whose sizes MSCCL++ derives from one message size");
    return std::nullopt;
  }
  json plan;
  plan["name"] = k_.name.empty() ? coll : k_.name;
  plan["collective"] = coll;
  plan["protocol"] = packets_ ? "LL" : "Simple";
  plan["inplace"] = k_.inPlace;
  plan["reuse_resources"] = reuse_;
  json gpus = json::array();
  for (uint32_t g = 0; g < k_.numGpus; ++g) {
    json gj;
    if (!writeGpu(kernelOfGpu_[g], gj))
      return std::nullopt;
    gpus.push_back(std::move(gj));
  }
  plan["gpus"] = std::move(gpus);
  plan["num_threads_per_block"] = DefaultThreadsPerBlock;
  plan["use_double_scratch_buffer"] = false;
  plan["buffer_alignment"] = alignment_;
  plan["min_message_size"] = msg;
  plan["max_message_size"] = msg;
  return plan;
}

llvm::Error emitPlan(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  if (!s.kernels())
    return usageError("-emit=msccl needs a schedule with GPU kernels: an MSCCL++ plan, a "
                      ".kernels file, or collectives lowered with -coll-target=kernels");
  std::optional<json> plan = PlanWriter(*s.kernels(), ctx.diags, ctx.module.workloadSource).write();
  if (!plan)
    return reportedError();
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  *os << plan->dump(2) << "\n";
  return llvm::Error::success();
}

RegisterTarget planTarget({.name = "msccl",
                           .description = "an MSCCL++ execution plan (JSON) of the kernel level",
                           .needs = TargetNeeds::Workload,
                           .defaultPipeline = {},
                           .run = emitPlan});

} // namespace
} // namespace infracc::msccl
