#include "backends/common/RankEndpoints.h"

#include "ir/Module.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

namespace infracc {

std::optional<std::vector<uint32_t>> endpointOfEachRank(const Module &m, llvm::StringRef unit,
                                                        llvm::StringRef tool) {
  const uint32_t P = m.schedule->numRanks();
  const auto eps = m.fabric->endpoints();
  const Placement &pl = m.placement;
  auto fail = [&](const std::string &msg) -> std::optional<std::vector<uint32_t>> {
    m.diags.error(m.workloadSource, msg);
    return std::nullopt;
  };
  if (pl.hasMembers())
    return fail(fmt::format("{} runs one rank per {}: ranks that group several GPUs "
                            "(remap-gpus) or jobs sharing endpoints cannot be written for it",
                            tool.str(), unit.str()));
  std::vector<uint32_t> index(P);
  if (pl.empty()) {
    if (P > eps.size())
      return fail(fmt::format("the workload has {} ranks but the fabric has {} {}s", P,
                              eps.size(), unit.str()));
    for (uint32_t r = 0; r < P; ++r)
      index[r] = r;
    return index;
  }
  llvm::DenseMap<NodeId, uint32_t> ofNode;
  for (uint32_t i = 0; i < eps.size(); ++i)
    ofNode[eps[i]] = i;
  std::vector<int64_t> owner(eps.size(), -1);
  for (uint32_t r = 0; r < P; ++r) {
    auto it = ofNode.find(pl.endpointOfRank[r]);
    if (it == ofNode.end())
      return fail(fmt::format("rank {} runs on {}, which is not an {}", r,
                              m.fabric->name(pl.endpointOfRank[r]), unit.str()));
    if (owner[it->second] >= 0)
      return fail(fmt::format("ranks {} and {} both run on {}: {} runs one rank per {}",
                              owner[it->second], r, m.fabric->name(eps[it->second]), tool.str(),
                              unit.str()));
    owner[it->second] = r;
    index[r] = it->second;
  }
  return index;
}

} // namespace infracc
