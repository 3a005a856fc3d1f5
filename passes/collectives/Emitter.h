// The building blocks of collective lowering. An algorithm is written per rank, the
// way Schedgen writes its patterns: it is handed the rank's position in a group and
// an Emitter, and emits that rank's sends, recvs and calcs with their dependencies.
// Both ends of every message are emitted by the same algorithm code run for the two
// ranks, so they agree on sizes and order; the Emitter numbers the messages between
// each ordered pair of ranks, and that number becomes part of the tag.
//
// Data: every message also names which bytes of the collective's logical buffer it
// carries (a Layout maps blocks to byte intervals). Lowering only needs the byte
// count; with recording on (-verify-collectives, tests) the intervals are kept for
// the semantic checker.
#pragma once

#include "ir/Collectives.h"
#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <vector>

namespace infracc::coll {

/// Tags of lowered messages: the top bit set (programs use tags below 2^31), then the
/// collective instance (12 bits) and the message's number between its two ranks
/// within the instance (19 bits).
inline constexpr uint32_t TagBase = 0x80000000u;
inline constexpr unsigned TagInstanceBits = 12, TagSeqBits = 19;
inline uint32_t collectiveTag(uint64_t instance, uint64_t seq) {
  return TagBase | (uint32_t(instance & ((1u << TagInstanceBits) - 1)) << TagSeqBits) |
         uint32_t(seq & ((1u << TagSeqBits) - 1));
}


struct Interval {
  uint64_t lo, hi;
};

/// `parts` nearly equal pieces of `total`: the first total % parts are one larger.
inline uint64_t pieceOffset(uint64_t total, uint64_t parts, uint64_t i) {
  return i * (total / parts) + std::min(i, total % parts);
}
inline uint64_t pieceSize(uint64_t total, uint64_t parts, uint64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

/// Collects the byte intervals a message carries (adjacent ones are merged).
class DataOut {
public:
  void add(uint64_t lo, uint64_t hi) {
    if (hi <= lo)
      return;
    if (!v_.empty() && v_.back().hi == lo)
      v_.back().hi = hi;
    else
      v_.push_back({lo, hi});
  }
  void add(Interval i) { add(i.lo, i.hi); }
  llvm::ArrayRef<Interval> intervals() const { return v_; }
  void clear() { v_.clear(); }

private:
  llvm::SmallVector<Interval, 4> v_;
};
using DataFn = llvm::function_ref<void(DataOut &)>;

/// What a lowered op does to the collective's data (for the semantic checker).
enum class DataMode : uint8_t { None, Read, Copy, Reduce };

struct OpRecord {
  uint32_t instance = ~0u;   // collective instance, ~0u for the program's own ops
  DataMode mode = DataMode::None;
  uint32_t applyAt = ~0u;    // recv: global op index where the data lands (the recv,
                             // or the reduction calc after it)
  uint32_t intervalsBegin = 0, intervalsCount = 0;
  uint64_t payload = 0;      // bytes of data the message carries (before the protocol)
};

/// Per-rank staging area for the ops of one lowered collective (or one phase of it).
struct Fragment {
  struct Op {
    OpKind kind;
    uint32_t peer;     // global rank
    uint64_t size;
    uint32_t tag;
    uint16_t cpu, nic;
  };
  std::vector<Op> ops;
  std::vector<std::pair<uint32_t, uint32_t>> deps;   // (succ, pred | IRequiresBit)
  // Recording (checker) only, parallel to ops.
  std::vector<OpRecord> records;
  std::vector<Interval> intervals;

  void clear() {
    ops.clear();
    deps.clear();
    records.clear();
    intervals.clear();
  }
};

struct EmitOptions {
  double reduceNsPerByte = 0;
  bool record = false;
};

/// A group of ranks running (part of) a collective: global ranks in group order.
struct Group {
  llvm::ArrayRef<uint32_t> ranks;
  uint32_t me = 0;   // my index in ranks
  uint32_t size() const { return static_cast<uint32_t>(ranks.size()); }
};

class Emitter {
public:
  static constexpr uint32_t None = ~0u;
  /// Thrown by an op past the budget (setBudget): a collective of a few bytes of input
  /// may mean 2^40 ops for one rank (1 TiB in chunks of a byte), and the algorithms'
  /// loops are left at once instead of counting through them.
  struct OutOfBudget {};
  /// At most `ops` ops in the fragment from now on (default: no limit).
  void setBudget(uint64_t ops) { budget_ = ops; }

  Emitter(Fragment &frag, const EmitOptions &opts) : f_(frag), opts_(opts) {}

  /// Starts a collective instance on this rank: clears the per-pair message numbers.
  void begin(uint64_t instance, uint32_t baseCpu, uint32_t nic, bool barrier,
             CollProtocol protocol) {
    instance_ = instance;
    protocol_ = protocol;
    baseCpu_ = baseCpu;
    nic_ = nic;
    barrier_ = barrier;
    sendSeq_.clear();
    recvSeq_.clear();
  }
  /// The compute stream of channel `ch` (each channel runs on its own cpu).
  void setChannel(uint32_t ch) { cpu_ = baseCpu_ + ch; }

  /// A send of `payload` data bytes to global rank `peer`.
  uint32_t send(uint32_t peer, uint64_t payload, DataFn data);
  /// A recv from global rank `peer`; with `reduce` the data is combined with what is
  /// there (and a reduction calc follows when -reduce-ns-per-byte > 0). Returns the
  /// op after which the data is in place: the calc if there is one, else the recv.
  uint32_t recv(uint32_t peer, uint64_t payload, bool reduce, DataFn data);
  /// The recv op itself of the last recv() (differs from its result with a calc).
  uint32_t lastRecvOp() const { return lastRecv_; }
  uint32_t calc(uint64_t ns);

  void req(uint32_t succ, uint32_t pred) {
    if (succ != None && pred != None)
      f_.deps.push_back({succ, pred});
  }
  void ireq(uint32_t succ, uint32_t pred) {
    if (succ != None && pred != None)
      f_.deps.push_back({succ, pred | Schedule::IRequiresBit});
  }

  uint32_t numOps() const { return static_cast<uint32_t>(f_.ops.size()); }
  /// Makes every op of [from, numOps()) without a predecessor in that range require
  /// every op of [prevFrom, from) without a successor in that range (phase order).
  void sequence(uint32_t prevFrom, uint32_t from);

  Fragment &fragment() { return f_; }

private:
  uint32_t addOp(OpKind k, uint32_t peer, uint64_t size, uint32_t tag);
  void record(uint32_t op, DataMode mode, uint64_t payload, DataFn data);

  Fragment &f_;
  const EmitOptions &opts_;
  uint64_t budget_ = ~uint64_t(0);
  uint64_t instance_ = 0;
  uint32_t baseCpu_ = 0, cpu_ = 0, nic_ = 0;
  bool barrier_ = false;
  CollProtocol protocol_ = CollProtocol::Simple;
  uint32_t lastRecv_ = None;
  llvm::DenseMap<uint32_t, uint32_t> sendSeq_, recvSeq_;
  DataOut scratch_;
};

} // namespace infracc::coll
