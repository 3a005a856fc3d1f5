#include "ir/Collectives.h"

namespace infracc {

namespace {
constexpr llvm::StringRef AlgorithmNames[NumCollAlgorithms] = {
    "auto",     "ring",     "recdoub", "rabenseifner", "binomial", "binary",       "dbtree",
    "dissemination", "linear", "pairwise", "bruck", "direct",   "hierarchical"};
constexpr CollectiveKind Kinds[] = {
    CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::Reducescatter,
    CollectiveKind::Bcast,     CollectiveKind::Reduce,    CollectiveKind::Alltoall,
    CollectiveKind::Alltoallv, CollectiveKind::Barrier,   CollectiveKind::Gather,
    CollectiveKind::Scatter};
} // namespace

llvm::StringRef collAlgorithmName(CollAlgorithm a) {
  uint32_t i = static_cast<uint32_t>(a);
  return i < NumCollAlgorithms ? AlgorithmNames[i] : "unknown";
}

std::optional<CollAlgorithm> parseCollAlgorithm(llvm::StringRef name) {
  for (uint32_t i = 0; i < NumCollAlgorithms; ++i)
    if (AlgorithmNames[i] == name)
      return static_cast<CollAlgorithm>(i);
  return std::nullopt;
}

std::string collAlgorithmList() {
  std::string s;
  for (uint32_t i = 1; i < NumCollAlgorithms; ++i)
    s += (i > 1 ? ", " : "") + AlgorithmNames[i].str();
  return s;
}

std::optional<CollectiveKind> parseCollectiveKind(llvm::StringRef name) {
  for (CollectiveKind k : Kinds)
    if (collectiveKindName(k) == name)
      return k;
  return std::nullopt;
}

bool collectiveHasRoot(CollectiveKind k) {
  return k == CollectiveKind::Bcast || k == CollectiveKind::Reduce ||
         k == CollectiveKind::Gather || k == CollectiveKind::Scatter;
}

llvm::ArrayRef<CollectiveKind> allCollectiveKinds() { return Kinds; }

} // namespace infracc
