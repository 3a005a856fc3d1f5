#include "backends/htsim/FatTree.h"

#include "ir/FabricStructure.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace infracc::htsim {

std::string otherModelsHint() { return "-emit=sim -sim-model=topo"; }

namespace {

using u128 = unsigned __int128;
constexpr uint64_t IntMax = 2147483647;   // htsim keeps these counts in `int`

std::string plural(uint64_t n, const char *one, const char *many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

// ---------------------------------------------------------------------------------------
// htsim's own arithmetic (csg-htsim FatTreeTopology::load and set_custom_params)

std::optional<HtsimShape> deriveHtsimShape(const TopoParams &p, std::string &why) {
  auto fail = [&](std::string msg) -> std::optional<HtsimShape> {
    why = std::move(msg);
    return std::nullopt;
  };
  if (p.nodes == 0)
    return fail("Nodes is missing or 0");
  if (p.tiers != 2 && p.tiers != 3)
    return fail(fmt::format("Tiers is {}; htsim builds 2 or 3 tiers", p.tiers));
  if (p.podsize == 0)
    return fail("Podsize is missing or 0");
  const uint64_t T = p.tiers;
  for (uint64_t t = 0; t < T; ++t) {
    const TopoTier &x = p.tier[t];
    if (x.speedGbps == 0)
      return fail(fmt::format("tier {}: Downlink_speed_Gbps is missing or 0", t));
    if (x.latencyNs == 0)
      return fail(fmt::format("tier {}: Downlink_Latency_ns is missing or 0", t));
    if (x.radixDown == 0)
      return fail(fmt::format("tier {}: Radix_Down is missing or 0", t));
    if (t + 1 < T && x.radixUp == 0)
      return fail(fmt::format("tier {}: Radix_Up is missing or 0", t));
    if (t + 1 == T && x.radixUp != 0)
      return fail(fmt::format("tier {}: Radix_Up is given on the top tier", t));
    if (x.bundle == 0 || x.oversubscribed == 0)
      return fail(fmt::format("tier {}: Bundle and Oversubscribed must be at least 1", t));
    if (x.radixDown % x.bundle)
      return fail(fmt::format("tier {}: Radix_Down {} is not a multiple of Bundle {}", t,
                              x.radixDown, x.bundle));
    if (t + 1 < T && x.radixUp % p.tier[t + 1].bundle)
      return fail(fmt::format("tier {}: Radix_Up {} is not a multiple of tier {}'s Bundle {}", t,
                              x.radixUp, t + 1, p.tier[t + 1].bundle));
  }
  const TopoTier &t0 = p.tier[0], &t1 = p.tier[1], &t2 = p.tier[2];
  HtsimShape s;
  if (p.nodes % p.podsize)
    return fail(fmt::format("Nodes {} is not a multiple of Podsize {}", p.nodes, p.podsize));
  s.pods = p.nodes / p.podsize;
  if (t0.bundle != 1)
    return fail(fmt::format("tier 0: Bundle is {}; htsim nodes have one link", t0.bundle));
  if (p.podsize % t0.radixDown)
    return fail(fmt::format("Podsize {} is not a multiple of tier 0's Radix_Down {}", p.podsize,
                            t0.radixDown));
  s.torsPerPod = p.podsize / t0.radixDown;

  // no_of_tor_uplinks = Nodes * s0 / (s1 * Oversubscribed0), asserted to divide.
  u128 num = u128(p.nodes) * t0.speedGbps, den = u128(t1.speedGbps) * t0.oversubscribed;
  if (num * 1000000000u >> 64)
    return fail("Nodes x tier 0's speed overflows htsim's 64-bit bits-per-second arithmetic");
  if (num % den)
    return fail(fmt::format("ToR uplinks = Nodes x s0 / (s1 x Oversubscribed0) = {} x {} / ({} x "
                            "{}) is not a whole number",
                            p.nodes, t0.speedGbps, t1.speedGbps, t0.oversubscribed));
  if (num / den > IntMax)
    return fail("the number of ToR uplinks exceeds htsim's 32-bit count");
  s.torUplinks = uint64_t(num / den);
  if (t0.radixDown / t0.radixUp != t0.oversubscribed)
    return fail(fmt::format("tier 0: Radix_Down / Radix_Up = {} / {} = {} (integer division) "
                            "differs from Oversubscribed {}",
                            t0.radixDown, t0.radixUp, t0.radixDown / t0.radixUp,
                            t0.oversubscribed));
  if (s.torUplinks % (s.pods * t1.radixDown))
    return fail(fmt::format("ToR uplinks {} are not a multiple of pods x tier 1's Radix_Down = "
                            "{} x {}",
                            s.torUplinks, s.pods, t1.radixDown));
  s.aggsPerPod = s.torUplinks / (s.pods * t1.radixDown);
  if (s.aggsPerPod * t1.bundle != t0.radixUp)
    return fail(fmt::format("{} ToR uplinks in {} give {} tier-1 switches per pod, which with "
                            "tier 1's Bundle {} need a tier-0 Radix_Up of {}, not {}",
                            s.torUplinks, plural(s.pods, "pod", "pods"), s.aggsPerPod, t1.bundle,
                            s.aggsPerPod * t1.bundle, t0.radixUp));
  if (T == 3) {
    u128 n2 = u128(s.torUplinks) * t1.speedGbps, d2 = u128(t2.speedGbps) * t1.oversubscribed;
    if (n2 % d2)
      return fail(fmt::format("tier-1 uplinks = ToR uplinks x s1 / (s2 x Oversubscribed1) = {} x "
                              "{} / ({} x {}) is not a whole number",
                              s.torUplinks, t1.speedGbps, t2.speedGbps, t1.oversubscribed));
    if (n2 / d2 > IntMax)
      return fail("the number of tier-1 uplinks exceeds htsim's 32-bit count");
    s.aggUplinks = uint64_t(n2 / d2);
    if (s.aggUplinks % t2.radixDown)
      return fail(fmt::format("tier-1 uplinks {} are not a multiple of tier 2's Radix_Down {}",
                              s.aggUplinks, t2.radixDown));
    s.cores = s.aggUplinks / t2.radixDown;
    if (s.aggsPerPod == 0 || s.cores % s.aggsPerPod)
      return fail(fmt::format("{} core switches are not a multiple of the {} tier-1 switches per "
                              "pod",
                              s.cores, s.aggsPerPod));
    if (s.cores * t2.bundle / s.aggsPerPod != t1.radixUp)
      return fail(fmt::format("{} core switches with tier 2's Bundle {} need a tier-1 Radix_Up of "
                              "{}, not {}",
                              s.cores, t2.bundle, s.cores * t2.bundle / s.aggsPerPod,
                              t1.radixUp));
  }
  // Ports as init_network adds them; addPort's index is asserted below 96 / 64.
  uint64_t torPorts = t0.radixDown + (T == 3 ? s.aggsPerPod : s.aggs()) * t1.bundle;
  if (torPorts > 96)
    return fail(fmt::format("a ToR gets {} ports ({} attach points and {} uplinks); htsim allows at most "
                            "96",
                            torPorts, t0.radixDown, torPorts - t0.radixDown));
  uint64_t aggDown = (T == 3 ? s.torsPerPod : s.tors()) * t1.bundle;
  uint64_t aggPorts = aggDown + (T == 3 ? t1.radixUp : 0);
  if (aggPorts > 64)
    return fail(fmt::format("a tier-1 switch gets {} ports ({} down{}); htsim allows at most 64",
                            aggPorts, aggDown,
                            T == 3 ? fmt::format(", {} up", t1.radixUp) : std::string()));
  if (T == 3 && s.pods * t2.bundle > 64)
    return fail(fmt::format("a core switch gets {} ports ({} pods x Bundle {}); htsim allows at "
                            "most 64",
                            s.pods * t2.bundle, s.pods, t2.bundle));
  return s;
}

// ---------------------------------------------------------------------------------------
// Recognition

namespace {

struct EdgeRef {
  uint32_t a, b;   // device copies, a on the lower tier
  EdgeId edge;
};

class Recogniser {
public:
  Recogniser(const FabricGraph &g, DiagEngine &diags, llvm::StringRef where,
             const FatTreeOptions &opts)
      : g_(g), diags_(diags), where_(where), opts_(opts) {}

  std::optional<FatTree> run();

private:
  bool fail(const std::string &msg) {
    diags_.error(where_, "htsim cannot express this fabric: " + msg);
    return false;
  }
  /// A shape htsim's fat tree has no room for: the way out is another model.
  bool failShape(const std::string &msg) {
    return fail(msg + "; simulate such a fabric with " + otherModelsHint());
  }
  const std::string &name(uint32_t copy) const { return ft_.copyNames[copy]; }
  std::string edgeText(EdgeId e) const {
    const auto &r = g_.edge(e);
    return fmt::format("'{} -- {}' (link '{}')", g_.name(r.u), g_.name(r.v),
                       g_.link(r.link).name);
  }
  /// The end of fabric edge e that lies in device copy `copy`.
  NodeId endIn(uint32_t copy, EdgeId e) const {
    return copyOfNode_[g_.edge(e).u] == copy ? g_.edge(e).u : g_.edge(e).v;
  }
  bool classifyEdges();
  bool checkAttachPoints();
  bool checkLinkClass(unsigned t);
  bool checkSwitchLatency(unsigned t);
  bool checkUniform(unsigned tier, const std::vector<uint32_t> &copies,
                    const std::vector<uint64_t> &value, const char *what, const char *key);
  bool bundles(unsigned t, uint64_t &bundle);
  bool twoTiers();
  bool threeTiers();
  /// The ToR's first attach point: ToRs and pods are ordered by it.
  NodeId firstHost(uint32_t tor) const {
    NodeId m = InvalidNode;
    for (const auto &[h, e] : down_[tor])
      m = std::min(m, endIn(h, e));
    return m;
  }
  bool expressTier1(uint64_t aggsReached, uint64_t torsPerAgg);
  bool expressTier2(uint64_t coresPerPlane, uint64_t pods);
  bool finish();

  const FabricGraph &g_;
  DiagEngine &diags_;
  llvm::StringRef where_;
  const FatTreeOptions &opts_;
  FatTree ft_;

  std::vector<uint32_t> copyOfNode_;
  std::vector<int32_t> tier_;                  // per copy
  std::vector<InstanceRole> role_;             // per copy
  std::vector<uint32_t> firstNode_;            // per copy
  std::vector<uint32_t> switches_[3];          // per tier, copy order
  std::vector<EdgeRef> links_[3];              // per tier: edges from tier t-1 (hosts) up
  uint64_t attachPoints_ = 0;                  // htsim nodes
  std::vector<std::string> noLatency_;         // links given the default latency
  std::vector<std::vector<std::pair<uint32_t, EdgeId>>> down_, up_;   // per copy
  uint64_t speed_[3] = {}, latency_[3] = {}, switchLatency_[3] = {};
  unsigned tiers_ = 0;
  // Node order: ToRs in htsim order, attach points in node order within their ToR.
  std::vector<uint32_t> torOrder_;
  // The fabric's bundles and, for 3 tiers, core switches per plane and pods (set by
  // twoTiers/threeTiers; expressTier1/2 choose what fabric.topo says).
  uint64_t fabricBundle_[3] = {1, 1, 1};
  uint64_t aggsPerTor_ = 0, torsPerAgg_ = 0, coresPerPlane_ = 0, pods_ = 1;
};

bool Recogniser::classifyEdges() {
  const uint32_t copies = g_.numDeviceCopies();
  down_.resize(copies);
  up_.resize(copies);
  for (EdgeId e = 0; e < g_.numEdges(); ++e) {
    const auto &r = g_.edge(e);
    uint32_t a = copyOfNode_[r.u], b = copyOfNode_[r.v];
    if (a == b)
      continue;
    for (uint32_t c : {a, b}) {
      if (role_[c] == InstanceRole::Other)
        return failShape(fmt::format("'{}' is neither a host (it has no xpu or nic) nor a switch (it "
                                "has no port or switch), but it is linked to the fabric by {}",
                                name(c), edgeText(e)));
      if (role_[c] == InstanceRole::Switch && tier_[c] == NoTier)
        return fail(fmt::format("switch '{}' is not connected to any host (it is linked by {}); "
                                "every switch of htsim's fat tree is: remove it from the fabric, "
                                "or simulate the fabric with {}",
                                name(c), edgeText(e), otherModelsHint()));
    }
    int32_t ta = tier_[a], tb = tier_[b];
    if (ta > tb) {
      std::swap(a, b);
      std::swap(ta, tb);
    }
    if (ta == HostTier && tb == HostTier)
      return failShape(fmt::format("hosts '{}' and '{}' are linked directly by {}; htsim hosts "
                              "connect only to a ToR switch (a torus, mesh or other direct "
                              "network is not expressible)",
                              name(a), name(b), edgeText(e)));
    if (ta == tb)
      return failShape(fmt::format("switches '{}' and '{}' are both in tier {} and linked by {}; "
                              "htsim's fat tree has no links within a tier (a dragonfly, torus "
                              "or other direct network is not expressible)",
                              name(a), name(b), ta, edgeText(e)));
    // Tiers come from hop distances, so linked copies are at most one tier apart.
    unsigned t = unsigned(tb);
    if (t > 2)
      continue;   // reported as "more than 3 tiers" below
    links_[t].push_back({a, b, e});
    up_[a].push_back({b, e});
    down_[b].push_back({a, e});
  }
  return true;
}

bool Recogniser::checkAttachPoints() {
  std::vector<uint8_t> linked(tier_.size(), 0);
  llvm::DenseMap<NodeId, size_t> firstLink;   // attach point -> its first link in links_[0]
  for (size_t i = 0; i < links_[0].size(); ++i) {
    const EdgeRef &r = links_[0][i];
    linked[r.a] = 1;
    NodeId n = endIn(r.a, r.edge);
    auto [it, fresh] = firstLink.try_emplace(n, i);
    if (fresh)
      continue;
    const EdgeRef &f = links_[0][it->second];
    std::string wayOut = "each htsim node is an attach point with one link to one ToR: give "
                         "every link its own NIC or NIC port (e.g. host=dgx_h100(nic_device="
                         "cx5(variant=100g_dual)) composes two-port NICs), or simulate it with " +
                         otherModelsHint();
    if (f.b == r.b)
      return fail(fmt::format("'{}' has several links to '{}' ({} and {}); {}", g_.name(n),
                              name(r.b), edgeText(f.edge), edgeText(r.edge), wayOut));
    return fail(fmt::format("'{}' is linked to two switches, '{}' and '{}' ({} and {}); {}",
                            g_.name(n), name(f.b), name(r.b), edgeText(f.edge),
                            edgeText(r.edge), wayOut));
  }
  for (uint32_t c = 0; c < tier_.size(); ++c)
    if (tier_[c] == HostTier && !linked[c])
      return fail(fmt::format("host '{}' has no link to a switch; every htsim node is an "
                              "attach point on a ToR (link the host, or leave it out)",
                              name(c)));
  attachPoints_ = firstLink.size();
  return true;
}

// One bandwidth and one latency for the links of tier t (t = 0: host links).
bool Recogniser::checkLinkClass(unsigned t) {
  const char *cls[] = {"tier-0 links (attach points to tier-0 switches)",
                       "tier-1 links (tier-0 to tier-1 switches)",
                       "tier-2 links (tier-1 to tier-2 switches)"};
  const auto &links = links_[t];
  std::vector<std::string> &names = ft_.linkNamesOfTier[t];
  std::optional<double> bps, ns;
  EdgeId first = 0;
  for (size_t i = 0; i < links.size(); ++i) {
    EdgeId e = links[i].edge;
    const auto &link = g_.link(g_.edge(e).link);
    if (std::find(names.begin(), names.end(), link.name) == names.end())
      names.push_back(link.name);
    if (!link.bandwidth)
      return fail(fmt::format("{} has no bandwidth; htsim needs a link speed per tier (give "
                              "link '{}' a bandwidth)",
                              edgeText(e), link.name));
    double lat = opts_.defaultLinkLatencyNs;
    if (link.latency)
      lat = link.latency->ns;
    else if (!opts_.linkLatencyGiven && std::find(noLatency_.begin(), noLatency_.end(),
                                                  link.name) == noLatency_.end())
      noLatency_.push_back(link.name);
    if (i == 0) {
      bps = link.bandwidth->bitsPerSecond;
      ns = lat;
      first = e;
      continue;
    }
    if (link.bandwidth->bitsPerSecond != *bps)
      return fail(fmt::format("{} differ in bandwidth: {} has {} Gb/s but {} has {} Gb/s; htsim "
                              "has one link speed per tier: give them one speed (the links' "
                              "bandwidth in the fabric file, or the blueprint's bw{} "
                              "parameter), or simulate the fabric with {}",
                              cls[t], edgeText(first), Bandwidth{*bps}.inGigabitsPerSecExact(),
                              edgeText(e), link.bandwidth->inGigabitsPerSecExact(), t,
                              otherModelsHint()));
    if (lat != *ns)
      return fail(fmt::format("{} differ in latency: {} has {} ns but {} has {} ns; htsim has "
                              "one link latency per tier: give them one latency (the links' "
                              "latency in the fabric file, or the blueprint's lat{} "
                              "parameter), or simulate the fabric with {}",
                              cls[t], edgeText(first), *ns, edgeText(e), lat, t,
                              otherModelsHint()));
  }
  double gbps = Bandwidth{*bps}.inGigabitsPerSecExact();
  if (gbps < 1 || gbps != std::floor(gbps) || gbps > double(IntMax))
    return fail(fmt::format("{} run at {} Gb/s ({}); htsim's Downlink_speed_Gbps is a whole "
                            "number of Gb/s",
                            cls[t], gbps, edgeText(first)));
  if (!(*ns > 0))
    return fail(fmt::format("{} have latency 0 ({}); htsim needs a non-zero link latency "
                            "(Downlink_Latency_ns)",
                            cls[t], edgeText(first)));
  if (*ns != std::floor(*ns) || *ns > double(IntMax))
    return fail(fmt::format("{} have latency {} ns ({}); htsim's Downlink_Latency_ns is a whole "
                            "number of ns",
                            cls[t], *ns, edgeText(first)));
  speed_[t] = uint64_t(gbps);
  latency_[t] = uint64_t(*ns);
  return true;
}

bool Recogniser::checkSwitchLatency(unsigned t) {
  const auto &sw = switches_[t];
  auto ps = [&](uint32_t c) -> int64_t {
    return opts_.switchLatencyPs ? (*opts_.switchLatencyPs)[firstNode_[c]] : 0;
  };
  for (uint32_t c : sw)
    if (ps(c) != ps(sw[0]))
      return fail(fmt::format("tier-{} switches differ in switch latency: '{}' has {} ns but '{}' "
                              "{} ns; htsim has one switch latency per tier: give them one "
                              "(annotation {}), or simulate the fabric with {}",
                              t, name(sw[0]), double(ps(sw[0])) / 1000, name(c),
                              double(ps(c)) / 1000, SwitchLatencyAttribute, otherModelsHint()));
  int64_t v = ps(sw[0]);
  if (v % 1000 || v / 1000 > int64_t(IntMax))
    return fail(fmt::format("tier-{} switches have a switch latency of {} ns; htsim's "
                            "Switch_Latency_ns is a whole number of ns",
                            t, double(v) / 1000));
  switchLatency_[t] = uint64_t(v / 1000);
  return true;
}

bool Recogniser::checkUniform(unsigned tier, const std::vector<uint32_t> &copies,
                              const std::vector<uint64_t> &value, const char *what,
                              const char *key) {
  for (size_t i = 1; i < copies.size(); ++i)
    if (value[i] != value[0])
      return failShape(fmt::format("tier-{} switch '{}' has {} {} but '{}' has {}; htsim gives every "
                              "switch of a tier the same {}",
                              tier, name(copies[i]), value[i], what, name(copies[0]), value[0],
                              key));
  return true;
}

// Links between each linked pair of copies of tiers t-1 and t (t >= 1): all the same.
bool Recogniser::bundles(unsigned t, uint64_t &bundle) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> count;
  for (const EdgeRef &r : links_[t])
    ++count[{r.a, r.b}];
  auto first = count.begin();
  for (auto it = count.begin(); it != count.end(); ++it)
    if (it->second != first->second)
      return failShape(fmt::format("'{}' and '{}' are joined by {} but '{}' and '{}' by {}; htsim has "
                              "one bundle size per tier (Bundle)",
                              name(it->first.first), name(it->first.second),
                              plural(it->second, "link", "links"), name(first->first.first),
                              name(first->first.second), first->second));
  bundle = first->second;
  return true;
}

// Distinct neighbours in `list` (copy, edge), in copy order.
std::vector<uint32_t> distinct(const std::vector<std::pair<uint32_t, EdgeId>> &list) {
  std::vector<uint32_t> v;
  for (const auto &[c, e] : list)
    v.push_back(c);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

bool Recogniser::twoTiers() {
  const auto &tors = switches_[0], &spines = switches_[1];
  uint64_t B1;
  if (!bundles(1, B1))
    return false;
  for (uint32_t t : tors) {
    std::vector<uint32_t> reach = distinct(up_[t]);
    if (reach.size() != spines.size()) {
      uint32_t missing = 0;
      for (uint32_t s : spines)
        if (!std::binary_search(reach.begin(), reach.end(), s)) {
          missing = s;
          break;
        }
      return failShape(fmt::format("tier-0 switch '{}' reaches {} of the {} tier-1 switches (not "
                              "'{}'); in a 2-tier htsim fabric every ToR connects to every tier-1 "
                              "switch",
                              name(t), reach.size(), spines.size(), name(missing)));
    }
  }
  ft_.params.podsize = ft_.params.nodes;
  fabricBundle_[1] = B1;
  aggsPerTor_ = spines.size();
  torsPerAgg_ = tors.size();
  torOrder_ = tors;
  ft_.switchesOfTier[1] = spines;
  return true;
}

bool Recogniser::threeTiers() {
  const auto &tors = switches_[0], &aggs = switches_[1], &cores = switches_[2];
  uint64_t B1, B2;
  if (!bundles(1, B1) || !bundles(2, B2))
    return false;
  // Pods: connected groups of ToRs and tier-1 switches.
  const uint32_t copies = uint32_t(tier_.size());
  std::vector<uint32_t> parent(copies);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](uint32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const EdgeRef &r : links_[1])
    parent[find(r.a)] = find(r.b);
  std::map<uint32_t, uint32_t> podOfRoot;   // root -> pod index, pods in order of first ToR
  struct Pod {
    std::vector<uint32_t> tors, aggs;
  };
  std::vector<Pod> pods;
  for (uint32_t t : tors) {
    auto [it, fresh] = podOfRoot.try_emplace(find(t), uint32_t(pods.size()));
    if (fresh)
      pods.emplace_back();
    pods[it->second].tors.push_back(t);
  }
  for (uint32_t a : aggs) {
    auto it = podOfRoot.find(find(a));
    if (it == podOfRoot.end())
      return failShape(fmt::format("tier-1 switch '{}' has no link to a tier-0 switch", name(a)));
    pods[it->second].aggs.push_back(a);
  }
  for (const Pod &pod : pods) {
    if (pod.tors.size() != pods[0].tors.size() || pod.aggs.size() != pods[0].aggs.size())
      return failShape(fmt::format("pods differ in size: the pod of '{}' has {} and {}, the pod of "
                              "'{}' {} and {}; htsim's pods are all alike",
                              name(pods[0].tors[0]),
                              plural(pods[0].tors.size(), "ToR", "ToRs"),
                              plural(pods[0].aggs.size(), "tier-1 switch", "tier-1 switches"),
                              name(pod.tors[0]), plural(pod.tors.size(), "ToR", "ToRs"),
                              plural(pod.aggs.size(), "tier-1 switch", "tier-1 switches")));
    for (uint32_t t : pod.tors)
      if (distinct(up_[t]).size() != pod.aggs.size())
        return failShape(fmt::format("tier-0 switch '{}' reaches {} of the {} tier-1 switches of its "
                                "pod; in htsim every ToR connects to every tier-1 switch of its "
                                "pod",
                                name(t), distinct(up_[t]).size(), pod.aggs.size()));
  }
  const uint64_t P = pods.size(), A = pods[0].aggs.size();
  // Planes: tier-1 switches with the same tier-2 neighbours; one per pod in each plane,
  // and every core switch in exactly one plane.
  std::map<std::vector<uint32_t>, std::vector<uint32_t>> planes;   // cores -> aggs
  std::vector<uint32_t> podOfAgg(copies, 0);
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t a : pods[p].aggs)
      podOfAgg[a] = p;
  for (uint32_t a : aggs) {
    std::vector<uint32_t> reach = distinct(up_[a]);
    if (reach.empty())
      return failShape(fmt::format("tier-1 switch '{}' has no link to a tier-2 switch", name(a)));
    planes[reach].push_back(a);
  }
  std::vector<uint32_t> planeOfCore(copies, ~0u);
  for (const auto &[reach, members] : planes) {
    for (uint32_t c : reach) {
      if (planeOfCore[c] != ~0u)
        return failShape(fmt::format("tier-2 switch '{}' is linked to tier-1 switches that reach "
                                "different sets of tier-2 switches ('{}' and '{}'); htsim "
                                "stripes core switches over the tier-1 switches of a pod",
                                name(c), name(planeOfCore[c]), name(members[0])));
      planeOfCore[c] = members[0];
    }
    std::vector<uint32_t> seen(P, 0);
    for (uint32_t a : members)
      if (seen[podOfAgg[a]]++)
        return failShape(fmt::format("tier-1 switches '{}' and '{}' are in the same pod and reach the "
                                "same tier-2 switches; htsim connects the tier-1 switches of a "
                                "pod to different core switches",
                                name(members[0]), name(a)));
    if (members.size() != P)
      return failShape(fmt::format("the tier-2 switches reached by '{}' are linked to {} of the {} "
                              "pods; htsim links every core switch to every pod",
                              name(members[0]), members.size(), P));
  }
  if (planes.size() != A)
    return failShape(fmt::format("the tier-1 switches reach {} different sets of tier-2 switches, not "
                            "one per tier-1 switch of a pod ({})",
                            planes.size(), A));
  // htsim order: pods by their first host, ToRs too; the tier-1 switch at position j of
  // a pod is the pod's member of plane j, planes in the order of pod 0's switches.
  auto firstHost = [&](uint32_t tor) { return this->firstHost(tor); };
  for (Pod &pod : pods)
    std::sort(pod.tors.begin(), pod.tors.end(),
              [&](uint32_t x, uint32_t y) { return firstHost(x) < firstHost(y); });
  std::sort(pods.begin(), pods.end(), [&](const Pod &x, const Pod &y) {
    return firstHost(x.tors[0]) < firstHost(y.tors[0]);
  });
  std::map<uint32_t, uint32_t> planeIndex;   // first agg of the plane -> j
  std::vector<const std::vector<uint32_t> *> planeCores(A);
  for (const auto &[reach, members] : planes) {
    for (uint32_t a : members)
      if (std::find(pods[0].aggs.begin(), pods[0].aggs.end(), a) != pods[0].aggs.end()) {
        uint32_t j = uint32_t(std::find(pods[0].aggs.begin(), pods[0].aggs.end(), a) -
                              pods[0].aggs.begin());
        planeIndex[members[0]] = j;
        planeCores[j] = &reach;
      }
  }
  std::vector<uint32_t> aggOrder(P * A), coreOrder(cores.size());
  for (uint32_t p = 0; p < P; ++p) {
    for (uint32_t t : pods[p].tors)
      torOrder_.push_back(t);
    for (uint32_t a : pods[p].aggs)
      aggOrder[p * A + planeIndex[planes[distinct(up_[a])][0]]] = a;
  }
  uint64_t perPlane = planeCores[0]->size();
  for (uint32_t j = 0; j < A; ++j) {
    if (planeCores[j]->size() != perPlane)
      return failShape(fmt::format("tier-1 switch '{}' reaches {} tier-2 switches but '{}' reaches {}; "
                              "htsim gives every tier-1 switch the same Radix_Up",
                              name(pods[0].aggs[j]), planeCores[j]->size(), name(pods[0].aggs[0]),
                              perPlane));
    for (uint64_t l = 0; l < perPlane; ++l)
      coreOrder[j + A * l] = (*planeCores[j])[l];
  }
  ft_.params.podsize = ft_.params.nodes / P;
  fabricBundle_[1] = B1;
  fabricBundle_[2] = B2;
  aggsPerTor_ = A;
  torsPerAgg_ = pods[0].tors.size();
  coresPerPlane_ = perPlane;
  pods_ = P;
  ft_.switchesOfTier[1] = aggOrder;
  ft_.switchesOfTier[2] = coreOrder;
  return true;
}

// Tier 1 as htsim can build it: Radix_Up = aggsPerTor x Bundle uplinks at speed s1'
// with Nodes x s0 = ToR-uplinks x s1' x Oversubscribed and Oversubscribed = Radix_Down /
// Radix_Up (integer division), so a ToR's uplinks carry Radix_Down x s0 / Oversubscribed
// in all. Chooses the bundle (and so s1') that carries the most, never more than the
// fabric's uplinks; at equal capacity the fabric's own bundle, else the smallest.
bool Recogniser::expressTier1(uint64_t aggsPerTor, uint64_t torsPerAgg) {
  TopoParams &p = ft_.params;
  const bool three = tiers_ == 3;
  const uint64_t RD = p.tier[0].radixDown, A = aggsPerTor, B1 = fabricBundle_[1];
  const uint64_t s0 = speed_[0], s1 = speed_[1];
  const u128 fabricUp = u128(A) * B1 * s1;
  uint64_t best = 0, bestCap = 0, bestSpeed = 0;
  std::string portLimit;
  for (uint64_t b = 1; A * b <= RD; ++b) {
    const uint64_t RU = A * b, os = RD / RU;
    const u128 num = u128(RD) * s0, den = u128(RU) * os;
    if (num % den || num / den > IntMax || u128(RU) * (num / den) > fabricUp)
      continue;
    const uint64_t speed = uint64_t(num / den), cap = RU * speed;
    const uint64_t aggPorts = torsPerAgg * b + (three ? coresPerPlane_ : 0);
    if (RD + RU > 96 || aggPorts > 64) {
      if (portLimit.empty())
        portLimit = RD + RU > 96
                        ? fmt::format("a ToR would get {} ports ({} attach points and {} "
                                      "uplinks); htsim allows at most 96",
                                      RD + RU, RD, RU)
                        : fmt::format("a tier-1 switch would get {} ports or more; htsim allows "
                                      "at most 64",
                                      aggPorts);
      continue;
    }
    if (cap > bestCap || (cap == bestCap && b == B1)) {
      best = b;
      bestCap = cap;
      bestSpeed = speed;
    }
  }
  if (!best) {
    if (A > RD)
      return fail(fmt::format("the tier-0 switches have {} attach points but reach {} tier-1 "
                              "switches; an htsim ToR has at most as many uplinks as attach "
                              "points (Oversubscribed = Radix_Down / Radix_Up >= 1): use fewer "
                              "tier-1 switches or more attach points per ToR, or simulate the "
                              "fabric with {}",
                              RD, A, otherModelsHint()));
    if (!portLimit.empty())
      return fail(portLimit + ": use fewer attach points per ToR (a smaller radix, fewer "
                              "hosts_per_leaf or hosts_per_group), or simulate the fabric with " +
                  otherModelsHint());
    return fail(fmt::format("the tier-0 switches have {} attach points at {} Gb/s and {} "
                            "uplinks at {} Gb/s ({} Gb/s in all); htsim's ToR uplinks carry "
                            "Radix_Down x {} Gb/s / Oversubscribed with a whole Oversubscribed "
                            "= Radix_Down / Radix_Up, at least {} Gb/s here, more than the "
                            "fabric has: give the tier-1 links at least {} Gb/s, or simulate "
                            "the fabric with {}",
                            RD, s0, A * B1, s1, uint64_t(fabricUp), s0, A * s0, s0,
                            otherModelsHint()));
  }
  const uint64_t RU = A * best;
  p.tier[0].radixUp = RU;
  p.tier[0].oversubscribed = RD / RU;
  p.tier[1].bundle = best;
  p.tier[1].radixDown = torsPerAgg * best;
  p.tier[1].speedGbps = bestSpeed;
  if (u128(bestCap) < fabricUp) {
    std::string avoid;
    if (bestCap % (A * B1) == 0)
      avoid = fmt::format(" (tier-1 links of {} Gb/s, e.g. the blueprints' bw1={}G, avoid this)",
                          bestCap / (A * B1), bestCap / (A * B1));
    diags_.warning(where_, fmt::format("htsim gives no switch more uplink than downlink "
                                       "bandwidth: the tier-0 switches have {} attach points at "
                                       "{} Gb/s ({} Gb/s) and {} uplinks at {} Gb/s ({} Gb/s); "
                                       "fabric.topo gives them {} uplinks at {} Gb/s ({} Gb/s), "
                                       "so the uplinks are busier than in the fabric{}",
                                       RD, s0, RD * s0, A * B1, s1, uint64_t(fabricUp), RU,
                                       bestSpeed, bestCap, avoid));
    ft_.notes.push_back(fmt::format("tier-1 links capped: the fabric's {} uplinks per ToR at {} "
                                    "Gb/s ({} Gb/s) are written as {} at {} Gb/s ({} Gb/s, what "
                                    "the ToR's attach points can send)",
                                    A * B1, s1, uint64_t(fabricUp), RU, bestSpeed, bestCap));
  } else if (best != B1 || bestSpeed != s1) {
    ft_.notes.push_back(fmt::format("tier-1 links: the fabric's {} uplinks per ToR at {} Gb/s "
                                    "are written as Bundle {} of {} Gb/s links per tier-1 switch "
                                    "(the same {} Gb/s; htsim derives the uplinks from the "
                                    "tier-0 speed)",
                                    A * B1, s1, best, bestSpeed, bestCap));
  }
  return true;
}

// Tier 2 as htsim can build it: Radix_Up = coresPerPlane x Bundle uplinks per tier-1
// switch at speed s2' with down = Radix_Down x s1' = Radix_Up x s2' x Oversubscribed
// for a whole Oversubscribed >= 1. Chooses the most uplink bandwidth that divides the
// downlink bandwidth and does not exceed the fabric's.
bool Recogniser::expressTier2(uint64_t coresPerPlane, uint64_t pods) {
  TopoParams &p = ft_.params;
  const uint64_t RD = p.tier[1].radixDown, C = coresPerPlane, B2 = fabricBundle_[2];
  const uint64_t s2 = speed_[2];
  const u128 down = u128(RD) * p.tier[1].speedGbps, fabricUp = u128(C) * B2 * s2;
  // Divisors of the downlink bandwidth, largest first: the candidate uplink bandwidths.
  std::vector<uint64_t> divisors;
  const uint64_t d = uint64_t(down);
  for (uint64_t k = 1; k * k <= d; ++k)
    if (d % k == 0) {
      divisors.push_back(k);
      divisors.push_back(d / k);
    }
  std::sort(divisors.rbegin(), divisors.rend());
  if (pods > 64)
    return fail(fmt::format("a core switch would get {} ports (one per pod); htsim allows at "
                            "most 64: use at most 64 pods (fewer ToRs, or more per pod), or "
                            "simulate the fabric with {}",
                            pods, otherModelsHint()));
  if (RD + C > 64)
    return fail(fmt::format("a tier-1 switch would get {} ports ({} down, {} up); htsim allows "
                            "at most 64: use fewer ToRs per pod or fewer core switches, or "
                            "simulate the fabric with {}",
                            RD + C, RD, C, otherModelsHint()));
  uint64_t best = 0, bestCap = 0;
  for (uint64_t b = 1; pods * b <= 64 && RD + C * b <= 64; ++b)
    for (uint64_t cap : divisors) {
      if (u128(cap) > fabricUp || cap % (C * b) || cap / (C * b) > IntMax)
        continue;
      if (cap > bestCap || (cap == bestCap && b == B2)) {
        best = b;
        bestCap = cap;
      }
      break;
    }
  if (!best)
    return fail(fmt::format("no htsim tier-1 uplinks match: the tier-1 switches have {} at {} "
                            "Gb/s and {} at {} Gb/s, and htsim needs "
                            "a whole Oversubscribed = downlink / uplink bandwidth >= 1 with at "
                            "most 64 ports per tier-1 and core switch: give the tier-2 links "
                            "another speed, or simulate the fabric with {}",
                            plural(RD, "downlink", "downlinks"), p.tier[1].speedGbps,
                            plural(C * B2, "uplink", "uplinks"), s2, otherModelsHint()));
  const uint64_t RU = C * best, speed = bestCap / RU;
  p.tier[1].radixUp = RU;
  p.tier[1].oversubscribed = d / bestCap;
  p.tier[2].bundle = best;
  p.tier[2].radixDown = pods * best;
  p.tier[2].speedGbps = speed;
  if (u128(bestCap) < fabricUp) {
    std::string avoid;
    if (bestCap % (C * B2) == 0)
      avoid = fmt::format(" (tier-2 links of {} Gb/s, e.g. the clos blueprint's bw2={}G, avoid "
                          "this)",
                          bestCap / (C * B2), bestCap / (C * B2));
    diags_.warning(where_, fmt::format("htsim gives no switch more uplink than downlink "
                                       "bandwidth: the tier-1 switches have {} downlinks at {} "
                                       "Gb/s ({} Gb/s in fabric.topo) and {} uplinks at {} Gb/s "
                                       "({} Gb/s); fabric.topo gives them {} uplinks at {} Gb/s "
                                       "({} Gb/s), so the uplinks are busier than in the "
                                       "fabric{}",
                                       RD, p.tier[1].speedGbps, d, C * B2, s2,
                                       uint64_t(fabricUp), RU, speed, bestCap, avoid));
    ft_.notes.push_back(fmt::format("tier-2 links capped: the fabric's {} uplinks per tier-1 "
                                    "switch at {} Gb/s ({} Gb/s) are written as {} at {} Gb/s "
                                    "({} Gb/s, what its downlinks carry)",
                                    C * B2, s2, uint64_t(fabricUp), RU, speed, bestCap));
  } else if (best != B2 || speed != s2) {
    ft_.notes.push_back(fmt::format("tier-2 links: the fabric's {} uplinks per tier-1 switch at "
                                    "{} Gb/s are written as Bundle {} of {} Gb/s links per core "
                                    "switch (the same {} Gb/s)",
                                    C * B2, s2, best, speed, bestCap));
  }
  return true;
}

bool Recogniser::finish() {
  TopoParams &p = ft_.params;
  const unsigned T = tiers_;
  // Tier 0: attach points per ToR (one link each) and uplinks per ToR.
  std::vector<uint64_t> hostsOf, upsOf;
  for (uint32_t t : switches_[0]) {
    hostsOf.push_back(down_[t].size());
    upsOf.push_back(up_[t].size());
  }
  if (!checkUniform(0, switches_[0], hostsOf, "attach points",
                    "number of attach points (Radix_Down)"))
    return false;
  p.tier[0].radixDown = hostsOf[0];
  if (T == 3) {
    std::vector<uint64_t> upOf;
    for (uint32_t a : switches_[1])
      upOf.push_back(up_[a].size());
    if (!checkUniform(1, switches_[1], upOf, "uplinks", "number of uplinks (Radix_Up)"))
      return false;
  }
  if (!(T == 2 ? twoTiers() : threeTiers()))
    return false;
  if (!checkUniform(0, switches_[0], upsOf, "uplinks", "number of uplinks (Radix_Up)"))
    return false;
  for (unsigned t = 0; t < T; ++t) {
    p.tier[t].speedGbps = speed_[t];
    p.tier[t].latencyNs = latency_[t];
    p.tier[t].switchLatencyNs = switchLatency_[t];
  }
  if (!expressTier1(aggsPerTor_, torsPerAgg_))
    return false;
  if (T == 3 && !expressTier2(coresPerPlane_, pods_))
    return false;
  ft_.upPaths = aggsPerTor_ * p.tier[1].bundle * (T == 3 ? coresPerPlane_ * p.tier[2].bundle : 1);
  std::string why;
  auto shape = deriveHtsimShape(p, why);
  if (!shape)
    return fail("htsim would not build it from a .topo file: " + why + "; simulate the fabric "
                "with " + otherModelsHint());
  // The choices above make htsim's counts the fabric's; keep this as a guard.
  const uint64_t tors = switches_[0].size();
  if (shape->tors() != tors || shape->aggs() != switches_[1].size() ||
      shape->cores != (T == 3 ? switches_[2].size() : 0))
    return fail(fmt::format("htsim would build {} ToRs, {} tier-1 and {} tier-2 switches from "
                            "these parameters, but the fabric has {}, {} and {}",
                            shape->tors(), shape->aggs(), shape->cores, tors,
                            switches_[1].size(), T == 3 ? switches_[2].size() : 0));
  ft_.shape = *shape;
  // Node order follows the ToR order; ToRs by their first attach point for 2 tiers
  // (threeTiers ordered them pod by pod already).
  if (T == 2)
    std::sort(torOrder_.begin(), torOrder_.end(),
              [&](uint32_t x, uint32_t y) { return firstHost(x) < firstHost(y); });
  ft_.switchesOfTier[0] = torOrder_;
  for (uint32_t t : torOrder_) {
    std::vector<NodeId> attach;
    for (const auto &[h, e] : down_[t])
      attach.push_back(endIn(h, e));
    std::sort(attach.begin(), attach.end());
    for (NodeId n : attach) {
      ft_.nodeOfAttach[n] = uint32_t(ft_.attachOfNode.size());
      ft_.attachOfNode.push_back(n);
    }
  }
  return true;
}

std::optional<FatTree> Recogniser::run() {
  const uint32_t copies = g_.numDeviceCopies();
  copyOfNode_.resize(g_.numNodes());
  ft_.copyNames.reserve(copies);
  for (const auto &inst : g_.instances())
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId first = NodeId(inst.firstNode + c * inst.nodesPerCopy);
      std::fill_n(copyOfNode_.begin() + first, inst.nodesPerCopy, uint32_t(role_.size()));
      ft_.copyNames.push_back(inst.name + "." + std::to_string(c));
      role_.push_back(inst.role);
      firstNode_.push_back(first);
    }
  StructureOptions so;
  so.bisection = false;
  so.diameter = false;
  FabricStructure st = analyzeFabricStructure(g_, so);
  tier_ = st.copyTier;
  if (st.hosts == 0) {
    fail("it has no hosts (device copies with an xpu or a nic)");
    return std::nullopt;
  }
  if (!classifyEdges() || !checkAttachPoints())
    return std::nullopt;
  tiers_ = unsigned(st.tiers.size());
  for (uint32_t c = 0; c < copies; ++c)
    if (tier_[c] >= 0 && tier_[c] < 3 && (!up_[c].empty() || !down_[c].empty()))
      switches_[tier_[c]].push_back(c);
  if (tiers_ < 2 || tiers_ > 3) {
    std::string detail;
    for (unsigned t = 0; t < tiers_; ++t)
      detail += fmt::format("{}tier {}: {}", t ? ", " : "", t,
                            plural(st.tiers[t].switches, "switch", "switches"));
    failShape(fmt::format("htsim's fat tree has 2 or 3 tiers of switches; this fabric has {} "
                          "({})",
                          tiers_, detail.empty() ? std::string("no switches") : detail));
    return std::nullopt;
  }
  ft_.params.nodes = attachPoints_;
  ft_.params.tiers = tiers_;
  if (attachPoints_ > IntMax) {
    fail(fmt::format("it has {} attach points; htsim counts nodes in 32 bits", attachPoints_));
    return std::nullopt;
  }
  for (unsigned t = 0; t < tiers_; ++t)
    if (!checkLinkClass(t) || !checkSwitchLatency(t))
      return std::nullopt;
  if (!finish())
    return std::nullopt;
  if (!noLatency_.empty()) {
    std::string names;
    for (const std::string &n : noLatency_)
      names += (names.empty() ? "'" : ", '") + n + "'";
    diags_.warning(where_, fmt::format("link{} {} {} no latency; fabric.topo gives {} htsim's "
                                       "default hop latency, {} ns (-htsim-link-latency=<ns> "
                                       "sets another; the blueprints' lat0=, lat1=, lat2= give "
                                       "links one)",
                                       noLatency_.size() == 1 ? "" : "s", names,
                                       noLatency_.size() == 1 ? "has" : "have",
                                       noLatency_.size() == 1 ? "it" : "them",
                                       opts_.defaultLinkLatencyNs));
  }
  return std::move(ft_);
}

} // namespace

