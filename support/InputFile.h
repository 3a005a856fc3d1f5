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

/// Whether a mapped file of `bytes` bytes read as `streams` interleaved sequential
/// streams (one per rank of a schedule, all advancing together) is better read page by
/// page than with the system's read-around of `window` bytes a fault, in `memory`
/// bytes. Read-around keeps a window per stream resident (all of the file when the
/// windows cover it); when that does not fit in half of the memory, pages are evicted
/// before they are used and read again and again. Page by page needs about one page
/// per stream; when even that does not fit, read-around still wins (bigger reads).
bool randomAccessHelps(uint64_t bytes, uint64_t streams, uint64_t memory, uint64_t window);

/// The read-around of the device holding `path` (Linux: the backing device's
/// read_ahead_kb), or 128 KiB when it cannot be told.
uint64_t readAroundBytes(llvm::StringRef path);

/// Asks the system to page the mapped bytes [data, data + size) in a page at a time,
/// without read-around. Only advice: for a buffer that is not a mapping nothing changes.
void adviseRandomAccess(const void *data, size_t size);

/// For a file read page by page as `streams` interleaved sequential streams: how far
/// ahead of each stream to ask for pages (adviseWillNeed): a third of `memory` over the
/// streams (a stream keeps up to one and a half windows while it asks for the next
/// half way through; the rest is for the reader's own memory), in whole pages, at most
/// the read-around `window`; 0 when that is less than a page.
uint64_t streamWindowBytes(uint64_t streams, uint64_t memory, uint64_t window);

/// Asks the system to read the mapped bytes [data, data + size) now, without waiting
/// for them (the pages the range touches). Only advice, as above.
void adviseWillNeed(const void *data, size_t size);

} // namespace infracc
