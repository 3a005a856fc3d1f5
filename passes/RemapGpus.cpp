// remap-gpus: a per-GPU schedule (one rank per GPU) becomes a per-node schedule (one
// rank per host); split-nodes is the reverse.
//
// Which GPUs share a node comes from the placement (run place first: the GPUs placed
// on one host, in rank order), from the trace (an NCCL trace names each GPU's host),
// or from -gpus-per-node=N (ranks kN .. kN+N-1, no fabric
// needed; for what-if regroupings such as 4x4 GPUs replayed as 8x2). The grouping
// rules (streams, tags, why messages stay apart) are those of passes/RankGrouping.h.
// NICs: with a fabric, every op of a GPU leaves through the attach point -nic gives
// that GPU (by default the nearest inside its host, passes/NicAssignment.h), numbered
// by its place among the host's attach points; without one, GPU k of a node gets nics
// [k*N, (k+1)*N) for the schedule's N nic indices (nic' = k*N + nic).
#include "ir/Module.h"
#include "passes/NicAssignment.h"
#include "passes/Pass.h"
#include "passes/RankGrouping.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace infracc {
namespace cl = llvm::cl;

namespace {

cl::opt<unsigned> GpusPerNode("gpus-per-node", cl::init(0), cl::value_desc("n"),
                              cl::desc("remap-gpus: group ranks n at a time (rank r on node "
                                       "r/n) instead of by placement; split-nodes: the n GPUs "
                                       "of every node when the run did not group them itself"),
                              cl::cat(opts::passCategory()));

std::string workloadName(const Module &m) {
  return m.workloadSource.empty() ? std::string("workload") : m.workloadSource;
}

/// split-nodes' work; remap-gpus also uses it to regroup a grouped schedule.
llvm::Error splitNodes(Module &m, PassContext &ctx);

class RemapGpusPass : public Pass {
public:
  llvm::StringRef name() const override { return "remap-gpus"; }
  llvm::Error run(Module &m, PassContext &ctx) override;
};

llvm::Error RemapGpusPass::run(Module &m, PassContext &ctx) {
  if (!m.hasSchedule())
    return usageError("remap-gpus needs a workload (a per-GPU schedule)");
  // Ranks that already group several (a multi-tenant merge, an earlier remap-gpus) are
  // taken apart first, then regrouped by host: tenants of one GPU become two members.
  if (m.placement.hasMembers())
    if (llvm::Error e = splitNodes(m, ctx))
      return e;
  const Schedule &s = *m.schedule;
  const uint32_t P = s.numRanks();
  const Placement old = m.placement;
  // A trace that says which node each GPU ran on (NCCL's Nsight exports) groups by that.
  const bool byTrace = GpusPerNode == 0 && old.empty() && m.traceNodeOfRank.size() == P;
  const bool byPlacement = GpusPerNode == 0 && !byTrace;
  if (!byPlacement && !old.empty())
    return usageError("-gpus-per-node and a placement both say which GPUs share a node; the "
                      "placement (from place or merge-jobs) decides: drop -gpus-per-node, or "
                      "do not place");
  if (byPlacement && (old.empty() || !m.hasFabric()))
    return usageError("remap-gpus needs to know which GPUs share a node: run place first (with "
                      "a fabric), or give -gpus-per-node=N");

  GroupingPlan plan;
  plan.pass = "remap-gpus";
  plan.sources = {&s};
  plan.sourceNames = {workloadName(m)};
  std::vector<uint32_t> hostOfNode;   // per new rank: device copy (byPlacement)
  if (byPlacement) {
    std::map<uint32_t, std::vector<uint32_t>> byHost;   // device copy -> ranks
    for (uint32_t r = 0; r < P; ++r)
      byHost[m.fabric->deviceCopyOf(old.endpointOfRank[r])].push_back(r);
    plan.begin.push_back(0);
    for (auto &[copy, ranks] : byHost) {
      for (uint32_t r : ranks)
        plan.members.push_back({0, r});
      plan.begin.push_back(static_cast<uint32_t>(plan.members.size()));
      hostOfNode.push_back(copy);
    }
  } else if (byTrace) {
    std::map<uint32_t, std::vector<uint32_t>> byNode;
    for (uint32_t r = 0; r < P; ++r)
      byNode[m.traceNodeOfRank[r]].push_back(r);
    plan.begin.push_back(0);
    for (auto &[node, ranks] : byNode) {
      for (uint32_t r : ranks)
        plan.members.push_back({0, r});
      plan.begin.push_back(static_cast<uint32_t>(plan.members.size()));
    }
  } else {
    const uint32_t N = GpusPerNode;
    plan.begin.push_back(0);
    for (uint32_t r = 0; r < P; ++r) {
      plan.members.push_back({0, r});
      if ((r + 1) % N == 0 || r + 1 == P)
        plan.begin.push_back(r + 1);
    }
  }

  // NICs per member.
  std::vector<uint32_t> nicIndex(plan.members.size(), 0);
  std::optional<AttachPoints> attach;
  std::vector<NodeId> byRankNic;   // per GPU rank: its attach point (InvalidNode: none)
  const uint32_t nicsPerGpu = s.maxNic() + 1;
  if (byPlacement) {
    attach.emplace(*m.fabric);
    std::vector<NodeId> eps(plan.members.size());
    for (size_t i = 0; i < eps.size(); ++i)
      eps[i] = old.endpointOfRank[plan.members[i].rank];
    // The -nic map names ranks of this (per-GPU) schedule: ask in rank order.
    auto byRank = assignNics(*attach, old.endpointOfRank, m.nicRequest ? &*m.nicRequest : nullptr,
                             ctx.diags, workloadName(m));
    if (!byRank)
      return reportedError();
    byRankNic = *byRank;
    std::vector<std::string> lost;
    for (uint32_t q = 0; q + 1 < plan.begin.size(); ++q)
      for (uint32_t i = plan.begin[q]; i < plan.begin[q + 1]; ++i) {
        NodeId nic = (*byRank)[plan.members[i].rank];
        if (nic != InvalidNode) {
          nicIndex[i] = uint32_t(attach->indexInCopy(nic));
        } else {
          nicIndex[i] = i - plan.begin[q];   // fallback: one NIC per GPU, by position
          if (lost.size() < 5)
            lost.push_back(m.fabric->name(eps[i]));
        }
      }
    if (!lost.empty())
      ctx.diags.warning(m.fabricSource,
                        fmt::format("remap-gpus: {} reach no NIC inside their host (e.g. '{}'); "
                                    "their traffic uses nic = their index on the node",
                                    lost.size() == 1 ? "1 GPU does" : "several GPUs do",
                                    lost.front()));
    plan.nicOf = [&](uint32_t member, uint32_t) { return nicIndex[member]; };
  } else {
    // GPU k of a node (its place among the node's members) gets nics [k*N, (k+1)*N).
    for (uint32_t q = 0; q + 1 < plan.begin.size(); ++q)
      for (uint32_t i = plan.begin[q]; i < plan.begin[q + 1]; ++i)
        nicIndex[i] = i - plan.begin[q];
    plan.nicOf = [&](uint32_t member, uint32_t nic) { return nicIndex[member] * nicsPerGpu + nic; };
  }

  std::optional<Schedule> grouped = regroup(plan, ctx.diags);
  if (!grouped)
    return reportedError();

  Placement p;
  const uint32_t Q = plan.numRanks();
  p.cpusPerMember = cpusPerMember(plan.sources);
  p.memberBegin = plan.begin;
  for (const GroupMember &gm : plan.members)
    p.members.push_back({gm.rank, old.job(gm.rank),
                         old.empty() ? InvalidNode : old.endpointOfRank[gm.rank],
                         byRankNic.empty() ? InvalidNode : byRankNic[gm.rank]});
  if (!byPlacement)
    p.nicsPerMember = nicsPerGpu;
  if (byPlacement) {
    p.endpointOfRank.resize(Q);
    p.nicBegin.push_back(0);
    for (uint32_t q = 0; q < Q; ++q) {
      p.endpointOfRank[q] = p.members[p.memberBegin[q]].endpoint;
      auto list = attach->ofCopy(hostOfNode[q]);
      p.nics.insert(p.nics.end(), list.begin(), list.end());
      p.nicBegin.push_back(static_cast<uint32_t>(p.nics.size()));
    }
  }
  if (!old.jobOfRank.empty())
    for (uint32_t q = 0; q < Q; ++q)
      p.jobOfRank.push_back(p.members[p.memberBegin[q]].job);
  m.schedule = std::move(*grouped);
  m.placement = std::move(p);
  ctx.stats.add("remap-gpus", "nodes", "Nodes (ranks) after remap-gpus", Q);
  ctx.stats.add("remap-gpus", "gpus", "GPUs grouped into nodes", P);
  ctx.stats.add("remap-gpus", "max-gpus", "Most GPUs on one node", plan.maxMembers());
  return llvm::Error::success();
}

// --- split-nodes ----------------------------------------------------------------------

class SplitNodesPass : public Pass {
public:
  llvm::StringRef name() const override { return "split-nodes"; }
  llvm::Error run(Module &m, PassContext &ctx) override { return splitNodes(m, ctx); }
};

llvm::Error splitNodes(Module &m, PassContext &ctx) {
  if (!m.hasSchedule())
    return usageError("split-nodes needs a workload (a per-node schedule)");
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  const std::string where = workloadName(m);
  const uint32_t Q = s.numRanks();
  const bool known = pl.hasMembers();
  if (!known && GpusPerNode == 0)
    return usageError("split-nodes needs to know the GPUs of every node: run it after "
                      "remap-gpus in the same run, or give -gpus-per-node=N");

  // Members of every node: their original rank, and where they ran.
  std::vector<uint32_t> begin{0};
  std::vector<Placement::Member> members;
  uint32_t C = 0;
  if (known) {
    begin = pl.memberBegin;
    members = pl.members;
    C = pl.cpusPerMember;
  } else {
    const uint32_t N = GpusPerNode, streams = s.maxCpu() + 1;
    if (streams % N != 0) {
      ctx.diags.error(where, fmt::format("split-nodes: the schedule has {} cpu streams per node, "
                                         "not a multiple of -gpus-per-node={}, so the streams "
                                         "cannot be shared out among the GPUs (remap-gpus gives "
                                         "GPU k streams [k*c, (k+1)*c))",
                                         streams, N));
      return reportedError();
    }
    C = streams / N;
    for (uint32_t q = 0; q < Q; ++q) {
      for (uint32_t k = 0; k < N; ++k)
        members.push_back({q * N + k, 0, InvalidNode});
      begin.push_back(static_cast<uint32_t>(members.size()));
    }
  }
  const uint32_t M = static_cast<uint32_t>(members.size());
  uint64_t g = 1;
  for (uint32_t q = 0; q < Q; ++q)
    g = std::max<uint64_t>(g, begin[q + 1] - begin[q]);
  // nic blocks per member (the rule remap-gpus uses without a fabric), when visible.
  uint32_t nicBlock = 0;
  if (!known && (s.maxNic() + 1) % GpusPerNode == 0)
    nicBlock = (s.maxNic() + 1) / GpusPerNode;
  else if (known)
    nicBlock = pl.nicsPerMember;

  // Which member each op belongs to, and its index among that member's ops.
  std::vector<uint32_t> rankOfMember(M), memberOfOrig(M, ~0u);
  for (uint32_t q = 0; q < Q; ++q)
    for (uint32_t i = begin[q]; i < begin[q + 1]; ++i) {
      rankOfMember[i] = q;
      if (members[i].rank >= M || memberOfOrig[members[i].rank] != ~0u) {
        ctx.diags.error(where, "split-nodes: the node members do not number the ranks 0.." +
                                   std::to_string(M - 1) + " once each");
        return reportedError();
      }
      memberOfOrig[members[i].rank] = i;
    }
  std::vector<uint32_t> memberOfOp(s.numOps()), newIndex(s.numOps());
  std::vector<uint32_t> count(M, 0);
  for (uint32_t q = 0; q < Q && !ctx.diags.shouldStop(); ++q) {
    const uint32_t base = s.rankBegin(q), n = s.numOps(q), width = begin[q + 1] - begin[q];
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t k = s.cpu(base + i) / C;
      if (k >= width) {
        ctx.diags.error(where, fmt::format("split-nodes: rank {} operation {} is on cpu stream "
                                           "{}, beyond the {} streams of its {} GPUs",
                                           q, s.opName(base + i), s.cpu(base + i), width * C,
                                           width));
        k = 0;
      }
      memberOfOp[base + i] = begin[q] + k;
      newIndex[base + i] = count[begin[q] + k]++;
    }
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t raw : s.successorsRaw(base + i)) {
        uint32_t j = base + (raw & ~Schedule::IRequiresBit);
        if (memberOfOp[j] != memberOfOp[base + i])
          ctx.diags.error(where, fmt::format("split-nodes: rank {} operation {} (GPU {}) {} "
                                             "operation {} (GPU {}): a dependency between two "
                                             "GPUs of a node has no per-GPU form (intranode-calc "
                                             "makes such edges; split before it)",
                                             q, s.opName(j), memberOfOp[j] - begin[q],
                                             (raw & Schedule::IRequiresBit) ? "irequires"
                                                                            : "requires",
                                             s.opName(base + i), memberOfOp[base + i] - begin[q]));
      }
  }
  if (ctx.diags.hasErrors())
    return reportedError();

  // Ops of every member, in node order.
  std::vector<uint32_t> opsBegin(M + 1, 0);
  for (uint32_t i = 0; i < M; ++i)
    opsBegin[i + 1] = opsBegin[i] + count[i];
  std::vector<uint32_t> ops(s.numOps());
  for (uint64_t op = 0; op < s.numOps(); ++op)
    ops[opsBegin[memberOfOp[op]] + newIndex[op]] = uint32_t(op);

  ScheduleBuilder b(M);
  b.reserve(s.numOps(), s.numDependencies());
  for (uint32_t r = 0; r < M; ++r) {
    const uint32_t mi = memberOfOrig[r], q = rankOfMember[mi], k = mi - begin[q];
    b.beginRank(r);
    for (uint32_t at = opsBegin[mi]; at < opsBegin[mi + 1]; ++at) {
      const uint32_t op = ops[at];
      OpKind kind = s.kind(op);
      uint32_t peer = s.peer(op), tag = s.tag(op), nic = s.nic(op);
      if (kind == OpKind::Send || kind == OpKind::Recv) {
        uint32_t sLocal = 0, dLocal = 0;
        if (g > 1) {
          if (tag == AnyTag || peer == AnySource) {
            ctx.diags.error(where, fmt::format("split-nodes: rank {} operation {} has a "
                                               "wildcard source or tag, which does not say "
                                               "which GPU it talks to",
                                               q, s.opName(op)));
            continue;
          }
          dLocal = uint32_t(tag % g);
          sLocal = uint32_t((tag / g) % g);
          tag = uint32_t(tag / g / g);
        }
        uint32_t mine = kind == OpKind::Send ? sLocal : dLocal;
        uint32_t theirs = kind == OpKind::Send ? dLocal : sLocal;
        if (mine != k || peer >= Q || theirs >= begin[peer + 1] - begin[peer]) {
          ctx.diags.error(where, fmt::format("split-nodes: rank {} operation {}: its tag {} "
                                             "does not encode GPU {} of this node talking to a "
                                             "GPU of node {} (remap-gpus writes tag' = "
                                             "(tag*{} + source GPU)*{} + destination GPU)",
                                             q, s.opName(op), s.tag(op), k, peer, g, g));
          continue;
        }
        peer = members[begin[peer] + theirs].rank;
        if (nicBlock)
          nic = nic >= k * nicBlock && nic < (k + 1) * nicBlock ? nic - k * nicBlock : 0;
        else
          nic = 0;
      }
      b.addOp(kind, peer, s.size(op), tag, s.cpu(op) % C, nic);
    }
    for (uint32_t at = opsBegin[mi]; at < opsBegin[mi + 1]; ++at)
      for (uint32_t raw : s.successorsRaw(ops[at])) {
        uint32_t j = s.rankBegin(q) + (raw & ~Schedule::IRequiresBit);
        b.addDependency(newIndex[j], newIndex[ops[at]],
                        (raw & Schedule::IRequiresBit) ? DepKind::IRequires : DepKind::Requires);
      }
    if (ctx.diags.hasErrors())
      return reportedError();
    b.endRank();
  }
  Placement p;
  if (known && !pl.empty()) {
    p.endpointOfRank.resize(M);
    for (const auto &mem : members)
      p.endpointOfRank[mem.rank] = mem.endpoint;
  }
  if (known && !pl.jobOfRank.empty()) {
    p.jobOfRank.resize(M);
    for (const auto &mem : members)
      p.jobOfRank[mem.rank] = mem.job;
  }
  m.schedule = b.finish();
  m.placement = std::move(p);
  ctx.stats.add("split-nodes", "ranks", "Ranks (GPUs) after split-nodes", M);
  return llvm::Error::success();
}

RegisterPass<RemapGpusPass> X("remap-gpus", "per-GPU schedule -> per-node schedule (each GPU on "
                                            "its own cpu streams and NIC; -gpus-per-node=N)");
RegisterPass<SplitNodesPass> Y("split-nodes", "per-node schedule -> per-GPU schedule (the "
                                              "reverse of remap-gpus)");

} // namespace
} // namespace infracc