std::optional<FatTree> recogniseFatTree(const FabricGraph &g, DiagEngine &diags,
                                        llvm::StringRef where, const FatTreeOptions &opts) {
  return Recogniser(g, diags, where, opts).run();
}

// ---------------------------------------------------------------------------------------
// Writing

void writeTopo(const FatTree &ft, llvm::ArrayRef<std::string> comments, llvm::raw_ostream &os) {
  const TopoParams &p = ft.params;
  const HtsimShape &s = ft.shape;
  for (const std::string &c : comments)
    os << "# " << c << "\n";
  os << fmt::format("# {} nodes (attach points), {} pod{}, {} ToRs ({} per pod), {} tier-1 "
                    "switches",
                    p.nodes, s.pods, s.pods == 1 ? "" : "s", s.tors(), s.torsPerPod, s.aggs());
  if (p.tiers == 3)
    os << fmt::format(" ({} per pod), {} core switches", s.aggsPerPod, s.cores);
  os << "\n";
  const char *names[] = {"attach points to ToRs", "ToRs to tier 1", "tier 1 to core"};
  for (uint64_t t = 0; t < p.tiers; ++t) {
    std::string links;
    for (const std::string &n : ft.linkNamesOfTier[t])
      links += (links.empty() ? "" : ", ") + n;
    os << fmt::format("# tier {} downlinks ({}): fabric link{} {}\n", t, names[t],
                      ft.linkNamesOfTier[t].size() == 1 ? "" : "s", links);
  }
  for (const std::string &n : ft.notes)
    os << "# " << n << "\n";
  os << fmt::format("Nodes {}\nTiers {}\nPodsize {}\n", p.nodes, p.tiers, p.podsize);
  for (uint64_t t = 0; t < p.tiers; ++t) {
    const TopoTier &x = p.tier[t];
    os << fmt::format("\nTier {}\nDownlink_speed_Gbps {}\nRadix_Down {}\n", t, x.speedGbps,
                      x.radixDown);
    if (t + 1 < p.tiers)
      os << fmt::format("Radix_Up {}\n", x.radixUp);
    os << fmt::format("Downlink_Latency_ns {}\nSwitch_Latency_ns {}\n", x.latencyNs,
                      x.switchLatencyNs);
    if (t + 1 < p.tiers)
      os << fmt::format("Oversubscribed {}\n", x.oversubscribed);
    if (t > 0)
      os << fmt::format("Bundle {}\n", x.bundle);
  }
}

} // namespace infracc::htsim
