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
// Two storages behind one API:
//   * owned: the arrays above, built by ScheduleBuilder (text input, passes);
//   * packed: a view of packed op records (namespace packed below) in a read-only
//     buffer the schedule does not copy — a mapped binary GOAL file, whose node records
//     are exactly these. Nothing is resident but what is being read, so a schedule
//     larger than RAM works as long as it is read in roughly rank order
//     (docs/performance.md). Packed schedules hold send, recv and calc only, and no
//     labels; their source locations are record offsets in the file (recordOffset()).
// Every accessor works on both. Accessors by global index find the op's rank first in
// a packed schedule (a table lookup); loops over a rank's ops are faster through
// ops(rank) (RankOps), which needs no lookup in either storage.
//
// Ops that later passes lower keep their extra fields in side tables indexed by the
// op's `peer` slot: collectives in collectives(), GPU kernel launches in the kernel
// level (ir/Kernels.h).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <functional>
#include <iterator>
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
  // What the workload says about this one collective (a trace says what NCCL chose);
  // 0 leaves it to lower-collectives' options (-coll-protocol, -coll-chunk-size).
  uint8_t protocol = 0;           // 0, or a CollProtocol (ir/Collectives.h)
  uint64_t chunkBytes = 0;        // pipelining unit in bytes
  // NCCL Simple's slices: each ring step as up to `slices` messages of
  // max(ceil(bytes / (slices * sliceAlign)) * sliceAlign, sliceMin) bytes; 0: one message.
  uint32_t slices = 0;
  uint64_t sliceAlign = 0, sliceMin = 0;
  llvm::SMLoc loc;                // where the statement was read, for messages (may be unset)
};

struct Communicator {
  uint32_t id = 0;                // as written in the workload
  std::vector<uint32_t> ranks;    // global ranks, in communicator-rank order
  /// Optional: a tree over the members (NCCL's tree of a channel, from a trace), for the
  /// `tree` algorithm: each communicator rank's parent, -1 at the root.
  std::vector<int32_t> treeUp;
};

/// The packed op record: 39 bytes, little-endian, unaligned — binary GOAL's node
/// record, field for field (formats/GoalBinaryFormat.h describes the file around it).
/// A rank's records are contiguous; its successor entries are a separate array of u32
/// local indices: op by op, its requires-successors, then its irequires-successors
/// (so SuccFirst is a running count and ISuccFirst = SuccFirst + NumSucc).
namespace packed {
inline constexpr size_t RecordSize = 39;
namespace field {
inline constexpr size_t DepCount = 0, Type = 4, Peer = 5, Size = 9, Tag = 17, Cpu = 21, Nic = 22,
                        NumSucc = 23, SuccFirst = 27, NumISucc = 31, ISuccFirst = 35;
}
/// The largest cpu or nic index a record holds (one byte each).
inline constexpr uint32_t MaxIndex = 255;
inline uint32_t u32(const uint8_t *p) { return llvm::support::endian::read32le(p); }
inline uint64_t u64(const uint8_t *p) { return llvm::support::endian::read64le(p); }
/// Fills one record.
void writeRecord(uint8_t *rec, OpKind kind, uint32_t peer, uint64_t size, uint32_t tag,
                 uint32_t cpu, uint32_t nic, uint32_t depCount, uint32_t numSucc,
                 uint32_t succFirst, uint32_t numISucc);
} // namespace packed

class KernelLevel;
class ScheduleBuilder;
class RankOps;

/// An op's successors as raw entries (local index, IRequiresBit on irequires edges),
/// requires first: an ArrayRef-like range over either storage.
class SuccessorRange {
public:
  SuccessorRange() = default;
  SuccessorRange(llvm::ArrayRef<uint32_t> owned)
      : owned_(owned.data()), n_(static_cast<uint32_t>(owned.size())) {}
  SuccessorRange(const uint8_t *packed, uint32_t numRequires, uint32_t numIRequires)
      : packed_(packed), n_(numRequires + numIRequires), numRequires_(numRequires) {}

