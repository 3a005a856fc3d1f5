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

} // namespace infracc
