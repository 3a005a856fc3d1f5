// NCCL runs traced with Nsight Systems (ATLAHS's AI path, docs/nccl.md): the SQLite
// exports of one run, a file per node or per process, given as files or a folder.
// One rank per GPU, ordered by host name, then CUDA device; each rank's host is kept
// for remap-gpus. Every kernel launch becomes, on its CUDA stream's chain:
//   a calc of the GPU time since the stream's previous NCCL kernel ended (compute),
//   one collective statement per channel (NCCL's work element of that channel) on the
//     channel's own cpu, over a communicator ordered along that channel's ring (or
//     declaring that channel's tree), with the protocol, chunk and Simple slices NCCL
//     chose, for lower-collectives to expand into NCCL's steps (reduction cost:
//     -reduce-ns-per-byte);
//   one send or recv per point-to-point work element, each on its own cpu;
//   a calc 0 that waits for all of them (the kernel ends when every channel has).
// Tags of point-to-point messages: bit 31 clear (lowered collectives own the top bit),
// the NCCL communicator's index in bits 23..30 and the element's number between its
// two ranks in that communicator in bits 0..22; both limits are checked.
#include "compiler/frontends/nccl/NcclTrace.h"
#include "compiler/frontends/nccl/NsysExport.h"
#include "ir/Collectives.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace infracc::nccl {
namespace {

constexpr uint32_t TagCommBits = 8, TagSeqBits = 23;

/// The files of the input: each file given, and the .sqlite files of each folder.
std::vector<std::string> exportFiles(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &p : paths) {
    if (!llvm::sys::fs::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    for (const std::string &f : filesInDirectory(p))
      if (llvm::StringRef(f).ends_with(".sqlite"))
        files.push_back(f);
  }
  return files;
}

struct ChannelComm {   // an IR communicator: one NCCL communicator on one channel
  uint32_t index = 0;  // in the schedule
  std::vector<uint32_t> order;   // NCCL ranks in its order: along the ring from rank 0, or
                                 // in rank order for a tree
};

class Builder {
public:
  Builder(std::vector<GpuProcess> gpus, DiagEngine &diags)
      : gpus_(std::move(gpus)), diags_(diags) {}
  /// The schedule; `nodeOfRank` gets each rank's node (hosts numbered in rank order).
  std::optional<Schedule> build(std::vector<uint32_t> &nodeOfRank);

private:
  bool error(const GpuProcess &g, const llvm::Twine &msg) {
    diags_.error(g.file, msg);
    return false;
  }
  bool mapCommunicators();
  /// The members of `commId` by NCCL rank; nullptr (after an error) if one is missing.
  const std::vector<uint32_t> *complete(const GpuProcess &g, uint64_t commId);
  const CommMember &member(uint32_t rank, uint64_t commId) const;
  /// The communicator of `commId`'s ring (or tree) on channel `ch`; nullptr after an error.
  const ChannelComm *channelComm(const GpuProcess &g, uint64_t commId, uint32_t ch, bool tree,
                                 ScheduleBuilder &b);
  /// One statement per channel of collective `c` of a launch on cpu block `base`.
  bool addCollective(const GpuProcess &g, const CollCall &c, uint32_t base,
                     Schedule::OpIndex start, std::vector<Schedule::OpIndex> &parts,
                     ScheduleBuilder &b);
  /// Rank r's send or recv of one point-to-point piece.
  bool addTransfer(uint32_t r, const P2PElem &w, uint32_t cpu, Schedule::OpIndex start,
                   std::vector<Schedule::OpIndex> &parts, ScheduleBuilder &b);
  bool buildRank(uint32_t r, ScheduleBuilder &b);

