#include "compiler/frontends/msccl/MscclReader.h"

#include "compiler/frontends/infragraph/YamlTree.h"
#include "formats/MscclPlan.h"
#include "ir/Kernels.h"
#include "support/Diagnostics.h"
#include "support/InputFile.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

#include <map>
#include <tuple>

namespace infracc::msccl {

namespace {

using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

constexpr unsigned MaxDeviceSyncers = 16;   // MSCCL++'s MAX_DEVICE_SYNCERS

// Keys MSCCL++ reads, per kind of object; others draw a warning (a typo is likely). Also
// accepted silently: 'rank' in a buffer reference, which MSCCL++'s own DSL writes in NVLS
// plans and its executor never reads (checked with the DSL of microsoft/mscclpp 1f5f065).
constexpr StringRef PlanKeys[] = {"name", "collective", "protocol", "inplace", "reuse_resources",
                                  "num_threads_per_block", "use_double_scratch_buffer",
                                  "buffer_alignment", "min_message_size", "max_message_size",
                                  "gpus"};
constexpr StringRef GpuKeys[] = {"id", "input_chunks", "output_chunks", "scratch_chunks",
                                 "channels", "remote_buffers", "semaphores", "threadblocks"};
constexpr StringRef TbKeys[] = {"id", "ops", "channels", "remote_buffer_refs"};
constexpr StringRef OpKeys[] = {"name", "channel_type", "channel_ids", "src_buff", "dst_buff",
                                "reduce_op", "tbg_info", "barrier_id", "num_threadblocks",
                                "semaphore_ids", "iter_context", "ops"};
constexpr StringRef BuffKeys[] = {"type", "buffer_id", "switch_channel_id", "index", "size",
                                  "rank"};

/// A chunk range of an operation, resolved to bytes.
struct Range {
  BufferRef ref;
  uint64_t bytes = 0;
  const YamlNode *node = nullptr;
  bool remote = false;   // through a remote buffer (buffer_id)
};

struct GpuState {
  uint32_t id = 0;
  uint64_t chunk = 0;                           // bytes per chunk
  uint64_t scratchChunk = 0;                    // reuse_resources: a scratch chunk's bytes
  struct Chan {
    uint32_t peer, index;                       // index: which channel to `peer` (0 = first)
  };
  std::vector<Chan> chans[2];                   // memory, port: flattened as the executor does
  struct Nvls {
    BufferKind buffer;
    uint32_t group;
  };
  std::vector<Nvls> nvls;
  struct Remote {
    uint32_t rank;
    BufferKind type;
  };
  std::vector<Remote> remote;
  std::vector<uint32_t> remoteOfType[2];        // per access type: its registered buffers
  std::vector<uint32_t> deviceSems;             // IR semaphore of each declared semaphore
};

struct TbState {
  std::vector<uint32_t> chans[3];               // memory, port, switch: indices into the GPU's
  std::vector<uint32_t> refs[2];                // memory, port: indices into remoteOfType
};

int typeSlot(ChannelType t) { return t == ChannelType::Memory ? 0 : t == ChannelType::Port ? 1 : 2; }

class PlanReader {
public:
  PlanReader(DiagEngine &diags, const ReadOptions &opts) : d_(diags), opts_(opts) {}
  std::optional<Schedule> read(const YamlNode *root, SMLoc fileStart);

private:
  // --- typed access to the tree -------------------------------------------------
  void error(const YamlNode *n, const Twine &msg) { d_.error(n ? n->loc : fileStart_, msg); }
  void checkKeys(const YamlNode *map, llvm::ArrayRef<StringRef> known, StringRef what);
  const YamlNode *need(const YamlNode *map, StringRef key, const Twine &what);
  bool isMap(const YamlNode *n, const Twine &what);
  bool isList(const YamlNode *n, const Twine &what);
  std::optional<uint64_t> number(const YamlNode *n, const Twine &what, uint64_t max = ~0ull);
  std::optional<std::string> string(const YamlNode *n, const Twine &what);
  std::optional<bool> boolean(const YamlNode *n, const Twine &what);
  std::optional<uint64_t> optNumber(const YamlNode *map, StringRef key, uint64_t dflt) {
    const YamlNode *n = map->get(key);
    return n ? number(n, "'" + key.str() + "'") : dflt;
  }
  std::optional<bool> optBool(const YamlNode *map, StringRef key, bool dflt) {
    const YamlNode *n = map->get(key);
    return n ? boolean(n, "'" + key.str() + "'") : dflt;
  }
  std::optional<ChannelType> channelType(const YamlNode *n);
  std::optional<BufferKind> bufferType(const YamlNode *n);

  // --- the plan -------------------------------------------------------------------
  bool readHeader(const YamlNode *root);
  bool readGpu(const YamlNode *gpu, uint32_t index);
  bool readChannels(const YamlNode *gpuNode, GpuState &g);
  bool readRemoteBuffers(const YamlNode *gpuNode, GpuState &g);
  bool readThreadblock(const YamlNode *tb, uint32_t index, GpuState &g, uint32_t kernel);
  void readOp(const YamlNode *op, GpuState &g, TbState &tb, bool inPipeline);
  std::optional<Range> readBuff(const YamlNode *b, GpuState &g, TbState &tb, ChannelType ct,
                                const YamlNode *tbg);
  bool readBuffs(const YamlNode *op, StringRef key, GpuState &g, TbState &tb, ChannelType ct,
                 llvm::SmallVectorImpl<Range> &out, bool required = true);
  std::optional<GpuState::Chan> channel(const YamlNode *op, GpuState &g, TbState &tb,
                                        ChannelType ct, const YamlNode *idNode);
  uint32_t channelSemaphore(uint32_t owner, uint32_t from, ChannelType ct, uint32_t index);
  uint32_t multicastGroup(BufferKind b, std::vector<uint32_t> ranks);

  // Emitting GPU ops into the current workgroup.
  GpuOp &emit(GpuOpKind k, const YamlNode *at, uint8_t flags = 0) {
    GpuOp &o = k_->ops.emplace_back();
    o.kind = k;
    o.flags = flags;
    o.loc = at->loc;
    return o;
  }
  void emitMemcpy(const Range &src, const Range &dst, uint64_t bytes, const YamlNode *at,
                  uint8_t flags) {
    GpuOp &o = emit(GpuOpKind::Memcpy, at, flags);
    o.src = src.ref;
    o.dst = dst.ref;
    o.bytes = bytes;
  }
  /// loads, reduce, stores in lock-step (fused).
  void emitReduceGroup(llvm::ArrayRef<Range> srcs, llvm::ArrayRef<Range> dsts, uint64_t bytes,
                       const YamlNode *at) {
    for (const Range &s : srcs) {
      GpuOp &o = emit(GpuOpKind::Load, at, gpuop::FusedWithNext);
      o.src = s.ref;
      o.bytes = bytes;
    }
    GpuOp &r = emit(GpuOpKind::Reduce, at, gpuop::FusedWithNext);
    r.id = uint32_t(srcs.size());
    r.bytes = bytes;
    for (const Range &s : dsts) {
      GpuOp &o = emit(GpuOpKind::Store, at, gpuop::FusedWithNext);
      o.dst = s.ref;
      o.bytes = bytes;
    }
    k_->ops.back().flags &= ~gpuop::FusedWithNext;
  }

