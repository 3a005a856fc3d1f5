// LogGOPS parameters of the built-in simulator, and the hook through which a model
// supplies L and G per pair of ranks (the topology-aware model takes them from the
// fabric path between the two endpoints).
//
// Units: every time is an integer number of nanoseconds (uint64, as in LogGOPSim);
// G and O are nanoseconds per byte and may be fractional.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

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
};

} // namespace infracc::sim
