#include "passes/FabricCosts.h"

#include "support/Units.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

#include <fmt/format.h>

#include <cmath>

namespace infracc {
namespace cl = llvm::cl;

static cl::opt<std::string> SwitchLatency(
    "switch-latency", cl::init("0"), cl::value_desc("latency"),
    cl::desc("Latency of a switch on a path where the fabric's annotations give none "
             "(attribute switch_latency), e.g. 300ns or 0.3us (a bare number is ns); used by "
             "-sim-model=topo and intranode-calc (default 0)"),
    cl::cat(opts::fabricCategory()));

static std::optional<Duration> switchLatencyOption() {
  std::optional<Duration> d = parseDuration(SwitchLatency);
  if (!d || !(d->ns >= 0) || !std::isfinite(d->ns))
    return std::nullopt;
  return d;
}

double defaultSwitchLatencyNs() {
  std::optional<Duration> d = switchLatencyOption();
  return d ? d->ns : 0;
}

llvm::Error checkSwitchLatencyOption() {
  if (!switchLatencyOption())
    return usageError("-switch-latency=" + SwitchLatency + ": not a latency of 0 or more; " +
                      DurationSpellings);
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
  std::optional<Duration> d = parseDuration(llvm::StringRef(a.value).trim());
  if (!d || !std::isfinite(d->ns) || d->ns < 0) {
    std::string msg = fmt::format("{} has {} '{}', which is not a latency of 0 or more; {}", owner,
                                  SwitchLatencyAttribute, a.value, DurationSpellings);
    if (a.loc.isValid())
      diags.error(a.loc, msg);
    else
      diags.error(where, msg);
    return std::nullopt;
  }
  return static_cast<int64_t>(std::llround(d->ns * 1000.0));
}

} // namespace

std::optional<std::vector<int64_t>> switchLatencies(const FabricGraph &g, DiagEngine &diags,
                                                    llvm::StringRef where) {
  int64_t fallback = static_cast<int64_t>(std::llround(defaultSwitchLatencyNs() * 1000.0));
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

std::string describeLink(const FabricGraph &g, LinkId l) {
  const FabricGraph::LinkInfo &info = g.link(l);
  if (info.device < 0)
    return "infrastructure link '" + info.name + "'";
  return "link '" + info.name + "' of device '" +
         g.definitions().devices[size_t(info.device)].name + "'";
}

void FabricFallbacks::note(const PathInfo &p, NodeId a, NodeId b) {
  if (!p.reachable || p.links == 0)
    return;
  bool bare = !p.bottleneckBps;
  if (bare)
    ++defaultBandwidthPaths_;
  if (!p.latencyKnown && defaultLatencyPaths_++ == 0) {
    latA_ = a;
    latB_ = b;
  }
  if (p.unpricedLink == InvalidLink)
    return;
  Use &u = links_[p.unpricedLink];
  if (u.a == InvalidNode) {
    u.a = a;
    u.b = b;
  }
  if (bare && u.bareA == InvalidNode) {
    u.bareA = a;
    u.bareB = b;
  }
}

void FabricFallbacks::report(DiagEngine &diags, llvm::StringRef where, llvm::StringRef model,
                             llvm::StringRef bandwidthDefault,
                             llvm::StringRef latencyDefault) const {
  for (const auto &[l, u] : links_) {
    std::string link = describeLink(g_, l);
    if (u.bareA != InvalidNode)
      diags.warning(where, fmt::format("{} has no bandwidth, nor has any other link on the path "
                                       "from '{}' to '{}': {} used {} there",
                                       link, g_.name(u.bareA), g_.name(u.bareB), model.str(),
                                       bandwidthDefault.str()));
    else
      diags.warning(where, fmt::format("{} has no bandwidth: {} prices the paths through it, "
                                       "e.g. '{}' to '{}', by their other links' bandwidth",
                                       link, model.str(), g_.name(u.a), g_.name(u.b)));
  }
  if (defaultLatencyPaths_ && !latencyDefault.empty())
    diags.warning(where, fmt::format("no link or switch on the path from '{}' to '{}'{} has a "
                                     "latency: {} used {} there",
                                     g_.name(latA_), g_.name(latB_),
                                     defaultLatencyPaths_ > 1
                                         ? fmt::format(" (and {} other paths)",
                                                       defaultLatencyPaths_ - 1)
                                         : std::string(),
                                     model.str(), latencyDefault.str()));
}

} // namespace infracc
