#include "backends/sim/FlowSharing.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace infracc::sim {

namespace {
// Drain times closer than this (relative) are one instant: rounding in the rates must
// not split flows that a hand computation finishes together.
constexpr double SameInstant = 1e-12;
double instantEnd(double t) { return t + std::max(1e-9, std::abs(t) * SameInstant); }
} // namespace

FlowSharing::FlowSharing(std::vector<double> capacity)
    : capacity_(std::move(capacity)), onLink_(capacity_.size()),
      linkMark_(capacity_.size(), 0), seeded_(capacity_.size(), 0),
      load_(capacity_.size(), 0), weight_(capacity_.size(), 0),
      unfrozen_(capacity_.size(), 0),
      stats_(capacity_.size()), count_(capacity_.size(), 0),
      busySince_(capacity_.size(), 0) {}

uint32_t FlowSharing::addRoute(llvm::ArrayRef<RouteHop> hops) {
  for (const RouteHop &h : hops) {
    assert(h.link < capacity_.size() && h.weight > 0 && h.weight <= 1 + 1e-9);
    hops_.push_back(h);
  }
  routeBegin_.push_back(static_cast<uint32_t>(hops_.size()));
  return static_cast<uint32_t>(routeBegin_.size() - 2);
}

void FlowSharing::start(uint32_t token, uint32_t id, uint32_t route, uint64_t start,
                        uint64_t bytes, uint64_t latency) {
  // A flow cannot enter the past (the caller keeps starts at or after the present).
  if (double(start) < now_)
    start = static_cast<uint64_t>(std::ceil(now_));
  pending_.push({start, seq_++, token, id, route, bytes, latency});
}

// A flow's queued drain times are lower bounds of its drain: a new entry is queued when
// its drain moves earlier, and an entry found earlier than the flow's drain is moved to
// it (rates change often; most changes move drains later).
bool FlowSharing::settleTop() {
  while (!drains_.empty()) {
    Drain d = drains_.top();
    const Flow &fl = flows_[d.flow];
    if (fl.version != d.version) {
      drains_.pop();
      continue;
    }
    if (d.time < fl.finish) {
      drains_.pop();
      d.time = fl.finish;
      drains_.push(d);
      continue;
    }
    return true;
  }
  return false;
}

double FlowSharing::nextTime() {
  double t = settleTop() ? drains_.top().time : Never;
  if (!pending_.empty())
    t = std::min(t, static_cast<double>(pending_.top().time));
  if (!seeds_.empty())   // changes waiting for the next recomputation (-flow-resolution)
    t = std::min(t, lastRecompute_ + resolution_);
  return t;
}

void FlowSharing::touchLink(uint32_t l, int delta, double now) {
  if (delta > 0) {
    if (count_[l]++ == 0)
      busySince_[l] = now;
    stats_[l].peakFlows = std::max(stats_[l].peakFlows, count_[l]);
  } else if (--count_[l] == 0) {
    stats_[l].busy += now - busySince_[l];
  }
  if (!seeded_[l]) {
    seeded_[l] = 1;
    seeds_.push_back(l);
  }
}

void FlowSharing::join(const Pending &p, double now) {
  ++started_;
  llvm::ArrayRef<RouteHop> hops = route(p.route);
  if (hops.empty() || p.bytes == 0) {
    // Nothing to share (a message that stays on its node, or no bytes): drained now.
    if (keep_)
      records_.push_back({p.id, p.route, p.time, p.bytes, p.latency, now});
    immediate_.push_back({now, p.seq, p.token, p.latency});
    return;
  }
  uint32_t f;
  if (!freeSlots_.empty()) {
    f = freeSlots_.back();
    freeSlots_.pop_back();
  } else {
    f = static_cast<uint32_t>(flows_.size());
    flows_.push_back({});
    startSeq_.push_back(0);
  }
  Flow &fl = flows_[f];
  fl = Flow{p.token, p.id, p.route, p.time, p.bytes, p.latency, double(p.bytes), 0, now, Never,
            fl.version + 1, fl.mark, false};
  startSeq_[f] = p.seq;
  joined_.push_back(f);
  peakActive_ = std::max(peakActive_, ++active_);
  for (const RouteHop &h : hops) {
    onLink_[h.link].push_back(f);
    stats_[h.link].bytes += h.weight * double(p.bytes);
    touchLink(h.link, +1, now);
  }
}

void FlowSharing::leave(uint32_t f, double now) {
  Flow &fl = flows_[f];
  if (keep_)
    records_.push_back({fl.id, fl.route, fl.start, fl.bytes, fl.latency, fl.finish});
  if (fl.bytes != 0)
    for (const RouteHop &h : route(fl.route)) {
      load_[h.link] -= h.weight * fl.rate;
      std::vector<uint32_t> &v = onLink_[h.link];
      auto it = std::find(v.begin(), v.end(), f);
      assert(it != v.end());
      *it = v.back();
      v.pop_back();
      touchLink(h.link, -1, now);
    }
  ++fl.version;   // invalidates its queued drain
  --active_;
  freeSlots_.push_back(f);
}

