// Per-rank matching queues (posted receives, unexpected messages) with LogGOPSim's
// semantics but without its cost on long queues:
//
//   * LogGOPSim (LIST_MATCH): a list searched front to back; the first entry matching
//     (source, tag) wins, and ANY_SOURCE / ANY_TAG on either side match anything.
//     Short queues (the common case) are exactly that: one insertion-ordered list.
//     A queue that grows beyond ListLimit entries switches to FIFO buckets keyed by
//     (source, tag) for entries without wildcards plus one insertion-ordered list for
//     entries with a wildcard; every entry then carries its insertion number, so "the
//     first match in list order" is the oldest among the candidate bucket heads and the
//     first matching wildcard entry. It switches back when it empties.
//   * ATLAHS (hash map of FIFO queues): the key (source, tag) must be equal; -1 is just
//     a value. `exactOnly` gives that.
//
// A rank's two queues share one 32-byte record (a message event takes from the posted
// queue of the rank that may then append to its unexpected queue). Entries live in one
// pool with a free list; an op is in at most one queue at a time, so the pool never
// holds more entries than the schedule has ops: it is reserved at that size up front
// (address space only; pages are used as entries are) and never moved.
#pragma once

#include "backends/sim/ZeroedArray.h"

#include <llvm/ADT/DenseMap.h>

#include <cstdint>
#include <deque>
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
  enum Side : uint8_t { Posted = 0, Unexpected = 1 };
  struct Entry {
    uint64_t time = 0;    // when it was queued
    uint64_t key = 0;     // source rank << 32 | tag (either may be Wildcard)
    uint32_t op = 0;      // the engine's op reference (posted recv, or the message's send)
    uint32_t next = None;
    uint32_t src() const { return uint32_t(key >> 32); }
    uint32_t tag() const { return uint32_t(key); }
  };
  static uint64_t keyOf(uint32_t src, uint32_t tag) { return uint64_t(src) << 32 | tag; }
  static constexpr uint32_t None = 0xFFFFFFFFu;
  static constexpr uint32_t ListLimit = 32;

  /// `capacity`: the most entries ever queued at once (the number of ops).
  MatchQueues(uint32_t numRanks, uint64_t capacity, bool exactOnly)
      : ranks_(numRanks), exactOnly_(exactOnly) {
    pool_.reset(capacity);
  }

  [[gnu::always_inline]] void append(Side side, uint32_t rank, uint32_t op, uint32_t src, uint32_t tag, uint64_t time) {
    uint32_t id = allocate();
    Entry &e = pool_[id];
    e.time = time;
    e.key = keyOf(src, tag);
    e.op = op;
    e.next = None;
    Queue &q = ranks_[rank].q[side];
    ++q.size;
    if (!q.isHashed()) {
      link(q.head, q.tail, id);
      q.aux += !exactOnly_ && (src == Wildcard || tag == Wildcard);
      if (q.size > ListLimit)
        toHashed(q);
      return;
    }
    place(hashed_[q.hashedIndex()], id);
  }

  /// Removes the entry a search for (src, tag) finds, into `out`; false if none.
  [[gnu::always_inline]] bool take(Side side, uint32_t rank, uint32_t src, uint32_t tag, Entry &out) {
    Queue &q = ranks_[rank].q[side];
    if (q.size == 0)
      return false;
    if (!q.isHashed()) {
      uint32_t prev = None, id;
      if (q.aux == 0 && (exactOnly_ || (src != Wildcard && tag != Wildcard))) {
        // No wildcard on either side: the first entry with the same key.
        const uint64_t key = keyOf(src, tag);
        for (id = q.head; id != None && pool_[id].key != key; prev = id, id = pool_[id].next) {
        }
      } else {
        id = findInList(q.head, src, tag, ~uint64_t(0), prev);
      }
      if (id == None)
        return false;
      q.aux -= !exactOnly_ && (pool_[id].src() == Wildcard || pool_[id].tag() == Wildcard);
      unlinkListEntry(q, q.head, q.tail, prev, id, out);
      return true;
    }
    return takeHashed(q, src, tag, out);
  }

  uint32_t size(Side side, uint32_t rank) const { return ranks_[rank].q[side].size; }

  /// The op of the queue's oldest entry when it is a plain list, else None: what a
  /// search will most likely find (a hint for prefetching).
  uint32_t likelyOp(Side side, uint32_t rank) const {
    const Queue &q = ranks_[rank].q[side];
    return q.isHashed() || q.head == None ? None : pool_[q.head].op;
  }

  /// The queue's entries in queue order (for reports).
  std::vector<Entry> entries(Side side, uint32_t rank) const;

