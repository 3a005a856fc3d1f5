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
  struct Flow {
    uint32_t token, id, route;
    uint64_t start, bytes, latency;
    double remaining, rate, since;   // bytes left at `since`, current rate
    double finish;                   // projected drain time
    uint32_t version;                // bumped when `finish` changes
    uint32_t mark;                   // epoch of the last component walk
    bool frozen;
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
    uint64_t startSeq;
    uint32_t flow, version;
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
  void leave(uint32_t f, double now);
  void recompute(double now);
  void touchLink(uint32_t l, int delta, double now);

  std::vector<double> capacity_;
  std::vector<RouteHop> hops_;
  std::vector<uint32_t> routeBegin_{0};

  std::vector<Flow> flows_;
  std::vector<uint64_t> startSeq_;                 // per flow slot
  std::vector<uint32_t> freeSlots_;
  std::vector<std::vector<uint32_t>> onLink_;      // active flow slots per link
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
  std::vector<uint32_t> joined_;   // flows that joined in this step
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
  std::vector<uint32_t> compLinks_, compFlows_;

  bool keep_ = false;
  std::vector<FlowRecord> records_;
  std::vector<LinkStats> stats_;
  std::vector<uint32_t> count_;
  std::vector<double> busySince_;
  uint64_t started_ = 0, active_ = 0, peakActive_ = 0, recomputations_ = 0, rateUpdates_ = 0,
           alone_ = 0;
};

} // namespace infracc::sim
