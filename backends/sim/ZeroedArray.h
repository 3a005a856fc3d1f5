// Large per-op arrays of the event engine: anonymous memory that the kernel zeroes on
// first touch, so the pages a run never touches cost nothing (unused op references,
// the ATLAHS arrays of a schedule without dependencies), and transparent huge pages
// when the array is large: one page fault per 2 MiB instead of per 4 KiB, and fewer
// TLB misses in an event loop that touches them at random.
#pragma once

#include "support/HugePages.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define INFRACC_ZEROED_MMAP 1
#endif

namespace infracc::sim {

template <class T> class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>, "zero bytes must be a valid T");

public:
  ZeroedArray() = default;
  ZeroedArray(const ZeroedArray &) = delete;
  ZeroedArray &operator=(const ZeroedArray &) = delete;
  ~ZeroedArray() { release(); }

  /// n zeroed elements (the old contents are dropped).
  void reset(size_t n) {
    release();
    if (n == 0)
      return;
    bytes_ = n * sizeof(T);
#ifdef INFRACC_ZEROED_MMAP
    constexpr size_t huge = size_t(2) << 20;
    size_t rounded = (bytes_ + huge - 1) & ~(huge - 1);
    size_t len = bytes_ >= 2 * huge ? rounded + huge : bytes_;
    // MAP_NORESERVE: arrays sized for the worst case (every op queued at once) must
    // not count against the commit limit for pages they never use.
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    map_ = p;
    mapLen_ = len;
    char *start = static_cast<char *>(p);
    if (len != bytes_) {
      // Start on a 2 MiB boundary so that every huge page lies inside the array.
      start = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1));
      if (!getenv("NOHUGE"))
        adviseHugePages(start, rounded);
    }
    data_ = reinterpret_cast<T *>(start);
#else
    data_ = static_cast<T *>(std::calloc(n, sizeof(T)));
    if (!data_)
      throw std::bad_alloc();
#endif
  }

  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T *data() { return data_; }
  size_t capacity() const { return bytes_ / sizeof(T); }
  bool empty() const { return data_ == nullptr; }

private:
  void release() {
#ifdef INFRACC_ZEROED_MMAP
    if (map_)
      munmap(map_, mapLen_);
    map_ = nullptr;
#else
    std::free(data_);
#endif
    data_ = nullptr;
  }

  T *data_ = nullptr;
  size_t bytes_ = 0;
#ifdef INFRACC_ZEROED_MMAP
  void *map_ = nullptr;
  size_t mapLen_ = 0;
#endif
};

} // namespace infracc::sim
