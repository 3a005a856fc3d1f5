// intranode-calc: messages that never leave a host become computation.
//
// In a per-node schedule (after remap-gpus) a message between two GPUs of a node is a
// message from the rank to itself. Each such send becomes a calc on the sender's cpu
// stream costing the latency of the path between the two GPUs inside the host plus
// size / the path's bottleneck bandwidth; the matching recv becomes a calc on the
// receiver's stream that `requires` the send's calc (cost 0, or the same cost with
// -intranode-recv-cost=copy). Sends and recvs are paired in MPI order per (source,
// destination, tag) (ir/MessageMatching.h), never by position in the list; every
// rank that changed is then checked for dependency cycles.
//
// Costs come from the fabric when the rank's cpu streams are known GPUs (placement
// members, set by remap-gpus): the shortest path between the two GPUs inside their
// host (ir/Paths.h, switch latencies included). Otherwise (no fabric, a per-node trace
// read from a file, a GPU talking to itself, a path without bandwidth) the fallback
// -intranode-latency and -intranode-bandwidth apply (default 0 ns and 300 GB/s, the
// constant ATLAHS uses). Links without a bandwidth on the priced paths are warned about
// once each (passes/FabricCosts.h).
#include "support/Units.h"
#include "ir/MessageMatching.h"
#include "ir/Module.h"
#include "ir/Paths.h"
#include "passes/FabricCosts.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

#include <cmath>

namespace infracc {
namespace cl = llvm::cl;

namespace {

enum class RecvCost { Zero, Copy };

cl::opt<std::string> FallbackBandwidth(
    "intranode-bandwidth", cl::init("300GB/s"), cl::value_desc("bandwidth"),
    cl::desc("intranode-calc: bandwidth where the fabric gives none (e.g. 300GB/s, 2400Gbps; "
             "a bare number is Gb/s; default 300GB/s)"),
    cl::cat(opts::passCategory()));

cl::opt<std::string> FallbackLatency(
    "intranode-latency", cl::init("0"), cl::value_desc("latency"),
    cl::desc("intranode-calc: latency where the fabric gives no path, e.g. 500ns or 0.5us (a "
             "bare number is ns; default 0)"),
    cl::cat(opts::passCategory()));

cl::opt<RecvCost> RecvCostOpt(
    "intranode-recv-cost", cl::init(RecvCost::Zero), cl::value_desc("zero|copy"),
    cl::desc("intranode-calc: what the recv's calc costs (default zero)"),
    cl::values(clEnumValN(RecvCost::Zero, "zero", "0 ns: the send's calc carries the transfer"),
               clEnumValN(RecvCost::Copy, "copy",
                          "the transfer time again (the receiving GPU busy too)")),
    cl::cat(opts::passCategory()));

class IntranodeCalcPass : public Pass {
public:
  llvm::StringRef name() const override { return "intranode-calc"; }
  llvm::Error run(Module &m, PassContext &ctx) override;
};

/// Ops of rank `rank` (local indices) on a dependency cycle, or empty.
std::vector<uint32_t> findCycle(const Schedule &s, uint32_t rank,
                                llvm::ArrayRef<std::pair<uint32_t, uint32_t>> extra) {
  const uint32_t n = s.numOps(rank), base = s.rankBegin(rank);
  std::vector<std::vector<uint32_t>> succ(n);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : s.successorsRaw(base + i))
      succ[i].push_back(raw & ~Schedule::IRequiresBit);
  for (auto [pred, next] : extra)
    succ[pred].push_back(next);
  // Iterative DFS, colours 0 white, 1 on stack, 2 done.
  std::vector<uint8_t> colour(n, 0);
  for (uint32_t root = 0; root < n; ++root) {
    if (colour[root])
      continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto &[u, at] = stack.back();
      if (at == succ[u].size()) {
        colour[u] = 2;
        stack.pop_back();
        continue;
      }
      uint32_t v = succ[u][at++];
      if (colour[v] == 1) {
        std::vector<uint32_t> cycle{v};
        for (auto it = stack.rbegin(); it != stack.rend() && it->first != v; ++it)
          cycle.push_back(it->first);
        std::reverse(cycle.begin() + 1, cycle.end());
        return cycle;
      }
      if (colour[v] == 0) {
        colour[v] = 1;
        stack.push_back({v, 0});
      }
    }
  }
  return {};
}

