#include "compiler/frontends/placement/PlaceMap.h"

#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>

namespace infracc {

std::optional<std::vector<RankMapEntry>> readRankMap(llvm::StringRef path, DiagEngine &diags,
                                                     llvm::StringRef what,
                                                     llvm::StringRef nameWord,
                                                     llvm::StringRef example) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    diags.error("", "cannot read the " + what + " '" + path + "': " + buf.getError().message());
    return std::nullopt;
  }
  llvm::StringRef text = (*buf)->getBuffer();
  diags.addBuffer(std::move(*buf));
  const std::string form = ("'rank " + nameWord + "-name'").str();
  std::vector<RankMapEntry> out;
  unsigned before = diags.errorCount();
  while (!text.empty() && !diags.shouldStop()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    llvm::StringRef body = line.split('#').first.rtrim(" \t\r");
    llvm::StringRef s = body.ltrim(" \t");
    if (s.empty())
      continue;
    llvm::StringRef rankText = s.take_until([](char c) { return c == ' ' || c == '\t'; });
    llvm::SMLoc rankLoc = llvm::SMLoc::getFromPointer(rankText.data());
    uint64_t rank = 0;
    if (!llvm::all_of(rankText, llvm::isDigit) || rankText.getAsInteger(10, rank) ||
        rank > 0xFFFFFFFEull) {
      diags.error(rankLoc, "expected a rank number (0, 1, ...) at the start of the line, found '" +
                               rankText + "'; lines are " + form);
      continue;
    }
    llvm::StringRef after = s.drop_front(rankText.size()).ltrim(" \t");
    if (after.empty()) {
      diags.error(llvm::SMLoc::getFromPointer(rankText.end()),
                  "rank " + rankText + " has no " + nameWord + " name; lines are " + form +
                      " (e.g. '" + rankText + " " + example + rankText + "')");
      continue;
    }
    llvm::StringRef name = after.take_until([](char c) { return c == ' ' || c == '\t'; });
    llvm::StringRef extra = after.drop_front(name.size()).ltrim(" \t");
    if (!extra.empty()) {
      diags.error(llvm::SMLoc::getFromPointer(extra.data()),
                  "unexpected '" + extra + "' after the " + nameWord + " name; lines are " +
                      form + " (comments start with #)");
      continue;
    }
    out.push_back({static_cast<uint32_t>(rank), name.str(), rankLoc,
                   llvm::SMLoc::getFromPointer(name.data())});
  }
  if (diags.errorCount() != before)
    return std::nullopt;
  return out;
}

} // namespace infracc
