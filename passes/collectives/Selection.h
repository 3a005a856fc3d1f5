// The selection policy: which algorithm lowers a collective whose statement names
// none, by collective, size and communicator size. The default table is documented
// in docs/collectives.md; a file (-coll-selection=FILE) can put rules in front of it.
//
//   # collective   size (bytes)   ranks       algorithm
//   allreduce      0..2048        *           recdoub
//   allgather      *              pow2        recdoub
//   alltoall       ..256          8..         bruck
//
// The first rule whose collective, size range and rank range match, and whose
// algorithm can lower the case, wins. A rule of a file that matches but cannot lower
// the case (hierarchical without the ranks' hosts) is an error, not a silent skip.
#pragma once

#include "ir/Collectives.h"

#include <llvm/Support/SMLoc.h>

#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::coll {

struct SelectionRule {
  CollectiveKind kind;
  uint64_t minBytes = 0, maxBytes = UINT64_MAX;
  uint32_t minRanks = 0, maxRanks = UINT32_MAX;
  bool pow2Only = false;
  CollAlgorithm algorithm;
  llvm::SMLoc loc;   // in a selection file; unset for the defaults
};

struct Choice {
  CollAlgorithm algorithm = CollAlgorithm::Auto;
  /// A rule of the file that matched but whose algorithm cannot lower this case, and why
  /// (the defaults are then used); null when none did.
  const SelectionRule *unusable = nullptr;
  std::string why;
};

class SelectionPolicy {
public:
  /// The built-in table.
  static const SelectionPolicy &defaults();
  /// Rules read from `path` in front of the defaults; nullopt after errors (reported
  /// through diags as file:line:col).
  static std::optional<SelectionPolicy> load(DiagEngine &diags, const std::string &path);
  /// Parses rule text (`name` is the file name for messages).
  static std::optional<SelectionPolicy> parse(DiagEngine &diags, const std::string &text,
                                              const std::string &name);

  CollAlgorithm choose(CollectiveKind k, uint64_t bytes, uint32_t ranks, bool haveHosts) const {
    return choice(k, bytes, ranks, haveHosts).algorithm;
  }
  Choice choice(CollectiveKind k, uint64_t bytes, uint32_t ranks, bool haveHosts) const;
  const std::vector<SelectionRule> &rules() const { return rules_; }
  /// The table as text, in the file syntax.
  std::string describe() const;

private:
  std::vector<SelectionRule> rules_;
};

} // namespace infracc::coll
