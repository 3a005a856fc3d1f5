// Event records and the priority queues of the simulator's event loop.
//
// The LogGOPSim engine orders events by (time, seq) with a unique seq, so any correct
// priority queue pops the same sequence. EventQueue is a radix heap on time (O(1) push,
// amortised O(log range) pop) with the events of the current time kept in seq order.
// Times are not quite monotone: a freed op may be scheduled before the current time
// (LogGOPSim does not carry a predecessor's finish time to another CPU). Such events go
// to a small 4-ary heap that is always drained first: each of them is earlier than
// everything in the radix heap.
//
// ATLAHS's engine compares times only, so the order of simultaneous events is whatever
// std::priority_queue (a binary heap via std::push_heap/pop_heap) leaves. TimeOnlyHeap
// reproduces it by running the same algorithms with the same comparator on the same
// sequence of pushes and pops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace infracc::sim {

struct Event {
  uint64_t time;
  uint32_t seq;   // LogGOPSim's `ts`: assigned once, kept on re-insertion (an op is made
                  // executable once and a send sends once: fewer than 2^32 of them)
  uint32_t ref;   // the engine's reference of the op (for a message: its send op),
                  // bit 31: message
  static constexpr uint32_t MessageBit = 0x80000000u;
  bool isMessage() const { return ref & MessageBit; }
};
static_assert(sizeof(Event) == 16);

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

  const Event &top() const { return h_.front(); }

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
  // (time, seq) as one 128-bit number: a single compare, no branch on equal times.
  static unsigned __int128 key(const Event &e) {
    return (static_cast<unsigned __int128>(e.time) << 64) | e.seq;
  }
  static bool before(const Event &a, const Event &b) { return key(a) < key(b); }
  std::vector<Event> h_;
};

/// A growable array whose append stays inline in the event loop (the compiler would
/// not inline std::vector's into the large engine functions). For trivial types.
template <class T> class PodBuffer {
public:
  PodBuffer() = default;
  PodBuffer(const PodBuffer &) = delete;
  PodBuffer &operator=(const PodBuffer &) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T &back() { return data_[size_ - 1]; }
  const T &front() const { return data_[0]; }
  T *begin() { return data_.get(); }
  T *end() { return data_.get() + size_; }
  const T *begin() const { return data_.get(); }
  const T *end() const { return data_.get() + size_; }
  void clear() { size_ = 0; }
  void resize(size_t n) {
    reserve(n);
    size_ = n;
  }
  void reserve(size_t n) {
    if (n > cap_)
      reallocate(n);
  }
  void push_back(const T &e) {
    if (size_ == cap_) [[unlikely]]
      reallocate(cap_ ? 2 * cap_ : 64);
    data_[size_++] = e;
  }

private:
  [[gnu::noinline]] void reallocate(size_t cap) {
    std::unique_ptr<T[]> d(new T[cap]);
    std::copy(data_.get(), data_.get() + size_, d.get());
    data_ = std::move(d);
    cap_ = cap;
  }
  std::unique_ptr<T[]> data_;
  size_t size_ = 0, cap_ = 0;
};
using EventBuf = PodBuffer<Event>;

class EventQueue {
public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void reserve(size_t n) { buckets_[0].reserve(n); }

  [[gnu::always_inline]] void push(const Event &e) {
    ++size_;
    if (e.time < last_) {
      past_.push(e);
      return;
    }
    if (e.time == last_) {
      // Usually the newest seq; a retried event keeps its old seq: keep seq order.
      EventBuf &b = buckets_[0];
      b.push_back(e);
      for (size_t i = b.size() - 1; i > head0_ && b[i - 1].seq > b[i].seq; --i)
        std::swap(b[i - 1], b[i]);
      return;
    }
    unsigned k = bucketOf(e.time);
    buckets_[k].push_back(e);
    mask_ |= uint64_t(1) << (k - 1);
  }