llvm::Error IntranodeCalcPass::run(Module &m, PassContext &ctx) {
  if (!m.hasSchedule())
    return usageError("intranode-calc needs a workload");
  std::optional<Bandwidth> fallbackBw = parseBandwidth(FallbackBandwidth);
  if (!fallbackBw || !(fallbackBw->bitsPerSecond > 0) || !std::isfinite(fallbackBw->bitsPerSecond))
    return usageError("-intranode-bandwidth=" + FallbackBandwidth +
                      ": not a bandwidth above 0; " + BandwidthSpellings);
  std::optional<Duration> fallbackLat = parseDuration(FallbackLatency);
  if (!fallbackLat || !(fallbackLat->ns >= 0) || !std::isfinite(fallbackLat->ns))
    return usageError("-intranode-latency=" + FallbackLatency + ": not a latency of 0 or more; " +
                      DurationSpellings);
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  const std::string where = m.workloadSource.empty() ? "workload" : m.workloadSource;
  const uint32_t P = s.numRanks();
  const bool placed = m.hasFabric() && pl.numRanks() == P;

  // Messages between different ranks of one host cannot become local dependencies.
  if (placed) {
    unsigned listed = 0;
    llvm::DenseMap<uint64_t, bool> seen;
    for (uint32_t r = 0; r < P && listed < 3; ++r)
      for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r) && listed < 3; ++g) {
        if (s.kind(g) != OpKind::Send || s.peer(g) == r || s.peer(g) >= P)
          continue;
        uint32_t d = s.peer(g);
        uint32_t hostA = m.fabric->deviceCopyOf(pl.endpointOfRank[r]);
        if (hostA != m.fabric->deviceCopyOf(pl.endpointOfRank[d]))
          continue;
        if (!seen.try_emplace((uint64_t(std::min(r, d)) << 32) | std::max(r, d), true).second)
          continue;
        ++listed;
        std::string host = m.fabric->instances()[m.fabric->instanceOf(pl.endpointOfRank[r])].name +
                           "." + std::to_string(m.fabric->copyOf(pl.endpointOfRank[r]));
        ctx.diags.error(where, fmt::format("intranode-calc: ranks {} and {} are both on host '{}' "
                                           "and exchange messages (rank {} operation {}); "
                                           "turning them into local dependencies needs both in "
                                           "one rank: run remap-gpus first (e.g. -passes=place,"
                                           "remap-gpus,intranode-calc)",
                                           std::min(r, d), std::max(r, d), host, r,
                                           s.opName(g)));
      }
    if (ctx.diags.hasErrors())
      return reportedError();
  }

  auto isLocal = [&](uint32_t g) {
    OpKind k = s.kind(g);
    return (k == OpKind::Send || k == OpKind::Recv) && s.peer(g) == s.rankOf(g);
  };
  // Ranks with local messages, and wildcard recvs that could take them.
  std::vector<uint8_t> hasLocal(P, 0);
  for (uint32_t r = 0; r < P; ++r)
    for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g)
      if (s.kind(g) == OpKind::Send && s.peer(g) == r)
        hasLocal[r] = 1;
  for (uint32_t r = 0; r < P; ++r) {
    if (!hasLocal[r])
      continue;
    for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g)
      if (s.kind(g) == OpKind::Recv && (s.peer(g) == AnySource || (s.peer(g) == r &&
                                                                    s.tag(g) == AnyTag)))
        ctx.diags.error(where, fmt::format("intranode-calc: rank {} operation {} is a recv from "
                                           "{} with {}; it could take a message from inside the "
                                           "node or from outside, so it cannot be paired with a "
                                           "send statically",
                                           r, s.opName(g),
                                           s.peer(g) == AnySource ? std::string("any source")
                                                                  : "rank " + std::to_string(r),
                                           s.tag(g) == AnyTag ? std::string("any tag")
                                                              : "tag " + std::to_string(s.tag(g))));
      else if (s.kind(g) == OpKind::Send && s.peer(g) == r && s.tag(g) == AnyTag)
        ctx.diags.error(where, fmt::format("intranode-calc: rank {} operation {} is a send to "
                                           "its own rank with any tag (-1), which cannot be "
                                           "paired with a recv statically",
                                           r, s.opName(g)));
  }
  if (ctx.diags.hasErrors())
    return reportedError();

  std::vector<uint32_t> partner =
      matchMessages(s, [&](uint32_t g) { return hasLocal[s.rankOf(g)] && isLocal(g); });
  unsigned unmatched = 0;
  for (uint32_t r = 0; r < P; ++r) {
    if (!hasLocal[r])
      continue;
    for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g)
      if (isLocal(g) && partner[g] == NoPartner && unmatched++ < 10)
        ctx.diags.error(where, fmt::format("intranode-calc: rank {} operation {} ({} {} bytes "
                                           "{} its own rank, tag {}) has no matching {}",
                                           r, s.opName(g),
                                           s.kind(g) == OpKind::Send ? "send of" : "recv of",
                                           s.size(g), s.kind(g) == OpKind::Send ? "to" : "from",
                                           s.tag(g), s.kind(g) == OpKind::Send ? "recv" : "send"));
  }
  if (unmatched > 10)
    ctx.diags.error(where, fmt::format("intranode-calc: {} more local messages have no partner",
                                       unmatched - 10));
  if (ctx.diags.hasErrors())
    return reportedError();

  // Costs.
  std::unique_ptr<PathFinder> paths;
  if (m.hasFabric() && pl.hasMembers()) {
    if (llvm::Error e = checkSwitchLatencyOption())
      return e;
    auto lat = switchLatencies(*m.fabric, ctx.diags, m.fabricSource);
    if (!lat)
      return reportedError();
    paths = std::make_unique<PathFinder>(*m.fabric, std::move(*lat));
  }
  llvm::DenseMap<uint64_t, PathInfo> pathCache;
  std::optional<FabricFallbacks> fallbacks;
  if (paths)
    fallbacks.emplace(*m.fabric);
  bool warnedUnreachable = false;
  auto costOf = [&](uint32_t r, uint32_t send, uint32_t recv) -> uint64_t {
    double latencyNs = fallbackLat->ns, bps = fallbackBw->bitsPerSecond;
    const Placement::Member *a = pl.memberOfCpu(r, s.cpu(send));
    const Placement::Member *b = pl.memberOfCpu(r, s.cpu(recv));
    if (paths && a && b && a->endpoint != InvalidNode && b->endpoint != InvalidNode) {
      uint64_t key = (uint64_t(a->endpoint) << 32) | b->endpoint;
      auto it = pathCache.find(key);
      if (it == pathCache.end()) {
        it = pathCache.try_emplace(key, paths->withinCopy(a->endpoint, b->endpoint)).first;
        fallbacks->note(it->second, a->endpoint, b->endpoint);
      }
      const PathInfo &p = it->second;
      if (p.reachable) {
        latencyNs = p.latencyNs();
        if (p.bottleneckBps)
          bps = *p.bottleneckBps;
      } else if (!warnedUnreachable) {
        warnedUnreachable = true;
        ctx.diags.warning(m.fabricSource,
                          fmt::format("intranode-calc: '{}' and '{}' are not connected inside "
                                      "their host; messages between them cost "
                                      "-intranode-latency and -intranode-bandwidth",
                                      m.fabric->name(a->endpoint), m.fabric->name(b->endpoint)));
      }
    }
    double ns = latencyNs + double(s.size(send)) * 8e9 / bps;
    return ns >= 1.8e19 ? ~uint64_t(0) : static_cast<uint64_t>(std::llround(ns));
  };

  ScheduleBuilder b(P, /*keepLabels=*/s.hasLabels());   // later messages name ops by label
  b.reserve(s.numOps(), s.numDependencies());
  uint64_t messages = 0, bytes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> extra;   // (send calc, recv calc), local
  std::vector<uint64_t> cost(s.numOps(), 0);
  for (uint32_t r = 0; r < P; ++r) {
    const uint32_t base = s.rankBegin(r), n = s.numOps(r);
    extra.clear();
    if (hasLocal[r])
      for (uint32_t i = 0; i < n; ++i)
        if (s.kind(base + i) == OpKind::Send && isLocal(base + i)) {
          uint32_t recv = partner[base + i];
          cost[base + i] = costOf(r, base + i, recv);
          cost[recv] = RecvCostOpt == RecvCost::Copy ? cost[base + i] : 0;
          extra.push_back({i, recv - base});
          ++messages;
          bytes += s.size(base + i);
        }
    if (!extra.empty()) {
      std::vector<uint32_t> cycle = findCycle(s, r, extra);
      if (!cycle.empty()) {
        std::string ops;
        for (size_t k = 0; k < cycle.size() && k < 12; ++k)
          ops += (k ? " -> " : "") + s.opName(base + cycle[k]);
        ops += " -> " + s.opName(base + cycle.front());
        ctx.diags.error(where, fmt::format("intranode-calc: rank {}: making each local recv wait "
                                           "for its send closes a dependency cycle ({}); the "
                                           "schedule deadlocks there (a recv waits for a send "
                                           "that waits for it)",
                                           r, ops));
        return reportedError();
      }
    }
    b.beginRank(r);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t g = base + i;
      if (hasLocal[r] && isLocal(g))
        b.addOp(OpKind::Calc, 0, cost[g], 0, s.cpu(g), 0, s.label(g));
      else
        b.addOp(s.kind(g), s.peer(g), s.size(g), s.tag(g), s.cpu(g), s.nic(g), s.label(g));
    }
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t raw : s.successorsRaw(base + i))
        b.addDependency(raw & ~Schedule::IRequiresBit, i,
                        (raw & Schedule::IRequiresBit) ? DepKind::IRequires : DepKind::Requires);
    for (auto [send, recv] : extra)
      b.addDependency(recv, send, DepKind::Requires);
    b.endRank();
  }
  if (fallbacks)
    fallbacks->report(ctx.diags, m.fabricSource, "intranode-calc",
                      "-intranode-bandwidth=" + FallbackBandwidth +
                          (FallbackBandwidth.getNumOccurrences() ? "" : " (the default)"),
                      "");
  m.schedule = b.finish();
  ctx.stats.add("intranode-calc", "messages", "Messages inside a node replaced by calcs",
                messages);
  ctx.stats.add("intranode-calc", "bytes", "Bytes moved inside nodes", bytes);
  return llvm::Error::success();
}

RegisterPass<IntranodeCalcPass> X("intranode-calc", "messages inside a node -> calcs costed by "
                                                    "the host's internal path");

} // namespace
} // namespace infracc
