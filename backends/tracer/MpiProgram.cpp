#include "backends/tracer/MpiProgram.h"

#include "ir/MessageMatching.h"

#include <algorithm>
#include <numeric>

namespace infracc::tracer {

std::vector<MpiCall> mpiProgram(const Schedule &s, uint32_t rank,
                                const std::vector<uint32_t> &partner) {
  const uint32_t n = s.numOps(rank), base = s.rankBegin(rank);
  std::vector<uint32_t> position;
  programOrder(s, rank, position);
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i)
    order[position[i]] = i;
  // requires-predecessors of every op
  std::vector<std::vector<uint32_t>> preds(n);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = 0; k < s.numSuccessors(base + i); ++k)
      if (s.successorKind(base + i, k) == DepKind::Requires)
        preds[s.successor(base + i, k)].push_back(i);
  std::vector<uint8_t> open(n, 0);   // a request not yet waited for
  std::vector<uint32_t> posted;      // requests in posting order
  std::vector<MpiCall> calls;
  auto wait = [&](uint32_t p) {
    const uint32_t g = base + p;
    if (s.kind(g) == OpKind::Send) {
      calls.push_back({MpiCall::WaitSend, p, s.peer(g), s.tag(g), s.size(g)});
    } else {
      uint32_t from = s.peer(g), tag = s.tag(g);
      if (partner[g] != NoPartner) {
        from = s.rankOf(partner[g]);
        tag = s.tag(partner[g]);
      }
      calls.push_back({MpiCall::WaitRecv, p, from, tag, s.size(g)});
    }
    open[p] = 0;
  };
  for (uint32_t x : order) {
    std::vector<uint32_t> need;
    for (uint32_t p : preds[x])
      if (open[p])
        need.push_back(p);
    std::sort(need.begin(), need.end(),
              [&](uint32_t a, uint32_t b) { return position[a] < position[b]; });
    for (uint32_t p : need)
      wait(p);
    const uint32_t g = base + x;
    switch (s.kind(g)) {
    case OpKind::Calc: calls.push_back({MpiCall::Compute, x, 0, 0, s.size(g)}); break;
    case OpKind::Send:
      calls.push_back({MpiCall::Isend, x, s.peer(g), s.tag(g), s.size(g)});
      open[x] = 1;
      posted.push_back(x);
      break;
    case OpKind::Recv: {
      uint32_t from = s.peer(g), tag = s.tag(g);
      if (partner[g] != NoPartner) {
        from = s.rankOf(partner[g]);
        tag = s.tag(partner[g]);
      }
      calls.push_back({MpiCall::Irecv, x, from, tag, s.size(g)});
      open[x] = 1;
      posted.push_back(x);
      break;
    }
    default: calls.push_back({MpiCall::Collective, x, 0, 0, 0}); break;
    }
  }
  for (uint32_t p : posted)
    if (open[p])
      wait(p);
  return calls;
}

} // namespace infracc::tracer
