#include "passes/Placing.h"

#include "ir/Module.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseSet.h>

#include <fmt/format.h>

#include <algorithm>

namespace infracc {

EndpointPool::EndpointPool(const FabricGraph &g, unsigned perHost) : g_(g) {
  hostOfCopy_.assign(g.numDeviceCopies(), ~0u);
  for (NodeId e : g.endpoints()) {
    uint32_t copy = g.deviceCopyOf(e);
    if (hostOfCopy_[copy] == ~0u) {
      hostOfCopy_[copy] = static_cast<uint32_t>(hosts_.size());
      hosts_.emplace_back();
    }
    auto &h = hosts_[hostOfCopy_[copy]];
    if (perHost == 0 || h.size() < perHost) {
      h.push_back(e);
      ++size_;
    }
  }
}

uint32_t EndpointPool::hostOf(NodeId endpoint) const {
  return hostOfCopy_[g_.deviceCopyOf(endpoint)];
}

std::vector<NodeId> EndpointPool::packed() const {
  std::vector<NodeId> out;
  out.reserve(size_);
  for (const auto &h : hosts_)
    out.insert(out.end(), h.begin(), h.end());
  return out;
}

std::vector<NodeId> EndpointPool::roundRobin() const {
  std::vector<NodeId> out;
  out.reserve(size_);
  for (size_t k = 0; out.size() < size_; ++k)
    for (const auto &h : hosts_)
      if (k < h.size())
        out.push_back(h[k]);
  return out;
}

std::vector<NodeId> EndpointPool::random(uint64_t seed) const {
  std::vector<NodeId> out = packed();
  std::mt19937_64 rng(seed);
  seededShuffle(out, rng);
  return out;
}

uint64_t uniformBelow(std::mt19937_64 &rng, uint64_t n) {
  // Reject the top partial block so that every residue is equally likely.
  const uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n + 1) % n;
  uint64_t x;
  do
    x = rng();
  while (x > limit);
  return x % n;
}

EndpointNames::EndpointNames(const FabricGraph &g) : g_(g), sorted_(g.endpoints().begin(),
                                                                    g.endpoints().end()) {
  std::sort(sorted_.begin(), sorted_.end());
}

llvm::Expected<NodeId> EndpointNames::resolve(llvm::StringRef name) const {
  std::string example = sorted_.empty() ? std::string() : g_.name(sorted_.front());
  std::string kind = g_.endpointsAreXpus() ? "xpus" : "the first NIC of every host";
  std::optional<NodeId> n = g_.lookup(name);
  if (!n)
    return inputError(fmt::format("'{}' is not a node of the fabric; endpoints are named like "
                                  "'{}' (the fabric's endpoints are {})",
                                  name.str(), example, kind));
  if (!std::binary_search(sorted_.begin(), sorted_.end(), *n))
    return inputError(fmt::format("'{}' is a {}, not an endpoint; ranks go on {} (e.g. '{}')",
                                  name.str(), g_.typeName(*n).str(), kind, example));
  return *n;
}

std::string describeRanks(llvm::ArrayRef<uint32_t> r, size_t limit) {
  std::vector<std::string> parts;
  size_t i = 0, groups = 0;
  while (i < r.size()) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1)
      ++j;
    if (groups++ < limit)
      parts.push_back(j == i ? std::to_string(r[i])
                             : std::to_string(r[i]) + "-" + std::to_string(r[j]));
    i = j + 1;
  }
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k)
    out += (k == 0 ? "" : k + 1 == parts.size() && groups <= limit ? " and " : ", ") + parts[k];
  if (groups > limit)
    out += fmt::format(", ... ({} in all)", r.size());
  return out;
}

void recordPlacementStats(const Module &m, Statistics &stats, llvm::StringRef group) {
  const Placement &p = m.placement;
  llvm::DenseSet<uint32_t> hosts;
  for (NodeId e : p.endpointOfRank)
    hosts.insert(m.fabric->deviceCopyOf(e));
  stats.add(group, "ranks", "Ranks placed on the fabric", p.numRanks());
  stats.add(group, "hosts", "Hosts holding at least one rank", hosts.size());
}

} // namespace infracc
