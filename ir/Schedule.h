// The workload IR: per rank a DAG of operations, stored for all ranks together as
// structure-of-arrays with CSR successor lists (the way binary GOAL lays them out).
//
//   * Ops are addressed by (rank, local index); local indices are creation order
//     within the rank, as in GOAL. `globalIndex(rank, i)` gives a dense 32-bit id.
//   * Two dependency kinds: `requires` (start after the predecessor finishes) and
//     `irequires` (start after the predecessor starts). Each op's successor list holds
//     its requires-successors first, then its irequires-successors, each in the order
//     the dependencies were added.
//   * No per-op heap allocation and no per-op strings: 25 bytes per op plus 4 per
//     dependency, plus 4 per op when labels are kept (see label()) and 4 per op when
//     source locations are kept (see sourceLoc()).
//
// Ops that later passes lower keep their extra fields in side tables indexed by the
// op's `peer` slot: collectives in collectives(), GPU kernel launches in the kernel
// level (ir/Kernels.h).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;
enum class Severity;

enum class OpKind : uint8_t {
  Send = 1,
  Recv = 2,
  Calc = 3,
  // Before lowering (lower-collectives): `peer` indexes Schedule::collectives().
  Collective = 16,
  // A GPU kernel launch: `peer` indexes kernels()->kernels. Lowered by lower-kernels
  // (to sends, recvs and calcs) or unrolled into instructions by unroll-loadstore.
  Kernel = 32,
};
llvm::StringRef opKindName(OpKind k);
inline bool isGoalCoreKind(OpKind k) {
  return k == OpKind::Send || k == OpKind::Recv || k == OpKind::Calc;
}
/// The pass that turns a kind that is not a GOAL core kind into sends, recvs and calcs
/// ("lower-collectives", "lower-kernels"), for messages that say what to add to -passes.
llvm::StringRef loweringPassFor(OpKind k);

inline constexpr uint32_t AnySource = 0xFFFFFFFFu;
inline constexpr uint32_t AnyTag = 0xFFFFFFFFu;

enum class DepKind : uint8_t { Requires, IRequires };

enum class CollectiveKind : uint8_t {
  Allreduce, Allgather, Reducescatter, Bcast, Reduce, Alltoall, Alltoallv, Barrier, Gather, Scatter
};
llvm::StringRef collectiveKindName(CollectiveKind k);

struct CollectiveInfo {
  CollectiveKind kind = CollectiveKind::Allreduce;
  uint32_t communicator = 0;      // index into Schedule::communicators()
  uint32_t root = 0;              // rank within the communicator
  uint32_t algorithm = 0;         // 0: let the selection policy choose; else a CollAlgorithm
  uint64_t bytes = 0;
  uint32_t vsizesBegin = 0, vsizesCount = 0;   // alltoallv per-peer sizes in vsizes()
  llvm::SMLoc loc;                // where the statement was read, for messages (may be unset)
};

struct Communicator {
  uint32_t id = 0;                // as written in the workload
  std::vector<uint32_t> ranks;    // global ranks, in communicator-rank order
};

class KernelLevel;
class ScheduleBuilder;

class Schedule {
public:
  using OpIndex = uint32_t;   // local index within a rank
  static constexpr uint32_t IRequiresBit = 0x80000000u;

  uint32_t numRanks() const { return numRanks_; }
  uint64_t numOps() const { return kind_.size(); }
  uint32_t numOps(uint32_t rank) const {
    return static_cast<uint32_t>(rankBegin_[rank + 1] - rankBegin_[rank]);
  }
  uint32_t globalIndex(uint32_t rank, OpIndex op) const {
    return static_cast<uint32_t>(rankBegin_[rank] + op);
  }
  uint32_t rankBegin(uint32_t rank) const { return static_cast<uint32_t>(rankBegin_[rank]); }

  // Per-op fields, addressed by global index.
  OpKind kind(uint32_t g) const { return kind_[g]; }
  uint32_t peer(uint32_t g) const { return peer_[g]; }
  uint64_t size(uint32_t g) const { return size_[g]; }
  uint32_t tag(uint32_t g) const { return tag_[g]; }
  uint32_t cpu(uint32_t g) const { return cpu_[g]; }
  uint32_t nic(uint32_t g) const { return nic_[g]; }

  /// Successors of op g: requires-successors, then irequires-successors, as local
  /// indices of the same rank.
  uint32_t numSuccessors(uint32_t g) const { return succBegin_[g + 1] - succBegin_[g]; }
  uint32_t successor(uint32_t g, uint32_t i) const {
    return succ_[succBegin_[g] + i] & ~IRequiresBit;
  }
  DepKind successorKind(uint32_t g, uint32_t i) const {
    return (succ_[succBegin_[g] + i] & IRequiresBit) ? DepKind::IRequires : DepKind::Requires;
  }
  /// Raw successor entries (local index, IRequiresBit set for irequires edges).
  llvm::ArrayRef<uint32_t> successorsRaw(uint32_t g) const {
    return {succ_.data() + succBegin_[g], succ_.data() + succBegin_[g + 1]};
  }
  uint64_t numDependencies() const { return succ_.size(); }