  DiagEngine &d_;
  const ReadOptions &opts_;
  SMLoc fileStart_;
  KernelLevel *k_ = nullptr;
  uint32_t numGpus_ = 0;
  bool packetProtocol_ = false, doubleScratch_ = false, reuse_ = false;
  uint64_t alignment_ = DefaultBufferAlignment;
  uint64_t inputBytes_ = 0, outputBytes_ = 0;
  std::map<std::tuple<uint32_t, uint32_t, int, uint32_t>, uint32_t> channelSems_;
  std::map<std::pair<BufferKind, std::vector<uint32_t>>, uint32_t> groups_;
};

// ---------------------------------------------------------------------------------

void PlanReader::checkKeys(const YamlNode *map, llvm::ArrayRef<StringRef> known, StringRef what) {
  for (const YamlNode::Entry &e : map->entries)
    if (!llvm::is_contained(known, StringRef(e.key)))
      d_.warning(e.keyLoc, "unknown key '" + e.key + "' in " + what + " (MSCCL++ ignores it)" +
                               didYouMean(e.key, known));
}

const YamlNode *PlanReader::need(const YamlNode *map, StringRef key, const Twine &what) {
  if (const YamlNode *n = map->get(key))
    return n;
  error(map, what + " has no '" + key + "'");
  return nullptr;
}

bool PlanReader::isMap(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Map)
    return true;
  error(n, what + " must be an object, not " + n->describe());
  return false;
}

bool PlanReader::isList(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Seq)
    return true;
  error(n, what + " must be a list, not " + n->describe());
  return false;
}

