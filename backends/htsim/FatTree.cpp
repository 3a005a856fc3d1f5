#include "backends/htsim/FatTree.h"

#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace infracc::htsim {

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
    return fail(fmt::format("tier 0: Bundle is {}; htsim hosts have one link", t0.bundle));
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
    return fail(fmt::format("a ToR gets {} ports ({} hosts and {} uplinks); htsim allows at most "
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
  const std::string &name(uint32_t copy) const { return ft_.copyNames[copy]; }
  std::string edgeText(EdgeId e) const {
    const auto &r = g_.edge(e);
    return fmt::format("'{} -- {}' (link '{}')", g_.name(r.u), g_.name(r.v),
                       g_.link(r.link).name);
  }
  bool classifyEdges();
  bool checkHosts();
  bool checkLinkClass(unsigned t);
  bool checkSwitchLatency(unsigned t);
  bool checkUniform(unsigned tier, const std::vector<uint32_t> &copies,
                    const std::vector<uint64_t> &value, const char *what, const char *key);
  bool bundles(unsigned t, uint64_t &bundle);
  bool twoTiers();
  bool threeTiers();
  uint32_t firstHost(uint32_t tor) const {
    uint32_t m = ~0u;
    for (const auto &[h, e] : down_[tor])
      m = std::min(m, h);
    return m;
  }
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
  std::vector<std::vector<std::pair<uint32_t, EdgeId>>> down_, up_;   // per copy
  uint64_t speed_[3] = {}, latency_[3] = {}, switchLatency_[3] = {};
  unsigned tiers_ = 0;
  // Host order: ToRs in htsim order, hosts in copy order within their ToR.
  std::vector<uint32_t> torOrder_;
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
        return fail(fmt::format("'{}' is neither a host (it has no xpu or nic) nor a switch (it "
                                "has no port or switch), but it is linked to the fabric by {}",
                                name(c), edgeText(e)));
      if (role_[c] == InstanceRole::Switch && tier_[c] == NoTier)
        return fail(fmt::format("switch '{}' is not connected to any host (it is linked by {}); "
                                "every switch of htsim's fat tree is",
                                name(c), edgeText(e)));
    }
    int32_t ta = tier_[a], tb = tier_[b];
    if (ta > tb) {
      std::swap(a, b);
      std::swap(ta, tb);
    }
    if (ta == HostTier && tb == HostTier)
      return fail(fmt::format("hosts '{}' and '{}' are linked directly by {}; htsim hosts "
                              "connect only to a ToR switch (a torus, mesh or other direct "
                              "network is not expressible)",
                              name(a), name(b), edgeText(e)));
    if (ta == tb)
      return fail(fmt::format("switches '{}' and '{}' are both in tier {} and linked by {}; "
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

bool Recogniser::checkHosts() {
  for (uint32_t c = 0; c < tier_.size(); ++c) {
    if (tier_[c] != HostTier)
      continue;
    const auto &ups = up_[c];
    if (ups.empty())
      return fail(fmt::format("host '{}' has no link to a switch; every htsim node is a host on "
                              "a ToR",
                              name(c)));
    if (ups.size() > 1) {
      uint32_t other = ups[1].first;
      if (other == ups[0].first)
        return fail(fmt::format("host '{}' has {} links to '{}' ({} and {}); htsim attaches each "
                                "host by one link",
                                name(c), ups.size(), name(other), edgeText(ups[0].second),
                                edgeText(ups[1].second)));
      return fail(fmt::format("host '{}' is attached to more than one switch ('{}' and '{}'); "
                              "htsim attaches each host to one ToR by one link",
                              name(c), name(ups[0].first), name(other)));
    }
  }
  return true;
}

// One bandwidth and one latency for the links of tier t (t = 0: host links).
bool Recogniser::checkLinkClass(unsigned t) {
  const char *cls[] = {"tier-0 links (hosts to tier-0 switches)",
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
      return fail(fmt::format("{} has no bandwidth; htsim needs a link speed per tier",
                              edgeText(e)));
    std::optional<double> lat;
    if (link.latency)
      lat = link.latency->ns;
    else if (opts_.defaultLinkLatencyNs)
      lat = *opts_.defaultLinkLatencyNs;
    else
      return fail(fmt::format("{} has no latency; htsim needs a non-zero link latency per tier "
                              "(give the link one, or set -htsim-link-latency=<ns>)",
                              edgeText(e)));
    if (i == 0) {
      bps = link.bandwidth->bitsPerSecond;
      ns = lat;
      first = e;
      continue;
    }
    if (link.bandwidth->bitsPerSecond != *bps)
      return fail(fmt::format("{} differ in bandwidth: {} has {} Gb/s but {} has {} Gb/s; htsim "
                              "has one link speed per tier",
                              cls[t], edgeText(first), Bandwidth{*bps}.inGigabitsPerSecExact(),
                              edgeText(e), link.bandwidth->inGigabitsPerSecExact()));
    if (*lat != *ns)
      return fail(fmt::format("{} differ in latency: {} has {} ns but {} has {} ns; htsim has "
                              "one link latency per tier",
                              cls[t], edgeText(first), *ns, edgeText(e), *lat));
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
                              "{} ns; htsim has one switch latency per tier",
                              t, name(sw[0]), double(ps(sw[0])) / 1000, name(c),
                              double(ps(c)) / 1000));
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
      return fail(fmt::format("tier-{} switch '{}' has {} {} but '{}' has {}; htsim gives every "
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
      return fail(fmt::format("'{}' and '{}' are joined by {} but '{}' and '{}' by {}; htsim has "
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
      return fail(fmt::format("tier-0 switch '{}' reaches {} of the {} tier-1 switches (not "
                              "'{}'); in a 2-tier htsim fabric every ToR connects to every tier-1 "
                              "switch",
                              name(t), reach.size(), spines.size(), name(missing)));
    }
  }
  TopoParams &p = ft_.params;
  p.tier[1].bundle = B1;
  p.tier[1].radixDown = tors.size() * B1;
  p.tier[0].radixUp = spines.size() * B1;
  p.podsize = p.nodes;
  torOrder_ = tors;
  ft_.switchesOfTier[1] = spines;
  ft_.upPaths = spines.size() * B1;
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
      return fail(fmt::format("tier-1 switch '{}' has no link to a tier-0 switch", name(a)));
    pods[it->second].aggs.push_back(a);
  }
  for (const Pod &pod : pods) {
    if (pod.tors.size() != pods[0].tors.size() || pod.aggs.size() != pods[0].aggs.size())
      return fail(fmt::format("pods differ in size: the pod of '{}' has {} and {}, the pod of "
                              "'{}' {} and {}; htsim's pods are all alike",
                              name(pods[0].tors[0]),
                              plural(pods[0].tors.size(), "ToR", "ToRs"),
                              plural(pods[0].aggs.size(), "tier-1 switch", "tier-1 switches"),
                              name(pod.tors[0]), plural(pod.tors.size(), "ToR", "ToRs"),
                              plural(pod.aggs.size(), "tier-1 switch", "tier-1 switches")));
    for (uint32_t t : pod.tors)
      if (distinct(up_[t]).size() != pod.aggs.size())
        return fail(fmt::format("tier-0 switch '{}' reaches {} of the {} tier-1 switches of its "
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
      return fail(fmt::format("tier-1 switch '{}' has no link to a tier-2 switch", name(a)));
    planes[reach].push_back(a);
  }
  std::vector<uint32_t> planeOfCore(copies, ~0u);
  for (const auto &[reach, members] : planes) {
    for (uint32_t c : reach) {
      if (planeOfCore[c] != ~0u)
        return fail(fmt::format("tier-2 switch '{}' is linked to tier-1 switches that reach "
                                "different sets of tier-2 switches ('{}' and '{}'); htsim "
                                "stripes core switches over the tier-1 switches of a pod",
                                name(c), name(planeOfCore[c]), name(members[0])));
      planeOfCore[c] = members[0];
    }
    std::vector<uint32_t> seen(P, 0);
    for (uint32_t a : members)
      if (seen[podOfAgg[a]]++)
        return fail(fmt::format("tier-1 switches '{}' and '{}' are in the same pod and reach the "
                                "same tier-2 switches; htsim connects the tier-1 switches of a "
                                "pod to different core switches",
                                name(members[0]), name(a)));
    if (members.size() != P)
      return fail(fmt::format("the tier-2 switches reached by '{}' are linked to {} of the {} "
                              "pods; htsim links every core switch to every pod",
                              name(members[0]), members.size(), P));
  }
  if (planes.size() != A)
    return fail(fmt::format("the tier-1 switches reach {} different sets of tier-2 switches, not "
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
      return fail(fmt::format("tier-1 switch '{}' reaches {} tier-2 switches but '{}' reaches {}; "
                              "htsim gives every tier-1 switch the same Radix_Up",
                              name(pods[0].aggs[j]), planeCores[j]->size(), name(pods[0].aggs[0]),
                              perPlane));
    for (uint64_t l = 0; l < perPlane; ++l)
      coreOrder[j + A * l] = (*planeCores[j])[l];
  }
  TopoParams &p = ft_.params;
  p.podsize = p.nodes / P;
  p.tier[1].bundle = B1;
  p.tier[2].bundle = B2;
  p.tier[0].radixUp = A * B1;
  p.tier[1].radixDown = pods[0].tors.size() * B1;
  p.tier[1].radixUp = perPlane * B2;
  p.tier[2].radixDown = P * B2;
  ft_.switchesOfTier[1] = aggOrder;
  ft_.switchesOfTier[2] = coreOrder;
  ft_.upPaths = A * B1 * perPlane * B2;
  return true;
}

bool Recogniser::finish() {
  TopoParams &p = ft_.params;
  const unsigned T = tiers_;
  // Tier 0: hosts per ToR and uplinks per ToR.
  std::vector<uint64_t> hostsOf, upsOf;
  for (uint32_t t : switches_[0]) {
    hostsOf.push_back(down_[t].size());
    upsOf.push_back(up_[t].size());
  }
  if (!checkUniform(0, switches_[0], hostsOf, "hosts", "number of host ports (Radix_Down)"))
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
  TopoTier &t0 = p.tier[0], &t1 = p.tier[1];
  if (t0.radixUp > t0.radixDown)
    return fail(fmt::format("the ToRs have more uplinks ({}) than hosts ({}); htsim's tier-0 "
                            "Oversubscribed = Radix_Down / Radix_Up must be at least 1",
                            t0.radixUp, t0.radixDown));
  t0.oversubscribed = t0.radixDown / t0.radixUp;
  // htsim derives the ToR uplinks from speeds and Oversubscribed, not from Radix_Up.
  const uint64_t tors = switches_[0].size(), torUplinks = tors * t0.radixUp;
  u128 want = u128(p.nodes) * t0.speedGbps, got = u128(torUplinks) * t1.speedGbps * t0.oversubscribed;
  if (want != got)
    return fail(fmt::format(
        "htsim counts the ToR uplinks as Nodes x s0 / (s1 x Oversubscribed), with Oversubscribed "
        "= Radix_Down / Radix_Up = {} / {} = {} (integer division): {} x {} / ({} x {}) = {}, but "
        "the fabric has {} ({} ToRs x {}); this mix of link speeds and port counts is not "
        "expressible",
        t0.radixDown, t0.radixUp, t0.oversubscribed, p.nodes, t0.speedGbps, t1.speedGbps,
        t0.oversubscribed,
        fmt::format("{:.6g}", double(p.nodes) * double(t0.speedGbps) /
                                  (double(t1.speedGbps) * double(t0.oversubscribed))),
        torUplinks, tors, t0.radixUp));
  if (T == 3) {
    TopoTier &t2 = p.tier[2];
    const uint64_t aggUplinks = switches_[1].size() * t1.radixUp;
    u128 num = u128(torUplinks) * t1.speedGbps, den = u128(t2.speedGbps) * aggUplinks;
    if (num % den || num / den == 0)
      return fail(fmt::format("htsim counts the tier-1 uplinks as ToR uplinks x s1 / (s2 x "
                              "Oversubscribed) with a whole Oversubscribed >= 1, but {} ToR "
                              "uplinks at {} Gb/s and {} tier-1 uplinks at {} Gb/s would need "
                              "Oversubscribed = {}",
                              torUplinks, t1.speedGbps, aggUplinks, t2.speedGbps,
                              fmt::format("{:.6g}", double(torUplinks) * double(t1.speedGbps) /
                                                        (double(t2.speedGbps) *
                                                         double(aggUplinks)))));
    t1.oversubscribed = uint64_t(num / den);
  }
  std::string why;
  auto shape = deriveHtsimShape(p, why);
  if (!shape)
    return fail("htsim would not build it from a .topo file: " + why);
  // The checks above make htsim's counts the fabric's; keep this as a guard.
  if (shape->tors() != tors || shape->aggs() != switches_[1].size() ||
      shape->cores != (T == 3 ? switches_[2].size() : 0))
    return fail(fmt::format("htsim would build {} ToRs, {} tier-1 and {} tier-2 switches from "
                            "these parameters, but the fabric has {}, {} and {}",
                            shape->tors(), shape->aggs(), shape->cores, tors,
                            switches_[1].size(), T == 3 ? switches_[2].size() : 0));
  ft_.shape = *shape;
  // Host order follows the ToR order; ToRs by their first host for 2 tiers (threeTiers
  // ordered them pod by pod already).
  if (T == 2)
    std::sort(torOrder_.begin(), torOrder_.end(),
              [&](uint32_t x, uint32_t y) { return firstHost(x) < firstHost(y); });
  ft_.switchesOfTier[0] = torOrder_;
  ft_.nodeOfCopy.assign(tier_.size(), FatTree::NoNode);
  for (uint32_t t : torOrder_) {
    std::vector<uint32_t> hosts = distinct(down_[t]);
    for (uint32_t h : hosts) {
      ft_.nodeOfCopy[h] = uint32_t(ft_.hostOfNode.size());
      ft_.hostOfNode.push_back(h);
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
  if (!classifyEdges() || !checkHosts())
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
    fail(fmt::format("htsim's fat tree has 2 or 3 tiers of switches; this fabric has {} ({})",
                     tiers_, detail.empty() ? std::string("no switches") : detail));
    return std::nullopt;
  }
  ft_.params.nodes = st.hosts;
  ft_.params.tiers = tiers_;
  if (st.hosts > IntMax) {
    fail(fmt::format("it has {} hosts; htsim counts nodes in 32 bits", st.hosts));
    return std::nullopt;
  }
  for (unsigned t = 0; t < tiers_; ++t)
    if (!checkLinkClass(t) || !checkSwitchLatency(t))
      return std::nullopt;
  if (!finish())
    return std::nullopt;
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
  os << fmt::format("# {} hosts, {} pod{}, {} ToRs ({} per pod), {} tier-1 switches", p.nodes,
                    s.pods, s.pods == 1 ? "" : "s", s.tors(), s.torsPerPod, s.aggs());
  if (p.tiers == 3)
    os << fmt::format(" ({} per pod), {} core switches", s.aggsPerPod, s.cores);
  os << "\n";
  const char *names[] = {"hosts to ToRs", "ToRs to tier 1", "tier 1 to core"};
  for (uint64_t t = 0; t < p.tiers; ++t) {
    std::string links;
    for (const std::string &n : ft.linkNamesOfTier[t])
      links += (links.empty() ? "" : ", ") + n;
    os << fmt::format("# tier {} downlinks ({}): fabric link{} {}\n", t, names[t],
                      ft.linkNamesOfTier[t].size() == 1 ? "" : "s", links);
  }
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
