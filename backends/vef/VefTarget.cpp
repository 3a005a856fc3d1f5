// -emit=vef: a schedule as a VEF3 MPI trace for VEF-TraceLIB simulators (the reading
// side, with the grammar and what each record means, is compiler/frontends/vef).
//
// VEF is message-centric: every send becomes a message record, every collective op one
// line of its G<id>, and a record waits for at most one thing (the send or reception of a
// message, or a collective) plus a time. So:
//  * a calc whose only successor is a send or collective that waits for nothing else is
//    that record's time; any other calc is a record from its rank to itself (a local
//    sync point, as VEF-Prospector writes them), which later records can wait for;
//  * a receive is implicit in its message (matched statically, ir/MessageMatching.h);
//    what a receive itself waited for cannot be said and is dropped, with a warning;
//  * an op that waits for two or more ops cannot be written: the schedule is refused,
//    naming it (irequires count as requires, with a warning).
// Message ids are the send tags when those are unique (a VEF trace read back keeps its
// ids), else numbers in file order. Records are written in a topological order that
// keeps each rank's program order; times in cycles of 1000 ps (ns).
#include "ir/MessageMatching.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>

#include <fmt/format.h>

#include <map>
#include <queue>

namespace infracc::vef {
namespace {

std::optional<uint32_t> vefOp(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::Bcast: return 0;
  case CollectiveKind::Reduce: return 1;
  case CollectiveKind::Allreduce: return 2;
  case CollectiveKind::Gather: return 3;
  case CollectiveKind::Scatter: return 4;
  case CollectiveKind::Allgather: return 5;
  case CollectiveKind::Barrier: return 6;
  case CollectiveKind::Alltoall: return 7;
  default: return std::nullopt;
  }
}

struct Record {
  uint32_t rank = 0, first = 0, op = 0;   // first: global index of the op it waits through
  uint64_t time = 0;                      // ns (the merged calc's)
  bool self = false, collective = false;
  uint32_t waitsFor = ~0u;                // global index of the op it waits for, or ~0u
  uint64_t id = 0;                        // message id, or G id
};

llvm::Error emitVef(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  DiagEngine &diags = ctx.diags;
  const std::string &where = ctx.module.workloadSource;
  auto refuse = [&](const std::string &msg) {
    diags.error(where, msg);
    return reportedError();
  };
  if (s.kernels())
    return refuse("VEF has no GPU kernels: lower them first (-passes=lower-kernels)");
  const uint32_t P = s.numRanks();
  // Predecessors of every op (global indices), irequires counted apart.
  std::vector<llvm::SmallVector<uint32_t, 1>> preds(s.numOps());
  uint64_t irequires = 0;
  for (uint32_t r = 0; r < P; ++r)
    for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r + 1); ++g)
      for (uint32_t i = 0; i < s.numSuccessors(g); ++i) {
        preds[s.rankBegin(r) + s.successor(g, i)].push_back(g);
        irequires += s.successorKind(g, i) == DepKind::IRequires;
      }
  const std::vector<uint32_t> partner = matchMessages(s);
  // The records, rank by rank in program order.
  std::vector<Record> recs;
  std::vector<uint32_t> recordOf(s.numOps(), ~0u);   // op -> record (merged calcs too)
  uint64_t droppedRecvDeps = 0;
  std::vector<uint32_t> position;
  for (uint32_t r = 0; r < P; ++r) {
    const uint32_t base = s.rankBegin(r), n = s.rankBegin(r + 1) - base;
    programOrder(s, r, position);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i)
      order[position[i]] = i;
    auto mergedInto = [&](uint32_t g) -> uint32_t {   // calc g is the time of this op
      if (s.numSuccessors(g) != 1)
        return ~0u;
      uint32_t next = base + s.successor(g, 0);
      OpKind k = s.kind(next);
      return (k == OpKind::Send || k == OpKind::Collective) && preds[next].size() == 1 ? next
                                                                                      : ~0u;
    };
    for (uint32_t i : order) {
      const uint32_t g = base + i;
      switch (s.kind(g)) {
      case OpKind::Recv:
        droppedRecvDeps += !preds[g].empty();
        if (s.peer(g) == AnySource || s.tag(g) == AnyTag)
          return refuse(fmt::format("rank {}'s {} receives from any source or with any tag; VEF "
                                    "messages name their sender",
                                    r, s.opName(g)));
        continue;
      case OpKind::Calc:
        if (mergedInto(g) != ~0u)
          continue;
        break;
      case OpKind::Send:
      case OpKind::Collective:
        break;
      default:
        return refuse(fmt::format("rank {}'s {} cannot be written as VEF", r, s.opName(g)));
      }
      Record rec;
      rec.rank = r;
      rec.op = rec.first = g;
      rec.self = s.kind(g) == OpKind::Calc;
      rec.collective = s.kind(g) == OpKind::Collective;
      if (rec.self)
        rec.time = s.size(g);
      else if (preds[g].size() == 1 && s.kind(preds[g][0]) == OpKind::Calc &&
               mergedInto(preds[g][0]) == g) {
        rec.first = preds[g][0];
        rec.time = s.size(rec.first);
      }
      if (preds[rec.first].size() > 1)
        return refuse(fmt::format("rank {}'s {} waits for {} ops; a VEF record waits for one",
                                  r, s.opName(rec.first), preds[rec.first].size()));
      if (!preds[rec.first].empty())
        rec.waitsFor = preds[rec.first][0];
      if (s.kind(g) == OpKind::Send && partner[g] == NoPartner)
        return refuse(fmt::format("rank {}'s {} has no matching receive", r, s.opName(g)));
      recordOf[g] = recordOf[rec.first] = uint32_t(recs.size());
      recs.push_back(rec);
    }
  }
  // What each record waits for, as a record: a receive waits through its message's send.
  auto waitRecord = [&](const Record &rec) -> uint32_t {
    if (rec.waitsFor == ~0u)
      return ~0u;
    uint32_t w = rec.waitsFor;
    if (s.kind(w) == OpKind::Recv)
      w = partner[w];
    return w == NoPartner ? ~0u : recordOf[w];
  };
  for (const Record &rec : recs)
    if (rec.waitsFor != ~0u && s.kind(rec.waitsFor) == OpKind::Recv &&
        partner[rec.waitsFor] == NoPartner)
      return refuse(fmt::format("rank {}'s {} has no matching send", rec.rank,
                                s.opName(rec.waitsFor)));
  // Topological order, each rank's records in program order, lowest rank first.
  const uint32_t R = uint32_t(recs.size());
  std::vector<std::vector<uint32_t>> after(R);
  std::vector<uint32_t> waiting(R, 0);
  for (uint32_t i = 0; i < R; ++i) {
    if (uint32_t w = waitRecord(recs[i]); w != ~0u) {
      after[w].push_back(i);
      ++waiting[i];
    }
    if (i > 0 && recs[i - 1].rank == recs[i].rank) {
      after[i - 1].push_back(i);
      ++waiting[i];
    }
  }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t i = 0; i < R; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  std::vector<uint32_t> out;
  out.reserve(R);
  while (!ready.empty()) {
    uint32_t i = ready.top();
    ready.pop();
    out.push_back(i);
    for (uint32_t j : after[i])
      if (--waiting[j] == 0)
        ready.push(j);
  }
  if (out.size() != R)
    return refuse("the schedule's records wait for each other in a cycle");
  // Message ids: the send tags when unique (and not the self records'), else file order.
  llvm::DenseSet<uint64_t> tags;
  bool tagsAreIds = true;
  for (const Record &rec : recs)
    if (!rec.collective && !rec.self)
      tagsAreIds = tagsAreIds && tags.insert(s.tag(rec.op)).second;
  uint64_t next = 0;
  for (uint32_t i : out) {
    Record &rec = recs[i];
    if (rec.collective)
      continue;
    if (tagsAreIds && !rec.self)
      rec.id = s.tag(rec.op);
    else {
      while (tagsAreIds && tags.count(next))
        ++next;
      rec.id = next++;
    }
  }
  // Collective ids: the k-th collective of a rank on a communicator is instance (c, k).
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> instance;
  uint64_t algorithms = 0;
  std::vector<std::map<uint32_t, uint32_t>> seen(P);   // per rank: communicator -> count
  uint64_t collLines = 0;
  for (uint32_t i : out) {
    Record &rec = recs[i];
    if (!rec.collective)
      continue;
    const CollectiveInfo &ci = s.collectives()[s.peer(rec.op)];
    uint32_t k = seen[rec.rank][ci.communicator]++;
    auto [it, fresh] = instance.try_emplace({ci.communicator, k}, instance.size());
    rec.id = it->second;
    ++collLines;
    algorithms += ci.algorithm != 0;
    if (!vefOp(ci.kind))
      return refuse(fmt::format("rank {}'s {} is a {}, which VEF has no op for", rec.rank,
                                s.opName(rec.op), collectiveKindName(ci.kind).str()));
    if (ci.root != 0)
      return refuse(fmt::format("rank {}'s {} has root {}; VEF collectives are rooted at "
                                "rank 0 of their communicator",
                                rec.rank, s.opName(rec.op), ci.root));
  }
  // The text, whole before anything is written.
  std::string body;
  uint64_t messages = 0;
  for (uint32_t i : out) {
    const Record &rec = recs[i];
    uint32_t kind = 0;
    std::string ref = "-1";
    if (rec.waitsFor != ~0u) {
      const uint32_t w = rec.waitsFor;
      const Record &wr = recs[waitRecord(rec)];
      switch (s.kind(w)) {
      case OpKind::Recv: kind = 2; ref = std::to_string(wr.id); break;
      case OpKind::Collective: kind = 3; ref = fmt::format("G{}", wr.id); break;
      default: kind = 1; ref = std::to_string(wr.id); break;
      }
    }
    if (rec.collective) {
      const CollectiveInfo &ci = s.collectives()[s.peer(rec.op)];
      const uint64_t b = ci.kind == CollectiveKind::Barrier ? 0 : ci.bytes;
      body += fmt::format("G{} C{} {} {} {} {} {} {} {}\n", rec.id,
                          s.communicators()[ci.communicator].id, *vefOp(ci.kind), rec.rank, b, b,
                          kind, rec.time, ref);
    } else {
      ++messages;
      const uint32_t dst = rec.self ? rec.rank : s.peer(rec.op);
      const uint64_t bytes = rec.self ? 0 : s.size(rec.op);
      body += fmt::format("{} {} {} {} {} {} {}\n", rec.id, rec.rank, dst, bytes,
                          kind | (rec.self ? 0 : 4), rec.time, ref);
    }
  }
  std::string comms;
  uint32_t numComms = 0;
  bool world = false;
  for (const Communicator &c : s.communicators())
    world = world || c.id == 0;
  if (!world) {
    comms += "C0";
    for (uint32_t r = 0; r < P; ++r)
      comms += fmt::format(" {}", r);
    comms += "\n";
    ++numComms;
  }
  for (const Communicator &c : s.communicators()) {
    comms += fmt::format("C{}", c.id);
    for (uint32_t r : c.ranks)
      comms += fmt::format(" {}", r);
    comms += "\n";
    ++numComms;
  }
  if (irequires)
    diags.warning(where, fmt::format("{} irequires dependencies written as VEF's (which wait "
                                     "for completion)",
                                     irequires));
  if (algorithms)
    diags.warning(where, fmt::format("{} collective ops name an algorithm; VEF records none (the "
                                     "reader's selection policy chooses)",
                                     algorithms));
  if (droppedRecvDeps)
    diags.warning(where, fmt::format("{} receives wait for other ops; VEF receptions are "
                                     "implicit in their messages, so those waits are dropped",
                                     droppedRecvDeps));
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  *os << fmt::format("VEF3 {} {} {} {} {} 0 1000\n", P, messages, numComms, instance.size(),
                     collLines)
      << comms << body;
  return llvm::Error::success();
}

RegisterTarget VefTarget({.name = "vef",
                          .description = "a VEF3 MPI trace for VEF-TraceLIB simulators "
                                         "(messages, collectives kept)",
                          .needs = TargetNeeds::Workload,
                          .pointToPoint = false,
                          .defaultPipeline = nullptr,
                          .run = emitVef});

} // namespace
} // namespace infracc::vef
