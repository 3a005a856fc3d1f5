#include "support/InputFile.h"

#include <llvm/Support/FileSystem.h>

#include <vector>

namespace infracc {

static llvm::ErrorOr<const llvm::MemoryBuffer *> stdinBuffer() {
  static llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getSTDIN();
  if (!buf)
    return buf.getError();
  return buf->get();
}

llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> openInputFile(llvm::StringRef path,
                                                                bool nulTerminated) {
  if (path != "-")
    return llvm::MemoryBuffer::getFile(path, /*IsText=*/false, nulTerminated);
  auto in = stdinBuffer();
  if (!in)
    return in.getError();
  return llvm::MemoryBuffer::getMemBufferCopy((*in)->getBuffer(), "<stdin>");
}

std::string readInputHead(llvm::StringRef path, size_t bytes) {
  if (path == "-") {
    auto in = stdinBuffer();
    return in ? (*in)->getBuffer().take_front(bytes).str() : std::string();
  }
  auto file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return {};
  }
  std::vector<char> buf(bytes);
  auto n = llvm::sys::fs::readNativeFileSlice(*file, buf, 0);
  llvm::sys::fs::closeFile(*file);
  if (!n) {
    llvm::consumeError(n.takeError());
    return {};
  }
  return std::string(buf.data(), *n);
}

} // namespace infracc
