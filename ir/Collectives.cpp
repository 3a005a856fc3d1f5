#include "ir/Collectives.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace infracc {

namespace {
constexpr llvm::StringRef AlgorithmNames[NumCollAlgorithms] = {
    "auto",     "ring",     "recdoub", "rabenseifner", "binomial", "binary",       "dbtree",
    "dissemination", "linear", "pairwise", "bruck", "direct",   "hierarchical", "tree"};
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

namespace {
constexpr llvm::StringRef ProtocolNames[] = {"default", "simple", "ll", "ll128"};
}

llvm::StringRef collProtocolName(CollProtocol p) {
  uint32_t i = static_cast<uint32_t>(p);
  return i < std::size(ProtocolNames) ? ProtocolNames[i] : "unknown";
}

std::optional<CollProtocol> parseCollProtocol(llvm::StringRef name) {
  for (uint32_t i = 1; i < std::size(ProtocolNames); ++i)
    if (ProtocolNames[i] == name)
      return static_cast<CollProtocol>(i);
  return std::nullopt;
}

uint64_t protocolWireBytes(CollProtocol p, uint64_t payload) {
  switch (p) {
  case CollProtocol::Default:
  case CollProtocol::Simple:
    return payload;
  case CollProtocol::LL:
    return (payload + 7) / 8 * 16;
  case CollProtocol::LL128:
    return (payload + 119) / 120 * 128;
  }
  return payload;
}

std::string treeProblem(llvm::ArrayRef<int32_t> up) {
  size_t roots = size_t(std::count(up.begin(), up.end(), -1));
  if (roots != 1)
    return "has " + std::to_string(roots) + " roots ('-'), not one";
  // Every rank must reach the root. Each path is walked once and its ranks remember the
  // answer (walking every rank to the root was quadratic for a chain: 150,000 ranks
  // took 21 s).
  constexpr uint8_t Unknown = 0, OnPath = 1, ReachesRoot = 2, Cycles = 3;
  std::vector<uint8_t> state(up.size(), Unknown);
  std::vector<size_t> path;
  for (size_t r = 0; r < up.size(); ++r) {
    path.clear();
    int64_t at = int64_t(r);
    while (at >= 0 && state[size_t(at)] == Unknown) {
      state[size_t(at)] = OnPath;
      path.push_back(size_t(at));
      at = up[size_t(at)];
    }
    // The walk ended at the root's parent, at a rank already decided, or back on
    // itself (a cycle).
    const uint8_t answer = at < 0                             ? ReachesRoot
                           : state[size_t(at)] == OnPath ? Cycles
                                                         : state[size_t(at)];
    for (size_t p : path)
      state[p] = answer;
    if (state[r] == Cycles)
      return "has a cycle through communicator rank " + std::to_string(r);
  }
  return "";
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
