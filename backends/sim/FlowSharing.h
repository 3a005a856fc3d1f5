// Fluid bandwidth sharing for -sim-model=flow: flows over directed links of fixed
// capacity get max-min fair rates (progressive filling), recomputed whenever flows
// start or end, for the connected set of flows and links that the change touches only.
//
// A flow crosses each link of its route with a weight: 1 for a single path, the share
// of its equal-cost paths through the link when it is sprayed over several (a flow of
// rate r loads a link by weight * r). A flow's bytes drain at its rate; it is
// delivered `latency` ns after its last byte left (the path's latency, pipelined).
//
// Times are ns. Flows start at integer times; drain times are real numbers and the
// delivery time is the drain time rounded to the nearest ns, plus the latency.
// Nothing here knows the fabric: backends/sim/FlowModel.cpp builds the routes.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

namespace infracc::sim {

struct RouteHop {
  uint32_t link;    // directed link
  double weight;    // share of the flow's rate on it, (0, 1]
};

class FlowSharing {
public:
  static constexpr double Never = std::numeric_limits<double>::infinity();

  /// Per directed link: bytes per ns; Never (infinite) links are never a bottleneck.
  explicit FlowSharing(std::vector<double> capacity);

  /// Registers a route (hops on distinct links); returns its id.
  uint32_t addRoute(llvm::ArrayRef<RouteHop> hops);
  /// Bytes per ns of directed link l.
  double capacity(uint32_t l) const { return capacity_[l]; }
  llvm::ArrayRef<RouteHop> route(uint32_t id) const {
    return {hops_.data() + routeBegin_[id], hops_.data() + routeBegin_[id + 1]};
  }

  /// A flow of `bytes` over route `route`, entering the network at `start` (which may
  /// be later than what has been simulated so far, never earlier); `token` comes back
  /// with its delivery; `id` names it in records.
  void start(uint32_t token, uint32_t id, uint32_t route, uint64_t start, uint64_t bytes,
             uint64_t latency);

  /// When the next flow starts or drains; Never when nothing is left.
  double nextTime();
  /// Processes every start and drain at nextTime(), recomputes the rates once, and calls
  /// deliver(token, deliveryTime) for each drained flow, in drain order (ties: start
  /// order).
  void advance(llvm::function_ref<void(uint32_t token, uint64_t delivery)> deliver);

  /// Recompute rates at most once per `ns` (0, the default: at every start and drain).
  /// Flows that start in between wait for the next recomputation (they send nothing
  /// until then); a drained flow's bandwidth goes to the others at the next one.
  void setResolution(double ns) { resolution_ = ns; }
  double resolution() const { return resolution_; }

  /// Per-flow records (start, drain, bytes, route) are kept when asked before any start.
  struct FlowRecord {
    uint32_t id, route;
    uint64_t start, bytes, latency;
    double drained;
  };
  void keepRecords() { keep_ = true; }
  const std::vector<FlowRecord> &records() const { return records_; }

  struct LinkStats {
    double bytes = 0;          // carried (weight * flow bytes)
    double busy = 0;           // ns with at least one flow on it
    uint32_t peakFlows = 0;    // most flows at once
  };
  const std::vector<LinkStats> &linkStats() const { return stats_; }

