// Reading inputs: files memory-mapped where possible, or standard input for "-".
// Standard input is read once and kept, so that recognising the format and reading
// the input see the same bytes; its buffer is named "<stdin>" in diagnostics.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/ErrorOr.h>
#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <string>

namespace infracc {

/// Opens an input file (memory-mapped where possible), or standard input for "-".
llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> openInputFile(llvm::StringRef path,
                                                                bool nulTerminated);

/// The first `bytes` bytes of an input (fewer for a short file; "" when unreadable),
/// for recognising its format by content.
std::string readInputHead(llvm::StringRef path, size_t bytes = 4096);

/// Whether reading a mapped file of `bytes` bytes as `streams` interleaved sequential
/// streams (one per rank of a schedule) with the system's read-around (128 KiB a
/// fault) would thrash in `memory` bytes: when each stream is longer than a window
/// and the windows of all streams do not fit in half of the memory, they evict each
/// other before they are used. (Streams shorter than a window share windows.)
bool readAheadWouldThrash(uint64_t bytes, uint64_t streams, uint64_t memory);

/// Asks the system to page the mapped bytes [data, data + size) in a page at a time,
/// without read-around. Only advice: for a buffer that is not a mapping nothing changes.
void adviseRandomAccess(const void *data, size_t size);

} // namespace infracc