void FlowSharing::advance(llvm::function_ref<void(uint32_t, uint64_t)> deliver) {
  const double now = nextTime();
  if (now == Never)
    return;
  now_ = now;
  // Flows that drained at this instant leave first, then the flows starting join.
  const double end = instantEnd(now);
  done_.clear();
  joined_.clear();
  while (settleTop() && drains_.top().time <= end) {
    Drain d = drains_.top();
    drains_.pop();
    Flow &fl = flows_[d.flow];
    done_.push_back({fl.finish, d.startSeq, fl.token, fl.latency});
    leave(d.flow, now);
  }
  while (!pending_.empty() && double(pending_.top().time) <= now) {
    Pending p = pending_.top();
    pending_.pop();
    join(p, now);
  }
  if (!seeds_.empty() && now >= lastRecompute_ + resolution_) {
    if (resolution_ == 0 && done_.empty() && joinAlone(now)) {
      for (uint32_t l : seeds_)
        seeded_[l] = 0;
      seeds_.clear();
    } else {
      recompute(now);
    }
    lastRecompute_ = now;
  }
  for (const Done &d : done_)
    deliver(d.token, static_cast<uint64_t>(std::llround(std::max(0.0, d.drained))) + d.latency);
  for (const Done &d : immediate_)
    deliver(d.token, static_cast<uint64_t>(std::llround(std::max(0.0, d.drained))) + d.latency);
  immediate_.clear();
}

// Flows that only start (none ends) often leave everybody else's rate as it is: a new
// flow whose links all have spare capacity takes the smallest spare (in its weights) and
// is max-min fair if no flow on that link, its bottleneck, has a larger rate. Every other
// flow keeps its bottleneck (the new flow passes no saturated link), so this is the
// allocation progressive filling would give, without the component's recomputation.
bool FlowSharing::joinAlone(double now) {
  for (uint32_t f : joined_) {
    Flow &fl = flows_[f];
    double rate = Never;
    uint32_t bottleneck = ~0u;
    for (const RouteHop &h : route(fl.route)) {
      if (capacity_[h.link] == Never)
        continue;
      const double spare = capacity_[h.link] - load_[h.link];
      if (!(spare > capacity_[h.link] * 1e-9))
        return false;
      if (spare / h.weight < rate) {
        rate = spare / h.weight;
        bottleneck = h.link;
      }
    }
    if (bottleneck == ~0u)
      return false;
    for (uint32_t g : onLink_[bottleneck])
      if (g != f && flows_[g].rate > rate * (1 + 1e-12))
        return false;
    fl.rate = rate;
    for (const RouteHop &h : route(fl.route))
      load_[h.link] += h.weight * rate;
    fl.since = now;
    fl.finish = now + fl.remaining / rate;
    drains_.push({fl.finish, startSeq_[f], f, fl.version});
    ++rateUpdates_;
    ++alone_;
  }
  return true;
}

void FlowSharing::recompute(double now) {
  ++recomputations_;
  // The connected set of links and flows the changed links belong to.
  const uint32_t mark = ++epoch_;
  compLinks_.clear();
  compFlows_.clear();
  std::vector<uint32_t> &stack = stack_;
  for (uint32_t l : seeds_) {
    seeded_[l] = 0;
    linkMark_[l] = mark;
    stack.push_back(l);
  }
  seeds_.clear();
  while (!stack.empty()) {
    uint32_t l = stack.back();
    stack.pop_back();
    compLinks_.push_back(l);
    for (uint32_t f : onLink_[l]) {
      Flow &fl = flows_[f];
      if (fl.mark == mark)
        continue;
      fl.mark = mark;
      compFlows_.push_back(f);
      for (const RouteHop &h : route(fl.route))
        if (linkMark_[h.link] != mark) {
          linkMark_[h.link] = mark;
          stack.push_back(h.link);
        }
    }
  }

  // Settle what each flow sent at its old rate, then fill.
  for (uint32_t f : compFlows_) {
    Flow &fl = flows_[f];
    fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now - fl.since));
    fl.since = now;
    fl.frozen = false;
  }
  for (uint32_t l : compLinks_) {
    load_[l] = 0;
    weight_[l] = 0;
    unfrozen_[l] = 0;
  }
  for (uint32_t f : compFlows_)
    for (const RouteHop &h : route(flows_[f].route)) {
      weight_[h.link] += h.weight;
      ++unfrozen_[h.link];
    }
  // Progressive filling. Freezing flows at the lowest share only raises the share of
  // the other links, so each link's queued share is a lower bound: a link whose share
  // has grown since is queued again at its share instead of being filled.
  // (a min-heap on share, ties by link)
  auto later = [](const Level &x, const Level &y) {
    return x.share != y.share ? x.share > y.share : x.link > y.link;
  };
  std::vector<Level> &levels = levels_;
  levels.clear();
  auto shareOf = [&](uint32_t l) { return std::max(0.0, capacity_[l] - load_[l]) / weight_[l]; };
  for (uint32_t l : compLinks_)
    if (unfrozen_[l] && capacity_[l] != Never)
      levels.push_back({shareOf(l), l});
  std::make_heap(levels.begin(), levels.end(), later);
  while (!levels.empty()) {
    std::pop_heap(levels.begin(), levels.end(), later);
    Level lv = levels.back();
    levels.pop_back();
    if (unfrozen_[lv.link] == 0)
      continue;
    const double share = shareOf(lv.link);
    if (share > lv.share + std::max(1e-300, lv.share * 1e-12)) {
      levels.push_back({share, lv.link});
      std::push_heap(levels.begin(), levels.end(), later);
      continue;
    }
    for (uint32_t f : onLink_[lv.link]) {
      Flow &fl = flows_[f];
      if (fl.frozen)
        continue;
      fl.frozen = true;
      fl.rate = share;
      for (const RouteHop &h : route(fl.route)) {
        load_[h.link] += h.weight * share;
        weight_[h.link] -= h.weight;
        --unfrozen_[h.link];
      }
    }
  }
  for (uint32_t f : compFlows_) {
    Flow &fl = flows_[f];
    ++rateUpdates_;
    double finish = fl.rate > 0 ? now + fl.remaining / fl.rate : Never;
    if (finish < fl.finish)
      drains_.push({finish, startSeq_[f], f, fl.version});
    fl.finish = finish;
  }
}

} // namespace infracc::sim
