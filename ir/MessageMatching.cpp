#include "ir/MessageMatching.h"

#include <algorithm>
#include <queue>

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
  std::vector<Key> sends, recvs;
  std::vector<uint32_t> position;
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    const uint32_t base = s.rankBegin(r), n = s.numOps(r);
    bool any = false;
    for (uint32_t i = 0; i < n && !any; ++i) {
      OpKind k = s.kind(base + i);
      any = (k == OpKind::Send || k == OpKind::Recv) && (!consider || consider(base + i));
    }
    if (!any)
      continue;
    programOrder(s, r, position);
    const size_t firstRecv = recvs.size();
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t g = base + i;
      OpKind k = s.kind(g);
      if ((k != OpKind::Send && k != OpKind::Recv) || (consider && !consider(g)))
        continue;
      if (s.tag(g) == AnyTag || (k == OpKind::Recv && s.peer(g) == AnySource))
        continue;
      if (k == OpKind::Send)
        sends.push_back({s.peer(g), r, s.tag(g), position[i], g});
      else
        recvs.push_back({r, s.peer(g), s.tag(g), position[i], g});
    }
    // The receives come rank by rank (dst ascending): sorting each rank's is sorting
    // them all, in pieces that stay in cache.
    std::sort(recvs.begin() + static_cast<ptrdiff_t>(firstRecv), recvs.end());
  }
  // The sends: dealt into buckets by destination (out-of-range ones last), then each
  // bucket sorted; the same order as one sort, at a fraction of its cache misses.
  {
    const size_t P = s.numRanks();
    auto bucket = [&](const Key &k) { return std::min<size_t>(k.dst, P); };
    // (uint32_t: ops are numbered in 32 bits; the schedule holds a word per rank already)
    std::vector<uint32_t> start(P + 2, 0);
    for (const Key &k : sends)
      ++start[bucket(k) + 1];
    for (size_t b = 0; b <= P; ++b)
      start[b + 1] += start[b];
    std::vector<Key> dealt(sends.size());
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (const Key &k : sends)
      dealt[fill[bucket(k)]++] = k;
    for (size_t b = 0; b <= P; ++b)
      std::sort(dealt.begin() + static_cast<ptrdiff_t>(start[b]),
                dealt.begin() + static_cast<ptrdiff_t>(start[b + 1]));
    sends.swap(dealt);
  }
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
