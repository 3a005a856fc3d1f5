// The node names an InfraGraph annotation means (the reference's _expand_node_string):
// a name with a dot is taken as it is; otherwise every run of [A-Za-z0-9_-] is a part,
// a part may be followed by [start:stop], and the parts' expansions are combined,
// joined with '.': `server[0:2]xpu[0]` is server.0.xpu.0 and server.1.xpu.0.
//
// The names are made one at a time, as they are looked up: `host[0:99999999]` would be
// a hundred million strings (gigabytes) if made at once, and the first that names no
// node ends the lookup, so no more names are made than the graph holds.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc {

class AnnotationNames {
public:
  explicit AnnotationNames(llvm::StringRef spec);

  /// True when the syntax means no name at all: an empty string, or a slice [a:b]
  /// with b <= a.
  bool empty() const { return empty_; }

  /// Calls `f(const std::string &)` with each name in the reference's order (the last
  /// slice varies fastest) until `f` returns false.
  template <class F> void forEach(F &&f) const {
    if (empty_)
      return;
    std::vector<uint64_t> at;
    for (const Part &p : parts_)
      at.push_back(p.lo);
    std::string name;
    for (;;) {
      compose(at, name);
      if (!f(static_cast<const std::string &>(name)))
        return;
      // The next index tuple, like an odometer; done when every slice has wrapped.
      size_t k = parts_.size();
      for (;;) {
        if (k == 0)
          return;
        --k;
        if (parts_[k].slice && ++at[k] < parts_[k].hi)
          break;
        at[k] = parts_[k].lo;
      }
    }
  }

private:
  struct Part {
    std::string name;
    bool slice = false;
    uint64_t lo = 0, hi = 0;   // the indices [lo, hi) of a slice
  };
  void compose(const std::vector<uint64_t> &at, std::string &name) const;

  std::vector<Part> parts_;
  bool empty_ = false;
};

} // namespace infracc
