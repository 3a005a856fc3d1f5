// Per-rank matching queues (posted receives, unexpected messages) with LogGOPSim's
// semantics but without its cost on long queues:
//
//   * LogGOPSim (LIST_MATCH): a list searched front to back; the first entry matching
//     (source, tag) wins, and ANY_SOURCE / ANY_TAG on either side match anything.
//     Short queues (the common case) are exactly that: one insertion-ordered list.
//     A queue that grows beyond ListLimit entries switches to FIFO buckets keyed by
//     (source, tag) for entries without wildcards plus one insertion-ordered list for
//     entries with a wildcard; every entry carries its insertion number, so "the first
//     match in list order" is the oldest among the candidate bucket heads and the first
//     matching wildcard entry. It switches back when it empties.
//   * ATLAHS (hash map of FIFO queues): the key (source, tag) must be equal; -1 is just
//     a value. `exactOnly` gives that.
//
// Entries live in one pool with a free list: no allocation per message once warm.
#pragma once

#include <llvm/ADT/DenseMap.h>

#include <cstdint>
#include <vector>

namespace infracc::sim {

inline constexpr uint32_t Wildcard = 0xFFFFFFFFu;

struct MatchKey {
  uint32_t src = 0, tag = 0;
  uint32_t special = 0;   // 0 for real keys; DenseMap's empty and tombstone keys use 1, 2
  friend bool operator==(const MatchKey &a, const MatchKey &b) {
    return a.src == b.src && a.tag == b.tag && a.special == b.special;
  }
};

} // namespace infracc::sim

template <> struct llvm::DenseMapInfo<infracc::sim::MatchKey> {
  static infracc::sim::MatchKey getEmptyKey() { return {0, 0, 1}; }
  static infracc::sim::MatchKey getTombstoneKey() { return {0, 0, 2}; }
  static unsigned getHashValue(const infracc::sim::MatchKey &k) {
    uint64_t x = (uint64_t(k.src) << 32 | k.tag) * 0x9E3779B97F4A7C15ull;
    return static_cast<unsigned>(x >> 32) ^ k.special;
  }
  static bool isEqual(const infracc::sim::MatchKey &a, const infracc::sim::MatchKey &b) {
    return a == b;
  }
};

namespace infracc::sim {

class MatchQueues {
public:
  struct Entry {
    uint64_t order = 0;   // insertion number (global, increasing)
    uint64_t time = 0;    // when it was queued
    uint32_t op = 0;      // global op index (posted recv, or the message's send op)
    uint32_t src = 0;     // source rank (or Wildcard)
    uint32_t tag = 0;     // tag (or Wildcard)
    uint32_t next = None;
  };
  static constexpr uint32_t None = 0xFFFFFFFFu;
  static constexpr uint32_t ListLimit = 16;

  MatchQueues(uint32_t numRanks, bool exactOnly) : ranks_(numRanks), exactOnly_(exactOnly) {}

  void append(uint32_t rank, uint32_t op, uint32_t src, uint32_t tag, uint64_t time) {
    uint32_t id = allocate();
    Entry &e = pool_[id];
    e.order = nextOrder_++;
    e.time = time;
    e.op = op;
    e.src = src;
    e.tag = tag;
    e.next = None;
    PerRank &r = ranks_[rank];
    ++r.size;
    if (!r.hashed) {
      link(r.listHead, r.listTail, id);
      if (r.size > ListLimit)
        toHashed(r);
      return;
    }
    place(r, id);
  }

  /// Removes the entry a search for (src, tag) finds, into `out`; false if none.
  bool take(uint32_t rank, uint32_t src, uint32_t tag, Entry &out) {
    PerRank &r = ranks_[rank];
    if (r.size == 0)
      return false;
    if (!r.hashed)
      return takeFromList(r, r.listHead, r.listTail, src, tag, ~uint64_t(0), out);
    if (exactOnly_) {
      auto it = r.exact.find(MatchKey{src, tag, 0});
      if (it == r.exact.end())
        return false;
      takeHead(r, it, out);
      return true;
    }
    // Oldest matching bucket head.
    auto best = r.exact.end();
    uint64_t bestOrder = ~uint64_t(0);
    if (src != Wildcard && tag != Wildcard) {
      best = r.exact.find(MatchKey{src, tag, 0});
      if (best != r.exact.end())
        bestOrder = pool_[best->second.head].order;
    } else {
      for (auto it = r.exact.begin(), e = r.exact.end(); it != e; ++it) {
        if ((src == Wildcard || it->first.src == src) &&
            (tag == Wildcard || it->first.tag == tag)) {
          uint64_t o = pool_[it->second.head].order;
          if (o < bestOrder) {
            bestOrder = o;
            best = it;
          }
        }
      }
    }
    // The first matching wildcard entry wins if it is older.
    if (takeFromList(r, r.wildHead, r.wildTail, src, tag, bestOrder, out))
      return true;
    if (best == r.exact.end())
      return false;
    takeHead(r, best, out);
    return true;
  }