  uint64_t flowsStarted() const { return started_; }
  uint64_t peakFlowsInFlight() const { return peakActive_; }
  uint64_t recomputations() const { return recomputations_; }
  /// Starts that needed no recomputation (FlowSharing.cpp, joinAlone).
  uint64_t startsAlone() const { return alone_; }
  uint64_t flowRateUpdates() const { return rateUpdates_; }

private:
  // Flows of one route cross the same links with the same weights, so max-min gives
  // them one rate: they are a class, and the filling, the rates and the drain queue
  // work on classes. A class's members are served alike; `served` is the bytes each
  // member present all along has been sent since the class last emptied, so a member
  // drains when `served` reaches its target (served at its admission + its bytes).
  // Many flows between the same hosts at once (data-centre traces: thousands in flight
  // over a few hundred routes) then cost per route, not per flow.
  struct Flow {
    uint32_t token, id, route;
    uint64_t start, bytes, latency, seq;
  };
  struct Member {
    double target;
    uint64_t seq;   // start order: ties drain in it
    uint32_t flow;
    bool operator>(const Member &o) const {
      return target != o.target ? target > o.target : seq > o.seq;
    }
  };
  struct Class {
    uint32_t route = 0;
    double served = 0, since = 0, rate = 0;   // served as of `since`; rate per member
    double finish = Never;       // projected drain of the first member
    uint32_t version = 0;        // bumped when the first member may have changed
    uint32_t mark = 0;           // epoch of the last component walk
    bool queued = false;         // an entry of this version is in the drain queue
    bool frozen = false;
    Member first{};                // members.front(), kept here: recompute reads it only
    std::vector<Member> members;   // a min-heap on (target, seq)
  };
  struct Pending {
    uint64_t time;
    uint64_t seq;
    uint32_t token, id, route;
    uint64_t bytes, latency;
    bool operator>(const Pending &o) const {
      return time != o.time ? time > o.time : seq > o.seq;
    }
  };
  struct Drain {
    double time;
    uint64_t startSeq;   // of the class's first member
    uint32_t cls, version;
    bool operator>(const Drain &o) const {
      return time != o.time ? time > o.time : startSeq > o.startSeq;
    }
  };

  struct Level {
    double share;
    uint32_t link;
  };

  bool settleTop();
  bool joinAlone(double now);
  void join(const Pending &p, double now);
  /// A waiting flow becomes a member of its class (served from now on).
  void admit(uint32_t f, double now);
  /// The class's first member drains now.
  void drainFirst(uint32_t c, double now);
  void settle(Class &c, double now) {
    c.served += c.rate * (now - c.since);
    c.since = now;
  }
  /// Queues the class's drain when its first member's projected drain moved earlier.
  void project(uint32_t c);
  void recompute(double now);
  void touchLink(uint32_t l, int delta, double now);

  std::vector<double> capacity_;
  std::vector<RouteHop> hops_;
  std::vector<uint32_t> routeBegin_{0};

  std::vector<Flow> flows_;
  std::vector<uint32_t> freeSlots_;
  // The classes of routes with flows, in slots reused as routes empty (so that the
  // classes in use stay close together in memory, whatever the routes' numbers).
  std::vector<Class> classes_;
  std::vector<uint32_t> freeClasses_;
  std::vector<uint32_t> classOf_;                  // per route: its slot, or ~0u
  std::vector<std::vector<uint32_t>> onLink_;      // class slots, per link
  std::vector<uint32_t> linkMark_;
  std::vector<uint32_t> seeds_;                    // links whose flows changed
  std::vector<uint8_t> seeded_;
  std::vector<uint32_t> stack_;
  struct Done {
    double drained;
    uint64_t seq;
    uint32_t token;
    uint64_t latency;
  };
  std::vector<Done> done_, immediate_;
  std::vector<uint32_t> waiting_;   // flows that joined and await a recomputation
  uint32_t epoch_ = 0;

  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::priority_queue<Drain, std::vector<Drain>, std::greater<>> drains_;
  uint64_t seq_ = 0;
  double resolution_ = 0, lastRecompute_ = -Never;
  double now_ = 0;   // the last step's time

  // Progressive filling scratch, per link.
  std::vector<double> load_, weight_;
  std::vector<uint32_t> unfrozen_;
  std::vector<Level> levels_;
  std::vector<uint32_t> compLinks_, compClasses_;

  bool keep_ = false;
  std::vector<FlowRecord> records_;
  std::vector<LinkStats> stats_;
  std::vector<uint32_t> count_;
  std::vector<double> busySince_;
  uint64_t started_ = 0, active_ = 0, peakActive_ = 0, recomputations_ = 0, rateUpdates_ = 0,
           alone_ = 0;
};

} // namespace infracc::sim
