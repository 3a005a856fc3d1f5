#include "passes/NicAssignment.h"

#include "passes/Placing.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

namespace infracc {

std::string copyNameOf(const FabricGraph &g, NodeId n) {
  return g.instances()[g.instanceOf(n)].name + "." + std::to_string(g.copyOf(n));
}

std::string nicPolicyName(const NicRequest *req) {
  if (!req)
    return "affinity";
  switch (req->policy) {
  case NicRequest::Policy::Affinity: return "affinity";
  case NicRequest::Policy::RoundRobin: return "round-robin";
  case NicRequest::Policy::Map: return "map:" + req->path;
  }
  return "";
}

namespace {

std::string listAttachPoints(const FabricGraph &g, llvm::ArrayRef<NodeId> list) {
  std::string s;
  for (size_t i = 0; i < list.size() && i < 4; ++i)
    s += (i ? ", " : "") + g.name(list[i]);
  if (list.size() > 4)
    s += fmt::format(", ... ({} in all)", list.size());
  return s;
}

std::optional<std::vector<NodeId>> fromMap(const AttachPoints &ap,
                                           llvm::ArrayRef<NodeId> endpointOfRank,
                                           const NicRequest &req, DiagEngine &diags,
                                           llvm::StringRef workload) {
  const FabricGraph &g = ap.graph();
  const uint32_t P = uint32_t(endpointOfRank.size());
  std::vector<NodeId> nic(P, InvalidNode);
  std::vector<llvm::SMLoc> givenAt(P);
  unsigned before = diags.errorCount();
  for (const RankMapEntry &e : req.entries) {
    if (diags.shouldStop())
      break;
    if (e.rank >= P) {
      diags.error(e.rankLoc, fmt::format("rank {} does not exist: the workload '{}' has ranks 0 "
                                         "to {}",
                                         e.rank, workload.str(), P - 1));
      continue;
    }
    if (nic[e.rank] != InvalidNode) {
      diags.error(e.rankLoc, fmt::format("rank {} is given a NIC twice", e.rank));
      diags.note(givenAt[e.rank], "first given here");
      continue;
    }
    const NodeId ep = endpointOfRank[e.rank];
    llvm::ArrayRef<NodeId> own = ap.ofCopy(g.deviceCopyOf(ep));
    std::optional<NodeId> n = g.lookup(e.name);
    if (!n || ap.indexInCopy(*n) < 0 || g.deviceCopyOf(*n) != g.deviceCopyOf(ep)) {
      std::string what = !n ? fmt::format("'{}' is not a node of the fabric", e.name)
                        : ap.indexInCopy(*n) < 0
                            ? fmt::format("'{}' is not an attach point (it has no link out of "
                                          "its device)",
                                          e.name)
                            : fmt::format("'{}' is an attach point of '{}'", e.name,
                                          copyNameOf(g, *n));
      diags.error(e.nameLoc,
                  own.empty()
                      ? fmt::format("{}; rank {} runs on '{}', whose host '{}' has no attach "
                                    "point",
                                    what, e.rank, g.name(ep), copyNameOf(g, ep))
                      : fmt::format("{}; rank {} runs on '{}', so its NIC is one of its host's "
                                    "attach points: {}",
                                    what, e.rank, g.name(ep), listAttachPoints(g, own)));
      continue;
    }
    nic[e.rank] = *n;
    givenAt[e.rank] = e.rankLoc;
  }
  if (diags.errorCount() != before)
    return std::nullopt;
  std::vector<uint32_t> missing;
  for (uint32_t r = 0; r < P; ++r)
    if (nic[r] == InvalidNode)
      missing.push_back(r);
  if (!missing.empty()) {
    diags.error(req.path, fmt::format("the NIC map gives no NIC for {} {} (the workload has {} "
                                      "ranks); every rank needs a line 'rank nic-name'",
                                      missing.size() == 1 ? "rank" : "ranks",
                                      describeRanks(missing), P));
    return std::nullopt;
  }
  return nic;
}

} // namespace

std::optional<std::vector<NodeId>> assignNics(const AttachPoints &ap,
                                              llvm::ArrayRef<NodeId> endpointOfRank,
                                              const NicRequest *req, DiagEngine &diags,
                                              llvm::StringRef workload) {
  const FabricGraph &g = ap.graph();
  const NicRequest::Policy policy = req ? req->policy : NicRequest::Policy::Affinity;
  if (policy == NicRequest::Policy::Map)
    return fromMap(ap, endpointOfRank, *req, diags, workload);
  std::vector<NodeId> nic(endpointOfRank.size(), InvalidNode);
  llvm::DenseMap<uint32_t, uint32_t> ranksSoFar;   // device copy -> ranks seen on it
  for (size_t r = 0; r < endpointOfRank.size(); ++r) {
    const NodeId ep = endpointOfRank[r];
    if (ep == InvalidNode)
      continue;
    if (policy == NicRequest::Policy::Affinity) {
      nic[r] = ap.nearest(ep);
    } else {
      llvm::ArrayRef<NodeId> own = ap.ofCopy(g.deviceCopyOf(ep));
      uint32_t k = ranksSoFar[g.deviceCopyOf(ep)]++;
      if (!own.empty())
        nic[r] = own[k % own.size()];
    }
  }
  return nic;
}

} // namespace infracc