  uint32_t size(uint32_t rank) const { return ranks_[rank].size; }

  /// The op of the rank's oldest entry when the queue is a plain list, else None: what
  /// a search will most likely find (a hint for prefetching).
  uint32_t likelyOp(uint32_t rank) const {
    const PerRank &r = ranks_[rank];
    return r.hashed || r.listHead == None ? None : pool_[r.listHead].op;
  }

  /// The rank's entries in queue order (for reports).
  std::vector<Entry> entries(uint32_t rank) const;

private:
  struct Bucket {
    uint32_t head = None, tail = None;
  };
  struct PerRank {
    uint32_t size = 0;
    bool hashed = false;
    uint32_t listHead = None, listTail = None;   // list mode: every entry, in order
    uint32_t wildHead = None, wildTail = None;   // hashed mode: entries with a wildcard
    llvm::DenseMap<MatchKey, Bucket> exact;      // hashed mode: the others
  };

  static bool matches(const Entry &e, uint32_t src, uint32_t tag) {
    return (src == Wildcard || e.src == Wildcard || e.src == src) &&
           (tag == Wildcard || e.tag == Wildcard || e.tag == tag);
  }

  /// Takes the first entry of a list that matches and is older than `olderThan`.
  bool takeFromList(PerRank &r, uint32_t &head, uint32_t &tail, uint32_t src, uint32_t tag,
                    uint64_t olderThan, Entry &out) {
    for (uint32_t prev = None, id = head; id != None; prev = id, id = pool_[id].next) {
      const Entry &e = pool_[id];
      if (e.order > olderThan)
        return false;
      bool hit = exactOnly_ ? (e.src == src && e.tag == tag) : matches(e, src, tag);
      if (!hit)
        continue;
      out = e;
      if (prev == None)
        head = e.next;
      else
        pool_[prev].next = e.next;
      if (tail == id)
        tail = prev;
      release(id);
      if (--r.size == 0)
        r.hashed = false;   // back to list mode (all lists and buckets are empty)
      return true;
    }
    return false;
  }

  void place(PerRank &r, uint32_t id) {
    Entry &e = pool_[id];
    e.next = None;
    if (!exactOnly_ && (e.src == Wildcard || e.tag == Wildcard)) {
      link(r.wildHead, r.wildTail, id);
      return;
    }
    Bucket &b = r.exact[MatchKey{e.src, e.tag, 0}];
    link(b.head, b.tail, id);
  }

  void toHashed(PerRank &r) {
    r.hashed = true;
    uint32_t id = r.listHead;
    r.listHead = r.listTail = None;
    while (id != None) {
      uint32_t next = pool_[id].next;
      place(r, id);
      id = next;
    }
  }

  uint32_t allocate() {
    if (free_ != None) {
      uint32_t id = free_;
      free_ = pool_[id].next;
      return id;
    }
    pool_.emplace_back();
    return static_cast<uint32_t>(pool_.size() - 1);
  }
  void release(uint32_t id) {
    pool_[id].next = free_;
    free_ = id;
  }
  void link(uint32_t &head, uint32_t &tail, uint32_t id) {
    if (tail == None)
      head = id;
    else
      pool_[tail].next = id;
    tail = id;
  }
  void takeHead(PerRank &r, llvm::DenseMap<MatchKey, Bucket>::iterator it, Entry &out) {
    uint32_t id = it->second.head;
    out = pool_[id];
    it->second.head = out.next;
    if (out.next == None)
      r.exact.erase(it);
    release(id);
    if (--r.size == 0)
      r.hashed = false;
  }

  std::vector<PerRank> ranks_;
  std::vector<Entry> pool_;
  uint32_t free_ = None;
  uint64_t nextOrder_ = 0;
  bool exactOnly_;
};

} // namespace infracc::sim
