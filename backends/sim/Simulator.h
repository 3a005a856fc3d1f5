// The built-in LogGOPS simulator: runs a lowered Schedule (send/recv/calc) under one
// of two engines and returns finishing times, counters, and, when asked, the critical
// path and a trace for timelines.
//
//   Engine::Lgs     LogGOPSim v1 (spcl/LogGOPSim), bit for bit: the same event order,
//                   tie-breaking, std::sort of freed ops, uint64 wrap-around.
//   Engine::Atlahs  ATLAHS's modified LogGOPSim (spcl/atlahs sim/LogGOPSim).
//
// docs/sim.md describes the rules; this header is the API other components use (the
// -emit=sim target, the timeline renderer, the topology-aware model).
#pragma once

#include "backends/sim/LogGP.h"
#include "backends/sim/SimTrace.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc {
class Progress;
class Schedule;
}

namespace infracc::sim {

enum class Engine : uint8_t { Lgs, Atlahs };

struct SimOptions {
  Engine engine = Engine::Lgs;
  LogGPParams params;
  /// Per-pair L and G; null means the uniform params.L and params.G.
  const LinkCostModel *costs = nullptr;
  /// A network that decides when messages arrive (Engine::Lgs only); null: after L.
  MessageNetwork *network = nullptr;
  /// Filled with busy intervals and messages when non-null.
  SimTrace *trace = nullptr;
  /// Record what is needed to extract the critical path (SimResult::criticalPath).
  bool criticalPath = false;
  /// Shown while the simulation runs: ops done of all, events per second, simulated
  /// time (checked every 65536 events; nothing at all is done per event without one).
  Progress *progress = nullptr;
  /// Stop once more than this many events (LogGOPSim's count) have been scheduled, for a
  /// bounded look at a big run (0: no limit); SimResult::stoppedAtEvents says it
  /// happened. Checked after each event (the roots: after each rank's), so a run stops a
  /// little past the limit.
  uint64_t maxEvents = 0;
  /// A schedule viewed in a mapped file that is read page by page (larger than the
  /// memory, Schedule::adviseSimulationAccess): ask for this many bytes ahead of each
  /// rank's records and successor entries as the rank advances, so that they are read
  /// in pieces of this size while the simulation goes on instead of a page per fault.
  /// 0: as the schedule's advice says (simulate() asks it); only advice, the results
  /// do not change.
  uint64_t streamWindow = 0;
};

/// Time categories of the critical path (docs/sim.md defines them).
enum class Category : uint8_t { Computation, Overhead, Gap, Latency, Bandwidth, Wait };
inline constexpr unsigned NumCategories = 6;
const char *categoryName(Category c);

/// How a critical-path step waited for its predecessor.
enum class Via : uint8_t {
  Start,        // nothing: started at time 0
  Cpu,          // its CPU (o clock) became free
  Nic,          // its NIC's send or receive gap clock became free
  Arrival,      // the message arrived (predecessor: the send)
  Dependency,   // a requires-predecessor finished (atlahs engine)
};
const char *viaName(Via v);

enum class StepKind : uint8_t {
  Calc,        // a calc op
  Send,        // a send op acquiring its CPU and NIC
  Message,     // a message being received (o and g charged at the receiver)
  Recv,        // a recv op matched against the unexpected queue
};

struct PathStep {
  StepKind kind = StepKind::Calc;
  Via via = Via::Start;          // how this step's start was determined
  uint32_t rank = 0;             // where the step ran (for Message: the receiver)
  uint32_t op = 0;               // global op index (for Message: the send op)
  uint32_t peer = 0;             // Message: the sending rank; Send: the destination
  uint64_t start = 0, end = 0;   // the part of the makespan this step accounts for
  int64_t amount[NumCategories] = {};
};

struct CriticalPath {
  bool valid = false;
  std::vector<PathStep> steps;             // in time order
  int64_t total[NumCategories] = {};       // sums to the makespan
};

/// An operation that never completed, or a message nobody received.
struct StuckItem {
  enum Why : uint8_t {
    WaitsForDependencies,   // never became executable (a dependency never finished)
    RecvUnmatched,          // recv posted, no matching message arrived
    RendezvousUnmatched,    // rendezvous send; the receiver never matched it
    MessageUnreceived,      // message arrived at `rank`, no recv ever matched it
  };
  Why why = WaitsForDependencies;
  uint32_t rank = 0;            // MessageUnreceived: the destination rank
  uint32_t op = 0;              // global op index (MessageUnreceived: the send op)
  uint32_t pending = 0;         // WaitsForDependencies: unfinished dependencies
  uint32_t total = 0;           // WaitsForDependencies: all dependencies
  uint64_t time = 0;            // when it was posted / arrived / started
};

/// ATLAHS's engine asserts that a recv matched from the unexpected queue was posted no
/// earlier than its message arrived (a recv freed by irequires is posted at time 0),
/// and aborts otherwise. The atlahs model stops there too and says so.
struct CausalityAbort {
  uint32_t rank = 0, recvOp = 0;   // the recv (global op index)
  uint32_t srcRank = 0, sendOp = 0;
  uint64_t posted = 0, arrived = 0;
};

struct SimResult {
  Engine engine = Engine::Lgs;
  uint32_t numRanks = 0, numCpus = 0, numNics = 0;
  std::vector<uint64_t> cpuFinish;    // [rank * numCpus + cpu]: the CPU's o clock at the end
  std::vector<uint64_t> hostFinish;   // per rank: max over its CPUs (LogGOPSim's host time)
  uint64_t makespan = 0;
  uint32_t makespanRank = 0;          // lowest rank with the makespan

  uint64_t events = 0;         // LogGOPSim's count: ops made executable + messages
  uint64_t reinsertions = 0;   // events put back because a resource was busy
  uint64_t opsDone = 0;
  uint64_t readAheadRequests = 0;   // windows asked for (SimOptions::streamWindow)
  uint64_t messages = 0, bytes = 0, eager = 0, rendezvous = 0;
  double wallSeconds = 0;      // time spent in the event loop

  /// Sum over messages of bytes*8/200, divided by the count (ATLAHS's "Average FCT").
  double atlahsAverageFct = 0;

  std::vector<StuckItem> stuck;   // empty when the schedule finished
  bool aborted = false;           // stopped early: see stoppedAtEvents, else CausalityAbort
  CausalityAbort abort;           // atlahs engine only
  uint64_t stoppedAtEvents = 0;   // SimOptions::maxEvents was reached (aborted is set)
  uint64_t stoppedAtTime = 0;     // the simulated time then, ns
  CriticalPath criticalPath;      // when SimOptions::criticalPath

  bool finished() const { return stuck.empty() && !aborted; }
};

/// The most operations the engine handles: it names ops with 31 bits, which keeps an
/// event queue entry at 16 bytes.
inline constexpr uint64_t MaxSimOps = 0x7FFFFFFF;

/// Checks that the schedule can be simulated (only send/recv/calc, peers in range, at
/// most MaxSimOps operations); the message names the first offending op.
llvm::Error checkSimulatable(const Schedule &s);

/// Runs the simulation. The schedule must pass checkSimulatable.
SimResult simulate(const Schedule &s, const SimOptions &opts);

} // namespace infracc::sim
