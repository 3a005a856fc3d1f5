#include "passes/FabricCosts.h"

#include "blueprints/Params.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <map>

namespace infracc {
namespace cl = llvm::cl;

static cl::opt<double> SwitchLatency(
    "switch-latency", cl::init(0), cl::value_desc("ns"),
    cl::desc("Latency of a switch on a path, in ns, where the fabric's annotations give none "
             "(attribute switch_latency); used by -sim-model=topo and intranode-calc "
             "(default 0)"),
    cl::cat(opts::fabricCategory()));

double defaultSwitchLatencyNs() { return SwitchLatency; }

llvm::Error checkSwitchLatencyOption() {
  if (!(SwitchLatency >= 0) || !std::isfinite(SwitchLatency))
    return usageError(fmt::format("-switch-latency={}: must be a non-negative number of ns",
                                  double(SwitchLatency)));
  return llvm::Error::success();
}

namespace {

const Attribute *findAttr(const std::vector<Attribute> *attrs, llvm::StringRef key) {
  if (!attrs)
    return nullptr;
  for (const Attribute &a : *attrs)
    if (a.key == key)
      return &a;
  return nullptr;
}

std::optional<int64_t> readLatency(const Attribute &a, const std::string &owner,
                                   DiagEngine &diags, llvm::StringRef where) {
  std::optional<Duration> d = blueprints::parseDuration(llvm::StringRef(a.value).trim());
  if (!d || !std::isfinite(d->ns) || d->ns < 0) {
    diags.error(where, fmt::format("{} has {} '{}', which is not a latency (write e.g. 300ns, "
                                   "0.3us, or a bare number of ns)",
                                   owner, SwitchLatencyAttribute, a.value));
    return std::nullopt;
  }
  return static_cast<int64_t>(std::llround(d->ns * 1000.0));
}

} // namespace

std::optional<std::vector<int64_t>> switchLatencies(const FabricGraph &g, DiagEngine &diags,
                                                    llvm::StringRef where) {
  int64_t fallback = static_cast<int64_t>(std::llround(SwitchLatency * 1000.0));
  bool ok = true;
  for (const Attribute &a : g.graphAttributes())
    if (a.key == SwitchLatencyAttribute) {
      auto v = readLatency(a, "the fabric's graph annotation", diags, where);
      ok &= v.has_value();
      if (v)
        fallback = *v;
    }
  std::vector<int64_t> ps(g.numNodes(), fallback);
  for (const auto &inst : g.instances()) {
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId first = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      NodeId end = first + inst.nodesPerCopy;
      if (inst.role == InstanceRole::Switch) {
        // One switch: the first node of the copy that carries the attribute sets it.
        for (NodeId n = first; n < end; ++n)
          if (const Attribute *a = findAttr(g.nodeAttributes(n), SwitchLatencyAttribute)) {
            auto v = readLatency(*a, "switch '" + inst.name + "." + std::to_string(c) + "'",
                                 diags, where);
            ok &= v.has_value();
            if (v)
              std::fill(ps.begin() + first, ps.begin() + end, *v);
            break;
          }
      } else {
        for (NodeId n = first; n < end; ++n)
          if (const Attribute *a = findAttr(g.nodeAttributes(n), SwitchLatencyAttribute)) {
            auto v = readLatency(*a, "node '" + g.name(n) + "'", diags, where);
            ok &= v.has_value();
            if (v)
              ps[n] = *v;
          }
      }
    }
  }
  if (!ok)
    return std::nullopt;
  return ps;
}

std::vector<std::vector<NodeId>> attachPoints(const FabricGraph &g) {
  std::vector<std::vector<NodeId>> out(g.numDeviceCopies());
  for (const auto &e : g.edges()) {
    uint32_t cu = g.deviceCopyOf(e.u), cv = g.deviceCopyOf(e.v);
    if (cu == cv)
      continue;
    out[cu].push_back(e.u);
    out[cv].push_back(e.v);
  }
  for (auto &v : out) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return out;
}

std::vector<NodeId> nicOfEndpoints(const FabricGraph &g, llvm::ArrayRef<NodeId> endpoints,
                                   const std::vector<std::vector<NodeId>> &attach) {
  std::vector<NodeId> nic(endpoints.size(), InvalidNode);
  std::map<std::pair<uint32_t, std::vector<NodeId>>, uint32_t> shareCount;
  std::vector<uint32_t> dist;
  std::deque<NodeId> queue;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    NodeId e = endpoints[i];
    uint32_t copy = g.deviceCopyOf(e);
    const auto &cands = attach[copy];
    if (cands.empty())
      continue;
    const auto &inst = g.instances()[g.instanceOf(e)];
    NodeId first = static_cast<NodeId>(inst.firstNode + g.copyOf(e) * inst.nodesPerCopy);
    dist.assign(inst.nodesPerCopy, ~0u);
    queue.clear();
    dist[e - first] = 0;
    queue.push_back(e);
    uint32_t best = ~0u;
    std::vector<NodeId> nearest;
    while (!queue.empty()) {
      NodeId u = queue.front();
      queue.pop_front();
      uint32_t du = dist[u - first];
      if (du > best)
        break;
      if (std::binary_search(cands.begin(), cands.end(), u)) {
        best = du;
        nearest.push_back(u);
        continue;   // traffic leaves here; do not look through it
      }
      for (const auto &adj : g.neighbours(u)) {
        NodeId v = adj.node;
        if (v < first || v >= first + inst.nodesPerCopy || dist[v - first] != ~0u)
          continue;
        dist[v - first] = du + 1;
        queue.push_back(v);
      }
    }
    if (nearest.empty())
      continue;
    std::sort(nearest.begin(), nearest.end());
    uint32_t &k = shareCount[{copy, nearest}];
    nic[i] = nearest[k % nearest.size()];
    ++k;
  }
  return nic;
}

} // namespace infracc
