// Reading VEF's text, line by line and token by token, with located errors: shared by
// the MPI trace reader and the generators of extended traces.
#pragma once

#include "support/Diagnostics.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace infracc::vef {

using Tokens = llvm::SmallVector<llvm::StringRef, 12>;

class VefText {
public:
  VefText(DiagEngine &d, llvm::StringRef text) : diags(d), rest_(text) {}

  /// The next non-blank line's tokens (separated by blanks and tabs); false at the end.
  bool next(Tokens &tokens) {
    while (!rest_.empty()) {
      auto [line, rest] = rest_.split('\n');
      rest_ = rest;
      tokens.clear();
      while (true) {
        line = line.ltrim(" \t\r");
        if (line.empty())
          break;
        size_t end = line.find_first_of(" \t\r");
        tokens.push_back(line.take_front(end));
        line = line.drop_front(std::min(end, line.size()));
      }
      if (!tokens.empty())
        return true;
    }
    return false;
  }
  /// Where the text not yet read starts (the end of the input once it is all read).
  llvm::StringRef rest() const { return rest_; }

  bool error(llvm::StringRef at, const std::string &msg) {
    diags.error(llvm::SMLoc::getFromPointer(at.data()), msg);
    return false;
  }
  bool number(llvm::StringRef tok, llvm::StringRef what, uint64_t &out,
              uint64_t max = UINT64_MAX) {
    if (tok.getAsInteger(10, out))
      return error(tok, fmt::format("expected {} (a whole number), found '{}'", what.str(),
                                    tok.take_front(40).str()));
    if (out > max)
      return error(tok, fmt::format("{} {} is too large (at most {})", what.str(), out, max));
    return true;
  }
  /// A finite decimal number in [lo, hi].
  bool real(llvm::StringRef tok, llvm::StringRef what, double &out, double lo, double hi) {
    if (tok.getAsDouble(out) || !std::isfinite(out))
      return error(tok, fmt::format("expected {} (a number), found '{}'", what.str(),
                                    tok.take_front(40).str()));
    if (out < lo || out > hi)
      return error(tok, fmt::format("{} {} is out of range: it must be in [{}, {}]", what.str(),
                                    tok.str(), lo, hi));
    return true;
  }

  DiagEngine &diags;

private:
  llvm::StringRef rest_;
};

/// The header of an extended trace, as the generators need it.
struct ExtendedHeader {
  uint32_t tasks = 0;
  uint64_t msgs = 0, clockPs = 1000;
  llvm::StringRef msgsToken;   // for messages about the count
  std::string path;            // the trace's, for files it names (relative to its folder)
};

} // namespace infracc::vef