  /// The event that will be popped after `k` further pops if nothing is pushed in
  /// between, when that is cheap to know (null otherwise): a hint for prefetching.
  const Event *peek(size_t k) const {
    if (!past_.empty())
      return k == 0 ? &past_.top() : nullptr;
    size_t i = head0_ + k;
    return i < buckets_[0].size() ? &buckets_[0][i] : nullptr;
  }

  /// The event pop() returns next (the queue must not be empty).
  const Event &top() {
    if (!past_.empty())
      return past_.top();
    if (head0_ >= buckets_[0].size())
      refill();
    return buckets_[0][head0_];
  }

  Event pop() {
    --size_;
    if (!past_.empty())
      return past_.pop();
    if (head0_ < buckets_[0].size())
      return buckets_[0][head0_++];
    refill();
    return buckets_[0][head0_++];
  }

private:
  /// Moves the events of the next time into buckets_[0] (in seq order): redistributes
  /// the lowest non-empty bucket around its minimum time.
  [[gnu::noinline]] void refill() {
    EventBuf &b0 = buckets_[0];
    b0.clear();
    head0_ = 0;
    unsigned k = static_cast<unsigned>(__builtin_ctzll(mask_)) + 1;
    EventBuf &bk = buckets_[k];
    uint64_t m = bk.front().time;
    for (const Event &e : bk)
      m = std::min(m, e.time);
    last_ = m;
    mask_ &= ~(uint64_t(1) << (k - 1));
    // Usually the events of the new time arrive in seq order already: sort only if not.
    bool sorted = true;
    for (const Event &e : bk) {
      if (e.time == m) {
        sorted &= b0.empty() || b0.back().seq < e.seq;
        b0.push_back(e);
      } else {
        unsigned j = bucketOf(e.time);
        buckets_[j].push_back(e);
        mask_ |= uint64_t(1) << (j - 1);
      }
    }
    bk.clear();
    if (!sorted)
      sortBySeq(b0);
  }

  /// Sorts by seq. The events of one time are usually a few ascending streams
  /// interleaved (retried events keep their old seqs in the order they were popped; new
  /// events come with new seqs): many events waiting for one CPU are retried at every
  /// time it frees, so a full sort each time would cost O(n log n) per retry round. Dealt
  /// into at most Piles ascending piles (each event onto the first pile it extends) and
  /// merged, that is O(n Piles); other orders are sorted.
  [[gnu::noinline]] void sortBySeq(EventBuf &b) {
    constexpr size_t Piles = 4;
    size_t used = 0;
    for (auto &p : piles_)
      p.clear();
    for (const Event &e : b) {
      size_t i = 0;
      while (i < used && piles_[i].back().seq > e.seq)
        ++i;
      if (i == Piles) {
        std::sort(b.begin(), b.end(), [](const Event &x, const Event &y) { return x.seq < y.seq; });
        return;
      }
      used = std::max(used, i + 1);
      piles_[i].push_back(e);
    }
    size_t at[Piles] = {};
    for (size_t k = 0; k < b.size(); ++k) {
      size_t best = Piles;
      for (size_t i = 0; i < used; ++i)
        if (at[i] < piles_[i].size() &&
            (best == Piles || piles_[i][at[i]].seq < piles_[best][at[best]].seq))
          best = i;
      b[k] = piles_[best][at[best]++];
    }
  }

  unsigned bucketOf(uint64_t time) const {
    return 64 - static_cast<unsigned>(__builtin_clzll(time ^ last_));
  }

  uint64_t last_ = 0;          // time of the events in buckets_[0]
  uint64_t mask_ = 0;          // bit k-1 set: buckets_[k] is not empty
  size_t head0_ = 0;           // next event of buckets_[0]
  size_t size_ = 0;
  EventBuf buckets_[65];
  EventBuf piles_[4];          // sortBySeq's scratch
  QuadHeap past_;
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