  /// Largest `cpu` / `nic` index used anywhere (0 for an empty schedule).
  uint32_t maxCpu() const { return maxCpu_; }
  uint32_t maxNic() const { return maxNic_; }

  // Side tables for kinds that are lowered later.
  llvm::ArrayRef<CollectiveInfo> collectives() const { return collectives_; }
  llvm::ArrayRef<Communicator> communicators() const { return communicators_; }
  llvm::ArrayRef<uint64_t> vsizes() const { return vsizes_; }
  /// The kernel level (null when the schedule launches no GPU kernels). Shared by
  /// copies of the schedule; passes that change it install a new one.
  const KernelLevel *kernels() const { return kernels_.get(); }
  std::shared_ptr<KernelLevel> sharedKernels() const { return kernels_; }
  void setKernels(std::shared_ptr<KernelLevel> k) { kernels_ = std::move(k); }
  bool hasUnloweredOps() const { return !collectives_.empty() || kernels_ != nullptr; }

  /// Labels from the text the schedule was read from, for diagnostics only. Kept as
  /// one 32-bit code per op: `l<n>` labels (the usual form) are stored as the number,
  /// others as an offset into a character table; "" when unlabelled or not kept.
  std::string label(uint32_t g) const;
  bool hasLabels() const { return !labelCode_.empty(); }
  void dropLabels() {
    std::vector<uint32_t>().swap(labelCode_);
    std::vector<char>().swap(labelChars_);
  }
  /// How messages name op g of its rank: `'l5'` (its label, quoted) when known, else
  /// `#4` (its local index, counting from 0 in creation order).
  std::string opName(uint32_t g) const;
  /// The rank that holds op g (binary search; for messages, not for hot loops).
  uint32_t rankOf(uint32_t g) const;

  /// Where op g was read, for diagnostics only. Text inputs: the start of its
  /// statement (or traced call) inside a buffer the frontend registered with its
  /// DiagEngine; an invalid SMLoc when not kept (ops made by passes, binary inputs).
  llvm::SMLoc sourceLoc(uint32_t g) const;
  /// Binary inputs: the byte offset of op g's record in recordFile(); nullopt else.
  std::optional<uint64_t> recordOffset(uint32_t g) const;
  const std::string &recordFile() const { return recordFile_; }
  bool hasSourceLocs() const { return !sourceOffset_.empty() || recordSize_ != 0; }

  /// Resident bytes of the op arrays (for statistics and benchmarks).
  uint64_t memoryBytes() const;

private:
  friend class ScheduleBuilder;

  uint32_t numRanks_ = 0;
  std::vector<uint64_t> rankBegin_{0};
  std::vector<OpKind> kind_;
  std::vector<uint32_t> peer_;
  std::vector<uint64_t> size_;
  std::vector<uint32_t> tag_;
  std::vector<uint16_t> cpu_, nic_;
  std::vector<uint32_t> succBegin_{0};
  std::vector<uint32_t> succ_;
  uint32_t maxCpu_ = 0, maxNic_ = 0;

  std::vector<CollectiveInfo> collectives_;
  std::vector<Communicator> communicators_;
  std::vector<uint64_t> vsizes_;
  std::shared_ptr<KernelLevel> kernels_;

  static constexpr uint32_t NoLabel = 0xFFFFFFFFu, LabelInTable = 0x80000000u;
  std::vector<uint32_t> labelCode_;   // per op when labels are kept
  std::vector<char> labelChars_;      // NUL-terminated labels that are not `l<n>`

  // Source locations: per rank a base (text: an address; binary: a file offset), per
  // op 4 bytes after it (text), or a fixed record size times the op's index (binary).
  static constexpr uint32_t NoSource = 0xFFFFFFFFu;
  std::vector<uint64_t> sourceBase_;
  std::vector<uint32_t> sourceOffset_;
  std::string recordFile_;
  uint32_t recordSize_ = 0;
};

/// Reports `msg` at op g: at its source location (file:line:col, the line and a
/// caret) when `diags` holds the buffer it was read from, at `file:offset N` for
/// binary inputs, else at `where` (the workload's name).
void reportAtOp(DiagEngine &diags, const Schedule &s, uint32_t g, llvm::StringRef where,
                Severity sev, const llvm::Twine &msg);

/// Builds a Schedule rank by rank, in rank order. Dependencies are added with local
/// indices and may refer to ops not created yet, as long as they exist when the rank
/// is finished.
class ScheduleBuilder {
public:
  static constexpr uint32_t MaxCpu = 0xFFFF, MaxNic = 0xFFFF;

