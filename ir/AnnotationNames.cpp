#include "ir/AnnotationNames.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

namespace infracc {

AnnotationNames::AnnotationNames(llvm::StringRef s) {
  if (s.empty()) {
    empty_ = true;
    return;
  }
  if (s.contains('.')) {
    parts_.push_back({s.str()});
    return;
  }
  auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_' || c == '-'; };
  size_t i = 0;
  while (i < s.size()) {
    if (!isNameChar(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && isNameChar(s[j]))
      ++j;
    Part part{s.slice(i, j).str()};
    i = j;
    // An optional [digits:digits]. Other brackets are no slice: their digits are read as
    // a part of their own (`nic[0]` is nic.0), as the reference reads them.
    if (i < s.size() && s[i] == '[') {
      size_t close = s.find(']', i);
      llvm::StringRef body = close == llvm::StringRef::npos ? "" : s.slice(i + 1, close);
      auto [a, b] = body.split(':');
      uint64_t lo, hi;
      if (body.contains(':') && !a.empty() && !b.empty() && llvm::all_of(a, llvm::isDigit) &&
          llvm::all_of(b, llvm::isDigit) && !a.getAsInteger(10, lo) && !b.getAsInteger(10, hi)) {
        part.slice = true;
        part.lo = lo;
        part.hi = hi;
        empty_ |= hi <= lo;
        i = close + 1;
      }
    }
    parts_.push_back(std::move(part));
  }
}

void AnnotationNames::compose(const std::vector<uint64_t> &at, std::string &name) const {
  name.clear();
  for (size_t k = 0; k < parts_.size(); ++k) {
    if (k)
      name += '.';
    name += parts_[k].name;
    if (parts_[k].slice) {
      name += '.';
      name += std::to_string(at[k]);
    }
  }
}

} // namespace infracc
