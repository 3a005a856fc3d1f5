// -sim-model=flow: LogGOPSim's engine for dependencies, CPU overheads and NIC gaps; every
// message a flow over the fabric, sharing links max-min fairly with the flows in flight
// (backends/sim/FlowSharing.h). docs/sim.md, "flow", is the user's description.
//
// Routing, on the fully qualified graph by hop count:
//  * A message between two hosts runs from the sender's attach point (its NIC: the
//    -nic policy, passes/NicAssignment.h, as -emit=htsim uses) to the receiver's, over
//    nodes outside hosts; when no such path exists (a torus of xpus) any node may be
//    passed. A message inside a host runs between the two endpoints inside the host.
//  * -lb=ecmp: one shortest path per flow. At every node the next hop is chosen among
//    the neighbours one hop nearer the destination, in adjacency order, by
//    xxh3_64bits(seed, source, destination, flow, node) mod their number (five
//    little-endian uint64; flow = the send op's global index; nodes by id).
//  * -lb=spray: each flow split evenly over all its shortest paths; a link carries the
//    share of paths that pass it.
//  * On a dragonfly (dragonflyGlobalLinks) a global link counts as GlobalWeight hops:
//    routes take one global link between directly joined groups (its minimal routing),
//    never two where two would be fewer hops.
// Capacities are per direction (links are full duplex). Links inside a switch device
// without a bandwidth (ASIC to port) do not limit; any other link without one is an
// error unless -default-bandwidth is given. A flow is delivered its path's latency
// (links plus switches, passes/FabricCosts.h) after its last byte left; for a sprayed
// flow, the slowest of its paths.
#include "backends/sim/FlowSharing.h"
#include "backends/sim/SimModel.h"
#include "backends/sim/TopoModel.h"

#include "ir/AttachPoints.h"
#include "ir/MessageMatching.h"
#include "ir/Module.h"
#include "ir/Paths.h"
#include "ir/Schedule.h"
#include "passes/FabricCosts.h"
#include "passes/NicAssignment.h"
#include "support/Diagnostics.h"
#include "support/Options.h"
#include "support/Units.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/Hashing.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>

