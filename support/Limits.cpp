#include "support/Limits.h"
#include "support/Options.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>

#include <unistd.h>

namespace infracc {
struct ByteSize {
  uint64_t bytes = 0;
};
} // namespace infracc

// -max-memory=8G: a bad value is a usage error (exit 2) naming the accepted spellings.
template <>
class llvm::cl::parser<infracc::ByteSize> : public basic_parser<infracc::ByteSize> {
public:
  explicit parser(Option &o) : basic_parser(o) {}
  bool parse(Option &o, StringRef, StringRef arg, infracc::ByteSize &value) {
    std::optional<uint64_t> v = infracc::parseByteSize(arg);
    if (!v || *v == 0)
      return o.error("'" + arg + "' is not a memory size; write a number of bytes with an "
                     "optional K, M, G or T (binary: 512M, 8G, 8GiB)");
    value.bytes = *v;
    return false;
  }
  StringRef getValueName() const override { return "bytes"; }
  void printOptionDiff(const Option &o, const infracc::ByteSize &,
                       const OptionValue<infracc::ByteSize> &, size_t width) const {
    printOptionNoValue(o, width);
  }
};

namespace infracc {
namespace cl = llvm::cl;

namespace {

uint64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return uint64_t(16) << 30;   // unknown: a modest machine
  return uint64_t(pages) * uint64_t(page);
}

cl::opt<ByteSize> MaxMemory(
    "max-memory", cl::value_desc("bytes"),
    cl::desc("Refuse inputs whose sizes (ranks, fabric nodes and edges, counts in binary "
             "headers) would need more memory than this, before allocating it: a number "
             "with K, M, G or T (binary; default: the machine's physical memory, or the "
             "memory limit of the process's control group when smaller)"),
    cl::cat(opts::generalCategory()));

} // namespace

std::optional<uint64_t> readNumberFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFileAsStream(path);
  uint64_t v = 0;
  if (!buf || llvm::StringRef((*buf)->getBuffer()).trim().getAsInteger(10, v))
    return std::nullopt;
  return v;
}

std::optional<uint64_t> cgroupMemoryLimit(llvm::StringRef procSelfCgroup, llvm::StringRef root) {
  std::optional<uint64_t> best;
  // The group and each ancestor up to the hierarchy's root (`mount`): a limit anywhere
  // above applies too. v1 writes no limit as 2^63 rounded to pages.
  auto consider = [&](const std::string &mount, llvm::StringRef group, const char *file) {
    for (llvm::StringRef g = group;; g = g.rsplit('/').first) {
      auto v = readNumberFile(root.str() + mount + g.str() + "/" + file);
      if (v && *v < (uint64_t(1) << 62))
        best = best ? std::min(*best, *v) : *v;
      if (g.empty() || g == "/")
        break;
    }
  };
  llvm::SmallVector<llvm::StringRef, 16> lines;
  procSelfCgroup.split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    // hierarchy-id:controllers:path
    auto [controllers, group] = line.split(':').second.split(':');
    if (!group.starts_with("/"))
      continue;
    llvm::SmallVector<llvm::StringRef, 4> names;
    controllers.split(names, ',');
    if (controllers.empty())
      consider("", group, "memory.max");   // cgroup v2
    else if (llvm::is_contained(names, "memory"))
      consider("/memory", group, "memory.limit_in_bytes");   // cgroup v1
  }
  return best;
}

uint64_t availableMemory() {
  static const uint64_t bytes = [] {
    uint64_t physical = physicalMemory();
    auto self = llvm::MemoryBuffer::getFileAsStream("/proc/self/cgroup");
    if (!self)
      return physical;
    std::optional<uint64_t> limit = cgroupMemoryLimit((*self)->getBuffer(), "/sys/fs/cgroup");
    return limit && *limit > 0 ? std::min(physical, *limit) : physical;
  }();
  return bytes;
}

uint64_t maxMemoryBytes() {
  return MaxMemory.getNumOccurrences() ? MaxMemory.bytes : availableMemory();
}

std::string formatBytes(uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return fmt::format("{} bytes", bytes);
  double v = double(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::optional<std::string> exceedsMemory(llvm::StringRef what, uint64_t count,
                                         uint64_t bytesEach) {
  uint64_t limit = maxMemoryBytes();
  // Compare without overflowing: count * bytesEach > limit.
  if (bytesEach == 0 || count <= limit / bytesEach)
    return std::nullopt;
  std::string need = count > UINT64_MAX / bytesEach ? std::string("more than 16 EiB")
                                                    : "about " + formatBytes(count * bytesEach);
  return fmt::format("{} would need {} ({} x {} bytes), more than -max-memory ({}); raise it "
                     "with -max-memory=",
                     what.str(), need, count, bytesEach, formatBytes(limit));
}

std::optional<uint64_t> parseByteSize(llvm::StringRef s) {
  s = s.trim();
  size_t digits = 0;
  while (digits < s.size() && llvm::isDigit(s[digits]))
    ++digits;
  uint64_t n = 0;
  if (digits == 0 || s.take_front(digits).getAsInteger(10, n))
    return std::nullopt;
  llvm::StringRef suffix = s.drop_front(digits).trim();
  int shift = 0;
  if (!suffix.empty()) {
    switch (llvm::toUpper(suffix.front())) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': shift = 0; break;
    default: return std::nullopt;
    }
    llvm::StringRef rest = suffix.drop_front();
    if (shift ? rest != "" && rest != "B" && rest != "iB" : rest != "")
      return std::nullopt;
  }
  if (n > (UINT64_MAX >> shift))
    return std::nullopt;
  return n << shift;
}

} // namespace infracc
