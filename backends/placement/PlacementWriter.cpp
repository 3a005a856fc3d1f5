// -emit=placement: where every rank runs, as a -place-map file (`rank endpoint-name`
// per line), so a placement can be inspected, edited and fed back with -place-map.
// Jobs and the members of grouped ranks (remap-gpus, multi-tenant merge-jobs) are
// listed in comments.
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

namespace infracc {
namespace {

llvm::Error writePlacement(TargetContext &ctx) {
  const Module &m = ctx.module;
  const Placement &p = m.placement;
  if (p.empty() && !p.hasMembers() && p.jobOfRank.empty())
    return usageError("-emit=placement: the ranks are not placed; run place (or merge-jobs) "
                      "with a fabric, e.g. -passes=place");
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  const FabricGraph *g = m.fabric.get();
  auto name = [&](NodeId n) { return g && n != InvalidNode ? g->name(n) : std::string("-"); };
  *os << fmt::format("# placement of {} ranks of '{}'{}: rank endpoint\n",
                     m.schedule ? m.schedule->numRanks() : 0, m.workloadSource,
                     g ? " on '" + m.fabricSource + "'" : std::string());
  uint32_t ranks = m.schedule ? m.schedule->numRanks() : 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    if (p.hasMembers()) {
      auto members = p.membersOf(r);
      for (size_t k = 0; k < members.size(); ++k) {
        const auto &mem = members[k];
        std::string nicText;
        if (p.nicsPerMember)
          nicText = fmt::format(", nics {}-{}", k * p.nicsPerMember, (k + 1) * p.nicsPerMember - 1);
        *os << fmt::format("# rank {} member {}: rank {} of job {} on {}, cpus {}-{}{}\n", r, k,
                           mem.rank, mem.job, name(mem.endpoint), k * p.cpusPerMember,
                           (k + 1) * p.cpusPerMember - 1, nicText);
      }
      auto nics = p.nicNodes(r);
      for (size_t n = 0; n < nics.size(); ++n)
        *os << fmt::format("# rank {} nic {} = {}\n", r, n, name(nics[n]));
    }
    std::string job = p.jobOfRank.empty() ? "" : fmt::format("  # job {}", p.job(r));
    *os << fmt::format("{} {}{}\n", r, p.empty() ? std::string("-") : name(p.endpointOfRank[r]),
                       job);
  }
  return llvm::Error::success();
}

RegisterTarget PlacementTarget({
    .name = "placement",
    .description = "where every rank runs, as a -place-map file (rank endpoint-name)",
    .needs = TargetNeeds::Workload,
    .writesDirectory = false,
    .defaultPipeline = [](const Module &m) {
      return m.hasFabric() && m.placement.empty() ? std::vector<std::string>{"place"}
                                                  : std::vector<std::string>{};
    },
    .run = writePlacement,
});

} // namespace
} // namespace infracc