namespace infracc::sim {
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> OptLb("lb", cl::init("ecmp"), cl::value_desc("ecmp|spray"),
                           cl::desc("-sim-model=flow: load balancing over equal-cost paths: "
                                    "ecmp (one path per flow, by a hash of source, "
                                    "destination, flow and -seed; default) or spray (every "
                                    "flow split evenly over all of them)"),
                           cl::cat(opts::simCategory()));
cl::opt<std::string> OptDefaultBandwidth(
    "default-bandwidth", cl::value_desc("bandwidth"),
    cl::desc("-sim-model=flow: the bandwidth of links that have none, e.g. 100G (default: "
             "such a link on a message's path is an error)"),
    cl::cat(opts::simCategory()));

cl::opt<unsigned> OptPaths("paths", cl::init(0), cl::value_desc("n"),
                           cl::desc("-sim-model=flow -lb=spray: spray each flow over n path "
                                    "entropies, each mapped to one of the equal-cost paths by "
                                    "the ECMP hash, as htsim's -strat ecmp_host -paths n does "
                                    "(default 0: evenly over all equal-cost paths)"),
                           cl::cat(opts::simCategory()));
cl::opt<std::string> OptResolution(
    "flow-resolution", cl::value_desc("duration"),
    cl::desc("-sim-model=flow: recompute the rates at most once per this time, e.g. 1us "
             "(default 0: at every flow start and end, exact). Flows that start in between "
             "wait for the next recomputation; for runs with many flows in flight"),
    cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptMtu("flow-mtu", cl::init(0), cl::value_desc("bytes"),
                         cl::desc("-sim-model=flow: packets of this many bytes, headers "
                                  "included: each packet's header is sent too, and a "
                                  "message's first packet is stored and forwarded at every "
                                  "link (default 0: a pure fluid, no packets)"),
                         cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptAck("flow-ack", cl::init(0), cl::value_desc("bytes"),
                         cl::desc("-sim-model=flow with -flow-mtu: bytes of acknowledgement "
                                  "each packet sends back along its route, sharing the links "
                                  "of the other direction (default 0)"),
                         cl::cat(opts::simCategory()));
cl::opt<uint64_t> OptHeader("flow-header", cl::init(64), cl::value_desc("bytes"),
                            cl::desc("-sim-model=flow: header bytes of each packet with "
                                     "-flow-mtu (default 64, as htsim's EQDS)"),
                            cl::cat(opts::simCategory()));

constexpr uint32_t Far = ~0u;
/// A dragonfly's global link counts as this many hops: routes take as few global links
/// as they can (one between two groups joined directly), then as few hops.
constexpr uint32_t GlobalWeight = 1u << 16;

class FlowNetwork : public LinkCostModel, public MessageNetwork {
public:
  FlowNetwork(const FabricGraph &g, std::vector<double> capacity, bool spray)
      : g_(g), sharing_(std::move(capacity)), spray_(spray) {}

  PairCost cost(uint32_t, uint32_t) const override { return {0, PerByte(0)}; }
  PairCost costOfSend(uint32_t, uint32_t, uint32_t sendOp) const override {
    return {latency_[routeOfOp_[sendOp]], PerByte(0)};
  }
  MessageNetwork *network() override { return this; }

  void inject(uint32_t token, uint32_t sendOp, uint64_t time, uint64_t bytes,
              uint64_t present) override {
    uint32_t route = routeOfOp_[sendOp];
    if (time < present) {
      time = present;
      ++lateStarts_;
    }
    sharing_.start(token, sendOp, route, time, wireBytes(bytes), latency_[route]);
  }
  /// The bytes a message puts on the wire: with packets, each one's header too.
  uint64_t wireBytes(uint64_t bytes) const {
    if (mtu_ == 0 || bytes == 0)
      return bytes;
    const uint64_t payload = mtu_ - header_;
    return bytes + (bytes / payload + (bytes % payload != 0)) * header_;
  }
  uint64_t mtu_ = 0, header_ = 0;
  uint64_t lateStarts_ = 0;   // messages whose CPU clock lagged the present
  double nextTime() override { return sharing_.nextTime(); }
  void advance(llvm::function_ref<void(uint32_t, uint64_t)> deliver) override {
    sharing_.advance(deliver);
  }
  void keepRecords() override { sharing_.keepRecords(); }
  std::string summary(llvm::StringRef fabric) const override {
    return fmt::format("Model: flow, every message a flow on the fabric '{}' sharing links "
                       "max-min fairly ({}); L and G below are not used\n",
                       fabric.str(), spray_ ? "-lb=spray" : "-lb=ecmp");
  }
  void report(nlohmann::json &out, const Schedule &s, uint64_t makespan) const override;
  void printStats(llvm::raw_ostream &os, uint64_t makespan) const override;

  const FabricGraph &g_;
  FlowSharing sharing_;
  bool spray_;
  std::vector<uint32_t> routeOfOp_;   // per global op (sends)
  std::vector<uint64_t> latency_;     // per route, ns
};

void FlowNetwork::report(nlohmann::json &out, const Schedule &s, uint64_t makespan) const {
  nlohmann::json flows = nlohmann::json::array();
  std::vector<FlowSharing::FlowRecord> recs = sharing_.records();
  std::sort(recs.begin(), recs.end(), [](auto &a, auto &b) { return a.id < b.id; });
  for (const FlowSharing::FlowRecord &r : recs) {
    nlohmann::json path = nlohmann::json::array();
    for (const RouteHop &h : sharing_.route(r.route)) {
      if (h.weight == 1.0)
        path.push_back(g_.directedLinkName(h.link));
      else
        path.push_back({{"link", g_.directedLinkName(h.link)}, {"share", h.weight}});
    }
    uint32_t rank = s.rankOf(r.id);
    flows.push_back({{"send_op", r.id - s.rankBegin(rank)},
                     {"rank", rank},
                     {"to_rank", s.peer(r.id)},
                     {"bytes", s.size(r.id)},
                     {"wire_bytes", r.bytes},
                     {"start_ns", r.start},
                     {"drained_ns", r.drained},
                     {"arrival_ns", uint64_t(std::llround(r.drained)) + r.latency},
                     {"latency_ns", r.latency},
                     {"path", std::move(path)}});
  }
  nlohmann::json links = nlohmann::json::array();
  const auto &st = sharing_.linkStats();
  for (uint32_t d = 0; d < st.size(); ++d) {
    if (st[d].peakFlows == 0)
      continue;
    links.push_back({{"link", g_.directedLinkName(d)},
                     {"capacity_bytes_per_ns", sharing_.capacity(d)},
                     {"bytes", st[d].bytes},
                     {"busy_ns", st[d].busy},
                     {"busy_fraction", makespan ? st[d].busy / double(makespan) : 0.0},
                     {"utilisation",
                      makespan ? st[d].bytes / (sharing_.capacity(d) * double(makespan)) : 0.0},
                     {"peak_flows", st[d].peakFlows}});
  }
  out["flow_model"] = {{"lb", spray_ ? "spray" : "ecmp"},
                       {"mtu_bytes", mtu_},
                       {"header_bytes", mtu_ ? header_ : 0},
                       {"flows", sharing_.flowsStarted()},
                       {"peak_flows_in_flight", sharing_.peakFlowsInFlight()},
                       {"rate_recomputations", sharing_.recomputations()},
                       {"late_starts", lateStarts_}};
  out["flows"] = std::move(flows);
  out["links"] = std::move(links);
}

void FlowNetwork::printStats(llvm::raw_ostream &os, uint64_t makespan) const {
  const auto &st = sharing_.linkStats();
  std::vector<uint32_t> used;
  for (uint32_t d = 0; d < st.size(); ++d)
    if (st[d].peakFlows)
      used.push_back(d);
  auto util = [&](uint32_t d) { return st[d].bytes / sharing_.capacity(d); };
  std::stable_sort(used.begin(), used.end(), [&](uint32_t a, uint32_t b) { return util(a) > util(b); });
  if (lateStarts_)
    os << fmt::format("flow model: {} messages were sent from a CPU whose clock lagged the "
                      "simulated present (LogGOPSim does not carry a dependency's time to "
                      "another CPU); they entered the network at the present\n",
                      lateStarts_);
  os << fmt::format("flow model: {} flows, at most {} in flight, {} rate recomputations "
                    "setting {} rates; hottest links (time at full rate over the makespan of "
                    "{} ns):\n",
                    sharing_.flowsStarted(), sharing_.peakFlowsInFlight(),
                    sharing_.recomputations(), sharing_.flowRateUpdates(), makespan);
  for (size_t i = 0; i < used.size() && i < 5; ++i) {
    uint32_t d = used[i];
    os << fmt::format("  {}: {:.1f}% utilised, busy {:.1f}%, {:.0f} bytes, at most {} flows\n",
                      g_.directedLinkName(d),
                      makespan ? 100.0 * util(d) / double(makespan) : 0.0,
                      makespan ? 100.0 * st[d].busy / double(makespan) : 0.0, st[d].bytes,
                      st[d].peakFlows);
  }
  // Setting a rate costs about a microsecond (docs/sim.md, "Flow model performance").
  if (sharing_.resolution() == 0 && sharing_.flowRateUpdates() >= 10'000'000)
    os << fmt::format("flow model: the exact rates took {} recomputations; "
                      "-flow-resolution=1us recomputes at most once per simulated "
                      "microsecond (the makespans of docs/sim.md moved by under 0.05 %)\n",
                      sharing_.recomputations());
}

/// Shortest-path routes by hop count towards one destination at a time.
class Router {
public:
  Router(const FabricGraph &g, std::vector<int64_t> switchPs, uint64_t seed)
      : g_(g), paths_(g, switchPs), switchPs_(std::move(switchPs)), seed_(seed),
        dist_(g.numNodes(), Far), copy_(g.numNodes()), inHost_(g.numNodes(), 0),
        count_(g.numNodes(), 0), countTo_(g.numNodes(), 0), lat_(g.numNodes(), 0),
        widestMark_(g.numNodes(), 0), widest_(g.numNodes(), 0) {
    for (NodeId n = 0; n < g.numNodes(); ++n)
      copy_[n] = g.deviceCopyOf(n);
    for (const auto &inst : g.instances())
      if (inst.role == InstanceRole::Host)
        for (uint64_t i = 0; i < inst.count * inst.nodesPerCopy; ++i)
          inHost_[inst.firstNode + i] = 1;
  }

  enum class Scope { Network, Anywhere, InsideCopy };

  /// Hop distances to `dst`. Network: through nodes outside hosts (host nodes next to
  /// them, the attach points, are reached but not passed); InsideCopy: through the
  /// nodes of dst's device copy; Anywhere: through any node.
  ///
  /// In the network most destinations hang off a switch by a chain (NIC - port -
  /// ASIC): distances to them are the distances to the chain's far end, the anchor,
  /// plus the chain's length. One search per anchor serves every destination on it
  /// when they come one after the other (sort by anchorOf()).
  void distancesTo(NodeId dst, Scope scope) {
    scope_ = scope;
    dst_ = dst;
    ++widestEpoch_;
    if (scope == Scope::Network) {
      chainOf(dst, nextChain_);
      NodeId anchor = nextChain_.back();
      if (anchor == searched_ && nextChain_.size() == chain_.size()) {
        // Give the previous chain its distances through the anchor, then this one.
        const uint32_t k = uint32_t(chain_.size()) - 1, base = dist_[anchor];
        for (uint32_t i = 0; i < k; ++i)
          dist_[chain_[i]] = base + (k - i);
        for (uint32_t i = 0; i < nextChain_.size(); ++i)
          dist_[nextChain_[i]] = i;
        std::swap(chain_, nextChain_);
        return;
      }
      search(dst, scope, nextChain_);
      std::swap(chain_, nextChain_);
      searched_ = anchor;
      return;
    }
    searched_ = InvalidNode;
    nextChain_.assign(1, dst);
    search(dst, scope, nextChain_);
  }

  /// See distancesTo(); the destination itself when it has no chain.
  NodeId anchorOf(NodeId dst) {
    chainOf(dst, nextChain_);
    return nextChain_.back();
  }
  /// dst, then while the chain is a single way on (dst: one neighbour outside its own
  /// box; then a switch-side node with one neighbour besides the one before it), the
  /// next node; the last node is the anchor.
  void chainOf(NodeId dst, std::vector<NodeId> &chain) const {
    chain.assign(1, dst);
    NodeId prev = InvalidNode, cur = dst;
    for (;;) {
      NodeId only = InvalidNode;
      unsigned count = 0;
      for (const FabricGraph::Adjacent &a : g_.neighbours(cur)) {
        if (a.node == prev || (cur == dst && copy_[a.node] == copy_[dst]))
          continue;
        ++count;
        only = a.node;
      }
      if (count != 1 || inHost_[only] || (cur != dst && inHost_[cur]) || only == dst)
        return;
      // `only` continues the chain only if it is not itself a fork.
      chain.push_back(only);
      prev = cur;
      cur = only;
      unsigned onward = 0;
      for (const FabricGraph::Adjacent &a : g_.neighbours(cur))
        onward += a.node != prev;
      if (onward != 1)
        return;
    }
  }

  bool reaches(NodeId src) const { return dist_[src] != Far; }

  /// Breadth-first from the far end of `chain` (dst first), the chain's nodes set.
  void search(NodeId dst, Scope scope, const std::vector<NodeId> &chain) {
    for (NodeId n : reached_)
      dist_[n] = Far;
    reached_.clear();
    for (uint32_t i = 0; i < chain.size(); ++i) {
      dist_[chain[i]] = i;
      reached_.push_back(chain[i]);
    }
    const uint32_t copy = copy_[dst];
    auto passes = [&](NodeId u) { return !(scope == Scope::Network && u != dst && inHost_[u]); };
    auto enters = [&](NodeId v) { return scope != Scope::InsideCopy || copy_[v] == copy; };
    if (global_.empty()) {   // by hop count: breadth first
      for (size_t i = chain.size() - 1; i < reached_.size(); ++i) {
        NodeId u = reached_[i];
        if (!passes(u))
          continue;
        const uint32_t next = dist_[u] + 1;
        for (const FabricGraph::Adjacent &a : g_.neighbours(u))
          if (dist_[a.node] == Far && enters(a.node)) {
            dist_[a.node] = next;
            reached_.push_back(a.node);
          }
      }
      return;
    }
    // Dragonfly: a global link weighs more than any number of others (Dijkstra).
    using Item = std::pair<uint32_t, NodeId>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
    q.push({dist_[chain.back()], chain.back()});
    while (!q.empty()) {
      auto [d, u] = q.top();
      q.pop();
      if (d != dist_[u] || !passes(u))
        continue;
      for (const FabricGraph::Adjacent &a : g_.neighbours(u)) {
        if (!enters(a.node))
          continue;
        const uint32_t nd = d + weight(a.edge);
        if (nd < dist_[a.node]) {
          if (dist_[a.node] == Far)
            reached_.push_back(a.node);
          dist_[a.node] = nd;
          q.push({nd, a.node});
        }
      }
    }
  }

  void setGlobalLinks(std::vector<uint8_t> global) { global_ = std::move(global); }

  /// A link's length for routes: 1, or GlobalWeight for a dragonfly's global links.
  uint32_t weight(EdgeId e) const { return global_.empty() || !global_[e] ? 1 : GlobalWeight; }

  int64_t hopPs(NodeId from, const FabricGraph::Adjacent &a) const {
    int64_t ps = 0;
    if (auto l = g_.link(g_.edge(a.edge).link).latency)
      ps += static_cast<int64_t>(std::llround(l->inPicoseconds()));
    if (paths_.chargesSwitch(from, a.node))
      ps += switchPs_[a.node];
    return ps;
  }
  bool nearer(NodeId u, const FabricGraph::Adjacent &a) const {
    return dist_[u] != Far && dist_[u] != 0 && dist_[a.node] != Far &&
           dist_[a.node] + weight(a.edge) == dist_[u] &&
           (scope_ != Scope::Network || !inHost_[a.node] || a.node == dst_);
  }
  /// Whether a route goes on from u over a: one hop nearer the destination and, inside
  /// a host, over one of the widest such links (NVLink before PCIe).
  bool onward(NodeId u, const FabricGraph::Adjacent &a) {
    if (!nearer(u, a))
      return false;
    if (scope_ != Scope::InsideCopy)
      return true;
    if (widestMark_[u] != widestEpoch_) {
      widestMark_[u] = widestEpoch_;
      double w = 0;
      for (const FabricGraph::Adjacent &b : g_.neighbours(u))
        if (nearer(u, b))
          w = std::max(w, bpsOf(b.edge));
      widest_[u] = w;
    }
    return bpsOf(a.edge) == widest_[u];
  }
  double bpsOf(EdgeId e) const {
    const auto &bw = g_.link(g_.edge(e).link).bandwidth;
    return bw ? bw->bitsPerSecond : 0;
  }

  /// ECMP: the hops of flow `flow`'s path from src to the destination of the last
  /// distancesTo(), and its latency in ps.
  int64_t ecmpPath(NodeId src, NodeId dst, uint64_t flow,
                   std::vector<std::pair<EdgeId, NodeId>> &hops, int64_t entropy = -1) {
    hops.clear();
    int64_t ps = 0;
    NodeId u = src;
    llvm::SmallVector<const FabricGraph::Adjacent *, 16> next;
    while (u != dst) {
      next.clear();
      for (const FabricGraph::Adjacent &a : g_.neighbours(u))
        if (onward(u, a))
          next.push_back(&a);
      const FabricGraph::Adjacent *pick = next.front();
      if (next.size() > 1) {
        uint8_t key[48];
        uint64_t words[6] = {seed_, src, dst, flow, u, uint64_t(entropy)};
        const int n = entropy < 0 ? 5 : 6;
        for (int i = 0; i < n; ++i)
          llvm::support::endian::write64le(key + 8 * i, words[i]);
        pick = next[llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(key, 8 * n)) % next.size()];
      }
      hops.push_back({pick->edge, u});
      ps += hopPs(u, *pick);
      u = pick->node;
    }
    return ps;
  }

  /// Spray: every edge of the shortest paths from src with the share of the paths that
  /// pass it; the latency of the slowest path in ps.
  int64_t sprayShares(NodeId src, std::vector<std::tuple<EdgeId, NodeId, double>> &shares) {
    shares.clear();
    // The nodes of the path DAG from src, farthest from the destination first (every
    // edge goes from a larger distance to a smaller: a topological order).
    order_.clear();
    order_.push_back(src);
    std::vector<uint8_t> &seen = seen_;
    seen.resize(g_.numNodes(), 0);
    seen[src] = 1;
    for (size_t i = 0; i < order_.size(); ++i) {
      NodeId u = order_[i];
      count_[u] = 0;
      lat_[u] = 0;
      for (const FabricGraph::Adjacent &a : g_.neighbours(u))
        if (onward(u, a) && !seen[a.node]) {
          seen[a.node] = 1;
          order_.push_back(a.node);
        }
    }
    std::stable_sort(order_.begin(), order_.end(),
                     [&](NodeId x, NodeId y) { return dist_[x] > dist_[y]; });
    count_[src] = 1;
    for (NodeId u : order_)
      for (const FabricGraph::Adjacent &a : g_.neighbours(u))
        if (onward(u, a)) {
          count_[a.node] += count_[u];
          lat_[a.node] = std::max(lat_[a.node], lat_[u] + hopPs(u, a));
        }
    // Paths from each node on to the destination, backwards.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      NodeId u = *it;
      double c = dist_[u] == 0 ? 1 : 0;
      for (const FabricGraph::Adjacent &a : g_.neighbours(u))
        if (onward(u, a))
          c += countTo_[a.node];
      countTo_[u] = c;
    }
    const double total = countTo_[src];
    int64_t slowest = 0;
    for (NodeId u : order_) {
      if (dist_[u] == 0)
        slowest = lat_[u];
      for (const FabricGraph::Adjacent &a : g_.neighbours(u))
        if (onward(u, a))
          shares.push_back({a.edge, u, count_[u] * countTo_[a.node] / total});
    }
    for (NodeId u : order_)
      seen[u] = 0;
    return slowest;
  }

private:
  const FabricGraph &g_;
  PathFinder paths_;
  std::vector<int64_t> switchPs_;
  uint64_t seed_;
  std::vector<uint32_t> dist_, copy_;
  std::vector<uint8_t> inHost_, seen_;
  std::vector<double> count_, countTo_;
  std::vector<int64_t> lat_;
  std::vector<NodeId> reached_, order_;
  Scope scope_ = Scope::Network;
  NodeId dst_ = InvalidNode;
  NodeId searched_ = InvalidNode;            // the anchor dist_ was searched from
  std::vector<NodeId> chain_, nextChain_;    // the current destination's chain
  std::vector<uint8_t> global_;              // per edge: a dragonfly's global link
  std::vector<uint32_t> widestMark_;
  std::vector<double> widest_;
  uint32_t widestEpoch_ = 0;
};

/// Per edge, whether it is a dragonfly's global link; empty when the fabric is no
/// dragonfly. A dragonfly: its switches are joined by links of two names, and those of
/// one name join them into equal full meshes (groups, of two or more switches, two or
/// more of them); the links of the other name are the global ones.
/// Per device copy: whether it is a copy of a switch instance.
std::vector<uint8_t> switchCopies(const FabricGraph &g) {
  std::vector<uint8_t> isSwitch(g.numDeviceCopies(), 0);
  for (const auto &inst : g.instances())
    if (inst.role == InstanceRole::Switch)
      for (uint64_t c = 0; c < inst.count && inst.nodesPerCopy; ++c)
        isSwitch[g.deviceCopyOf(NodeId(inst.firstNode + c * inst.nodesPerCopy))] = 1;
  return isSwitch;
}

std::vector<uint8_t> dragonflyGlobalLinks(const FabricGraph &g) {
  const std::vector<uint8_t> switchCopy = switchCopies(g);
  std::map<std::string, std::vector<EdgeId>> byName;
  for (EdgeId e = 0; e < g.numEdges(); ++e) {
    uint32_t a = g.deviceCopyOf(g.edge(e).u), b = g.deviceCopyOf(g.edge(e).v);
    if (a != b && switchCopy[a] > 0 && switchCopy[b] > 0)
      byName[g.link(g.edge(e).link).name].push_back(e);
  }
  if (byName.size() != 2)
    return {};
  for (auto &[name, edges] : byName) {
    // Groups: the components of this name's links over the switch copies they join.
    std::map<uint32_t, uint32_t> parent;
    std::function<uint32_t(uint32_t)> find = [&](uint32_t x) {
      auto it = parent.try_emplace(x, x).first;
      return it->second == x ? x : it->second = find(it->second);
    };
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (EdgeId e : edges) {
      uint32_t a = g.deviceCopyOf(g.edge(e).u), b = g.deviceCopyOf(g.edge(e).v);
      parent[find(a)] = find(b);
      pairs.insert({std::min(a, b), std::max(a, b)});
    }
    std::map<uint32_t, std::vector<uint32_t>> groups;
    for (auto &[c, p] : parent)
      groups[find(c)].push_back(c);
    bool cliques = groups.size() >= 2;
    const size_t size = groups.begin()->second.size();
    for (auto &[root, m] : groups) {
      cliques = cliques && m.size() == size && size >= 2;
      for (size_t i = 0; i < m.size() && cliques; ++i)
        for (size_t j = i + 1; j < m.size() && cliques; ++j)
          cliques = pairs.count({m[i], m[j]}) != 0;
    }
    uint32_t switches = 0;
    for (uint8_t c : switchCopy)
      switches += c;
    if (!cliques || groups.size() * size != switches)
      continue;
    std::vector<uint8_t> global(g.numEdges(), 0);
    for (auto &[other, list] : byName)
      if (other != name)
        for (EdgeId e : list)
          global[e] = 1;
    return global;
  }
  return {};
}

/// Where each message's flow runs: (source node, destination node, scope) per send op.
struct FlowEnds {
  NodeId src, dst;
  Router::Scope scope;
  NodeId from = InvalidNode, to = InvalidNode;   // Network: the endpoints behind src, dst
};

/// A stretch inside a host, from an endpoint to its NIC or back: its directed links
/// with their shares and its latency.
struct Leg {
  std::vector<RouteHop> hops;
  int64_t ps = 0;
};

llvm::Expected<std::unique_ptr<LinkCostModel>> makeFlowNetwork(const Module &m,
                                                               const LogGPParams &) {
  if (llvm::Error e = checkTopoInputs(m, "flow"))
    return e;
  if (OptLb != "ecmp" && OptLb != "spray")
    return usageError("-lb=" + OptLb + ": the load balancing is ecmp or spray");
  if (OptPaths.getNumOccurrences() && OptLb != "spray")
    return usageError("-paths sprays over path entropies: it needs -lb=spray");
  if (OptHeader.getNumOccurrences() && !OptMtu.getNumOccurrences())
    return usageError("-flow-header is the header of the packets -flow-mtu sets: give "
                      "-flow-mtu too");
  if (OptAck.getNumOccurrences() && !OptMtu.getNumOccurrences())
    return usageError("-flow-ack is what each packet of -flow-mtu sends back: give "
                      "-flow-mtu too");
  if (OptAck >= OptMtu && OptMtu)
    return usageError(fmt::format("-flow-ack={} must be smaller than the packet (-flow-mtu={})",
                                  uint64_t(OptAck), uint64_t(OptMtu)));
  std::optional<double> defaultBytesPerNs;
  if (OptDefaultBandwidth.getNumOccurrences()) {
    auto bw = parseBandwidth(OptDefaultBandwidth);
    if (!bw || !(bw->bitsPerSecond > 0))
      return usageError(fmt::format("-default-bandwidth={}: {}", OptDefaultBandwidth.getValue(),
                                    bw ? "must be positive" : std::string(BandwidthSpellings)));
    defaultBytesPerNs = bw->bitsPerSecond / 8e9;
  }
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  const FabricGraph &g = *m.fabric;
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  auto lat = switchLatencies(g, m.diags, m.fabricSource);
  if (!lat)
    return reportedError();

  // Each message's ends.
  AttachPoints ap(g);
  std::vector<NodeId> nicOfRank;
  if (!pl.hasMembers()) {
    auto nics = assignNics(ap, pl.endpointOfRank, m.nicRequest ? &*m.nicRequest : nullptr,
                           m.diags, m.workloadSource);
    if (!nics)
      return reportedError();
    nicOfRank = std::move(*nics);
  }
  std::vector<uint32_t> partner = pl.hasMembers() ? matchMessages(s) : std::vector<uint32_t>{};
  auto nicOf = [&](uint32_t rank, NodeId endpoint, uint32_t cpu) {
    if (!pl.hasMembers())
      return nicOfRank[rank];
    const Placement::Member *mem = pl.memberOfCpu(rank, cpu);
    if (mem && mem->nic != InvalidNode)
      return mem->nic;
    return ap.nearest(endpoint);
  };
  std::vector<uint32_t> sends;
  std::vector<FlowEnds> ends;
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    for (uint32_t op = s.rankBegin(r); op < s.rankBegin(r) + s.numOps(r); ++op) {
      if (s.kind(op) != OpKind::Send)
        continue;
      uint32_t recvOp = partner.empty() ? NoPartner : partner[op];
      auto [a, b] = messageEndpoints(pl, s, r, op, recvOp);
      FlowEnds fe{a, b, Router::Scope::InsideCopy};
      if (g.deviceCopyOf(a) != g.deviceCopyOf(b)) {
        NodeId na = nicOf(r, a, s.cpu(op));
        NodeId nb = nicOf(s.peer(op), b, recvOp != NoPartner ? s.cpu(recvOp) : 0);
        fe = {na != InvalidNode ? na : a, nb != InvalidNode ? nb : b, Router::Scope::Network,
              a, b};
      }
      sends.push_back(op);
      ends.push_back(fe);
    }

  // Capacities per directed link.
  std::vector<double> capacity(2 * size_t(g.numEdges()), FlowSharing::Never);
  std::vector<uint8_t> bare(g.numEdges(), 0);   // no bandwidth and not inside a switch
  {
    const std::vector<uint8_t> switchCopy = switchCopies(g);
    for (EdgeId e = 0; e < g.numEdges(); ++e) {
      const FabricGraph::EdgeRec &er = g.edge(e);
      const auto &bw = g.link(er.link).bandwidth;
      double c = FlowSharing::Never;
      if (bw && bw->bitsPerSecond > 0)
        c = bw->bitsPerSecond / 8e9;
      else if (!(g.deviceCopyOf(er.u) == g.deviceCopyOf(er.v) &&
                 switchCopy[g.deviceCopyOf(er.u)])) {
        bare[e] = 1;
        if (defaultBytesPerNs)
          c = *defaultBytesPerNs;
      }
      capacity[2 * e] = capacity[2 * e + 1] = c;
    }
  }

  if (OptMtu.getNumOccurrences() && OptMtu <= OptHeader)
    return usageError(fmt::format("-flow-mtu={} must be larger than the header (-flow-header={})",
                                  uint64_t(OptMtu), uint64_t(OptHeader)));
  double resolutionNs = 0;
  if (OptResolution.getNumOccurrences()) {
    auto d = parseDuration(OptResolution);
    if (!d || !(d->ns >= 0) || !std::isfinite(d->ns))
      return usageError(fmt::format("-flow-resolution={}: {}", OptResolution.getValue(),
                                    d ? "must not be negative"
                                      : std::string(DurationSpellings)));
    resolutionNs = d->ns;
  }
  auto net = std::make_unique<FlowNetwork>(g, capacity, OptLb == "spray");
  net->sharing_.setResolution(resolutionNs);
  net->mtu_ = OptMtu;
  net->header_ = OptHeader;
  net->routeOfOp_.assign(s.numOps(), 0);
  Router router(g, std::move(*lat), opts::seed());
  router.setGlobalLinks(dragonflyGlobalLinks(g));

  // By destination and scope: one search each.
  std::vector<uint32_t> order(sends.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // Destinations on one anchor together (one search for all of them).
  llvm::DenseMap<NodeId, NodeId> anchorOf;
  for (const FlowEnds &fe : ends)
    if (fe.scope == Router::Scope::Network && !anchorOf.count(fe.dst))
      anchorOf[fe.dst] = router.anchorOf(fe.dst);
  auto anchor = [&](const FlowEnds &fe) {
    return fe.scope == Router::Scope::Network ? anchorOf[fe.dst] : fe.dst;
  };
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const FlowEnds &a = ends[x], &b = ends[y];
    return std::make_tuple(a.scope, anchor(a), a.dst, a.src, x) <
           std::make_tuple(b.scope, anchor(b), b.dst, b.src, y);
  });
  std::map<std::vector<RouteHop>, uint32_t, bool (*)(const std::vector<RouteHop> &,
                                                     const std::vector<RouteHop> &)>
      routeIds([](const std::vector<RouteHop> &a, const std::vector<RouteHop> &b) {
        return std::lexicographical_compare(
            a.begin(), a.end(), b.begin(), b.end(), [](const RouteHop &x, const RouteHop &y) {
              return x.link != y.link ? x.link < y.link : x.weight < y.weight;
            });
      });
  std::vector<RouteHop> hops;
  std::vector<std::pair<EdgeId, NodeId>> path;
  std::vector<std::tuple<EdgeId, NodeId, double>> shares;
  auto internRoute = [&](int64_t ps) {
    // With packets, the first one is stored and forwarded at each link (a sprayed flow:
    // the mean over its paths), and each one's acknowledgement comes back the same way.
    if (OptMtu) {
      const size_t forward = hops.size();
      for (size_t i = 0; i < forward; ++i) {
        const RouteHop h = hops[i];
        ps += static_cast<int64_t>(std::llround(h.weight * double(OptMtu) / capacity[h.link] * 1e3));
        if (OptAck)
          hops.push_back({h.link ^ 1u, h.weight * double(OptAck) / double(OptMtu)});
      }
    }
    std::sort(hops.begin(), hops.end(), [](auto &a, auto &b) { return a.link < b.link; });
    uint64_t ns = static_cast<uint64_t>((ps + 500) / 1000);
    // Routes of equal hops and latency are one route.
    hops.push_back({~0u, double(ns) + 1});   // the latency as a sentinel hop in the key
    auto [it, fresh] = routeIds.try_emplace(hops, 0);
    hops.pop_back();
    if (fresh) {
      it->second = net->sharing_.addRoute(hops);
      net->latency_.push_back(ns);
    }
    return it->second;
  };
  auto addHop = [&](EdgeId e, NodeId from, double w, uint32_t msg) -> llvm::Error {
    uint32_t d = g.directedLink(e, from);
    if (bare[e] && !defaultBytesPerNs) {
      const FlowEnds &fe = ends[msg];
      return inputError(fmt::format(
          "-sim-model=flow: {} between '{}' and '{}' has no bandwidth, and the message of "
          "rank {} to rank {} passes it (from '{}' to '{}'); give the link a bandwidth, or "
          "-default-bandwidth=<bandwidth> for every link without one",
          describeLink(g, g.edge(e).link), g.name(g.edge(e).u), g.name(g.edge(e).v),
          s.rankOf(sends[msg]), s.peer(sends[msg]), g.name(fe.src), g.name(fe.dst)));
    }
    if (capacity[d] != FlowSharing::Never)
      hops.push_back({d, w});
    return llvm::Error::success();
  };
  const bool spray = OptLb == "spray";
  // The stretches inside hosts, endpoint to NIC and NIC to endpoint: their latency
  // counts, and their links share where they have a bandwidth (hosts often give their
  // internal links a latency only; those do not limit).
  std::map<std::pair<NodeId, NodeId>, Leg> legs;
  for (const FlowEnds &fe : ends)
    if (fe.scope == Router::Scope::Network) {
      legs.try_emplace({fe.from, fe.src});
      legs.try_emplace({fe.dst, fe.to});
    }
  for (auto &[key, leg] : legs) {
    auto [a, b] = key;
    if (a == b)
      continue;
    router.distancesTo(b, Router::Scope::InsideCopy);
    if (!router.reaches(a))
      continue;   // an endpoint with no way to its NIC inside the host: nothing to add
    auto take = [&](EdgeId e, NodeId from, double w) {
      uint32_t d = g.directedLink(e, from);
      if (capacity[d] != FlowSharing::Never && !bare[e])
        leg.hops.push_back({d, w});
    };
    if (spray) {
      leg.ps = router.sprayShares(a, shares);
      for (auto [e, from, w] : shares)
        take(e, from, w);
    } else {
      leg.ps = router.ecmpPath(a, b, 0, path);
      for (auto [e, from] : path)
        take(e, from, 1.0);
    }
  }
  auto addLegs = [&](const FlowEnds &fe) {
    int64_t ps = 0;
    if (fe.scope != Router::Scope::Network)
      return ps;
    for (const Leg *leg : {&legs[{fe.from, fe.src}], &legs[{fe.dst, fe.to}]}) {
      llvm::append_range(hops, leg->hops);
      ps += leg->ps;
    }
    return ps;
  };
  std::map<NodeId, Leg> sprayNet;   // per source node, for the current destination
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t msg = order[i];
    const FlowEnds &fe = ends[msg];
    if (i == 0 || fe.dst != ends[order[i - 1]].dst || fe.scope != ends[order[i - 1]].scope) {
      sprayNet.clear();
      router.distancesTo(fe.dst, fe.scope);
    }
    Router::Scope scope = fe.scope;
    if (!router.reaches(fe.src)) {
      // No way around other hosts (a torus or mesh of xpus), or inside the host: any way.
      router.distancesTo(fe.dst, Router::Scope::Anywhere);
      sprayNet.clear();
      scope = Router::Scope::Anywhere;
    }
    if (!router.reaches(fe.src))
      return inputError(fmt::format("-sim-model=flow: no path in the fabric '{}' from '{}' to "
                                    "'{}', which exchange messages",
                                    m.fabricSource, g.name(fe.src), g.name(fe.dst)));
    uint32_t route;
    if (spray && OptPaths) {
      // Entropy e of the flow takes the ECMP path of (flow, e); a link carries the share
      // of the entropies that pass it.
      std::map<std::pair<EdgeId, NodeId>, unsigned> uses;
      int64_t ps = 0;
      for (unsigned e = 0; e < OptPaths; ++e) {
        ps = std::max(ps, router.ecmpPath(fe.src, fe.dst, sends[msg], path, e));
        for (auto hop : path)
          ++uses[hop];
      }
      hops.clear();
      for (auto [hop, n] : uses)
        if (llvm::Error err = addHop(hop.first, hop.second, double(n) / OptPaths, msg))
          return err;
      route = internRoute(ps + addLegs(fe));
    } else if (spray) {
      auto [it, fresh] = sprayNet.try_emplace(fe.src);
      Leg &net = it->second;   // the part between the two attach points
      if (fresh) {
        hops.clear();
        net.ps = router.sprayShares(fe.src, shares);
        for (auto [e, from, w] : shares)
          if (llvm::Error err = addHop(e, from, w, msg))
            return err;
        net.hops = hops;
      }
      hops = net.hops;
      route = internRoute(net.ps + addLegs(fe));
    } else {
      hops.clear();
      int64_t ps = router.ecmpPath(fe.src, fe.dst, sends[msg], path);
      for (auto [e, from] : path)
        if (llvm::Error err = addHop(e, from, 1.0, msg))
          return err;
      ps += addLegs(fe);
      route = internRoute(ps);
    }
    net->routeOfOp_[sends[msg]] = route;
    if (scope != fe.scope) {   // the next message to this destination searches again
      router.distancesTo(fe.dst, fe.scope);
      sprayNet.clear();
    }
  }
  return std::unique_ptr<LinkCostModel>(std::move(net));
}

} // namespace

namespace {

RegisterSimModel FlowModel({
    .name = "flow",
    .description = "LogGOPSim's engine with every message a flow on the fabric, links shared "
                   "max-min fairly among the flows in flight (-lb=ecmp|spray; needs a fabric "
                   "and a placement)",
    .engine = Engine::Lgs,
    .costs = makeFlowNetwork,
    .pipeline = {"place"},
    .runKernels = nullptr,
    .options = {&OptLb, &OptPaths, &OptDefaultBandwidth, &OptResolution, &OptMtu, &OptHeader,
                &OptAck},
});

} // namespace
} // namespace infracc::sim
