#include "backends/astra/AnalyticalNetwork.h"

#include "backends/astra/AstraUnits.h"
#include "ir/AttachPoints.h"
#include "ir/FabricStructure.h"
#include "ir/Paths.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace infracc::astra {

const char *shapeName(DimShape s) {
  switch (s) {
  case DimShape::Ring: return "Ring";
  case DimShape::FullyConnected: return "FullyConnected";
  case DimShape::Switch: return "Switch";
  }
  return "";
}

namespace {

// What one path costs, as far as the analytical model can tell paths apart.
struct Cost {
  int64_t ps = 0;
  double bps = 0;          // bottleneck, bits per second
  uint32_t links = 0, switches = 0;
  bool operator==(const Cost &o) const {
    return ps == o.ps && bps == o.bps && links == o.links && switches == o.switches;
  }
};

std::string gbps(double bps) { return fmt::format("{:g} Gb/s", bps / 1e9); }
std::string nsText(double ns) { return fmt::format("{:g} ns", ns); }

class Finder {
public:
  Finder(const FabricGraph &g, std::vector<int64_t> switchPs, bool approx, DiagEngine &diags,
         llvm::StringRef where)
      : g_(g), ep_(g.endpoints()), paths_(g, std::move(switchPs)), approx_(approx),
        diags_(diags), where_(where) {}

  llvm::Expected<AnalyticalNetwork> run();

private:
  std::string npu(uint32_t i) const { return g_.name(ep_[i]); }
  std::optional<Cost> cost(uint32_t a, uint32_t b);
  llvm::Error fail(const std::string &msg) {
    diags_.error(where_, msg);
    return reportedError();
  }
  bool hostsAlike();
  std::optional<Dimension> classify(const std::vector<uint32_t> &group, std::string &why);
  std::optional<std::vector<Dimension>> insideHost();
  bool betweenHosts(std::vector<Dimension> &dims);
  bool checkEveryHost(std::vector<Dimension> &dims, size_t first);
  bool foldShares(std::vector<Dimension> &dims, size_t first);
  // Parallel edges between two nodes: the analytical model has one link per pair.
  uint32_t parallelEdges(NodeId a, NodeId b) const {
    uint32_t n = 0;
    for (auto adj : g_.neighbours(a))
      n += adj.node == b;
    return std::max(n, 1u);
  }

