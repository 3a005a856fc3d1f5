// Event records and the priority queues of the simulator's event loop.
//
// The LogGOPSim engine orders events by (time, seq) with a unique seq, so any correct
// priority queue pops the same sequence; a 4-ary heap keeps it shallow and cache
// friendly. Times are not monotone (a freed op may be scheduled "in the past", as in
// LogGOPSim), which rules out radix/bucket queues.
//
// ATLAHS's engine compares times only, so the order of simultaneous events is whatever
// std::priority_queue (a binary heap via std::push_heap/pop_heap) leaves. TimeOnlyHeap
// reproduces it by running the same algorithms with the same comparator on the same
// sequence of pushes and pops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace infracc::sim {

struct Event {
  uint64_t time;
  uint64_t seq;      // LogGOPSim's `ts`: assigned once, kept on re-insertion
  uint32_t op;       // global op index (for a message: its send op)
  uint32_t host;     // rank owning `op` (for a message: the sender), bit 31: message
  static constexpr uint32_t MessageBit = 0x80000000u;
  bool isMessage() const { return host & MessageBit; }
  uint32_t rank() const { return host & ~MessageBit; }
};
static_assert(sizeof(Event) == 24);

class QuadHeap {
public:
  bool empty() const { return h_.empty(); }
  size_t size() const { return h_.size(); }
  void reserve(size_t n) { h_.reserve(n); }

  void push(const Event &e) {
    size_t i = h_.size();
    h_.push_back(e);
    while (i > 0) {
      size_t parent = (i - 1) / 4;
      if (!before(e, h_[parent]))
        break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = e;
  }

  Event pop() {
    Event top = h_.front();
    Event last = h_.back();
    h_.pop_back();
    size_t n = h_.size();
    if (n == 0)
      return top;
    size_t i = 0;
    for (;;) {
      size_t c = 4 * i + 1;
      if (c >= n)
        break;
      size_t best = c;
      size_t end = std::min(c + 4, n);
      for (size_t k = c + 1; k < end; ++k)
        if (before(h_[k], h_[best]))
          best = k;
      if (!before(h_[best], last))
        break;
      h_[i] = h_[best];
      i = best;
    }
    h_[i] = last;
    return top;
  }

private:
  static bool before(const Event &a, const Event &b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  std::vector<Event> h_;
};

class TimeOnlyHeap {
public:
  bool empty() const { return h_.empty(); }
  size_t size() const { return h_.size(); }
  void reserve(size_t n) { h_.reserve(n); }
  void push(const Event &e) {
    h_.push_back(e);
    std::push_heap(h_.begin(), h_.end(), later);
  }
  Event pop() {
    std::pop_heap(h_.begin(), h_.end(), later);
    Event e = h_.back();
    h_.pop_back();
    return e;
  }

private:
  // ATLAHS's aqcompare_func without its (commented-out) ts tiebreak.
  static bool later(const Event &a, const Event &b) { return a.time > b.time; }
  std::vector<Event> h_;
};

} // namespace infracc::sim
