#include "ir/TargetRegistry.h"

#include <algorithm>
#include <deque>

namespace infracc {

static std::deque<Target> &targets() {
  static std::deque<Target> t;   // deque: stable addresses
  return t;
}

void TargetRegistry::add(Target t) { targets().push_back(std::move(t)); }

const Target *TargetRegistry::find(llvm::StringRef name) {
  for (const Target &t : targets())
    if (t.name == name)
      return &t;
  return nullptr;
}

std::vector<const Target *> TargetRegistry::all() {
  std::vector<const Target *> out;
  for (const Target &t : targets())
    out.push_back(&t);
  std::sort(out.begin(), out.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return out;
}

} // namespace infracc
