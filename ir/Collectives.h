// Vocabulary shared by everything that names collective algorithms: the extended
// GOAL dialect (`algo ring`), the selection table file, and lower-collectives.
// CollectiveInfo::algorithm holds one of these (0 = let the selection policy choose).
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace infracc {

enum class CollAlgorithm : uint32_t {
  Auto = 0,
  Ring,           // ring (pipelined chain for rooted collectives)
  RecDoub,        // recursive doubling, MPICH-style pre/post steps for non-powers of two
  Rabenseifner,   // recursive halving + doubling
  Binomial,       // binomial tree
  Binary,         // binary tree (breadth-first numbering)
  DBTree,         // NCCL's double binary tree
  Dissemination,
  Linear,
  Pairwise,
  Bruck,
  Direct,         // all pairs at once
  Hierarchical,   // intra-host, across hosts, intra-host again
  Tree,           // the tree the communicator declares (NCCL's, from a trace)
};
inline constexpr uint32_t NumCollAlgorithms = 14;

llvm::StringRef collAlgorithmName(CollAlgorithm a);
std::optional<CollAlgorithm> parseCollAlgorithm(llvm::StringRef name);
/// "ring, recdoub, ..." (every algorithm but auto), for messages.
std::string collAlgorithmList();

/// NCCL's protocols, as a collective statement names them (`proto ll128`); Default
/// leaves the choice to lower-collectives' -coll-protocol.
enum class CollProtocol : uint8_t { Default = 0, Simple, LL, LL128 };
llvm::StringRef collProtocolName(CollProtocol p);
std::optional<CollProtocol> parseCollProtocol(llvm::StringRef name);
/// Bytes on the wire for `payload` bytes: Simple (and Default) as is; LL 16 bytes per 8
/// (half of every line is a flag); LL128 128 bytes per 120.
uint64_t protocolWireBytes(CollProtocol p, uint64_t payload);

/// Why `up` (each communicator rank's parent, -1 at the root; Communicator::treeUp) is
/// not a tree: "" when it is; else e.g. "has 2 roots" or "has a cycle through
/// communicator rank 3". Parents must be ranks of the communicator.
std::string treeProblem(llvm::ArrayRef<int32_t> up);

std::optional<CollectiveKind> parseCollectiveKind(llvm::StringRef name);
/// Rooted collectives take a `root`.
bool collectiveHasRoot(CollectiveKind k);
/// Barrier moves no user data; alltoallv takes per-peer sizes instead of one size.
inline bool collectiveHasSize(CollectiveKind k) {
  return k != CollectiveKind::Barrier && k != CollectiveKind::Alltoallv;
}
/// Every collective kind, in enum order.
llvm::ArrayRef<CollectiveKind> allCollectiveKinds();

} // namespace infracc
