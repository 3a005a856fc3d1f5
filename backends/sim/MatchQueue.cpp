#include "backends/sim/MatchQueue.h"

#include <algorithm>

namespace infracc::sim {

std::vector<MatchQueues::Entry> MatchQueues::entries(uint32_t rank) const {
  std::vector<Entry> out;
  const PerRank &r = ranks_[rank];
  for (const auto &kv : r.exact)
    for (uint32_t id = kv.second.head; id != None; id = pool_[id].next)
      out.push_back(pool_[id]);
  for (uint32_t id = r.wildHead; id != None; id = pool_[id].next)
    out.push_back(pool_[id]);
  for (uint32_t id = r.listHead; id != None; id = pool_[id].next)
    out.push_back(pool_[id]);
  std::sort(out.begin(), out.end(),
            [](const Entry &a, const Entry &b) { return a.order < b.order; });
  return out;
}

} // namespace infracc::sim