  std::vector<GpuProcess> gpus_;
  DiagEngine &diags_;
  std::map<uint64_t, std::vector<uint32_t>> members_;      // commId -> global rank per comm rank
  std::map<uint64_t, uint32_t> commIndex_;                 // commId -> number, for tags
  std::map<std::tuple<uint64_t, uint32_t, bool>, ChannelComm> channels_;   // (comm, ch, tree)
  std::map<std::tuple<uint64_t, std::vector<uint32_t>, std::vector<int32_t>>, uint32_t>
      commByShape_;   // (NCCL communicator, ranks, tree) -> IR communicator
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, uint32_t> sendSeq_, recvSeq_;
};

bool Builder::mapCommunicators() {
  for (uint32_t r = 0; r < gpus_.size(); ++r)
    for (const auto &[hash, m] : gpus_[r].comms) {
      std::vector<uint32_t> &v = members_[m.commId];
      if (v.empty())
        v.assign(m.nranks, ~0u);
      if (v.size() != m.nranks)
        return error(gpus_[r], fmt::format("communicator 0x{:x} has {} ranks here but {} in "
                                           "another process", m.commId, m.nranks, v.size()));
      if (v[m.rank] != ~0u)
        return error(gpus_[r],
                     fmt::format("rank {} of communicator 0x{:x} appears twice (process {} on "
                                 "'{}' and process {} on '{}'): is a report given twice?",
                                 m.rank, m.commId, gpus_[v[m.rank]].pid, gpus_[v[m.rank]].host,
                                 gpus_[r].pid, gpus_[r].host));
      v[m.rank] = r;
      if (!commIndex_.count(m.commId))
        commIndex_.emplace(m.commId, uint32_t(commIndex_.size()));
    }
  return true;
}

const std::vector<uint32_t> *Builder::complete(const GpuProcess &g, uint64_t commId) {
  const std::vector<uint32_t> &mem = members_[commId];
  for (uint32_t cr = 0; cr < mem.size(); ++cr)
    if (mem[cr] == ~0u) {
      error(g, fmt::format("communicator 0x{:x} has {} ranks, but no export given holds its rank "
                           "{}: give the exports of every node of the run",
                           commId, mem.size(), cr));
      return nullptr;
    }
  return &mem;
}

const CommMember &Builder::member(uint32_t rank, uint64_t commId) const {
  for (const auto &[hash, m] : gpus_[rank].comms)
    if (m.commId == commId)
      return m;
  llvm_unreachable("members_ lists only ranks that are members");
}

const ChannelComm *Builder::channelComm(const GpuProcess &g, uint64_t commId, uint32_t ch,
                                        bool tree, ScheduleBuilder &b) {
  auto key = std::make_tuple(commId, ch, tree);
  if (auto it = channels_.find(key); it != channels_.end())
    return &it->second;
  const std::vector<uint32_t> *mem = complete(g, commId);
  if (!mem)
    return nullptr;
  const uint32_t n = uint32_t(mem->size());
  ChannelComm cc;
  Communicator c;
  if (tree) {   // members in NCCL rank order, each with its parent on this channel
    for (uint32_t cr = 0; cr < n; ++cr) {
      const CommMember &m = member((*mem)[cr], commId);
      auto it = m.tree.find(ch);
      if (it == m.tree.end()) {
        error(g, fmt::format("rank {} of communicator 0x{:x} has no tree for channel {} (no "
                             "'Trees [{}]' event)", cr, commId, ch, ch));
        return nullptr;
      }
      int32_t up = it->second[3];
      if (up < -1 || up >= int32_t(n) || up == int32_t(cr)) {
        error(g, fmt::format("the tree of channel {} of communicator 0x{:x} gives rank {} the "
                             "parent {}", ch, commId, cr, up));
        return nullptr;
      }
      cc.order.push_back(cr);
      c.treeUp.push_back(up);
    }
    if (std::string why = treeProblem(c.treeUp); !why.empty()) {
      error(g, fmt::format("the tree of channel {} of communicator 0x{:x} {}", ch, commId, why));
      return nullptr;
    }
  } else {   // members along this channel's ring, from rank 0
    std::vector<bool> seen(n);
    uint32_t cur = 0;
    for (uint32_t step = 0; step < n; ++step) {
      if (seen[cur]) {
        error(g, fmt::format("the ring of channel {} of communicator 0x{:x} closes after {} of "
                             "its {} ranks", ch, commId, step, n));
        return nullptr;
      }
      seen[cur] = true;
      cc.order.push_back(cur);
      const CommMember &m = member((*mem)[cur], commId);
      auto it = m.ring.find(ch);
      if (it == m.ring.end()) {
        error(g, fmt::format("rank {} of communicator 0x{:x} has no ring for channel {} (no "
                             "'Rings [{}]' event)", cur, commId, ch, ch));
        return nullptr;
      }
      cur = uint32_t(it->second.second);
    }
    if (cur != 0) {
      error(g, fmt::format("the ring of channel {} of communicator 0x{:x} does not return to "
                           "rank 0", ch, commId));
      return nullptr;
    }
  }
  for (uint32_t cr : cc.order)
    c.ranks.push_back((*mem)[cr]);
  // Channels of one NCCL communicator with the same ring (or tree) share a communicator;
  // other NCCL communicators never do (their collectives need not come in the same order).
  auto [it, fresh] = commByShape_.emplace(std::make_tuple(commId, c.ranks, c.treeUp), 0u);
  if (fresh) {
    c.id = uint32_t(commByShape_.size());
    it->second = b.addCommunicator(std::move(c));
  }
  cc.index = it->second;
  return &channels_.emplace(key, std::move(cc)).first->second;
}

CollectiveKind kindOf(NcclFunc f) {
  switch (f) {
  case NcclFunc::Broadcast: return CollectiveKind::Bcast;
  case NcclFunc::Reduce: return CollectiveKind::Reduce;
  case NcclFunc::AllGather: return CollectiveKind::Allgather;
  case NcclFunc::ReduceScatter: return CollectiveKind::Reducescatter;
  case NcclFunc::AllReduce: return CollectiveKind::Allreduce;
  }
  return CollectiveKind::Allreduce;
}

CollProtocol protocolOf(uint32_t proto) {
  switch (NcclProto(proto)) {
  case NcclProto::LL: return CollProtocol::LL;
  case NcclProto::LL128: return CollProtocol::LL128;
  case NcclProto::Simple: return CollProtocol::Simple;
  }
  return CollProtocol::Simple;
}

bool Builder::addCollective(const GpuProcess &g, const CollCall &c, uint32_t base,
                            Schedule::OpIndex start, std::vector<Schedule::OpIndex> &parts,
                            ScheduleBuilder &b) {
  auto bad = [&](const llvm::Twine &why) {
    return error(g, fmt::format("NVTX event {}: the {} of {} bytes {}", c.row,
                                ncclFuncName(c.func).str(), c.dataSize, why.str()));
  };
  if (c.algo != uint32_t(NcclAlgo::Ring) && c.algo != uint32_t(NcclAlgo::Tree))
    return bad("uses NCCL's " + ncclAlgoName(c.algo) +
               " algorithm; infracc lowers Ring and Tree (docs/nccl.md)");
  const bool isTree = c.algo == uint32_t(NcclAlgo::Tree);
  if (isTree && c.func != NcclFunc::AllReduce)
    return bad("uses the Tree algorithm, which NCCL runs only for all-reduce");
  if (c.elems.empty())
    return bad("has no work elements ('nWarps ...' events)");
  const uint64_t commId = g.comms.at(c.commHash).commId;
  for (uint32_t ch = 0; ch < c.elems.size(); ++ch) {
    const WorkElem &w = c.elems[ch];
    if (w.workCount == 0)
      continue;
    if (w.workCount > UINT64_MAX / c.typeSize || w.chunkCount > UINT64_MAX / c.typeSize)
      return bad(fmt::format("has a work element of {} elements of {} bytes", w.workCount,
                             c.typeSize));
    const ChannelComm *cc = channelComm(g, commId, ch, isTree, b);
    if (!cc)
      return false;
    CollectiveInfo info;
    info.kind = kindOf(c.func);
    info.communicator = cc->index;
    info.algorithm = uint32_t(isTree ? CollAlgorithm::Tree : CollAlgorithm::Ring);
    info.bytes = w.workCount * c.typeSize;
    info.protocol = uint8_t(protocolOf(c.proto));
    info.chunkBytes = w.chunkCount * c.typeSize;
    // Simple moves a ring step as chunkSteps/sliceSteps slices of at least 16 elements,
    // and at least a 32nd of a slice's buffer (NCCL's prims; trees use one).
    if (!isTree && c.proto == uint32_t(NcclProto::Simple) && c.sliceSteps > 0 &&
        c.chunkSteps / c.sliceSteps > 1) {
      info.slices = uint32_t(c.chunkSteps / c.sliceSteps);
      info.sliceAlign = 16 * c.typeSize;
      info.sliceMin = c.stepSize / c.typeSize * c.sliceSteps / 32 * c.typeSize;
    }
    if (info.kind == CollectiveKind::Bcast || info.kind == CollectiveKind::Reduce)
      info.root = uint32_t(std::find(cc->order.begin(), cc->order.end(), c.root) -
                           cc->order.begin());
    Schedule::OpIndex op =
        b.addOp(OpKind::Collective, b.addCollective(info), info.bytes, 0, base + ch);
    b.addDependency(op, start, DepKind::Requires);
    parts.push_back(op);
  }
  return true;
}

bool Builder::addTransfer(uint32_t r, const P2PElem &w, uint32_t cpu, Schedule::OpIndex start,
                          std::vector<Schedule::OpIndex> &parts, ScheduleBuilder &b) {
  const GpuProcess &g = gpus_[r];
  const CommMember &m = g.comms.at(w.commHash);
  uint32_t peer = members_[m.commId][w.peer];
  if (peer == ~0u)
    return error(g, fmt::format("NVTX event {}: a {} rank {} of communicator 0x{:x}, which no "
                                "export given holds",
                                w.row, w.send ? "send to" : "recv from", w.peer, m.commId));
  uint32_t comm = commIndex_[m.commId];
  if (comm >= (1u << TagCommBits))
    return error(g, fmt::format("point-to-point traffic on more than {} NCCL communicators; "
                                "their tags would not fit in 31 bits",
                                1u << TagCommBits));
  uint32_t src = w.send ? r : peer, dst = w.send ? peer : r;
  uint32_t &seq = (w.send ? sendSeq_ : recvSeq_)[{m.commId, src, dst}];
  if (seq >= (1u << TagSeqBits))
    return error(g, fmt::format("more than {} point-to-point transfers from rank {} to rank {} "
                                "on one communicator; their tags would not fit in 31 bits",
                                1u << TagSeqBits, src, dst));
  uint32_t tag = comm << TagSeqBits | seq++;
  uint64_t wire = protocolWireBytes(protocolOf(w.proto), w.bytes);
  Schedule::OpIndex op =
      w.send ? b.addSend(wire, peer, tag, cpu) : b.addRecv(wire, peer, tag, cpu);
  b.addDependency(op, start, DepKind::Requires);
  parts.push_back(op);
  return true;
}

bool Builder::buildRank(uint32_t r, ScheduleBuilder &b) {
  const GpuProcess &g = gpus_[r];
  // cpus: one block per CUDA stream, as wide as the widest launch (channels or p2p pieces).
  uint32_t width = 1;
  std::map<std::string, uint32_t> streamIndex;
  for (const Launch &l : g.launches) {
    for (const CollCall &c : l.colls)
      width = std::max<uint32_t>(width, uint32_t(std::min<size_t>(c.elems.size(), 1u << 16)));
    width = std::max<uint32_t>(width, uint32_t(std::min<size_t>(l.p2p.size(), 1u << 16)));
    streamIndex.emplace(l.stream, uint32_t(streamIndex.size()));
  }
  if (uint64_t(width) * streamIndex.size() > ScheduleBuilder::MaxCpu + 1ull)
    return error(g, fmt::format("process {} needs {} cpu streams ({} CUDA streams x {} channels or "
                                "transfers at once); at most {}",
                                g.pid, uint64_t(width) * streamIndex.size(), streamIndex.size(),
                                width, ScheduleBuilder::MaxCpu + 1));
  std::map<uint32_t, std::pair<Schedule::OpIndex, int64_t>> last;   // stream -> (join, end)
  int64_t origin = g.profileStart >= 0 ? g.profileStart
                                       : (g.launches.empty() ? 0 : g.launches.front().kernelStart);
  for (const Launch &l : g.launches) {
    uint32_t s = streamIndex[l.stream], base = s * width;
    auto prev = last.find(s);
    int64_t since = prev == last.end() ? origin : prev->second.second;
    uint64_t gap = l.kernelStart > since ? uint64_t(l.kernelStart - since) : 0;
    Schedule::OpIndex start = b.addCalc(gap, base);
    if (prev != last.end())
      b.addDependency(start, prev->second.first, DepKind::Requires);
    std::vector<Schedule::OpIndex> parts;
    for (const CollCall &c : l.colls)
      if (!addCollective(g, c, base, start, parts, b))
        return false;
    for (uint32_t i = 0; i < l.p2p.size(); ++i)
      if (!addTransfer(r, l.p2p[i], base + i, start, parts, b))
        return false;
    Schedule::OpIndex join = start;
    if (!parts.empty()) {
      join = b.addCalc(0, base);
      for (Schedule::OpIndex p : parts)
        b.addDependency(join, p, DepKind::Requires);
    }
    last[s] = {join, l.kernelEnd};
  }
  return true;
}

std::optional<Schedule> Builder::build(std::vector<uint32_t> &nodeOfRank) {
  // Ranks: hosts in name order (numbers compared as numbers), then CUDA device, then pid.
  std::stable_sort(gpus_.begin(), gpus_.end(), [](const GpuProcess &a, const GpuProcess &b) {
    if (int c = llvm::StringRef(a.host).compare_numeric(b.host))
      return c < 0;
    return std::tie(a.device, a.pid) < std::tie(b.device, b.pid);
  });
  for (size_t i = 1; i < gpus_.size(); ++i)
    if (gpus_[i].host == gpus_[i - 1].host && gpus_[i].pid == gpus_[i - 1].pid) {
      error(gpus_[i], fmt::format("process {} of host '{}' is also in '{}': give each report once",
                                  gpus_[i].pid, gpus_[i].host, gpus_[i - 1].file));
      return std::nullopt;
    }
  if (!mapCommunicators())
    return std::nullopt;
  ScheduleBuilder b(uint32_t(gpus_.size()));
  for (uint32_t r = 0; r < gpus_.size(); ++r) {
    bool newHost = r == 0 || gpus_[r].host != gpus_[r - 1].host;   // hosts are sorted
    nodeOfRank.push_back(r == 0 ? 0 : nodeOfRank.back() + newHost);
    b.beginRank(r);
    if (!buildRank(r, b))
      return std::nullopt;
    b.endRank();
  }
  return b.finish();
}

llvm::Error load(InputContext &ctx) {
  std::vector<std::string> files = exportFiles(ctx.paths);
  if (files.empty()) {
    ctx.diags.error(ctx.path, "the folder holds no .sqlite files (Nsight Systems exports)");
    return reportedError();
  }
  std::vector<GpuProcess> gpus;
  for (const std::string &f : files) {
    llvm::Expected<NsysExport> x = readNsysExport(f);
    if (!x) {
      ctx.diags.error(f, llvm::toString(x.takeError()));
      return reportedError();
    }
    if (x->host.empty()) {
      x->host = llvm::sys::path::stem(f).str();
      ctx.diags.warning(f, "the export names no host (no 'Hostname' in TARGET_INFO_SYSTEM_ENV); "
                           "its GPUs are taken as one node, '" + x->host + "'");
    }
    size_t before = gpus.size();
    if (llvm::Error e = parseNcclCalls(*x, gpus)) {
      ctx.diags.error(f, llvm::toString(std::move(e)));
      return reportedError();
    }
    if (gpus.size() == before)
      ctx.diags.warning(f, "no NCCL communicator in this export (was NCCL built with ATLAHS's "
                           "NVTX annotations and the trace started before ncclCommInitRank?)");
  }
  if (gpus.empty()) {
    ctx.diags.error(ctx.path, "no NCCL activity in the exports given");
    return reportedError();
  }
  std::vector<uint32_t> nodeOfRank;
  Builder builder(std::move(gpus), ctx.diags);
  std::optional<Schedule> s = builder.build(nodeOfRank);
  if (!s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(*s), false});
  ctx.module.traceNodeOfRank = std::move(nodeOfRank);
  return llvm::Error::success();
}

int sniff(llvm::StringRef head) { return isSqliteHeader(head) ? 90 : 0; }

RegisterInputFormat format({.name = "nsys-nccl",
                            .description = "NCCL run traced with Nsight Systems, exported to "
                                           "SQLite (a file or a folder per node; docs/nccl.md)",
                            .extensions = {".sqlite"},
                            .role = InputRole::Workload,
                            .sniff = sniff,
                            .load = load,
                            .acceptsDirectory = true,
                            .combinesFiles = true});

} // namespace
} // namespace infracc::nccl
