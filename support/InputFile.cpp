#include "support/InputFile.h"
#include "support/Limits.h"

#include <llvm/Support/FileSystem.h>

#include <algorithm>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif
#include <unistd.h>
#define INFRACC_MAP_WITH_GUARD 1
#endif

namespace infracc {

#ifdef INFRACC_MAP_WITH_GUARD
namespace {

/// A read-only file mapping followed by one page of zeros: a NUL-terminated buffer
/// without copying the file, also when its size is a multiple of the page size (there
/// LLVM reads the whole file into memory to append the NUL).
class GuardedMapping final : public llvm::MemoryBuffer {
public:
  static std::unique_ptr<llvm::MemoryBuffer> open(llvm::StringRef path) {
    int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return nullptr;
    struct stat st;
    std::unique_ptr<llvm::MemoryBuffer> result;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      size_t size = size_t(st.st_size), page = size_t(sysconf(_SC_PAGESIZE));
      size_t mapped = (size + page - 1) / page * page;
      // Reserve the file's pages plus one zero page, then map the file over the start.
      void *base = mmap(nullptr, mapped + page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base != MAP_FAILED) {
        void *file = mmap(base, mapped, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
        if (file == base)
          result.reset(new GuardedMapping(static_cast<const char *>(base), size, mapped + page,
                                          path));
        else
          munmap(base, mapped + page);
      }
    }
    ::close(fd);
    return result;
  }
  ~GuardedMapping() override { munmap(const_cast<char *>(getBufferStart()), length_); }
  llvm::StringRef getBufferIdentifier() const override { return name_; }
  BufferKind getBufferKind() const override { return MemoryBuffer_MMap; }

private:
  GuardedMapping(const char *data, size_t size, size_t length, llvm::StringRef name)
      : length_(length), name_(name.str()) {
    init(data, data + size, /*RequiresNullTerminator=*/true);
  }
  size_t length_;
  std::string name_;
};

} // namespace
#endif

static llvm::ErrorOr<const llvm::MemoryBuffer *> stdinBuffer() {
  static llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getSTDIN();
  if (!buf)
    return buf.getError();
  return buf->get();
}

llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> openInputFile(llvm::StringRef path,
                                                                bool nulTerminated) {
  if (path != "-") {
#ifdef INFRACC_MAP_WITH_GUARD
    // Large NUL-terminated inputs are mapped with a zero page behind them (LLVM copies
    // a file whose size is a multiple of the page size, which a multi-GB trace can be).
    uint64_t size = 0;
    if (nulTerminated && !llvm::sys::fs::file_size(path, size) && size >= (uint64_t(1) << 20))
      if (auto mapped = GuardedMapping::open(path))
        return mapped;
#endif
    return llvm::MemoryBuffer::getFile(path, /*IsText=*/false, nulTerminated);
  }
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

bool randomAccessHelps(uint64_t bytes, uint64_t streams, uint64_t memory, uint64_t window) {
  constexpr uint64_t page = 4096;
  const uint64_t half = memory / 2;
  if (streams == 0 || window == 0)
    return false;
  const uint64_t aroundSet = streams > bytes / window ? bytes : streams * window;
  return aroundSet > half && streams <= half / page;
}

uint64_t readAroundBytes(llvm::StringRef path) {
  constexpr uint64_t fallback = uint64_t(128) << 10;
#if defined(__linux__)
  struct stat st;
  if (stat(path.str().c_str(), &st) != 0)
    return fallback;
  std::optional<uint64_t> kb =
      readNumberFile("/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                     std::to_string(minor(st.st_dev)) + "/read_ahead_kb");
  if (!kb)
    return fallback;
  return *kb << 10;
#else
  (void)path;
  return fallback;
#endif
}

uint64_t streamWindowBytes(uint64_t streams, uint64_t memory, uint64_t window) {
  constexpr uint64_t page = 4096;
  if (streams == 0)
    return 0;
  const uint64_t w = std::min(memory / 3 / streams, window) / page * page;
  return w >= page ? w : 0;
}

#if defined(__unix__) || defined(__APPLE__)
/// madvise over the pages [data, data + size) touches; advice only, errors are ignored.
static void advisePages(const void *data, size_t size, int advice) {
  if (size == 0)
    return;
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t from = uintptr_t(data) & ~(page - 1);
  const uintptr_t to = uintptr_t(data) + size;
  (void)madvise(reinterpret_cast<void *>(from), to - from, advice);
}
#else
static void advisePages(const void *, size_t, int) {}
#define MADV_WILLNEED 0
#define MADV_RANDOM 0
#endif

void adviseWillNeed(const void *data, size_t size) { advisePages(data, size, MADV_WILLNEED); }

void adviseRandomAccess(const void *data, size_t size) { advisePages(data, size, MADV_RANDOM); }

} // namespace infracc
