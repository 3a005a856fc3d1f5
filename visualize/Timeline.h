// Space-time diagrams of a simulation, written directly as SVG (a drawing with a
// time axis, not a graph layout):
//
//   detailed    (up to TimelineOptions::maxDetailedRanks ranks) one lane per rank and
//               compute stream, a thin NIC strip under it, boxes for computation,
//               overheads and gaps, an arrow per message from the start of its send
//               to the completion of its receive, the critical path in red.
//   aggregated  (more ranks) per-rank utilisation over time as a heat map (one row per
//               rank or per block of ranks), a utilisation curve of the whole machine
//               above it, and the critical path as a red trail across the rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infracc::viz {

enum class Activity : uint8_t {
  Compute,        // calc, on a compute stream
  SendOverhead,   // o of a send, on a compute stream
  RecvOverhead,   // o of a receive, on a compute stream
  SendGap,        // g + (s-1)G of a send, on a NIC
  RecvGap,        // g + (s-1)G of a receive, on a NIC
};
inline constexpr unsigned NumActivities = 5;

struct TimelineData {
  std::string title;
  std::vector<std::string> notes;   // lines under the title (parameters, makespan)
  uint32_t numRanks = 0;
  uint32_t cpusPerRank = 1;         // compute streams drawn per rank
  uint32_t nicsPerRank = 1;
  // What a row group and a compute stream are called in labels ("gpu", "cu" for the
  // GPU model's workgroups on compute units).
  std::string rankWord = "rank", cpuWord = "cpu";
  /// When set, the legend has this one entry (the compute colour) instead of LogGOPS's
  /// activities, messages and critical path.
  std::string computeLegend;

  struct Interval {
    uint64_t start = 0, end = 0;    // ns
    uint32_t rank = 0, unit = 0;    // unit: the cpu (compute, overheads) or nic (gaps)
    Activity kind = Activity::Compute;
    bool critical = false;
    std::string tooltip;            // optional
  };
  struct Message {
    uint64_t start = 0, end = 0;    // send start, receive completion (ns)
    uint32_t src = 0, dst = 0;      // ranks
    uint32_t srcCpu = 0, dstCpu = 0;
    uint64_t bytes = 0;
    bool critical = false;
  };
  /// A piece of the critical path: where (rank) it ran, from when to when.
  struct PathSegment {
    uint32_t rank = 0;
    uint64_t start = 0, end = 0;
  };
  std::vector<Interval> intervals;
  std::vector<Message> messages;
  std::vector<PathSegment> criticalPath;   // in time order
  uint64_t makespan = 0;
};

struct TimelineOptions {
  uint32_t maxDetailedRanks = 64;
  uint32_t plotWidth = 1000;   // pixels of the time axis
};

/// The SVG document.
std::string renderTimelineSvg(const TimelineData &data, const TimelineOptions &opts = {});

/// The time unit for an axis spanning `span` ns: its name and ns per unit
/// ("ns", 1), ("µs", 1e3), ("ms", 1e6) or ("s", 1e9).
std::pair<const char *, double> timeUnitFor(double spanNs);
/// Tick spacing (ns) for an axis of `span` ns with about `ticks` ticks: 1, 2 or 5 × 10^k.
double niceTickStep(double spanNs, unsigned ticks);

} // namespace infracc::viz