  uint32_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint32_t operator[](uint32_t i) const;
  std::vector<uint32_t> vec() const {
    std::vector<uint32_t> v;
    v.reserve(n_);
    for (uint32_t i = 0; i < n_; ++i)
      v.push_back((*this)[i]);
    return v;
  }

  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = uint32_t;
    iterator(const SuccessorRange *r, uint32_t i) : r_(r), i_(i) {}
    uint32_t operator*() const { return (*r_)[i_]; }
    iterator &operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator &o) const { return i_ == o.i_; }
    bool operator!=(const iterator &o) const { return i_ != o.i_; }

  private:
    const SuccessorRange *r_;
    uint32_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, n_}; }

private:
  const uint32_t *owned_ = nullptr;
  const uint8_t *packed_ = nullptr;
  uint32_t n_ = 0, numRequires_ = 0;
};

class Schedule {
public:
  using OpIndex = uint32_t;   // local index within a rank
  static constexpr uint32_t IRequiresBit = 0x80000000u;

  uint32_t numRanks() const { return numRanks_; }
  uint64_t numOps() const { return rankBegin_.back(); }
  uint32_t numOps(uint32_t rank) const {
    return static_cast<uint32_t>(rankBegin_[rank + 1] - rankBegin_[rank]);
  }
  uint32_t globalIndex(uint32_t rank, OpIndex op) const {
    return static_cast<uint32_t>(rankBegin_[rank] + op);
  }
  uint32_t rankBegin(uint32_t rank) const { return static_cast<uint32_t>(rankBegin_[rank]); }

  /// The ops of one rank by local index, without per-op rank lookups.
  RankOps ops(uint32_t rank) const;

  // Per-op fields, addressed by global index.
  OpKind kind(uint32_t g) const {
    return isPacked() ? static_cast<OpKind>(record(g)[packed::field::Type]) : kind_[g];
  }
  uint32_t peer(uint32_t g) const {
    return isPacked() ? packed::u32(record(g) + packed::field::Peer) : peer_[g];
  }
  uint64_t size(uint32_t g) const {
    return isPacked() ? packed::u64(record(g) + packed::field::Size) : size_[g];
  }
  uint32_t tag(uint32_t g) const {
    return isPacked() ? packed::u32(record(g) + packed::field::Tag) : tag_[g];
  }
  uint32_t cpu(uint32_t g) const {
    return isPacked() ? packedCpu(g, record(g)[packed::field::Cpu]) : cpu_[g];
  }
  uint32_t nic(uint32_t g) const {
    return isPacked() ? packedNic(g, record(g)[packed::field::Nic]) : nic_[g];
  }

  /// Successors of op g: requires-successors, then irequires-successors, as local
  /// indices of the same rank.
  uint32_t numSuccessors(uint32_t g) const { return successorsRaw(g).size(); }
  uint32_t successor(uint32_t g, uint32_t i) const {
    return successorsRaw(g)[i] & ~IRequiresBit;
  }
  DepKind successorKind(uint32_t g, uint32_t i) const {
    return (successorsRaw(g)[i] & IRequiresBit) ? DepKind::IRequires : DepKind::Requires;
  }
  /// Raw successor entries (local index, IRequiresBit set for irequires edges).
  SuccessorRange successorsRaw(uint32_t g) const {
    if (isPacked())
      return packedSuccessors(record(g), rankOf(g));
    return llvm::ArrayRef<uint32_t>(succ_.data() + succBegin_[g],
                                    succ_.data() + succBegin_[g + 1]);
  }
  uint64_t numDependencies() const { return isPacked() ? packedDeps_ : succ_.size(); }

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
  /// The rank that holds op g (a table lookup when packed, else a binary search; for
  /// messages, not for hot loops).
  uint32_t rankOf(uint32_t g) const;

  /// Where op g was read, for diagnostics only. Text inputs: the start of its
  /// statement (or traced call) inside a buffer the frontend registered with its
  /// DiagEngine; an invalid SMLoc when not kept (ops made by passes, binary inputs).
  llvm::SMLoc sourceLoc(uint32_t g) const;
  /// Binary inputs: the byte offset of op g's record in recordFile(); nullopt else.
  std::optional<uint64_t> recordOffset(uint32_t g) const;
  const std::string &recordFile() const { return recordFile_; }
  bool hasSourceLocs() const { return !sourceOffset_.empty() || recordSize_ != 0; }

  /// Resident bytes of the op arrays (for statistics and benchmarks); a packed
  /// schedule counts its tables, not the buffer it views.
  uint64_t memoryBytes() const;

