#include "ir/MessageMatching.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace infracc {

void programOrder(const Schedule &s, uint32_t rank, std::vector<uint32_t> &position) {
  const uint32_t n = s.numOps(rank), base = s.rankBegin(rank);
  std::vector<uint32_t> pending(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : s.successorsRaw(base + i))
      ++pending[raw & ~Schedule::IRequiresBit];
  position.assign(n, NoPartner);
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  uint32_t next = 0;
  while (!ready.empty()) {
    uint32_t i = ready.top();
    ready.pop();
    position[i] = next++;
    for (uint32_t raw : s.successorsRaw(base + i))
      if (--pending[raw & ~Schedule::IRequiresBit] == 0)
        ready.push(raw & ~Schedule::IRequiresBit);
  }
  for (uint32_t i = 0; i < n; ++i)
    if (position[i] == NoPartner)
      position[i] = next++;
}

std::vector<uint32_t> matchMessages(const Schedule &s,
                                    llvm::function_ref<bool(uint32_t)> consider) {
  struct Key {
    uint32_t dst, src, tag, pos, op;
    bool operator<(const Key &o) const {
      return std::tie(dst, src, tag, pos) < std::tie(o.dst, o.src, o.tag, o.pos);
    }
    bool sameQueue(const Key &o) const { return dst == o.dst && src == o.src && tag == o.tag; }
  };
  std::vector<uint32_t> partner(s.numOps(), NoPartner);
  const size_t P = s.numRanks();
  auto matched = [&](uint32_t g, OpKind k) {
    return (k == OpKind::Send || k == OpKind::Recv) && (!consider || consider(g)) &&
           s.tag(g) != AnyTag && !(k == OpKind::Recv && s.peer(g) == AnySource);
  };
  // Counted first, so that each key is written once, straight to its place: the sends
  // dealt into buckets by destination (out-of-range ones last), the receives rank by
  // rank (dst ascending). Growing the arrays instead touched about twice their size in
  // fresh memory (a third of the sensitivity model's build at 50 M events was the
  // kernel zeroing pages). Each bucket is then sorted; the same order as one sort, at a
  // fraction of its cache misses.
  auto bucket = [&](uint32_t dst) { return std::min<size_t>(dst, P); };
  // (uint32_t: ops are numbered in 32 bits; the schedule holds a word per rank already)
  std::vector<uint32_t> start(P + 2, 0);
  size_t numRecvs = 0;
  for (uint64_t g = 0; g < s.numOps(); ++g) {
    const OpKind k = s.kind(g);
    if (!matched(static_cast<uint32_t>(g), k))
      continue;
    if (k == OpKind::Send)
      ++start[bucket(s.peer(g)) + 1];
    else
      ++numRecvs;
  }
  for (size_t b = 0; b <= P; ++b)
    start[b + 1] += start[b];
  std::vector<Key> sends(start[P + 1]), recvs;
  recvs.reserve(numRecvs);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  std::vector<uint32_t> position;
  for (uint32_t r = 0; r < P; ++r) {
    const uint32_t base = s.rankBegin(r), n = s.numOps(r);
    bool any = false;
    for (uint32_t i = 0; i < n && !any; ++i)
      any = matched(base + i, s.kind(base + i));
    if (!any)
      continue;
    programOrder(s, r, position);
    const size_t firstRecv = recvs.size();
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t g = base + i;
      OpKind k = s.kind(g);
      if (!matched(g, k))
        continue;
      if (k == OpKind::Send)
        sends[fill[bucket(s.peer(g))]++] = {s.peer(g), r, s.tag(g), position[i], g};
      else
        recvs.push_back({r, s.peer(g), s.tag(g), position[i], g});
    }
    // The receives come rank by rank (dst ascending): sorting each rank's is sorting
    // them all, in pieces that stay in cache.
    std::sort(recvs.begin() + static_cast<ptrdiff_t>(firstRecv), recvs.end());
  }
  for (size_t b = 0; b <= P; ++b)
    std::sort(sends.begin() + static_cast<ptrdiff_t>(start[b]),
              sends.begin() + static_cast<ptrdiff_t>(start[b + 1]));
  size_t i = 0, j = 0;
  while (i < sends.size() && j < recvs.size()) {
    const Key &a = sends[i], &b = recvs[j];
    if (a.sameQueue(b)) {
      partner[a.op] = b.op;
      partner[b.op] = a.op;
      ++i;
      ++j;
    } else if (std::tie(a.dst, a.src, a.tag) < std::tie(b.dst, b.src, b.tag)) {
      ++i;
    } else {
      ++j;
    }
  }
  return partner;
}

} // namespace infracc
