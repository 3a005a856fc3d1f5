// Transparent huge pages for large arrays that are touched at random (the element
// arrays of a 50 M-event model, an event engine's per-op state): one TLB entry and one
// page fault per 2 MiB instead of per 4 KiB. Most kernels only give them to memory that
// asks (transparent_hugepage = madvise), so the allocation asks; elsewhere a no-op.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace infracc {

/// Asks for huge pages on the whole 2 MiB pages inside [p, p + bytes). Call it before
/// the memory is first touched: pages already present stay small.
inline void adviseHugePages(const void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t huge = uintptr_t(2) << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(huge - 1);
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/// v.reserve(n), with huge pages for what is reserved (a std::vector of a few MiB or
/// more lives in its own mapping, untouched until filled).
template <class Vector> void reserveHugePages(Vector &v, size_t n) {
  v.reserve(n);
  if (v.capacity() * sizeof(v[0]) >= (size_t(4) << 20))
    adviseHugePages(v.data(), v.capacity() * sizeof(v[0]));
}

} // namespace infracc