  // --- Packed storage --------------------------------------------------------------
  /// One rank of packed records: `records` holds numOps records, `successors` the
  /// rank's u32 successor entries, `roots` the u32 indices of its ops without
  /// dependencies, ascending.
  struct PackedRank {
    const uint8_t *records = nullptr;
    const uint8_t *successors = nullptr;
    const uint8_t *roots = nullptr;
    uint32_t numOps = 0, numRoots = 0;
  };
  /// A schedule viewing packed records it does not copy; `owner` keeps the buffer
  /// alive. The records must be valid (kinds 1..3, peers and successors in range,
  /// successor lists following each other, dependency counts and roots matching the
  /// successor lists, cpu/nic at most maxCpu/maxNic): the binary GOAL reader checks all
  /// of that first.
  /// `file` names the buffer `fileBytes` that holds the records: errors about an op
  /// then name its record's offset in it (recordOffset()).
  static Schedule viewPacked(uint32_t numRanks, llvm::ArrayRef<PackedRank> ranks,
                             uint32_t maxCpu, uint32_t maxNic, uint64_t numDeps,
                             std::shared_ptr<const void> owner, llvm::StringRef file,
                             llvm::ArrayRef<uint8_t> fileBytes);
  /// For a view of a mapped file about to be read in simulation order (every rank a
  /// little at a time): where the read-around windows of all ranks would not fit in
  /// the memory the process may use but a page per rank would (randomAccessHelps),
  /// asks the system to page the file in a page at a time. A 230 MB ring schedule
  /// under a 64 MiB limit, or a 43 GB one on a 23 GB machine, then simulates instead
  /// of reading the file again and again (docs/performance.md). Returns how far ahead
  /// of each rank's records and of its successor entries the reader should ask for
  /// pages (streamWindowBytes), 0 when the file is read as usual.
  uint64_t adviseSimulationAccess() const;
  /// A view's buffer (empty for a schedule in memory).
  llvm::ArrayRef<uint8_t> viewedBytes() const { return viewedBytes_; }
  /// The same schedule as packed records in memory (send, recv and calc only; the
  /// caller checks). cpu and nic indices above 254 are kept beside the records; source
  /// locations are kept, labels are not.
  Schedule packedCopy() const;
  bool isPacked() const { return packed_; }
  /// Packed storage: where rank r's records and successor entries are.
  const PackedRank &packedRank(uint32_t r) const { return packedRanks_[r]; }
  /// Packed storage: op g's cpu / nic from its record's byte (indices above 254 live
  /// beside the records in a packed copy).
  uint32_t packedCpu(uint32_t g, uint8_t stored) const {
    return stored == 0xFF && !wideCpu_.empty() ? wideCpu_[g] : stored;
  }
  uint32_t packedNic(uint32_t g, uint8_t stored) const {
    return stored == 0xFF && !wideNic_.empty() ? wideNic_[g] : stored;
  }

private:
  friend class ScheduleBuilder;
  friend class RankOps;

  /// A packed schedule with its sizes set and no ranks yet.
  static Schedule packedShell(uint32_t numRanks, uint32_t maxCpu, uint32_t maxNic,
                              uint64_t numDeps);
  void indexChunks();

  const uint8_t *record(uint32_t g) const {
    uint32_t r = rankOf(g);
    return packedRanks_[r].records + packed::RecordSize * (g - rankBegin_[r]);
  }
  SuccessorRange packedSuccessors(const uint8_t *rec, uint32_t rank) const {
    return {packedRanks_[rank].successors +
                4 * size_t(packed::u32(rec + packed::field::SuccFirst)),
            packed::u32(rec + packed::field::NumSucc), packed::u32(rec + packed::field::NumISucc)};
  }

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
  // The global index of the ops' first array element: 0, except in a ScheduleBuilder
  // that streams (its arrays hold the rank being built).
  uint64_t arrayBase_ = 0;