  const FabricGraph &g_;
  llvm::ArrayRef<NodeId> ep_;
  PathFinder paths_;
  bool approx_;
  DiagEngine &diags_;
  std::string where_;
  AnalyticalNetwork net_;
  bool failed_ = false;
};

std::optional<Cost> Finder::cost(uint32_t a, uint32_t b) {
  PathInfo p = paths_.between(ep_[a], ep_[b]);
  if (!p.reachable) {
    diags_.error(where_, fmt::format("no path from {} to {}: ASTRA-sim needs every NPU to "
                                     "reach every other",
                                     npu(a), npu(b)));
    failed_ = true;
    return std::nullopt;
  }
  if (!p.bottleneckBps) {
    diags_.error(where_, fmt::format("no link on the path from {} to {} has a bandwidth: "
                                     "the analytical backend needs one per dimension",
                                     npu(a), npu(b)));
    failed_ = true;
    return std::nullopt;
  }
  return Cost{p.latencyPs, *p.bottleneckBps, p.links, p.switches};
}

bool Finder::hostsAlike() {
  // Hosts in endpoint order: a host is a run of endpoints in one device copy.
  std::vector<uint32_t> start;
  for (uint32_t i = 0; i < ep_.size(); ++i)
    if (i == 0 || g_.deviceCopyOf(ep_[i]) != g_.deviceCopyOf(ep_[i - 1]))
      start.push_back(i);
  start.push_back(uint32_t(ep_.size()));
  const uint32_t k = start[1] - start[0];
  for (size_t h = 1; h + 1 < start.size(); ++h)
    if (start[h + 1] - start[h] != k) {
      diags_.error(where_, fmt::format(
          "hosts hold different numbers of xpus ({} has {}, {} has {}): ASTRA-sim's analytical "
          "backend needs the same number in every host (NPUs are a product of dimensions)",
          g_.composedDeviceName(ep_[start[0]]), k, g_.composedDeviceName(ep_[start[h]]),
          start[h + 1] - start[h]));
      return false;
    }
  net_.npus = uint32_t(ep_.size());
  net_.npusPerHost = k;
  net_.hosts = uint32_t(start.size() - 1);
  return true;
}

// One group of NPUs (indices into the endpoints) as a dimension: FullyConnected,
// Switch or Ring, or nullopt with `why` naming two pairs that differ. All pairs when
// the group is small, else each member with the first and with its ring neighbour.
std::optional<Dimension> Finder::classify(const std::vector<uint32_t> &group, std::string &why) {
  const uint32_t k = uint32_t(group.size());
  Dimension d;
  d.npus = k;
  struct Pair { uint32_t a, b, dist; Cost c; };
  std::vector<Pair> pairs;
  std::optional<Cost> ref;
  bool uniform = true;
  for (uint32_t a = 0; a < k; ++a)
    for (uint32_t b = a + 1; b < k; ++b) {
      if (k > 32 && a != 0 && b != a + 1)
        continue;
      auto c = cost(group[a], group[b]);
      if (!c)
        return std::nullopt;
      pairs.push_back({group[a], group[b], std::min(b - a, k - (b - a)), *c});
      if (!ref)
        ref = *c;
      uniform = uniform && *c == *ref;
    }
  if (uniform && ref->links == 1) {
    d.shape = DimShape::FullyConnected;
    d.bytesPerSecond = ref->bps / 8 * parallelEdges(ep_[group[0]], ep_[group[1]]);
    d.latencyNs = double(ref->ps) / 1000;
    return d;
  }
  if (uniform) {
    d.shape = DimShape::Switch;
    d.latencyNs = double(ref->ps) / 2000;
    // What an xpu can send into the switches every member reaches directly (NVSwitch
    // planes): its links to them, summed. Else the path's bottleneck.
    const NodeId x0 = ep_[group[0]];
    double sum = 0;
    for (auto adj : g_.neighbours(x0)) {
      NodeId sw = adj.node;
      if (g_.deviceCopyOf(sw) != g_.deviceCopyOf(x0) || g_.kind(sw) != ComponentKind::Switch)
        continue;
      bool shared = true;
      for (uint32_t j = 1; j < k && shared; ++j) {
        auto nb = g_.neighbours(ep_[group[j]]);
        shared = std::any_of(nb.begin(), nb.end(), [&](auto x) { return x.node == sw; });
      }
      const auto &bw = g_.link(g_.edge(adj.edge).link).bandwidth;
      if (shared && bw)
        sum += bw->bitsPerSecond;
    }
    d.bytesPerSecond = (sum > 0 ? std::max(sum, ref->bps) : ref->bps) / 8;
    return d;
  }
  // A ring in index order: neighbours one link apart, every pair its ring distance.
  if (k >= 3) {
    bool ring = true;
    std::optional<Cost> hop;
    for (uint32_t a = 0; a < k && ring; ++a) {
      auto c = cost(group[a], group[(a + 1) % k]);
      if (!c)
        return std::nullopt;
      if (!hop)
        hop = *c;
      ring = c->links == 1 && *c == *hop;
    }
    for (const Pair &p : pairs) {
      if (!ring)
        break;
      ring = p.c.ps == int64_t(p.dist) * hop->ps && p.c.bps == hop->bps && p.c.links == p.dist;
    }
    if (ring) {
      d.shape = DimShape::Ring;
      d.bytesPerSecond = hop->bps / 8 * parallelEdges(ep_[group[0]], ep_[group[1]]);
      d.latencyNs = double(hop->ps) / 1000;
      return d;
    }
  }
  const Pair *other = &pairs[0];
  for (const Pair &p : pairs)
    if (!(p.c == pairs[0].c)) {
      other = &p;
      break;
    }
  auto describe = [&](const Pair &p) {
    return fmt::format("{} to {} is {} link(s), {}, {}", npu(p.a), npu(p.b), p.c.links,
                       nsText(double(p.c.ps) / 1000), gbps(p.c.bps));
  };
  why = describe(pairs[0]) + "; " + describe(*other);
  return std::nullopt;
}

// The xpus of the first host of every host device: one dimension, else two (k = a x b,
// dimension 0 the runs of a consecutive xpus, dimension 1 every a-th xpu: a DGX-1's
// two fully connected quads joined xpu i to xpu i+4), else refused or approximated.
std::optional<std::vector<Dimension>> Finder::insideHost() {
  const uint32_t k = net_.npusPerHost;
  std::vector<uint32_t> firsts;   // first NPU of the first copy of each host device
  std::vector<uint32_t> seenDevice;
  for (uint32_t h = 0; h < net_.hosts; ++h) {
    uint32_t dev = g_.instances()[g_.instanceOf(ep_[h * k])].device;
    if (std::find(seenDevice.begin(), seenDevice.end(), dev) == seenDevice.end()) {
      seenDevice.push_back(dev);
      firsts.push_back(h * k);
    }
  }
  const std::string host = g_.deviceName(ep_[0]).str();
  // Every group of the split must be the same dimension.
  auto same = [](const Dimension &x, const Dimension &y) {
    return x.shape == y.shape && x.bytesPerSecond == y.bytesPerSecond &&
           x.latencyNs == y.latencyNs;
  };
  std::string why1;
  {
    std::optional<Dimension> d;
    bool ok = true;
    for (uint32_t f : firsts) {
      std::vector<uint32_t> all(k);
      for (uint32_t j = 0; j < k; ++j)
        all[j] = f + j;
      std::string why;
      auto x = classify(all, why);
      if (failed_)
        return std::nullopt;
      if (!x || (d && !same(*d, *x))) {
        ok = false;
        if (why1.empty())
          why1 = why.empty() ? "hosts differ inside" : why;
        break;
      }
      d = x;
    }
    if (ok) {
      d->what = fmt::format("the {} xpus inside each host ({})", k, host);
      return std::vector<Dimension>{*d};
    }
  }
  for (uint32_t a = k / 2; a >= 2; --a) {
    if (k % a != 0 || k / a < 2)
      continue;
    const uint32_t b = k / a;
    std::optional<Dimension> d0, d1;
    bool ok = true;
    for (uint32_t f : firsts) {
      for (uint32_t base = 0; base < k && ok; base += a) {
        std::vector<uint32_t> g;
        for (uint32_t j = 0; j < a; ++j)
          g.push_back(f + base + j);
        std::string why;
        auto x = classify(g, why);
        if (failed_)
          return std::nullopt;
        ok = x && (!d0 || same(*d0, *x));
        if (ok)
          d0 = x;
      }
      for (uint32_t c = 0; c < a && ok; ++c) {
        std::vector<uint32_t> g;
        for (uint32_t j = 0; j < b; ++j)
          g.push_back(f + c + j * a);
        std::string why;
        auto x = classify(g, why);
        if (failed_)
          return std::nullopt;
        ok = x && (!d1 || same(*d1, *x));
        if (ok)
          d1 = x;
      }
    }
    if (ok) {
      d0->what = fmt::format("runs of {} consecutive xpus inside each host ({})", a, host);
      d1->what = fmt::format("every {}th xpu inside each host ({})", a, host);
      return std::vector<Dimension>{*d0, *d1};
    }
  }
  std::string why = fmt::format(
      "the xpus inside {} are neither fully connected, nor a ring in index order, nor behind "
      "switches they all reach alike, nor a product of two such groups ({})",
      g_.composedDeviceName(ep_[0]), why1);
  if (!approx_) {
    diags_.error(where_, why + "; -astra-approx models them as one Switch with the largest "
                              "latency and the smallest bandwidth");
    failed_ = true;
    return std::nullopt;
  }
  int64_t ps = 0;
  double bps = 0;
  for (uint32_t a = 0; a < k; ++a)
    for (uint32_t b = a + 1; b < k; ++b) {
      if (k > 32 && a != 0 && b != a + 1)
        continue;
      auto c = cost(a, b);
      if (!c)
        return std::nullopt;
      ps = std::max(ps, c->ps);
      bps = bps == 0 ? c->bps : std::min(bps, c->bps);
    }
  Dimension d;
  d.npus = k;
  d.shape = DimShape::Switch;
  d.latencyNs = double(ps) / 2000;
  d.bytesPerSecond = bps / 8;
  d.what = fmt::format("the {} xpus inside each host ({}, approximated)", k, host);
  net_.approximations.push_back(
      fmt::format("dimension 0: {}; modelled as a Switch of {} NPUs at {} per hop, {}", why, k,
                  nsText(d.latencyNs), gbps(bps)));
  return std::vector<Dimension>{d};
}

// Distance classes from the first NPU of host 0 to the first NPU of every host.
bool Finder::betweenHosts(std::vector<Dimension> &dims) {
  const uint32_t k = net_.npusPerHost, H = net_.hosts;
  std::vector<Cost> to(H);
  {
    std::vector<NodeId> targets;
    for (uint32_t h = 1; h < H; ++h)
      targets.push_back(ep_[h * k]);
    paths_.precompute({ep_[0]}, {targets});
  }
  for (uint32_t h = 1; h < H; ++h) {
    auto c = cost(0, h * k);
    if (!c)
      return false;
    to[h] = *c;
  }
  // Classes ordered by path length, then latency.
  auto key = [&](uint32_t h) { return std::pair(to[h].links, to[h].ps); };
  std::map<std::pair<uint32_t, int64_t>, std::vector<uint32_t>> classes;
  for (uint32_t h = 1; h < H; ++h)
    classes[key(h)].push_back(h);
  // Nested: class m holds exactly hosts [s_{m-1}, s_m), s_{m-1} dividing s_m.
  bool nested = true;
  uint32_t s = 1;
  std::vector<std::pair<uint32_t, uint32_t>> groups;   // (size, a host of the class)
  std::string witness;
  for (auto &[kk, hosts] : classes) {
    uint32_t next = s + uint32_t(hosts.size());
    if (hosts.front() != s || hosts.back() != next - 1) {
      // A host numbered inside the class's range that is not in it.
      uint32_t missing = s;
      while (std::binary_search(hosts.begin(), hosts.end(), missing))
        ++missing;
      nested = false;
      witness = fmt::format("from {}, {} and {} are {} link(s) away but {}, numbered between "
                            "them, is {}",
                            npu(0), npu(hosts.front() * k), npu(hosts.back() * k), kk.first,
                            npu(std::min(missing, H - 1) * k), to[std::min(missing, H - 1)].links);
      break;
    }
    if (next % s != 0) {
      nested = false;
      witness = fmt::format("from {}, the {} nearest host(s) and the {} next nearest do not "
                            "make groups of equal size ({} is {} link(s) away, {} is {})",
                            npu(0), s - 1, next - s, npu((s - 1) * k),
                            s > 1 ? to[s - 1].links : 0, npu(s * k), to[s].links);
      break;
    }
    groups.push_back({next / s, hosts.front()});
    s = next;
  }
  if (nested) {
    for (auto [size, h] : groups) {
      Dimension d;
      d.npus = size;
      const Cost &c = to[h];
      d.shape = c.switches == 0 ? DimShape::FullyConnected : DimShape::Switch;
      d.latencyNs = double(c.ps) / (d.shape == DimShape::Switch ? 2000 : 1000);
      d.bytesPerSecond = c.bps / 8;
      d.what = fmt::format("{} {} joined by paths of {} link(s) through {} switch(es)", size,
                           groups.size() == 1 ? "hosts" : "groups of hosts", c.links,
                           c.switches);
      dims.push_back(d);
    }
    return true;
  }
  // A ring of hosts: host h at ring distance min(h, H-h) hops of the first's cost.
  if (H >= 3) {
    // Hop counts grow by a fixed number of links per ring step (hosts with NICs add
    // the same links at both ends), so distances hold even without latencies.
    const int64_t hopLinks = H >= 4 ? int64_t(to[2].links) - int64_t(to[1].links) : 1;
    bool ring = to[1].switches == 0 && hopLinks >= 1;
    for (uint32_t h = 1; h < H && ring; ++h) {
      uint32_t dist = std::min(h, H - h);
      ring = to[h].ps == int64_t(dist) * to[1].ps && to[h].bps == to[1].bps &&
             int64_t(to[h].links) == int64_t(to[1].links) + int64_t(dist - 1) * hopLinks;
    }
    if (ring) {
      Dimension d;
      d.shape = DimShape::Ring;
      d.npus = H;
      d.latencyNs = double(to[1].ps) / 1000;
      d.bytesPerSecond = to[1].bps / 8;
      d.what = fmt::format("a ring of {} hosts", H);
      dims.push_back(d);
      return true;
    }
  }
  std::string why = fmt::format(
      "the hosts do not form nested switch groups or a ring (as a dragonfly or a mesh "
      "does not): {}",
      witness);
  if (!approx_) {
    diags_.error(where_, why + "; -astra-approx models them as one Switch with the largest "
                              "latency and the smallest bandwidth");
    return false;
  }
  Dimension d;
  d.shape = DimShape::Switch;
  d.npus = H;
  int64_t ps = 0;
  double bps = to[1].bps;
  for (uint32_t h = 1; h < H; ++h) {
    ps = std::max(ps, to[h].ps);
    bps = std::min(bps, to[h].bps);
  }
  d.latencyNs = double(ps) / 2000;
  d.bytesPerSecond = bps / 8;
  d.what = fmt::format("all {} hosts (approximated)", H);
  net_.approximations.push_back(
      fmt::format("hosts: {}; modelled as one Switch of {} at {} per hop, {}", why, H,
                  nsText(d.latencyNs), gbps(bps)));
  dims.push_back(d);
  return true;
}

// Every host, at the first and last xpu index, against its neighbour in each
// dimension between hosts.
bool Finder::checkEveryHost(std::vector<Dimension> &dims, size_t first) {
  const uint32_t k = net_.npusPerHost, H = net_.hosts;
  uint64_t stride = 1;   // hosts per step of the dimension
  for (size_t m = first; m < dims.size(); ++m) {
    Dimension &d = dims[m];
    const Cost expect{int64_t(std::llround(d.latencyNs *
                                           (d.shape == DimShape::Switch ? 2000 : 1000))),
                      d.bytesPerSecond * 8, 0, 0};
    // Sources sampled evenly when there are many hosts.
    const uint32_t step = std::max<uint32_t>(1, H / 4096);
    std::string firstMismatch;
    int64_t worstPs = expect.ps;
    double worstBps = expect.bps;
    for (uint32_t h = 0; h < H; h += step) {
      uint32_t c = uint32_t((h / stride) % d.npus);
      uint32_t partner = uint32_t(h + (int64_t((c + 1) % d.npus) - int64_t(c)) * int64_t(stride));
      for (uint32_t j : {0u, k - 1}) {
        auto got = cost(h * k + j, partner * k + j);
        if (!got)
          return false;
        if (got->ps != expect.ps || got->bps != expect.bps) {
          if (firstMismatch.empty())
            firstMismatch = fmt::format("{} to {} is {}, {}", npu(h * k + j),
                                        npu(partner * k + j), nsText(double(got->ps) / 1000),
                                        gbps(got->bps));
          worstPs = std::max(worstPs, got->ps);
          worstBps = std::min(worstBps, got->bps);
        }
      }
    }
    stride *= d.npus;
    if (firstMismatch.empty())
      continue;
    std::string why = fmt::format(
        "dimension {} ({}): the path from {} to {} is {}, {}, but {}", m, d.what, npu(0),
        npu(uint32_t(std::min<uint64_t>(stride / d.npus, H - 1)) * k),
        nsText(double(expect.ps) / 1000), gbps(expect.bps), firstMismatch);
    if (!approx_) {
      diags_.error(where_, why + "; -astra-approx takes the largest latency and the smallest "
                                "bandwidth");
      return false;
    }
    d.latencyNs = double(worstPs) / (d.shape == DimShape::Switch ? 2000 : 1000);
    d.bytesPerSecond = worstBps / 8;
    net_.approximations.push_back(fmt::format("{}; took {} per hop, {}", why,
                                              nsText(d.latencyNs), gbps(worstBps)));
  }
  return true;
}

// Bandwidth an NPU has alone but shares in the fabric: NICs shared by several xpus,
// and oversubscribed switch tiers below a dimension.
bool Finder::foldShares(std::vector<Dimension> &dims, size_t first) {
  if (first >= dims.size())
    return true;
  const uint32_t k = net_.npusPerHost;
  AttachPoints ap(g_);
  std::vector<NodeId> nics;
  for (uint32_t j = 0; j < k; ++j)
    nics.push_back(ap.nearest(ep_[j]));
  std::sort(nics.begin(), nics.end());
  nics.erase(std::unique(nics.begin(), nics.end()), nics.end());
  std::vector<std::string> folds;
  if (nics.size() < k) {
    const double share = double(k) / double(nics.size());
    std::string what = fmt::format("the {} xpus of each host share {} NIC(s)", k, nics.size());
    if (!approx_) {
      diags_.error(where_, what + ": the analytical backend gives every NPU its own link in "
                                  "each dimension between hosts; -astra-approx divides their "
                                  "bandwidth by " + fmt::format("{:g}", share));
      return false;
    }
    for (size_t m = first; m < dims.size(); ++m) {
      folds.push_back(fmt::format("{}: dimension {} bandwidth {} -> {}", what, m,
                                  gbps(dims[m].bytesPerSecond * 8),
                                  gbps(dims[m].bytesPerSecond * 8 / share)));
      dims[m].bytesPerSecond /= share;
    }
  }
  StructureOptions so;
  so.bisection = false;
  so.diameter = false;
  FabricStructure st = analyzeFabricStructure(g_, so);
  // Dimension first+1 leaves the tier-0 switches, first+2 the tier-1 ones, ...
  double factor = 1;
  for (size_t m = first + 1; m < dims.size(); ++m) {
    size_t t = m - first - 1;
    if (t >= st.tiers.size() || !st.tiers[t].oversubscription)
      break;
    double r = *st.tiers[t].oversubscription;
    if (r > 1 + 1e-9) {
      std::string what = fmt::format("tier {}: {:g}:1 oversubscription", t, r);
      if (!approx_) {
        diags_.error(where_, what + fmt::format(" (down {}, up {}): the analytical backend "
                                                "gives every NPU its own link in each "
                                                "dimension; -astra-approx folds the ratio into "
                                                "the bandwidth of dimension {} and above",
                                                gbps(st.tiers[t].downBps),
                                                gbps(st.tiers[t].upBps), m));
        return false;
      }
      factor *= r;
    }
    if (factor > 1) {
      folds.push_back(fmt::format("tier {}: {:g}:1 oversubscription folded into dimension {} "
                                  "bandwidth {} -> {}",
                                  t, factor, m, gbps(dims[m].bytesPerSecond * 8),
                                  gbps(dims[m].bytesPerSecond * 8 / factor)));
      dims[m].bytesPerSecond /= factor;
    }
  }
  for (auto &f : folds)
    net_.approximations.push_back(std::move(f));
  return true;
}

llvm::Expected<AnalyticalNetwork> Finder::run() {
  if (ep_.size() < 2)
    return fail(fmt::format("ASTRA-sim needs at least 2 NPUs; the fabric has {} endpoint(s)",
                            ep_.size()));
  if (!hostsAlike())
    return reportedError();
  std::vector<Dimension> dims;
  if (net_.npusPerHost > 1) {
    auto d = insideHost();
    if (!d)
      return reportedError();
    dims.insert(dims.end(), d->begin(), d->end());
  }
  const size_t first = dims.size();
  if (net_.hosts > 1) {
    if (!betweenHosts(dims) || !checkEveryHost(dims, first) || !foldShares(dims, first))
      return reportedError();
  }
  if (failed_)
    return reportedError();
  for (auto &d : dims)
    if (d.npus > 1)
      net_.dims.push_back(d);
  return std::move(net_);
}

} // namespace

llvm::Expected<AnalyticalNetwork> analyticalNetwork(const FabricGraph &g,
                                                    std::vector<int64_t> switchPs,
                                                    bool approximate, DiagEngine &diags,
                                                    llvm::StringRef where) {
  Finder f(g, std::move(switchPs), approximate, diags, where);
  return f.run();
}

} // namespace infracc::astra