  explicit ScheduleBuilder(uint32_t numRanks, bool keepLabels = false);

  /// Keep each op's source location (see setSourceLoc); ops given none have none.
  void keepSourceLocs() { keepSourceLocs_ = true; }
  /// Ops `from` .. the last one of the current rank were read at `loc` (text inputs).
  void setSourceLoc(Schedule::OpIndex from, llvm::SMLoc loc);
  /// Binary inputs: op i of a rank is the record at its records' offset + i * size.
  void setRecordLayout(llvm::StringRef file, uint32_t recordSize);
  /// The current rank's records start at byte `offset` of the file.
  void setRecordsAt(uint64_t offset);

  /// Hint for the expected total number of ops and dependencies (memory that is
  /// reserved but never touched costs address space, not resident memory).
  void reserve(uint64_t ops, uint64_t deps);
  bool keepsLabels() const { return keepLabels_; }

  /// Starts a rank; ranks are begun in increasing order, and ranks skipped are empty.
  void beginRank(uint32_t rank);
  uint32_t currentRank() const { return rank_; }
  uint32_t opsInRank() const { return static_cast<uint32_t>(sched_.kind_.size() - rankStart_); }

  Schedule::OpIndex addOp(OpKind kind, uint32_t peer, uint64_t size, uint32_t tag = 0,
                          uint32_t cpu = 0, uint32_t nic = 0, llvm::StringRef label = {});
  Schedule::OpIndex addSend(uint64_t bytes, uint32_t dest, uint32_t tag = 0, uint32_t cpu = 0,
                            uint32_t nic = 0) {
    return addOp(OpKind::Send, dest, bytes, tag, cpu, nic);
  }
  Schedule::OpIndex addRecv(uint64_t bytes, uint32_t src, uint32_t tag = 0, uint32_t cpu = 0,
                            uint32_t nic = 0) {
    return addOp(OpKind::Recv, src, bytes, tag, cpu, nic);
  }
  Schedule::OpIndex addCalc(uint64_t ns, uint32_t cpu = 0) {
    return addOp(OpKind::Calc, 0, ns, 0, cpu, 0);
  }
  /// `succ` depends on `pred` (both local indices of the current rank).
  void addDependency(Schedule::OpIndex succ, Schedule::OpIndex pred, DepKind kind);

  /// Finishes the current rank: sorts its dependencies into CSR form.
  void endRank();

  /// Bulk alternative to beginRank/addOp/addDependency/endRank for inputs already in
  /// CSR form (binary GOAL): appends rank `rank` with `numOps` ops and `numDeps`
  /// dependencies and returns its arrays, zeroed, to fill in place. `succCount[i]`
  /// is op i's number of successors; `succ` holds all successor entries of the rank,
  /// op by op, each op's requires first (local indices, IRequiresBit on irequires).
  /// No labels. commitRank() finishes the rank.
  struct RankArrays {
    llvm::MutableArrayRef<OpKind> kind;
    llvm::MutableArrayRef<uint32_t> peer;
    llvm::MutableArrayRef<uint64_t> size;
    llvm::MutableArrayRef<uint32_t> tag;
    llvm::MutableArrayRef<uint16_t> cpu, nic;
    llvm::MutableArrayRef<uint32_t> succCount;
    llvm::MutableArrayRef<uint32_t> succ;
  };
  RankArrays appendRank(uint32_t rank, uint32_t numOps, uint32_t numDeps);
  void commitRank();

  // Side tables.
  uint32_t addCollective(const CollectiveInfo &info);
  uint32_t addCommunicator(Communicator c);
  /// Index of the communicator with workload id `id`, or ~0u.
  uint32_t findCommunicator(uint32_t id) const {
    auto it = commIndex_.find(id);
    return it == commIndex_.end() ? ~0u : it->second;
  }
  const Communicator &communicator(uint32_t index) const {
    return sched_.communicators_[index];
  }
  uint32_t addVSizes(llvm::ArrayRef<uint64_t> sizes);
  void setKernels(std::shared_ptr<KernelLevel> k) { sched_.kernels_ = std::move(k); }

  /// Finishes the schedule; every rank must have been begun and ended.
  Schedule finish();

private:
  uint32_t encodeLabel(llvm::StringRef label);

  Schedule sched_;
  uint32_t rank_ = ~0u;
  uint64_t rankStart_ = 0;
  bool inRank_ = false, keepLabels_ = false, keepSourceLocs_ = false;
  struct PendingDep {
    uint32_t pred, succ;   // succ carries IRequiresBit
  };
  std::vector<PendingDep> pending_;
  std::vector<uint32_t> fill_;   // endRank scratch: next free successor slot per op
  llvm::DenseMap<uint32_t, uint32_t> commIndex_;   // communicator id -> index
};

} // namespace infracc