private:
  struct Queue {
    uint32_t head = None, tail = None;   // list mode: every entry, in order
    uint32_t size = 0;
    uint32_t aux = 0;   // list mode: entries with a wildcard; hashed: HashedBit | index
    static constexpr uint32_t HashedBit = 0x80000000u;
    bool isHashed() const { return aux & HashedBit; }
    uint32_t hashedIndex() const { return aux & ~HashedBit; }
  };
  struct PerRank {
    Queue q[2];
  };
  static_assert(sizeof(PerRank) == 32);
  struct Bucket {
    uint32_t head = None, tail = None;
  };
  struct Hashed {
    uint32_t wildHead = None, wildTail = None;   // entries with a wildcard
    llvm::DenseMap<MatchKey, Bucket> exact;      // the others
    uint64_t nextOrder = 0;
  };

  static bool matches(const Entry &e, uint32_t src, uint32_t tag) {
    return (src == Wildcard || e.src() == Wildcard || e.src() == src) &&
           (tag == Wildcard || e.tag() == Wildcard || e.tag() == tag);
  }

  /// The first entry of a list that matches and is older than `olderThan` (hashed
  /// mode; ~0 in list mode), with its predecessor; None if there is none.
  uint32_t findInList(uint32_t head, uint32_t src, uint32_t tag, uint64_t olderThan,
                      uint32_t &prev) const {
    prev = None;
    if (exactOnly_ || (src != Wildcard && tag != Wildcard)) {
      // The usual search: exact on one side; a wildcard entry still matches MPI-like.
      const bool mpi = !exactOnly_;
      for (uint32_t id = head; id != None; prev = id, id = pool_[id].next) {
        const Entry &e = pool_[id];
        bool hit = e.key == keyOf(src, tag) ||
                   (mpi && (e.src() == src || e.src() == Wildcard) &&
                    (e.tag() == tag || e.tag() == Wildcard));
        if (hit)
          return olderThan == ~uint64_t(0) || order_[id] < olderThan ? id : None;
      }
      return None;
    }
    for (uint32_t id = head; id != None; prev = id, id = pool_[id].next)
      if (matches(pool_[id], src, tag))
        return olderThan == ~uint64_t(0) || order_[id] < olderThan ? id : None;
    return None;
  }

  [[gnu::always_inline]] void unlinkListEntry(Queue &q, uint32_t &head, uint32_t &tail, uint32_t prev, uint32_t id,
                       Entry &out) {
    out = pool_[id];
    if (prev == None)
      head = out.next;
    else
      pool_[prev].next = out.next;
    if (tail == id)
      tail = prev;
    release(id);
    if (--q.size == 0)
      backToList(q);
  }

  bool takeHashed(Queue &q, uint32_t src, uint32_t tag, Entry &out);
  void place(Hashed &h, uint32_t id);
  void toHashed(Queue &q);
  void backToList(Queue &q) {
    q.head = q.tail = None;
    if (!q.isHashed()) {
      q.aux = 0;
      return;
    }
    Hashed &h = hashed_[q.hashedIndex()];
    h.exact.clear();
    h.wildHead = h.wildTail = None;
    freeHashed_.push_back(q.hashedIndex());
    q.aux = 0;
  }

  uint32_t allocate() {
    if (free_ != None) {
      uint32_t id = free_;
      free_ = pool_[id].next;
      return id;
    }
    return used_++;
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

  std::vector<PerRank> ranks_;
  ZeroedArray<Entry> pool_;
  ZeroedArray<uint64_t> order_;   // insertion number of entries of hashed queues
  uint32_t used_ = 0, free_ = None;
  // A deque: growing it moves no Hashed (llvm::DenseMap's move is not noexcept, so a
  // vector would copy every map when it grows, twice the memory for the moment).
  std::deque<Hashed> hashed_;
  std::vector<uint32_t> freeHashed_;
  bool exactOnly_;
};

} // namespace infracc::sim