std::optional<uint64_t> PlanReader::number(const YamlNode *n, const Twine &what, uint64_t max) {
  uint64_t v = 0;
  if (n->kind != YamlNode::Scalar || n->quoted || StringRef(n->value).getAsInteger(10, v) ||
      v > max) {
    error(n, what + " must be a whole number" +
                 (max == ~0ull ? std::string(" from 0") : " from 0 to " + std::to_string(max)) +
                 ", not " + n->describe());
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> PlanReader::string(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Scalar && n->quoted)
    return n->value;
  error(n, what + " must be a string, not " + n->describe());
  return std::nullopt;
}

std::optional<bool> PlanReader::boolean(const YamlNode *n, const Twine &what) {
  if (n->kind == YamlNode::Scalar && !n->quoted && (n->value == "true" || n->value == "false"))
    return n->value == "true";
  error(n, what + " must be true or false, not " + n->describe());
  return std::nullopt;
}

std::optional<ChannelType> PlanReader::channelType(const YamlNode *n) {
  auto s = string(n, "a channel type");
  if (!s)
    return std::nullopt;
  if (auto t = parseChannelType(*s))
    return t;
  error(n, "unknown channel type '" + *s + "'; MSCCL++ has memory, port, switch and none");
  return std::nullopt;
}

std::optional<BufferKind> PlanReader::bufferType(const YamlNode *n) {
  auto s = string(n, "a buffer type");
  if (!s)
    return std::nullopt;
  if (auto b = parseBufferLetter(*s))
    return b;
  error(n, "unknown buffer type '" + *s + "'; MSCCL++ has \"i\" (input), \"o\" (output) and "
                                           "\"s\" (scratch)");
  return std::nullopt;
}

// ---------------------------------------------------------------------------------

bool PlanReader::readHeader(const YamlNode *root) {
  unsigned before = d_.errorCount();
  checkKeys(root, PlanKeys, "the plan");
  if (const YamlNode *n = need(root, "name", "the plan"))
    if (auto s = string(n, "'name'"))
      k_->name = *s;
  const YamlNode *collNode = need(root, "collective", "the plan");
  if (collNode)
    if (auto s = string(collNode, "'collective'"))
      k_->collective = *s;
  if (const YamlNode *n = need(root, "protocol", "the plan"))
    if (auto s = string(n, "'protocol'")) {
      if (*s != "Simple" && *s != "LL")
        error(n, "'protocol' must be \"Simple\" or \"LL\", not '" + *s + "'");
      packetProtocol_ = *s == "LL";
    }
  if (const YamlNode *n = need(root, "inplace", "the plan"))
    if (auto b = boolean(n, "'inplace'"))
      k_->inPlace = *b;
  if (auto b = optBool(root, "reuse_resources", false))
    reuse_ = *b;
  if (auto t = optNumber(root, "num_threads_per_block", DefaultThreadsPerBlock); t && *t == 0)
    error(root->get("num_threads_per_block"), "'num_threads_per_block' must be at least 1");
  if (auto b = optBool(root, "use_double_scratch_buffer", false))
    doubleScratch_ = *b;
  if (auto a = optNumber(root, "buffer_alignment", DefaultBufferAlignment)) {
    alignment_ = *a;
    if (alignment_ == 0)
      error(root->get("buffer_alignment"), "'buffer_alignment' must be at least 1");
  }
  auto minSize = optNumber(root, "min_message_size", 0);
  auto maxSize = optNumber(root, "max_message_size", ~0ull);
  const YamlNode *gpus = need(root, "gpus", "the plan");
  if (!gpus || !isList(gpus, "'gpus'") || d_.errorCount() != before)
    return false;
  numGpus_ = uint32_t(gpus->items.size());
  if (numGpus_ == 0) {
    error(gpus, "the plan has no GPUs");
    return false;
  }
  // Buffer sizes from the message size, as MSCCL++'s executor tests allocate them.
  uint64_t M = opts_.messageBytes;
  inputBytes_ = outputBytes_ = M;
  bool gather = k_->collective == "allgather", scatter = k_->collective == "reducescatter";
  if ((gather || scatter) && M % numGpus_) {
    error(collNode, "-msg-size=" + Twine(M) + " does not split into " + Twine(numGpus_) +
                        " equal blocks for " + k_->collective);
    return false;
  }
  if (gather)
    inputBytes_ = M / numGpus_;
  if (scatter)
    outputBytes_ = M / numGpus_;
  if (minSize && maxSize && (M < *minSize || M > *maxSize)) {
    error(root->get(M < *minSize ? "min_message_size" : "max_message_size"),
          "the plan is for messages of " + Twine(*minSize) + " to " + Twine(*maxSize) +
              " bytes, but -msg-size=" + Twine(M));
    return false;
  }
  return true;
}

bool PlanReader::readChannels(const YamlNode *gpuNode, GpuState &g) {
  unsigned before = d_.errorCount();
  const YamlNode *chans = need(gpuNode, "channels", "a GPU");
  if (!chans || !isList(chans, "'channels'"))
    return false;
  std::map<std::pair<int, uint32_t>, uint32_t> count;   // (type, peer) -> channels so far
  for (const YamlNode *c : chans->items) {
    if (!isMap(c, "a channel"))
      continue;
    const YamlNode *tn = need(c, "channel_type", "a channel");
    auto t = tn ? channelType(tn) : std::nullopt;
    if (!t)
      continue;
    if (*t == ChannelType::Switch) {
      if (!c->get("buffer_type") && c->get("buff")) {
        error(c->get("buff"), "a switch channel names its buffer with 'buffer_type', which "
                              "MSCCL++'s executor reads (older plans wrote 'buff')");
        continue;
      }
      const YamlNode *bt = need(c, "buffer_type", "a switch channel");
      const YamlNode *groups = need(c, "rank_groups", "a switch channel");
      auto b = bt ? bufferType(bt) : std::nullopt;
      if (!b || !groups || !isList(groups, "'rank_groups'"))
        continue;
      for (const YamlNode *rg : groups->items) {
        if (!isMap(rg, "a rank group"))
          continue;
        const YamlNode *ranks = need(rg, "ranks", "a rank group");
        if (!ranks || !isList(ranks, "'ranks'"))
          continue;
        std::vector<uint32_t> members;
        for (const YamlNode *r : ranks->items)
          if (auto v = number(r, "a rank", numGpus_ - 1))
            members.push_back(uint32_t(*v));
        if (const YamlNode *sz = rg->get("size"))
          if (auto v = number(sz, "'size'"); v && *v != members.size())
            error(sz, "the rank group's 'size' is " + Twine(*v) + " but it lists " +
                          Twine(members.size()) + " ranks");
        if (!llvm::is_contained(members, g.id))
          error(ranks, "gpu " + Twine(g.id) + "'s switch channel must include gpu " + Twine(g.id));
        g.nvls.push_back({*b, multicastGroup(*b, members)});
      }
      continue;
    }
    if (*t == ChannelType::None) {
      error(tn, "a GPU's channel is of type memory, port or switch");
      continue;
    }
    const YamlNode *peers = need(c, "connected_to", "a channel");
    if (!peers || !isList(peers, "'connected_to'"))
      continue;
    for (const YamlNode *p : peers->items) {
      auto v = number(p, "a peer rank", numGpus_ - 1);
      if (!v)
        continue;
      if (*v == g.id) {
        error(p, "gpu " + Twine(g.id) + " has a channel to itself");
        continue;
      }
      uint32_t peer = uint32_t(*v);
      g.chans[typeSlot(*t)].push_back({peer, count[{typeSlot(*t), peer}]++});
    }
  }
  return d_.errorCount() == before;
}

bool PlanReader::readRemoteBuffers(const YamlNode *gpuNode, GpuState &g) {
  unsigned before = d_.errorCount();
  const YamlNode *rbs = need(gpuNode, "remote_buffers", "a GPU");
  if (!rbs || !isList(rbs, "'remote_buffers'"))
    return false;
  for (const YamlNode *rb : rbs->items) {
    if (!isMap(rb, "a remote buffer"))
      continue;
    const YamlNode *rn = need(rb, "rank", "a remote buffer");
    const YamlNode *tn = need(rb, "type", "a remote buffer");
    const YamlNode *an = need(rb, "access_channel_types", "a remote buffer");
    auto rank = rn ? number(rn, "'rank'", numGpus_ - 1) : std::nullopt;
    auto type = tn ? bufferType(tn) : std::nullopt;
    if (!rank || !type || !an || !isList(an, "'access_channel_types'"))
      continue;
    uint32_t id = uint32_t(g.remote.size());
    g.remote.push_back({uint32_t(*rank), *type});
    for (const YamlNode *a : an->items)
      if (auto t = channelType(a)) {
        if (*t != ChannelType::Memory && *t != ChannelType::Port)
          error(a, "a remote buffer is reached through memory or port channels");
        else
          g.remoteOfType[typeSlot(*t)].push_back(id);
      }
  }
  return d_.errorCount() == before;
}

uint32_t PlanReader::channelSemaphore(uint32_t owner, uint32_t from, ChannelType ct,
                                      uint32_t index) {
  auto [it, fresh] = channelSems_.try_emplace({owner, from, typeSlot(ct), index},
                                              uint32_t(k_->semaphores.size()));
  if (fresh) {
    Semaphore s;
    s.gpu = owner;
    s.kind = ct == ChannelType::Port ? SemaphoreKind::Proxy : SemaphoreKind::Channel;
    s.peer = from;
    s.index = index;
    k_->semaphores.push_back(s);
  }
  return it->second;
}

uint32_t PlanReader::multicastGroup(BufferKind b, std::vector<uint32_t> ranks) {
  auto [it, fresh] = groups_.try_emplace({b, ranks}, uint32_t(k_->groups.size()));
  if (fresh)
    k_->groups.push_back({0, b, std::move(ranks)});
  return it->second;
}

std::optional<GpuState::Chan> PlanReader::channel(const YamlNode *op, GpuState &g, TbState &tb,
                                                  ChannelType ct, const YamlNode *idNode) {
  auto id = number(idNode, "a channel id");
  if (!id)
    return std::nullopt;
  const std::vector<uint32_t> &list = tb.chans[typeSlot(ct)];
  if (*id >= list.size()) {
    error(idNode, "channel id " + Twine(*id) + " is not one of the threadblock's " +
                      channelTypeName(ct) + " channels (it has " + Twine(list.size()) + ")");
    return std::nullopt;
  }
  (void)op;
  return g.chans[typeSlot(ct)][list[*id]];
}

std::optional<Range> PlanReader::readBuff(const YamlNode *b, GpuState &g, TbState &tb,
                                          ChannelType ct, const YamlNode *tbg) {
  if (!isMap(b, "a buffer reference"))
    return std::nullopt;
  checkKeys(b, BuffKeys, "a buffer reference");
  const YamlNode *in = need(b, "index", "a buffer reference");
  const YamlNode *sn = need(b, "size", "a buffer reference");
  auto index = in ? number(in, "'index'") : std::nullopt;
  auto size = sn ? number(sn, "'size'") : std::nullopt;
  if (!index || !size)
    return std::nullopt;
  Range r;
  r.node = b;
  const YamlNode *tn = b->get("type"), *bn = b->get("buffer_id"), *wn = b->get("switch_channel_id");
  if (int(tn != nullptr) + int(bn != nullptr) + int(wn != nullptr) != 1) {
    error(b, "a buffer reference names exactly one of 'type' (local), 'buffer_id' (remote) "
             "and 'switch_channel_id' (NVLS)");
    return std::nullopt;
  }
  if (tn) {
    auto t = bufferType(tn);
    if (!t)
      return std::nullopt;
    r.ref.gpu = g.id;
    r.ref.buffer = *t;
  } else if (bn) {
    auto id = number(bn, "'buffer_id'");
    if (!id)
      return std::nullopt;
    if (ct != ChannelType::Memory && ct != ChannelType::Port) {
      error(bn, "a remote buffer is reached through the operation's channel_type, memory or "
                "port; this operation has " + channelTypeName(ct).str());
      return std::nullopt;
    }
    const std::vector<uint32_t> &refs = tb.refs[typeSlot(ct)];
    if (*id >= refs.size()) {
      error(bn, "buffer_id " + Twine(*id) + " is not one of the threadblock's remote buffers "
                "over " + channelTypeName(ct) + " channels (it has " + Twine(refs.size()) + ")");
      return std::nullopt;
    }
    const GpuState::Remote &rb = g.remote[refs[*id]];
    r.ref.gpu = rb.rank;
    r.ref.buffer = rb.type;
    r.remote = true;
  } else {
    auto id = number(wn, "'switch_channel_id'");
    if (!id)
      return std::nullopt;
    const std::vector<uint32_t> &list = tb.chans[2];
    if (*id >= list.size()) {
      error(wn, "switch_channel_id " + Twine(*id) + " is not one of the threadblock's switch "
                "channels (it has " + Twine(list.size()) + ")");
      return std::nullopt;
    }
    const GpuState::Nvls &nv = g.nvls[list[*id]];
    r.ref.gpu = nv.group;
    r.ref.buffer = nv.buffer;
    r.ref.multicast = true;
  }
  // With reuse_resources a scratch chunk may be smaller than the others (getOffset).
  bool small = g.scratchChunk && g.scratchChunk < g.chunk && r.ref.buffer == BufferKind::Scratch;
  r.ref.offset = *index * (small ? g.scratchChunk : g.chunk);
  r.bytes = *size * g.chunk;
  if (tbg) {
    // tbg_info: this threadblock's share of the range, in buffer_alignment units
    // (the executor's calcOffset/calcSize).
    const YamlNode *idn = need(tbg, "tb_id", "'tbg_info'");
    const YamlNode *szn = need(tbg, "tbg_size", "'tbg_info'");
    auto tbId = idn ? number(idn, "'tb_id'") : std::nullopt;
    auto tbgSize = szn ? number(szn, "'tbg_size'", 1u << 20) : std::nullopt;
    if (!tbId || !tbgSize)
      return std::nullopt;
    if (*tbgSize == 0 || *tbId >= *tbgSize) {
      error(tbg, "'tb_id' must be below 'tbg_size' (" + Twine(*tbId) + " of " + Twine(*tbgSize) + ")");
      return std::nullopt;
    }
    auto part = [&](uint64_t i) {
      uint64_t n = r.bytes / alignment_;
      return (i * (n / *tbgSize) + std::min<uint64_t>(i, n % *tbgSize)) * alignment_;
    };
    r.ref.offset += part(*tbId);
    r.bytes = part(*tbId + 1) - part(*tbId);
  }
  return r;
}

bool PlanReader::readBuffs(const YamlNode *op, StringRef key, GpuState &g, TbState &tb,
                           ChannelType ct, llvm::SmallVectorImpl<Range> &out, bool required) {
  const YamlNode *list = op->get(key);
  if (!list) {
    if (required)
      error(op, "the operation has no '" + key + "'");
    return !required;
  }
  if (!isList(list, "'" + key + "'"))
    return false;
  bool ok = true;
  for (const YamlNode *b : list->items) {
    auto r = readBuff(b, g, tb, ct, op->get("tbg_info"));
    if (r)
      out.push_back(*r);
    ok &= r.has_value();
  }
  return ok;
}

// ---------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------

void PlanReader::readOp(const YamlNode *node, GpuState &g, TbState &tb, bool inPipeline) {
  if (!isMap(node, "an operation"))
    return;
  checkKeys(node, OpKeys, "an operation");
  const YamlNode *nameNode = need(node, "name", "an operation");
  auto name = nameNode ? string(nameNode, "an operation's 'name'") : std::nullopt;
  if (!name)
    return;
  std::optional<Op> op = parseOp(*name);
  if (!op) {
    std::vector<StringRef> names;
    for (const OpInfo &i : allOps())
      names.push_back(i.name);
    std::string hint = *name == "glre"
                           ? " ('glre' is the DSL's half of 'glres'; MSCCL++'s executor does "
                             "not run it alone)"
                           : didYouMean(*name, names);
    error(nameNode, "unknown operation '" + *name + "'" + hint + "; MSCCL++'s executor "
                    "supports: " + supportedOpList());
    return;
  }
  unsigned before = d_.errorCount();
  if (inPipeline && (isPacketOp(*op) || *op == Op::Pipeline)) {
    error(nameNode, "'" + *name + "' inside a pipeline: MSCCL++'s executor " +
                        (*op == Op::Pipeline ? "does not nest pipelines"
                                             : "runs packet operations whole in every "
                                               "iteration, which is not modelled"));
    return;
  }
  ChannelType ct = ChannelType::None;
  if (const YamlNode *c = node->get("channel_type")) {
    auto t = channelType(c);
    if (!t)
      return;
    ct = *t;
  }
  auto requireChannel = [&](std::initializer_list<ChannelType> allowed) {
    if (llvm::is_contained(allowed, ct))
      return true;
    std::string names;
    for (ChannelType t : allowed)
      names += (names.empty() ? "" : " or ") + channelTypeName(t).str();
    error(node->get("channel_type") ? node->get("channel_type") : nameNode,
          "'" + *name + "' runs over " + names + " channels" +
              (node->get("channel_type") ? ", not " + channelTypeName(ct).str()
                                         : "; give channel_type"));
    return false;
  };
  if (const YamlNode *r = node->get("reduce_op"))
    if (auto s = string(r, "'reduce_op'"); s && *s != "sum" && *s != "min" && *s != "max")
      error(r, "'reduce_op' must be sum, min or max, not '" + *s + "'");
  uint8_t proxy = ct == ChannelType::Port ? gpuop::Proxy : 0;

  // Channels named by channel_ids (signal, wait, flush, port puts).
  auto channelIds = [&](llvm::SmallVectorImpl<GpuState::Chan> &out) {
    const YamlNode *ids = need(node, "channel_ids", "'" + *name + "'");
    if (!ids || !isList(ids, "'channel_ids'"))
      return false;
    for (const YamlNode *id : ids->items)
      if (auto c = channel(node, g, tb, ct, id))
        out.push_back(*c);
    return d_.errorCount() == before;
  };
  auto local = [&](const Range &r, StringRef role) {
    if (r.remote || r.ref.multicast) {
      error(r.node, "the " + role + " of '" + *name + "' is a local buffer (give 'type')");
      return false;
    }
    return true;
  };
  auto remote = [&](const Range &r, StringRef role) {
    if (!r.remote) {
      error(r.node, "the " + role + " of '" + *name + "' is a peer's buffer (give 'buffer_id')");
      return false;
    }
    return true;
  };
  auto scratch = [&](const Range &r, StringRef role) {
    if (r.ref.buffer != BufferKind::Scratch) {
      error(r.node, "the " + role + " of '" + *name + "' holds LL packets, which MSCCL++'s "
                    "executor always places in the scratch buffer; give type \"s\"");
      return false;
    }
    return true;
  };
  auto sameSize = [&](llvm::ArrayRef<Range> rs, uint64_t bytes) {
    for (const Range &r : rs)
      if (r.bytes != bytes) {
        error(r.node, "this range of '" + *name + "' has " + Twine(r.bytes) + " bytes but the "
                      "operation moves " + Twine(bytes) + "; every range of it must match");
        return false;
      }
    return true;
  };
  auto pkt = [](Range r) {
    r.ref.packet = true;
    r.ref.offset *= 2;   // a packet buffer offset is twice the data offset
    return r;
  };

  llvm::SmallVector<Range, 4> src, dst;
  switch (*op) {
  case Op::Nop:
    emit(GpuOpKind::Nop, node);
    return;
  case Op::Barrier: {
    const YamlNode *idn = need(node, "barrier_id", "'barrier'");
    const YamlNode *nn = need(node, "num_threadblocks", "'barrier'");
    auto id = idn ? number(idn, "'barrier_id'", MaxDeviceSyncers - 1) : std::nullopt;
    auto n = nn ? number(nn, "'num_threadblocks'", 1u << 20) : std::nullopt;
    if (!id || !n)
      return;
    GpuOp &o = emit(GpuOpKind::Barrier, node);
    o.id = uint32_t(*id);
    o.count = uint32_t(*n);
    return;
  }
  case Op::Signal:
  case Op::Wait:
  case Op::RelaxedSignal:
  case Op::RelaxedWait:
  case Op::Flush: {
    bool relaxed = *op == Op::RelaxedSignal || *op == Op::RelaxedWait;
    if (!requireChannel(relaxed ? std::initializer_list<ChannelType>{ChannelType::Memory}
                        : *op == Op::Flush ? std::initializer_list<ChannelType>{ChannelType::Port}
                                           : std::initializer_list<ChannelType>{ChannelType::Memory,
                                                                                ChannelType::Port}))
      return;
    llvm::SmallVector<GpuState::Chan, 4> chans;
    if (!channelIds(chans))
      return;
    for (const GpuState::Chan &c : chans) {
      if (*op == Op::Flush) {
        emit(GpuOpKind::Flush, node, proxy).id = c.peer;
        continue;
      }
      bool signal = *op == Op::Signal || *op == Op::RelaxedSignal;
      GpuOp &o = emit(signal ? GpuOpKind::SemRelease : GpuOpKind::SemAcquire, node,
                      proxy | (relaxed ? gpuop::Relaxed : 0));
      o.id = signal ? channelSemaphore(c.peer, g.id, ct, c.index)
                    : channelSemaphore(g.id, c.peer, ct, c.index);
    }
    return;
  }
  case Op::SemAcquire:
  case Op::SemRelease: {
    const YamlNode *ids = need(node, "semaphore_ids", "'" + *name + "'");
    if (!ids || !isList(ids, "'semaphore_ids'"))
      return;
    for (const YamlNode *id : ids->items) {
      auto v = number(id, "a semaphore id");
      if (!v)
        continue;
      if (*v >= g.deviceSems.size()) {
        error(id, "semaphore " + Twine(*v) + " is not one of gpu " + Twine(g.id) + "'s " +
                      Twine(g.deviceSems.size()) + " semaphores");
        continue;
      }
      emit(*op == Op::SemAcquire ? GpuOpKind::SemAcquire : GpuOpKind::SemRelease, node).id =
          g.deviceSems[*v];
    }
    return;
  }
  case Op::Put:
  case Op::PutWithSignal:
  case Op::PutWithSignalAndFlush:
  case Op::PutPackets: {
    bool signal = *op == Op::PutWithSignal || *op == Op::PutWithSignalAndFlush;
    if (!requireChannel(signal ? std::initializer_list<ChannelType>{ChannelType::Port}
                               : std::initializer_list<ChannelType>{ChannelType::Memory,
                                                                    ChannelType::Port}))
      return;
    if (!readBuffs(node, "src_buff", g, tb, ct, src) || !readBuffs(node, "dst_buff", g, tb, ct, dst))
      return;
    if (src.size() != dst.size() || src.empty()) {
      error(node, "'" + *name + "' pairs each source with a destination; it has " +
                      Twine(src.size()) + " and " + Twine(dst.size()));
      return;
    }
    llvm::SmallVector<GpuState::Chan, 4> chans;
    if (ct == ChannelType::Port) {
      if (!channelIds(chans))
        return;
      if (chans.size() != dst.size()) {
        error(node->get("channel_ids"), "a port '" + *name + "' names one channel per "
                                        "destination; it has " + Twine(chans.size()) + " for " +
                                        Twine(dst.size()));
        return;
      }
    }
    for (size_t i = 0; i < dst.size(); ++i) {
      if (!local(src[i], "source") || !remote(dst[i], "destination"))
        return;
      if (src[i].bytes != dst[i].bytes) {
        error(dst[i].node, "'" + *name + "' copies " + Twine(src[i].bytes) + " bytes into a "
                           "range of " + Twine(dst[i].bytes));
        return;
      }
      if (!chans.empty() && chans[i].peer != dst[i].ref.gpu) {
        error(dst[i].node, "the destination is on gpu " + Twine(dst[i].ref.gpu) +
                               " but the operation's channel goes to gpu " + Twine(chans[i].peer));
        return;
      }
      Range s = src[i], t = dst[i];
      if (*op == Op::PutPackets) {
        if (!scratch(t, "destination"))
          return;
        t = pkt(t);
        if (ct == ChannelType::Port)
          s = pkt(s);   // over a port channel the source is already in packets
      }
      emitMemcpy(s, t, src[i].bytes, node, proxy);
      if (signal)
        emit(GpuOpKind::SemRelease, node, proxy).id =
            channelSemaphore(chans[i].peer, g.id, ct, chans[i].index);
      if (*op == Op::PutWithSignalAndFlush)
        emit(GpuOpKind::Flush, node, proxy).id = chans[i].peer;
    }
    return;
  }
  case Op::Get:
    if (!requireChannel({ChannelType::Memory}))
      return;
    if (!readBuffs(node, "src_buff", g, tb, ct, src) || !readBuffs(node, "dst_buff", g, tb, ct, dst))
      return;
    if (src.size() != dst.size() || src.empty()) {
      error(node, "'get' pairs each source with a destination; it has " + Twine(src.size()) +
                      " and " + Twine(dst.size()));
      return;
    }
    for (size_t i = 0; i < src.size(); ++i) {
      if (!remote(src[i], "source") || !local(dst[i], "destination") ||
          !sameSize(dst[i], src[i].bytes))
        return;
      emitMemcpy(src[i], dst[i], src[i].bytes, node, 0);
    }
    return;
  case Op::Copy:
  case Op::CopyPackets:
  case Op::UnpackPackets:
  case Op::MultiStore:
  case Op::MultiStorePackets:
  case Op::MultiLoadReduceStore: {
    bool multi = *op == Op::MultiStore || *op == Op::MultiStorePackets ||
                 *op == Op::MultiLoadReduceStore;
    if (multi && !requireChannel({ChannelType::Switch}))
      return;
    if (!readBuffs(node, "src_buff", g, tb, ct, src) || !readBuffs(node, "dst_buff", g, tb, ct, dst))
      return;
    if (src.size() != 1 || dst.size() != 1) {
      error(node, "'" + *name + "' has one source and one destination (MSCCL++'s executor "
                  "uses only the first); it has " + Twine(src.size()) + " and " + Twine(dst.size()));
      return;
    }
    Range s = src[0], t = dst[0];
    bool srcMc = *op == Op::MultiLoadReduceStore, dstMc = multi;
    for (auto [r, mc, role] : {std::tuple{&s, srcMc, "source"}, std::tuple{&t, dstMc, "destination"}}) {
      if (mc != r->ref.multicast) {
        error(r->node, "the " + Twine(role) + " of '" + *name + "' is " +
                           (mc ? "an NVLS range (give 'switch_channel_id')"
                               : "a local buffer (give 'type')"));
        return;
      }
      if (!mc && !local(*r, role))
        return;
    }
    if (!sameSize(t, s.bytes))
      return;
    if (*op == Op::CopyPackets)
      t = pkt(t);
    if (*op == Op::UnpackPackets) {
      if (!scratch(s, "source"))
        return;
      s = pkt(s);
    }
    if (*op == Op::MultiStorePackets) {
      if (!scratch(t, "destination"))
        return;
      s = pkt(s);
      t = pkt(t);
    }
    emitMemcpy(s, t, s.bytes, node, 0);
    return;
  }
  case Op::ReadPutPackets: {
    if (!requireChannel({ChannelType::Memory, ChannelType::Port}))
      return;
    if (!readBuffs(node, "src_buff", g, tb, ct, src) || !readBuffs(node, "dst_buff", g, tb, ct, dst))
      return;
    if (src.empty() || dst.empty()) {
      error(node, "'rppkt' reads one source and writes one or more destinations");
      return;
    }
    if (!local(src[0], "source") || !scratch(src[0], "source"))
      return;
    llvm::SmallVector<GpuState::Chan, 4> chans;
    if (ct == ChannelType::Port && !channelIds(chans))
      return;
    for (size_t i = 0; i < dst.size(); ++i) {
      if (!remote(dst[i], "destination") || !scratch(dst[i], "destination") ||
          !sameSize(dst[i], src[0].bytes))
        return;
      if (ct == ChannelType::Port && (i >= chans.size() || chans[i].peer != dst[i].ref.gpu)) {
        error(dst[i].node, "a port 'rppkt' names one channel per destination, to its GPU");
        return;
      }
    }
    Range s = pkt(src[0]);
    if (ct == ChannelType::Port || dst.size() == 1) {
      for (const Range &t : dst)
        emitMemcpy(s, pkt(t), s.bytes, node, proxy);
      return;
    }
    GpuOp &l = emit(GpuOpKind::Load, node, gpuop::FusedWithNext);
    l.src = s.ref;
    l.bytes = s.bytes;
    for (const Range &t : dst) {
      GpuOp &o = emit(GpuOpKind::Store, node, gpuop::FusedWithNext);
      o.dst = pkt(t).ref;
      o.bytes = s.bytes;
    }
    k_->ops.back().flags &= ~gpuop::FusedWithNext;
    return;
  }
  case Op::Reduce:
  case Op::ReduceSend:
  case Op::ReadReduce:
  case Op::ReadReduceSend:
  case Op::ReducePackets:
  case Op::ReduceSendPackets:
  case Op::ReduceCopyPackets:
  case Op::ReduceCopySendPackets: {
    bool readsRemote = *op == Op::ReadReduce || *op == Op::ReadReduceSend;
    bool sends = *op == Op::ReduceSend || *op == Op::ReadReduceSend ||
                 *op == Op::ReduceSendPackets || *op == Op::ReduceCopySendPackets;
    bool packets = isPacketOp(*op);
    bool keepsPacket = *op == Op::ReduceCopyPackets || *op == Op::ReduceCopySendPackets;
    if ((readsRemote || sends) && !requireChannel({ChannelType::Memory}))
      return;
    if (!readBuffs(node, "src_buff", g, tb, ct, src) || !readBuffs(node, "dst_buff", g, tb, ct, dst))
      return;
    size_t localDsts = keepsPacket ? 2 : 1;
    if (src.empty() || dst.size() < localDsts || (!sends && dst.size() != localDsts)) {
      error(node, "'" + *name + "' reads a local chunk and " +
                      Twine(readsRemote ? "peers' chunks" : packets ? "received packets" : "local chunks") +
                      " and writes " + Twine(keepsPacket ? "a local chunk and its packets" : "a local chunk") +
                      (sends ? " and peers' chunks" : "") + "; it has " + Twine(src.size()) +
                      " sources and " + Twine(dst.size()) + " destinations");
      return;
    }
    uint64_t bytes = src[0].bytes;
    if (!sameSize(src, bytes) || !sameSize(dst, bytes))
      return;
    if (!local(src[0], "first source") || !local(dst[0], "first destination"))
      return;
    for (size_t i = 1; i < src.size(); ++i) {
      if (readsRemote ? !remote(src[i], "source") : !local(src[i], "source"))
        return;
      if (packets) {
        if (!scratch(src[i], "source"))
          return;
        src[i] = pkt(src[i]);
      }
    }
    if (keepsPacket) {
      if (!local(dst[1], "second destination"))
        return;
      dst[1] = pkt(dst[1]);
    }
    for (size_t i = localDsts; i < dst.size(); ++i) {
      if (!remote(dst[i], "destination"))
        return;
      if (packets) {
        if (!scratch(dst[i], "destination"))
          return;
        dst[i] = pkt(dst[i]);
      }
    }
    emitReduceGroup(src, dst, bytes, node);
    return;
  }
  case Op::Pipeline: {
    const YamlNode *ic = need(node, "iter_context", "'pipeline'");
    const YamlNode *body = need(node, "ops", "'pipeline'");
    if (!ic || !body || !isMap(ic, "'iter_context'") || !isList(body, "a pipeline's 'ops'"))
      return;
    const YamlNode *un = need(ic, "unit_size", "'iter_context'");
    const YamlNode *cn = need(ic, "num_chunks", "'iter_context'");
    if (!un || !cn)
      return;
    uint64_t unit = number(un, "'unit_size'", 0xFFFFFFFFu).value_or(0);
    std::optional<uint64_t> chunks = number(cn, "'num_chunks'", 0xFFFFFFFFu);
    if (d_.errorCount() != before)
      return;
    if (unit == 0) {
      error(un, "'unit_size' must be at least 1 byte");
      return;
    }
    // The executor's iteration count: ceil(num_chunks * chunk size / unit_size).
    uint64_t iterations = (chunks.value_or(0) * g.chunk + unit - 1) / unit;
    size_t loopAt = k_->ops.size();
    GpuOp &loop = emit(GpuOpKind::Loop, node);
    loop.count = uint32_t(iterations);
    loop.bytes = unit;
    for (const YamlNode *inner : body->items)
      readOp(inner, g, tb, /*inPipeline=*/true);
    uint32_t bodyOps = uint32_t(k_->ops.size() - loopAt - 1);
    if (iterations == 0 || bodyOps == 0) {
      k_->ops.resize(loopAt);   // runs nothing
      return;
    }
    k_->ops[loopAt].id = bodyOps;
    return;
  }
  }
}

bool PlanReader::readThreadblock(const YamlNode *tbNode, uint32_t index, GpuState &g,
                                 uint32_t kernel) {
  if (!isMap(tbNode, "a threadblock"))
    return false;
  checkKeys(tbNode, TbKeys, "a threadblock");
  unsigned before = d_.errorCount();
  if (const YamlNode *idn = need(tbNode, "id", "a threadblock"))
    if (auto id = number(idn, "a threadblock's 'id'"); id && *id != index)
      error(idn, "threadblock " + Twine(index) + " of gpu " + Twine(g.id) + " has id " + Twine(*id) +
                     "; MSCCL++'s executor needs the ids in order (0, 1, ...)");
  TbState tb;
  if (const YamlNode *chans = need(tbNode, "channels", "a threadblock"); chans && isList(chans, "'channels'"))
    for (const YamlNode *c : chans->items) {
      if (!isMap(c, "a threadblock channel"))
        continue;
      const YamlNode *tn = need(c, "channel_type", "a threadblock channel");
      const YamlNode *ids = need(c, "channel_ids", "a threadblock channel");
      auto t = tn ? channelType(tn) : std::nullopt;
      if (!t || !ids || !isList(ids, "'channel_ids'"))
        continue;
      if (*t == ChannelType::None) {
        error(tn, "a threadblock channel is of type memory, port or switch");
        continue;
      }
      size_t have = *t == ChannelType::Switch ? g.nvls.size() : g.chans[typeSlot(*t)].size();
      for (const YamlNode *id : ids->items)
        if (auto v = number(id, "a channel id")) {
          if (*v >= have)
            error(id, "gpu " + Twine(g.id) + " has " + Twine(have) + " " + channelTypeName(*t) +
                          " channels; there is no channel " + Twine(*v));
          else
            tb.chans[typeSlot(*t)].push_back(uint32_t(*v));
        }
    }
  if (const YamlNode *refs = tbNode->get("remote_buffer_refs"); refs && isList(refs, "'remote_buffer_refs'"))
    for (const YamlNode *r : refs->items) {
      if (!isMap(r, "a remote buffer reference"))
        continue;
      const YamlNode *tn = need(r, "access_channel_type", "a remote buffer reference");
      const YamlNode *ids = need(r, "remote_buffer_ids", "a remote buffer reference");
      auto t = tn ? channelType(tn) : std::nullopt;
      if (!t || !ids || !isList(ids, "'remote_buffer_ids'"))
        continue;
      if (*t != ChannelType::Memory && *t != ChannelType::Port) {
        error(tn, "remote buffers are reached through memory or port channels");
        continue;
      }
      const std::vector<uint32_t> &ofType = g.remoteOfType[typeSlot(*t)];
      for (const YamlNode *id : ids->items)
        if (auto v = number(id, "a remote buffer id")) {
          // The executor finds the buffer's slot among those of this access type.
          auto it = llvm::find(ofType, uint32_t(*v));
          if (*v >= g.remote.size() || it == ofType.end())
            error(id, "remote buffer " + Twine(*v) + " of gpu " + Twine(g.id) + " is not "
                      "reached through " + channelTypeName(*t) + " channels");
          else
            tb.refs[typeSlot(*t)].push_back(uint32_t(it - ofType.begin()));
        }
    }
  if (d_.errorCount() != before)
    return false;
  // refs hold slots into remoteOfType; readBuff wants remote buffer ids.
  for (int t = 0; t < 2; ++t)
    for (uint32_t &slot : tb.refs[t])
      slot = g.remoteOfType[t][slot];
  Workgroup wg;
  wg.kernel = kernel;
  wg.firstOp = uint32_t(k_->ops.size());
  const YamlNode *ops = need(tbNode, "ops", "a threadblock");
  if (ops && isList(ops, "'ops'"))
    for (const YamlNode *op : ops->items) {
      if (d_.shouldStop())
        break;
      readOp(op, g, tb, false);
    }
  wg.numOps = uint32_t(k_->ops.size() - wg.firstOp);
  k_->workgroups.push_back(wg);
  return d_.errorCount() == before;
}

bool PlanReader::readGpu(const YamlNode *gpuNode, uint32_t index) {
  if (!isMap(gpuNode, "a GPU"))
    return false;
  checkKeys(gpuNode, GpuKeys, "a GPU");
  unsigned before = d_.errorCount();
  GpuState g;
  g.id = index;
  if (const YamlNode *idn = need(gpuNode, "id", "a GPU"))
    if (auto id = number(idn, "a GPU's 'id'"); id && *id != index)
      error(idn, "gpus[" + Twine(index) + "] has id " + Twine(*id) +
                     "; MSCCL++'s executor takes GPU r's plan from gpus[r]");
  const YamlNode *icn = need(gpuNode, "input_chunks", "a GPU");
  const YamlNode *ocn = need(gpuNode, "output_chunks", "a GPU");
  const YamlNode *scn = need(gpuNode, "scratch_chunks", "a GPU");
  if (!icn || !ocn || !scn)
    return false;
  auto ic = number(icn, "'input_chunks'");
  auto oc = number(ocn, "'output_chunks'");
  auto sc = number(scn, "'scratch_chunks'");
  if (!ic || !oc || !sc)
    return false;
  uint64_t scratchChunks = *sc;
  // The executor's checks and chunk size (getSizeAndChunks, checkMessageSize).
  if (*ic == 0 && *oc == 0) {
    error(icn, "input_chunks and output_chunks are both 0; one must give the chunk count");
    return false;
  }
  auto misaligned = [&](const YamlNode *at, StringRef which, uint64_t bytes, uint64_t chunks) {
    if (bytes % alignment_ == 0 && (chunks == 0 || (bytes / alignment_) % chunks == 0))
      return false;
    error(at, "the " + which + " buffer of " + Twine(bytes) + " bytes (from -msg-size=" +
                  Twine(opts_.messageBytes) + ") does not split into " + Twine(chunks) +
                  " chunks of whole " + Twine(alignment_) + "-byte units (buffer_alignment); "
                  "MSCCL++'s executor refuses such a size");
    return true;
  };
  if (misaligned(icn, "input", inputBytes_, *ic) || misaligned(ocn, "output", outputBytes_, *oc))
    return false;
  if (*ic && *oc && inputBytes_ / *ic != outputBytes_ / *oc) {
    error(ocn, "chunks of the input (" + Twine(inputBytes_) + " / " + Twine(*ic) + " bytes) and "
               "of the output (" + Twine(outputBytes_) + " / " + Twine(*oc) + ") differ in size");
    return false;
  }
  g.chunk = *ic ? inputBytes_ / *ic : outputBytes_ / *oc;
  if (!readChannels(gpuNode, g) || !readRemoteBuffers(gpuNode, g))
    return false;
  if (const YamlNode *sems = gpuNode->get("semaphores"); sems && isList(sems, "'semaphores'"))
    for (const YamlNode *s : sems->items) {
      if (!isMap(s, "a semaphore"))
        continue;
      const YamlNode *iv = need(s, "init_value", "a semaphore");
      auto init = iv ? number(iv, "'init_value'", 0xFFFFFFFFu) : std::nullopt;
      if (!init)
        continue;
      Semaphore sem;
      sem.gpu = g.id;
      sem.init = uint32_t(*init);
      sem.index = uint32_t(g.deviceSems.size());
      g.deviceSems.push_back(uint32_t(k_->semaphores.size()));
      k_->semaphores.push_back(sem);
    }
  if (d_.errorCount() != before)
    return false;

  Kernel K;
  K.gpu = g.id;
  K.firstWorkgroup = uint32_t(k_->workgroups.size());
  // The executor's calScratchBufferSize and calMaxScratchChunkSize.
  auto align = [&](uint64_t v) { return (v + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t scratch =
      align(g.chunk * scratchChunks * (packetProtocol_ ? 2 : 1) * (doubleScratch_ ? 2 : 1));
  if (reuse_ && scratchChunks) {
    scratch = PredefinedScratchBytes;
    uint64_t usable = doubleScratch_ ? scratch / 2 : scratch;
    K.scratchWrap = align((usable + scratchChunks - 1) / scratchChunks);
  }
  g.scratchChunk = K.scratchWrap;
  K.bufferBytes[unsigned(BufferKind::Input)] = inputBytes_;
  K.bufferBytes[unsigned(BufferKind::Output)] = outputBytes_;
  K.bufferBytes[unsigned(BufferKind::Scratch)] = scratch;
  uint32_t kernel = uint32_t(k_->kernels.size());
  k_->kernels.push_back(K);
  const YamlNode *tbs = need(gpuNode, "threadblocks", "a GPU");
  if (!tbs || !isList(tbs, "'threadblocks'"))
    return false;
  for (uint32_t i = 0; i < tbs->items.size() && !d_.shouldStop(); ++i)
    readThreadblock(tbs->items[i], i, g, kernel);
  k_->kernels[kernel].numWorkgroups = uint32_t(k_->workgroups.size()) - K.firstWorkgroup;
  return d_.errorCount() == before;
}

std::optional<Schedule> PlanReader::read(const YamlNode *root, SMLoc fileStart) {
  fileStart_ = fileStart;
  auto kl = std::make_shared<KernelLevel>();
  k_ = kl.get();
  if (!root || root->kind != YamlNode::Map) {
    error(root, "an execution plan is a JSON object with 'name', 'collective', 'gpus', ...");
    return std::nullopt;
  }
  if (!readHeader(root))
    return std::nullopt;
  k_->numGpus = numGpus_;
  const YamlNode *gpus = root->get("gpus");
  for (uint32_t i = 0; i < numGpus_ && !d_.shouldStop(); ++i)
    readGpu(gpus->items[i], i);
  if (d_.hasErrors())
    return std::nullopt;
  k_->canonicalize();
  ScheduleBuilder b(numGpus_);
  for (uint32_t r = 0; r < numGpus_; ++r) {
    b.beginRank(r);
    b.addOp(OpKind::Kernel, r, 0);
    b.endRank();
  }
  b.setKernels(std::move(kl));
  return b.finish();
}

} // namespace

bool looksLikePlan(llvm::StringRef head) {
  return head.contains("\"threadblocks\"") ||
         (head.contains("\"gpus\"") && head.contains("\"collective\""));
}

std::optional<Schedule> readPlan(llvm::StringRef path, const ReadOptions &opts,
                                 DiagEngine &diags) {
  auto buf = openInputFile(path, /*nulTerminated=*/false);
  if (!buf) {
    diags.error(path, "cannot read the file: " + buf.getError().message());
    return std::nullopt;
  }
  llvm::MemoryBufferRef ref = (*buf)->getMemBufferRef();
  diags.addBuffer(std::move(*buf));
  YamlTree tree;
  if (!tree.parseJson(ref, diags))
    return std::nullopt;
  PlanReader reader(diags, opts);
  auto s = reader.read(tree.root(), SMLoc::getFromPointer(ref.getBufferStart()));
  if (diags.shouldStop())
    diags.announceStop();
  return s;
}

} // namespace infracc::msccl
