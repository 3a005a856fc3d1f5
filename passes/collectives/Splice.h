// Replacing ops of a schedule by fragments of ops (lower-collectives replaces each
// collective, lower-kernels each kernel launch), keeping the program's dependencies:
// what depended on the op's start (irequires) now depends on the fragment's first ops
// (those without a predecessor inside it), what depended on its end (requires) on its
// last ops (those without a successor inside it).
#pragma once

#include "passes/collectives/Emitter.h"

#include <llvm/ADT/STLFunctionalExtras.h>

namespace infracc::coll {

/// Called for every op `g` of the rank, in order; `base` is the local index the
/// fragment's first op will get. Fills `frag` (cleared before the call) and returns
/// true to replace the op, or returns false to copy it as it is. A replaced op whose
/// fragment stays empty becomes a `calc 0` on its cpu (keeping the program's order).
using ExpandFn = llvm::function_ref<bool(uint32_t g, uint32_t base)>;

class Splicer {
public:
  /// Rebuilds rank `r` of `s` into `b` (from beginRank to endRank).
  void rank(const Schedule &s, uint32_t r, ScheduleBuilder &b, Fragment &frag, ExpandFn expand);

private:
  std::vector<uint32_t> rootsBegin_, endsBegin_, roots_, ends_;
  std::vector<uint8_t> flags_;
};

} // namespace infracc::coll
