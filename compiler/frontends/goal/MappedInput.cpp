#include "compiler/frontends/goal/MappedInput.h"
#include "support/Limits.h"

#include <algorithm>
#include <cstdint>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define INFRACC_HAVE_MADVISE 1
#endif

namespace infracc::goal {

void releaseConsumed(const llvm::MemoryBuffer &buffer, const char *&released, const char *upTo) {
#ifdef INFRACC_HAVE_MADVISE
  constexpr uintptr_t keepBehind = uintptr_t(1) << 20;
  if (buffer.getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap ||
      uintptr_t(upTo) < uintptr_t(released) + keepBehind)
    return;
  uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t from = (uintptr_t(released) + page - 1) & ~(page - 1);
  uintptr_t to = (uintptr_t(upTo) - keepBehind) & ~(page - 1);
  if (to <= from)
    return;
  madvise(reinterpret_cast<void *>(from), to - from, MADV_DONTNEED);
  released = reinterpret_cast<const char *>(to);
#else
  (void)buffer;
  (void)released;
  (void)upTo;
#endif
}

bool releaseWhileChecking(const llvm::MemoryBuffer &buffer) {
#ifdef INFRACC_HAVE_MADVISE
  return buffer.getBufferSize() > availableMemory() / 4;
#else
  (void)buffer;
  return false;
#endif
}

} // namespace infracc::goal