  // Packed storage: per rank its records; chunkRank_[g >> ChunkBits] is the rank of op
  // (g & ~ChunkMask), where rankOf starts looking.
  static constexpr unsigned ChunkBits = 8;
  std::vector<PackedRank> packedRanks_;
  std::vector<uint32_t> chunkRank_;
  std::vector<uint16_t> wideCpu_, wideNic_;   // packedCopy with indices above 254
  std::shared_ptr<const void> packedOwner_;
  uint64_t packedDeps_ = 0;
  uint64_t packedBytes_ = 0;   // of a packed copy's own buffer (a view owns none)
  llvm::ArrayRef<uint8_t> viewedBytes_;   // the buffer a view reads in place
  bool packed_ = false;

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

/// The ops of one rank, by local index, in either storage (Schedule::ops(rank)).
class RankOps {
public:
  uint32_t size() const { return n_; }
  uint32_t globalIndex(uint32_t i) const { return first_ + i; }
  OpKind kind(uint32_t i) const {
    return rec_ ? static_cast<OpKind>(rec(i)[packed::field::Type]) : s_->kind_[arrayFirst_ + i];
  }
  uint32_t peer(uint32_t i) const {
    return rec_ ? packed::u32(rec(i) + packed::field::Peer) : s_->peer_[arrayFirst_ + i];
  }
  uint64_t opSize(uint32_t i) const {
    return rec_ ? packed::u64(rec(i) + packed::field::Size) : s_->size_[arrayFirst_ + i];
  }
  uint32_t tag(uint32_t i) const {
    return rec_ ? packed::u32(rec(i) + packed::field::Tag) : s_->tag_[arrayFirst_ + i];
  }
  uint32_t cpu(uint32_t i) const {
    return rec_ ? s_->packedCpu(first_ + i, rec(i)[packed::field::Cpu])
                : s_->cpu_[arrayFirst_ + i];
  }
  uint32_t nic(uint32_t i) const {
    return rec_ ? s_->packedNic(first_ + i, rec(i)[packed::field::Nic])
                : s_->nic_[arrayFirst_ + i];
  }
  SuccessorRange successorsRaw(uint32_t i) const {
    if (rec_)
      return s_->packedSuccessors(rec(i), rank_);
    uint32_t a = arrayFirst_ + i;
    return llvm::ArrayRef<uint32_t>(s_->succ_.data() + s_->succBegin_[a],
                                    s_->succ_.data() + s_->succBegin_[a + 1]);
  }

private:
  friend class Schedule;
  RankOps(const Schedule &s, uint32_t rank)
      : s_(&s), rec_(s.isPacked() ? s.packedRanks_[rank].records : nullptr), rank_(rank),
        first_(s.rankBegin(rank)), arrayFirst_(first_ - uint32_t(s.arrayBase_)),
        n_(s.numOps(rank)) {}
  const uint8_t *rec(uint32_t i) const { return rec_ + packed::RecordSize * size_t(i); }

  const Schedule *s_;
  const uint8_t *rec_;
  uint32_t rank_, first_, arrayFirst_, n_;
};

inline RankOps Schedule::ops(uint32_t rank) const { return RankOps(*this, rank); }

inline uint32_t SuccessorRange::operator[](uint32_t i) const {
  if (owned_)
    return owned_[i];
  return packed::u32(packed_ + 4 * size_t(i)) | (i >= numRequires_ ? Schedule::IRequiresBit : 0u);
}

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

  /// Hint for the expected total number of ops and dependencies (memory that is
  /// reserved but never touched costs address space, not resident memory).
  void reserve(uint64_t ops, uint64_t deps);
  bool keepsLabels() const { return keepLabels_; }

  /// Starts a rank; ranks are begun in increasing order, and ranks skipped are empty.
  void beginRank(uint32_t rank);
  uint32_t currentRank() const { return rank_; }
  uint32_t opsInRank() const { return static_cast<uint32_t>(builtOps() - rankStart_); }

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

  /// Streaming: each finished rank (ranks skipped over included, empty) goes to
  /// `sink`, in rank order, and is then dropped, so that memory holds one rank at a
  /// time; finish() hands over the ranks never begun and returns a schedule that has
  /// the ranks' sizes but no ops to read. Side tables are kept. Set before any rank.
  using RankSink = std::function<void(uint32_t rank, const RankOps &ops)>;
  void streamTo(RankSink sink) { sink_ = std::move(sink); }

private:
  uint32_t encodeLabel(llvm::StringRef label);
  /// Ops created so far (the arrays start at sched_.arrayBase_ when streaming).
  uint64_t builtOps() const { return sched_.arrayBase_ + sched_.kind_.size(); }
  /// Streaming: hands rank `r` (just finished, or empty) to the sink and drops it.
  void emitRank(uint32_t r);

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
  RankSink sink_;
};

} // namespace infracc
