#include "passes/RankGrouping.h"

#include "support/Diagnostics.h"

#include <llvm/ADT/STLExtras.h>

#include <fmt/format.h>

#include <algorithm>

namespace infracc {

namespace {
constexpr uint64_t MaxTag = 0xFFFFFFFEull;   // 0xFFFFFFFF is "any tag"
constexpr uint32_t Unset = ~0u;
} // namespace

uint32_t GroupingPlan::maxMembers() const {
  uint32_t g = 1;
  for (size_t q = 0; q + 1 < begin.size(); ++q)
    g = std::max(g, begin[q + 1] - begin[q]);
  return g;
}

uint32_t cpusPerMember(llvm::ArrayRef<const Schedule *> sources) {
  uint32_t c = 0;
  for (const Schedule *s : sources)
    c = std::max(c, s->maxCpu());
  return c + 1;
}

std::optional<Schedule> regroup(const GroupingPlan &plan, DiagEngine &diags) {
  // Collectives name their members by rank: grouping ranks would leave them pointing at
  // ranks that no longer exist. They are lowered to messages first.
  for (size_t i = 0; i < plan.sources.size(); ++i)
    if (!plan.sources[i]->collectives().empty()) {
      diags.error(plan.sourceNames[i],
                  fmt::format("{} regroups ranks of sends, recvs and calcs, but this workload "
                              "still has {} collective operations: lower them first "
                              "(-passes=lower-collectives,{},...)",
                              plan.pass, plan.sources[i]->collectives().size(), plan.pass));
      return std::nullopt;
    }
  struct Where {
    uint32_t rank = Unset, local = Unset;
  };
  std::vector<std::vector<Where>> loc(plan.sources.size());
  uint64_t totalOps = 0, totalDeps = 0;
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    loc[i].resize(plan.sources[i]->numRanks());
    totalOps += plan.sources[i]->numOps();
    totalDeps += plan.sources[i]->numDependencies();
  }
  for (uint32_t q = 0; q < plan.numRanks(); ++q)
    for (uint32_t m = plan.begin[q]; m < plan.begin[q + 1]; ++m) {
      const GroupMember &gm = plan.members[m];
      loc[gm.source][gm.rank] = {q, m - plan.begin[q]};
    }

