#include "compiler/frontends/storage/SpcTrace.h"

#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <cmath>

namespace infracc {
namespace {

using Fields = llvm::SmallVector<llvm::StringRef, 8>;

void split(llvm::StringRef line, Fields &f) {
  f.clear();
  line.split(f, ',');
  for (llvm::StringRef &s : f)
    s = s.trim(" \t\r");
}

bool isOpcode(llvm::StringRef s) { return s.size() == 1 && llvm::StringRef("rRwW").contains(s[0]); }

} // namespace

int sniffSpc(llvm::StringRef head) {
  llvm::StringRef line = head.split('\n').first;
  Fields f;
  split(line, f);
  uint64_t n = 0;
  double t = 0;
  if (f.size() >= 5 && !f[0].getAsInteger(10, n) && !f[1].getAsInteger(10, n) &&
      !f[2].getAsInteger(10, n) && isOpcode(f[3]) && !f[4].getAsDouble(t))
    return 90;
  return 0;
}

std::optional<std::vector<IoRequest>> readSpcTrace(llvm::StringRef text, DiagEngine &diags) {
  auto error = [&](llvm::StringRef at, const std::string &msg) {
    diags.error(llvm::SMLoc::getFromPointer(at.data()), msg);
    return std::nullopt;
  };
  // Lines are at least 10 bytes, so the text's size bounds the requests kept here; the
  // schedule they become is checked when its ops are counted (DirectDrive.cpp).
  if (auto msg = exceedsMemory("the trace's requests", text.size() / 10 + 1, sizeof(IoRequest)))
    return error(text, *msg);
  std::vector<IoRequest> out;
  Fields f;
  llvm::StringRef rest = text;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.trim(" \t\r").empty())
      continue;
    split(line, f);
    if (f.size() < 5)
      return error(line, fmt::format("expected 'ASU,LBA,Size,Opcode,Timestamp' (SPC format), "
                                     "found {} field(s)",
                                     f.size()));
    IoRequest r{};
    r.line = llvm::SMLoc::getFromPointer(line.data());
    uint64_t asu = 0;
    if (f[0].getAsInteger(10, asu) || asu > UINT32_MAX)
      return error(f[0], fmt::format("the ASU must be a whole number below 2^32, not '{}'",
                                     f[0].take_front(40).str()));
    r.asu = uint32_t(asu);
    if (f[1].getAsInteger(10, r.lba))
      return error(f[1], fmt::format("the LBA must be a whole number (a sector address), not "
                                     "'{}'",
                                     f[1].take_front(40).str()));
    if (f[2].getAsInteger(10, r.bytes))
      return error(f[2], fmt::format("the size must be a whole number of bytes, not '{}'",
                                     f[2].take_front(40).str()));
    if (r.bytes == 0)
      return error(f[2], "the size must be at least 1 byte");
    if (r.bytes > (uint64_t(1) << 40))
      return error(f[2], fmt::format("a request of {} bytes is absurd (at most 1 TiB)", r.bytes));
    if (!isOpcode(f[3]))
      return error(f[3], fmt::format("the opcode must be R or W (read or write, either case), "
                                     "not '{}'",
                                     f[3].take_front(40).str()));
    r.write = f[3] == "w" || f[3] == "W";
    double seconds = 0;
    if (f[4].getAsDouble(seconds) || !std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
      return error(f[4], fmt::format("the timestamp must be seconds since the trace began (a "
                                     "number in [0, 1e9]), not '{}'",
                                     f[4].take_front(40).str()));
    r.timeNs = uint64_t(std::llround(seconds * 1e9));
    out.push_back(r);
  }
  if (out.empty()) {
    diags.error(llvm::SMLoc::getFromPointer(text.data()), "the trace has no requests");
    return std::nullopt;
  }
  return out;
}

} // namespace infracc
