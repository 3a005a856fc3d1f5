#include "backends/sim/MatchQueue.h"

#include <algorithm>

namespace infracc::sim {

void MatchQueues::toHashed(Queue &q) {
  uint32_t index;
  if (freeHashed_.empty()) {
    index = static_cast<uint32_t>(hashed_.size());
    hashed_.emplace_back();
    if (order_.empty())
      order_.reset(pool_.capacity());
  } else {
    index = freeHashed_.back();
    freeHashed_.pop_back();
  }
  q.aux = Queue::HashedBit | index;
  Hashed &h = hashed_[index];
  h.nextOrder = 0;
  // Sized for what the queue holds now: a map left to grow on its own starts at 64
  // buckets (1280 bytes), which for a queue just past ListLimit is twice what it needs
  // and, with every rank of a large run hashed at once, hundreds of MB.
  // (reserve() would not do: growing allocates at least 64 buckets; the constructor
  // allocates what the entries need.)
  if (h.exact.getMemorySize() == 0)
    h.exact = llvm::DenseMap<MatchKey, Bucket>(q.size);
  uint32_t id = q.head;
  q.head = q.tail = None;
  while (id != None) {
    uint32_t next = pool_[id].next;
    place(h, id);
    id = next;
  }
}

void MatchQueues::place(Hashed &h, uint32_t id) {
  Entry &e = pool_[id];
  e.next = None;
  order_[id] = h.nextOrder++;
  if (!exactOnly_ && (e.src() == Wildcard || e.tag() == Wildcard)) {
    link(h.wildHead, h.wildTail, id);
    return;
  }
  Bucket &b = h.exact[MatchKey{e.src(), e.tag(), 0}];
  link(b.head, b.tail, id);
}

bool MatchQueues::takeHashed(Queue &q, uint32_t src, uint32_t tag, Entry &out) {
  Hashed &h = hashed_[q.hashedIndex()];
  // The oldest matching bucket head ...
  auto best = h.exact.end();
  uint64_t bestOrder = ~uint64_t(0);
  if (exactOnly_ || (src != Wildcard && tag != Wildcard)) {
    best = h.exact.find(MatchKey{src, tag, 0});
    if (best != h.exact.end())
      bestOrder = order_[best->second.head];
  } else {
    for (auto it = h.exact.begin(), e = h.exact.end(); it != e; ++it) {
      if ((src == Wildcard || it->first.src == src) && (tag == Wildcard || it->first.tag == tag)) {
        uint64_t o = order_[it->second.head];
        if (o < bestOrder) {
          bestOrder = o;
          best = it;
        }
      }
    }
  }
  // ... unless the first matching wildcard entry is older.
  uint32_t prev, id = findInList(h.wildHead, src, tag, bestOrder, prev);
  if (id != None) {
    unlinkListEntry(q, h.wildHead, h.wildTail, prev, id, out);
    return true;
  }
  if (best == h.exact.end())
    return false;
  id = best->second.head;
  out = pool_[id];
  best->second.head = out.next;
  if (out.next == None)
    h.exact.erase(best);
  release(id);
  if (--q.size == 0)
    backToList(q);
  return true;
}

std::vector<MatchQueues::Entry> MatchQueues::entries(Side side, uint32_t rank) const {
  std::vector<Entry> out;
  const Queue &q = ranks_[rank].q[side];
  for (uint32_t id = q.head; id != None; id = pool_[id].next)
    out.push_back(pool_[id]);
  if (!q.isHashed())
    return out;
  const Hashed &h = hashed_[q.hashedIndex()];
  std::vector<std::pair<uint64_t, Entry>> ordered;
  for (const auto &kv : h.exact)
    for (uint32_t id = kv.second.head; id != None; id = pool_[id].next)
      ordered.push_back({order_[id], pool_[id]});
  for (uint32_t id = h.wildHead; id != None; id = pool_[id].next)
    ordered.push_back({order_[id], pool_[id]});
  std::sort(ordered.begin(), ordered.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &o : ordered)
    out.push_back(o.second);
  return out;
}

} // namespace infracc::sim
