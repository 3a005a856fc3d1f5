// Memory-mapped inputs read front to back: release what has been consumed, so that
// reading a multi-GB trace does not keep the whole file resident.
#pragma once

#include <llvm/Support/MemoryBuffer.h>

namespace infracc::goal {

/// Tells the kernel that [released, upTo - 1 MB) of `buffer` is not needed any more and
/// advances `released`. Later accesses (messages quoting a line) read the file again.
/// Does nothing unless the buffer is a read-only file mapping: on a heap buffer,
/// dropping pages would destroy the contents.
void releaseConsumed(const llvm::MemoryBuffer &buffer, const char *&released, const char *upTo);

/// Whether a mapped input that is read again later (a binary schedule: the verifier and
/// the simulator read it after the reader) should still be released as it is checked:
/// only when it is large next to the machine's memory (over a quarter of it). Smaller
/// files stay mapped, which saves mapping their pages twice.
bool releaseWhileChecking(const llvm::MemoryBuffer &buffer);

} // namespace infracc::goal
