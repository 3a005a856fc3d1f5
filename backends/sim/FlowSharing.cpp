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

/// A slot of `pool`: one freed earlier, else a new one at the end.
template <class T> uint32_t takeSlot(std::vector<T> &pool, std::vector<uint32_t> &freed) {
  if (freed.empty()) {
    pool.emplace_back();
    return static_cast<uint32_t>(pool.size() - 1);
  }
  const uint32_t i = freed.back();
  freed.pop_back();
  return i;
}
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
  classOf_.push_back(~0u);
  return static_cast<uint32_t>(routeBegin_.size() - 2);
}

void FlowSharing::start(uint32_t token, uint32_t id, uint32_t route, uint64_t start,
                        uint64_t bytes, uint64_t latency) {
  // A flow cannot enter the past (the caller keeps starts at or after the present).
  if (double(start) < now_)
    start = static_cast<uint64_t>(std::ceil(now_));
  pending_.push({start, seq_++, token, id, route, bytes, latency});
}

// A class's queued drain times are lower bounds of its first member's drain: a new
// entry is queued when that drain moves earlier, and an entry found earlier than it is
// moved to it (rates change often; most changes move drains later).
bool FlowSharing::settleTop() {
  while (!drains_.empty()) {
    Drain d = drains_.top();
    const Class &c = classes_[d.cls];
    if (c.version != d.version) {
      drains_.pop();
      continue;
    }
    if (d.time < c.finish) {
      drains_.pop();
      d.time = c.finish;
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
  const uint32_t f = takeSlot(flows_, freeSlots_);
  flows_[f] = Flow{p.token, p.id, p.route, p.time, p.bytes, p.latency, p.seq};
  waiting_.push_back(f);
  peakActive_ = std::max(peakActive_, ++active_);
  for (const RouteHop &h : hops) {
    stats_[h.link].bytes += h.weight * double(p.bytes);
    touchLink(h.link, +1, now);
  }
}

void FlowSharing::admit(uint32_t f, double now) {
  const Flow &fl = flows_[f];
  uint32_t ci = classOf_[fl.route];
  if (ci == ~0u) {
    ci = classOf_[fl.route] = takeSlot(classes_, freeClasses_);
    Class &c = classes_[ci];
    // (Counting from 0 keeps `served` near the bytes of the flows in it.)
    c.route = fl.route;
    c.served = 0;
    c.since = now;
    c.rate = 0;
    c.finish = Never;
    for (const RouteHop &h : route(fl.route))
      onLink_[h.link].push_back(ci);
  } else {
    settle(classes_[ci], now);
  }
  Class &c = classes_[ci];
  c.members.push_back({c.served + double(fl.bytes), fl.seq, f});
  std::push_heap(c.members.begin(), c.members.end(), std::greater<>());
  c.first = c.members.front();
  ++c.version;   // its first member may have changed
  c.queued = false;
}

void FlowSharing::project(uint32_t ci) {
  Class &c = classes_[ci];
  const Member &first = c.first;
  const double finish =
      c.rate > 0 ? c.since + std::max(0.0, first.target - c.served) / c.rate : Never;
  if (finish != Never && (!c.queued || finish < c.finish)) {
    drains_.push({finish, first.seq, ci, c.version});
    c.queued = true;
  }
  c.finish = finish;
}

void FlowSharing::drainFirst(uint32_t ci, double now) {
  Class &c = classes_[ci];
  std::pop_heap(c.members.begin(), c.members.end(), std::greater<>());
  const Member m = c.members.back();
  c.members.pop_back();
  if (!c.members.empty())
    c.first = c.members.front();
  const Flow &fl = flows_[m.flow];
  if (keep_)
    records_.push_back({fl.id, fl.route, fl.start, fl.bytes, fl.latency, c.finish});
  done_.push_back({c.finish, m.seq, fl.token, fl.latency});
  for (const RouteHop &h : route(fl.route)) {
    load_[h.link] -= h.weight * c.rate;
    touchLink(h.link, -1, now);
  }
  ++c.version;   // invalidates its queued drain
  c.queued = false;
  --active_;
  freeSlots_.push_back(m.flow);
  if (c.members.empty()) {
    for (const RouteHop &h : route(fl.route)) {
      std::vector<uint32_t> &v = onLink_[h.link];
      auto it = std::find(v.begin(), v.end(), ci);
      assert(it != v.end());
      *it = v.back();
      v.pop_back();
    }
    c.finish = Never;
    classOf_[fl.route] = ~0u;
    freeClasses_.push_back(ci);   // (its version lives on: old queue entries stay stale)
    return;
  }
  // The next member at the same rate (until the recomputation this drain asks for).
  project(ci);
}

void FlowSharing::advance(llvm::function_ref<void(uint32_t, uint64_t)> deliver) {
  const double now = nextTime();
  if (now == Never)
    return;
  now_ = now;
  // Flows that drained at this instant leave first, then the flows starting join.
  const double end = instantEnd(now);
  done_.clear();
  while (settleTop() && drains_.top().time <= end) {
    const uint32_t c = drains_.top().cls;
    drains_.pop();
    drainFirst(c, now);
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
// (A flow joining a class that has members is recomputed: its classmates have a
// saturated link, so it cannot have spare everywhere.)
bool FlowSharing::joinAlone(double now) {
  size_t k = 0;
  for (; k < waiting_.size(); ++k) {
    const uint32_t f = waiting_[k], r = flows_[f].route;
    if (classOf_[r] != ~0u)
      break;
    double rate = Never;
    uint32_t bottleneck = ~0u;
    bool ok = true;
    for (const RouteHop &h : route(r)) {
      if (capacity_[h.link] == Never)
        continue;
      const double spare = capacity_[h.link] - load_[h.link];
      if (!(spare > capacity_[h.link] * 1e-9)) {
        ok = false;
        break;
      }
      if (spare / h.weight < rate) {
        rate = spare / h.weight;
        bottleneck = h.link;
      }
    }
    if (!ok || bottleneck == ~0u)
      break;
    bool slower = false;
    for (uint32_t c : onLink_[bottleneck])
      slower |= classes_[c].rate > rate * (1 + 1e-12);
    if (slower)
      break;
    admit(f, now);
    const uint32_t ci = classOf_[r];
    classes_[ci].rate = rate;
    for (const RouteHop &h : route(r))
      load_[h.link] += h.weight * rate;
    project(ci);
    ++rateUpdates_;
    ++alone_;
  }
  waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<ptrdiff_t>(k));
  return waiting_.empty();
}

void FlowSharing::recompute(double now) {
  ++recomputations_;
  for (uint32_t f : waiting_)
    admit(f, now);
  waiting_.clear();
  // The connected set of links and classes the changed links belong to.
  const uint32_t mark = ++epoch_;
  compLinks_.clear();
  compClasses_.clear();
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
    for (uint32_t ci : onLink_[l]) {
      Class &c = classes_[ci];
      if (c.mark == mark)
        continue;
      c.mark = mark;
      compClasses_.push_back(ci);
      for (const RouteHop &h : route(c.route))
        if (linkMark_[h.link] != mark) {
          linkMark_[h.link] = mark;
          stack.push_back(h.link);
        }
    }
  }

  // Settle what each class sent at its old rate, then fill.
  for (uint32_t ci : compClasses_) {
    Class &c = classes_[ci];
    settle(c, now);
    c.frozen = false;
  }
  for (uint32_t l : compLinks_) {
    load_[l] = 0;
    weight_[l] = 0;
    unfrozen_[l] = 0;
  }
  for (uint32_t ci : compClasses_)
    for (const RouteHop &h : route(classes_[ci].route)) {
      weight_[h.link] += h.weight * double(classes_[ci].members.size());
      ++unfrozen_[h.link];
    }
  // Progressive filling. Freezing classes at the lowest share only raises the share of
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
    for (uint32_t ci : onLink_[lv.link]) {
      Class &c = classes_[ci];
      if (c.frozen)
        continue;
      c.frozen = true;
      c.rate = share;
      const double n = double(c.members.size());
      for (const RouteHop &h : route(c.route)) {
        load_[h.link] += h.weight * n * share;
        weight_[h.link] -= h.weight * n;
        --unfrozen_[h.link];
      }
    }
  }
  for (uint32_t ci : compClasses_) {
    rateUpdates_ += classes_[ci].members.size();
    project(ci);
  }
}

} // namespace infracc::sim
