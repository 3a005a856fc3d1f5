// LogGOPS parameters of the built-in simulator, and the hook through which a model
// supplies L and G per pair of ranks (the topology-aware model takes them from the
// fabric path between the two endpoints).
//
// Units: every time is an integer number of nanoseconds (uint64, as in LogGOPSim);
// G and O are nanoseconds per byte and may be fractional.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <nlohmann/json_fwd.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace llvm {
class raw_ostream;
}
namespace infracc {
class Schedule;
}

namespace infracc::sim {

/// A per-byte cost (G or O), in ns per byte.
class PerByte {
public:
  constexpr PerByte() = default;
  explicit PerByte(double nsPerByte) : value_(nsPerByte) {
    integral_ = nsPerByte >= 0 && nsPerByte < 18446744073709551616.0 &&
                std::trunc(nsPerByte) == nsPerByte;
    whole_ = integral_ ? static_cast<uint64_t>(nsPerByte) : 0;
  }

  double value() const { return value_; }
  bool isIntegral() const { return integral_; }

  /// LogGOPSim's `(s-1)*X` for a message of s bytes, in uint64 arithmetic: a 0-byte
  /// message wraps (the term is -X, e.g. nextgs = t + g - 6 with G = 6). A fractional
  /// X gives trunc((s-1)*X) computed in double (as ATLAHS does with its double G);
  /// for s = 0 that is -trunc(X), again modulo 2^64.
  uint64_t forMessage(uint64_t bytes) const {
    if (integral_)
      return (bytes - 1) * whole_;
    if (bytes == 0)
      return uint64_t(0) - static_cast<uint64_t>(std::trunc(value_));
    double cost = static_cast<double>(bytes - 1) * value_;
    return cost < 18446744073709551616.0 ? static_cast<uint64_t>(cost) : ~uint64_t(0);
  }

  friend bool operator==(const PerByte &a, const PerByte &b) { return a.value_ == b.value_; }

private:
  double value_ = 0;
  uint64_t whole_ = 0;
  bool integral_ = true;
};

struct LogGPParams {
  uint64_t L = 2500;    // latency, ns
  uint64_t o = 1500;    // overhead per message (send and receive), ns
  uint64_t g = 1000;    // gap per message, ns
  PerByte G{6};         // gap per byte, ns/byte
  PerByte O{0};         // overhead per byte, ns/byte
  uint64_t S = 65535;   // eager limit: messages of size <= S bytes are eager
};

/// L and G of one message, as a LinkCostModel supplies them.
struct PairCost {
  uint64_t L = 0;
  PerByte G;
};

/// A model that decides itself when a message arrives (-sim-model=flow): the engine
/// hands it every message when its first byte may leave (after the sender's o) instead
/// of adding L, and interleaves its deliveries with its own events.
class MessageNetwork {
public:
  virtual ~MessageNetwork() = default;
  /// The message of send op `sendOp` (global index) leaves at `time`; `token` comes
  /// back with its delivery. `present` is the latest event time the engine has reached:
  /// a CPU's clock may lag it (LogGOPSim runs each CPU on its own clock and does not
  /// carry a dependency's time to another CPU), and a message cannot leave in the past.
  virtual void inject(uint32_t token, uint32_t sendOp, uint64_t time, uint64_t bytes,
                      uint64_t present) = 0;
  /// When the network next has something to do (infinity when idle).
  virtual double nextTime() = 0;
  /// Does it, calling deliver(token, arrival) for each message whose last byte arrived
  /// (arrival >= every time processed so far).
  virtual void advance(llvm::function_ref<void(uint32_t token, uint64_t arrival)> deliver) = 0;

  /// Keep what report() tells per message (asked before the run).
  virtual void keepRecords() {}
  /// The line the text report starts with, naming the model and the fabric.
  virtual std::string summary(llvm::StringRef fabric) const = 0;
  /// Adds the network's own results (per message, per link) to a JSON report.
  virtual void report(nlohmann::json &out, const Schedule &s, uint64_t makespan) const = 0;
  /// What -stats prints about the run.
  virtual void printStats(llvm::raw_ostream &os, uint64_t makespan) const = 0;
};

/// Per-(source, destination) L and G. Without one, the simulator uses the uniform
/// L and G of LogGPParams for every message. Called once when a message is sent and
/// once when it is received, so implementations should be cheap (precompute).
class LinkCostModel {
public:
  virtual ~LinkCostModel() = default;
  virtual PairCost cost(uint32_t srcRank, uint32_t dstRank) const = 0;
  /// The cost of the message of send op `sendOp` (global index). The simulator calls
  /// this one; models whose costs depend on more than the two ranks (which GPU of a
  /// per-node rank sends, which receives) override it.
  virtual PairCost costOfSend(uint32_t srcRank, uint32_t dstRank, uint32_t /*sendOp*/) const {
    return cost(srcRank, dstRank);
  }
  /// The model's network, when it decides arrivals itself; its L and G above are then
  /// what the critical path reports as latency and what the NICs pay per byte.
  virtual MessageNetwork *network() { return nullptr; }
};

} // namespace infracc::sim