  const uint64_t g = plan.maxMembers();
  const uint32_t C = cpusPerMember(plan.sources);
  // Tags as large as lowered collectives' (2^31 and up) leave no room for the two digits
  // s and d: then the distinct tags are numbered 0, 1, ... in their order first (one to
  // one, so messages stay apart exactly as before).
  std::vector<uint32_t> tagIds;
  if (g > 1) {
    uint32_t maxTag = 0;
    for (const Schedule *src : plan.sources)
      for (uint64_t op = 0; op < src->numOps(); ++op)
        if ((src->kind(op) == OpKind::Send || src->kind(op) == OpKind::Recv) &&
            src->tag(op) != AnyTag)
          maxTag = std::max(maxTag, src->tag(op));
    if ((uint64_t(maxTag) * g + g - 1) * g + g - 1 > MaxTag) {
      for (const Schedule *src : plan.sources)
        for (uint64_t op = 0; op < src->numOps(); ++op)
          if ((src->kind(op) == OpKind::Send || src->kind(op) == OpKind::Recv) &&
              src->tag(op) != AnyTag)
            tagIds.push_back(src->tag(op));
      llvm::sort(tagIds);
      tagIds.erase(std::unique(tagIds.begin(), tagIds.end()), tagIds.end());
    }
  }
  auto tagId = [&](uint32_t tag) -> uint64_t {
    return tagIds.empty() ? tag : std::lower_bound(tagIds.begin(), tagIds.end(), tag) - tagIds.begin();
  };
  const unsigned errorsBefore = diags.errorCount();
  uint32_t maxCpuSeen = 0;
  // Labels stay while they still name one op of a rank (no rank gets two members): later
  // messages then name ops as the input does.
  const bool keepLabels =
      g <= 1 && llvm::all_of(plan.sources, [](const Schedule *x) { return x->hasLabels(); });
  ScheduleBuilder b(plan.numRanks(), keepLabels);
  b.reserve(totalOps, totalDeps);
  for (uint32_t q = 0; q < plan.numRanks() && !diags.shouldStop(); ++q) {
    b.beginRank(q);
    for (uint32_t m = plan.begin[q]; m < plan.begin[q + 1]; ++m) {
      const GroupMember &gm = plan.members[m];
      const Schedule &s = *plan.sources[gm.source];
      const std::string &where = plan.sourceNames[gm.source];
      const uint32_t k = m - plan.begin[q];
      const uint32_t base = s.rankBegin(gm.rank), n = s.numOps(gm.rank);
      const uint32_t offset = b.opsInRank();
      auto opText = [&](uint32_t op) {
        return fmt::format("rank {} operation {}", gm.rank, s.opName(op));
      };
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t op = base + i;
        const OpKind kind = s.kind(op);
        uint32_t peer = s.peer(op), tag = s.tag(op), nic = s.nic(op);
        const uint64_t cpu = uint64_t(k) * C + s.cpu(op);
        if (cpu > ScheduleBuilder::MaxCpu) {
          diags.error(where, fmt::format("{}: {} puts it on cpu stream {} ({} streams per "
                                         "member, member {}), beyond the {} streams a rank "
                                         "can have",
                                         opText(op), plan.pass, cpu, C, k,
                                         ScheduleBuilder::MaxCpu + 1));
          return std::nullopt;
        }
        maxCpuSeen = std::max<uint32_t>(maxCpuSeen, uint32_t(cpu));
        if (kind == OpKind::Send || kind == OpKind::Recv) {
          uint32_t s_ = k, d = 0;
          if (peer == AnySource) {
            if (g > 1)
              diags.error(where, fmt::format("{} is a recv from any source (-1); with up to {} "
                                             "ranks grouped into one it could match messages "
                                             "meant for another of them, so {} cannot keep it "
                                             "apart (give the recv its source)",
                                             opText(op), g, plan.pass));
          } else {
            Where w = peer < loc[gm.source].size() ? loc[gm.source][peer] : Where();
            if (w.rank == Unset) {
              diags.error(where, fmt::format("{} talks to rank {}, which {} does not place "
                                             "anywhere",
                                             opText(op), peer, plan.pass));
              w = {0, 0};   // keep going to report more; the result is dropped
            }
            peer = w.rank;
            if (kind == OpKind::Send)
              d = w.local;
            else {
              s_ = w.local;
              d = k;
            }
          }
          if (tag == AnyTag) {
            if (g > 1)
              diags.error(where, fmt::format("{} has any tag (-1); with up to {} ranks grouped "
                                             "into one, {} cannot keep its messages apart from "
                                             "the others' (give it a tag)",
                                             opText(op), g, plan.pass));
          } else if (g > 1) {
            // Overflow-safe: tag < 2^32 and g <= 2^32, so 128 bits hold the product.
            unsigned __int128 t = (static_cast<unsigned __int128>(tagId(tag)) * g + s_) * g + d;
            if (t > MaxTag) {
              diags.error(where, fmt::format("{}: tag {} becomes ({}*{} + {})*{} + {} = {} when "
                                             "up to {} ranks are grouped into one, beyond the "
                                             "32-bit tag space (at most {}); use fewer distinct "
                                             "tags or fewer ranks per group",
                                             opText(op), tag, tagId(tag), g, s_, g, d,
                                             uint64_t(t), g, MaxTag));
            } else {
              tag = static_cast<uint32_t>(t);
            }
          }
          nic = plan.nicOf ? plan.nicOf(m, nic) : nic;
        }
        if (nic > ScheduleBuilder::MaxNic) {
          diags.error(where, fmt::format("{}: {} puts it on nic {}, beyond the {} a rank can "
                                         "have",
                                         opText(op), plan.pass, nic, ScheduleBuilder::MaxNic + 1));
          return std::nullopt;
        }
        b.addOp(kind, peer, s.size(op), tag, uint32_t(cpu), nic, keepLabels ? s.label(op) : "");
      }
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t raw : s.successorsRaw(base + i))
          b.addDependency(offset + (raw & ~Schedule::IRequiresBit), offset + i,
                          (raw & Schedule::IRequiresBit) ? DepKind::IRequires : DepKind::Requires);
    }
    b.endRank();
  }
  if (diags.errorCount() != errorsBefore)
    return std::nullopt;
  if (maxCpuSeen > 255)
    diags.warning(plan.sourceNames.empty() ? std::string() : plan.sourceNames.front(),
                  fmt::format("{} uses cpu streams up to {}; binary GOAL and LogGOPSim's "
                              "txt2bin keep only 8 bits (0-255) of a cpu index",
                              plan.pass, maxCpuSeen));
  return b.finish();
}

} // namespace infracc
