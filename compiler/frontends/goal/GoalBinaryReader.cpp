#include "compiler/frontends/goal/GoalBinaryReader.h"

#include "compiler/frontends/goal/MappedInput.h"
#include "formats/GoalBinaryFormat.h"
#include "support/Diagnostics.h"
#include "support/Progress.h"

#include <llvm/Support/Endian.h>
#include <llvm/Support/MemoryBuffer.h>

#include <vector>

namespace infracc::goal {

namespace {

using llvm::support::endian::read32le;
using llvm::support::endian::read64le;

constexpr size_t PrefetchBytes = 1024;

class BinaryReader {
public:
  BinaryReader(DiagEngine &diags, std::shared_ptr<const llvm::MemoryBuffer> buffer,
               Progress *progress)
      : diags_(diags), buffer_(std::move(buffer)), progress_(progress),
        d_(reinterpret_cast<const uint8_t *>(buffer_->getBufferStart())),
        size_(buffer_->getBufferSize()), released_(buffer_->getBufferStart()),
        release_(releaseWhileChecking(*buffer_)) {}

  std::optional<Schedule> read();

private:
  bool fail(uint64_t offset, const llvm::Twine &msg) {
    diags_.error((buffer_->getBufferIdentifier() + ":offset " + llvm::Twine(offset)).str(), msg);
    return false;
  }
  uint32_t u32(uint64_t at) const { return read32le(d_ + at); }
  uint64_t u64(uint64_t at) const { return read64le(d_ + at); }
  bool checkLayout();
  bool checkRank(uint32_t r);

  DiagEngine &diags_;
  std::shared_ptr<const llvm::MemoryBuffer> buffer_;
  Progress *progress_;
  const uint8_t *d_;
  uint64_t size_;
  const char *released_;
  bool release_;
  uint32_t numRanks_ = 0;
  uint64_t totalOps_ = 0, totalDeps_ = 0;
  uint32_t maxCpu_ = 0, maxNic_ = 0;
  std::vector<uint32_t> indegree_;
  std::vector<Schedule::PackedRank> ranks_;
};

// Checks the header, the jump table and each rank's sizes before anything is built,
// so that the schedule can be allocated exactly.
bool BinaryReader::checkLayout() {
  if (size_ < 8)
    return fail(0, "the file is " + llvm::Twine(size_) +
                       " bytes long; binary GOAL starts with the 8-byte magic number 4223");
  uint64_t magic = u64(0);
  if (magic == bin::MagicInvalidated)
    return fail(0, "this binary GOAL file was consumed by a 'LogGOPSim --save-mem' run (magic "
                   "2342); convert the text schedule again");
  if (magic != bin::Magic)
    return fail(0, "not a binary GOAL file: the magic number is " + llvm::Twine(magic) +
                       ", expected 4223");
  if (size_ < bin::JumpTableAt)
    return fail(size_, "the file ends inside the header (" + llvm::Twine(size_) +
                           " bytes; the header has 14)");
  numRanks_ = u32(bin::NumRanksAt);
  if (numRanks_ == 0)
    return fail(bin::NumRanksAt, "num_ranks is 0; a schedule has at least one rank");
  uint64_t tableEnd = bin::JumpTableAt + bin::JumpEntrySize * uint64_t(numRanks_);
  if (tableEnd > size_)
    return fail(size_, "the file ends inside the jump table: " + llvm::Twine(numRanks_) +
                           " ranks need a table up to offset " + llvm::Twine(tableEnd) +
                           ", but the file has " + llvm::Twine(size_) + " bytes");
  uint64_t expected = bin::firstRankStart(numRanks_);
  uint64_t nextRelease = uint64_t(16) << 20;
  for (uint32_t r = 0; r < numRanks_; ++r) {
    uint64_t entry = bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r);
    uint64_t start = u64(entry), end = u64(entry + 8);
    if (start != expected)
      return fail(entry, "rank " + llvm::Twine(r) + "'s data starts at " + llvm::Twine(start) +
                             " (relative to byte 8), expected " + llvm::Twine(expected) +
                             (r ? ", where rank " + llvm::Twine(r - 1) + "'s data ends"
                                : llvm::Twine(", right after the jump table")));
    if (end < start || end - start < bin::RankHeaderSize || end > size_ - bin::OffsetBase)
      return fail(entry + 8, "rank " + llvm::Twine(r) + "'s data ends at " + llvm::Twine(end) +
                                 " (relative to byte 8), outside the file (" +
                                 llvm::Twine(size_) + " bytes) or before its 8-byte header");
    uint64_t at = bin::OffsetBase + start;
    uint64_t nodes = u32(at), roots = u32(at + 4);
    uint64_t need = bin::RankHeaderSize + 4 * roots + bin::NodeSize * nodes;
    uint64_t have = end - start;
    if (need > have)
      return fail(at, "rank " + llvm::Twine(r) + " declares " + llvm::Twine(nodes) +
                          " operations and " + llvm::Twine(roots) + " roots, which need " +
                          llvm::Twine(need) + " bytes, but its data is " + llvm::Twine(have) +
                          " bytes long");
    if ((have - need) % 4)
      return fail(at + need, "rank " + llvm::Twine(r) + "'s successor appendix is " +
                                 llvm::Twine(have - need) +
                                 " bytes long, not a multiple of 4 (u32 entries)");
    totalOps_ += nodes;
    totalDeps_ += (have - need) / 4;
    expected = end;
    if (release_ && start >= nextRelease) {   // every rank's header is on another page
      releaseConsumed(*buffer_, released_, reinterpret_cast<const char *>(d_ + at));
      nextRelease = start + (uint64_t(16) << 20);
    }
  }
  released_ = buffer_->getBufferStart();
  if (bin::OffsetBase + expected != size_)
    return fail(bin::OffsetBase + expected,
                llvm::Twine(size_ - bin::OffsetBase - expected) +
                    " bytes follow the data of the last rank; the file is inconsistent");
  if (totalOps_ > 0xFFFFFFFFull)
    return fail(bin::JumpTableAt, "the schedule has more than 4294967295 operations, which "
                                  "infracc cannot hold");
  return true;
}

bool BinaryReader::checkRank(uint32_t r) {
  uint64_t base = bin::OffsetBase + u64(bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r));
  uint64_t end = bin::OffsetBase + u64(bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r) + 8);
  uint32_t n = u32(base), roots = u32(base + 4);
  uint64_t rootsAt = base + bin::RankHeaderSize;
  uint64_t nodesAt = rootsAt + 4 * uint64_t(roots);
  uint64_t appAt = nodesAt + bin::NodeSize * uint64_t(n);
  uint64_t appSize = (end - appAt) / 4;
  auto where = [&](uint32_t i) {
    return "rank " + std::to_string(r) + " operation " + std::to_string(i);
  };

  ranks_[r] = {d_ + nodesAt, d_ + appAt, d_ + rootsAt, n, roots};
  indegree_.assign(n, 0);
  uint64_t running = 0;
  const uint8_t *app = d_ + appAt;
  uint8_t maxCpu = 0, maxNic = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t at = nodesAt + bin::NodeSize * uint64_t(i);
    const uint8_t *rec = d_ + at;
    // The records stream from the page cache; the hardware prefetcher stops at page
    // boundaries. (A hint only: reading past the end of the mapping is not a fault.)
    __builtin_prefetch(rec + PrefetchBytes);
    uint8_t type = rec[bin::node::Type];
    uint32_t peer = read32le(rec + bin::node::Peer);
    if (type < bin::TypeSend || type > bin::TypeCalc)
      return fail(at + bin::node::Type, where(i) + ": type " + llvm::Twine(unsigned(type)) +
                                            " is not 1 (send), 2 (recv) or 3 (calc)");
    OpKind kind = static_cast<OpKind>(type);   // OpKind uses GOAL's type numbers
    if (kind != OpKind::Calc && peer >= numRanks_ && !(kind == OpKind::Recv && peer == AnySource))
      return fail(at + bin::node::Peer,
                  where(i) + ": " + (kind == OpKind::Send ? "destination" : "source") + " rank " +
                      llvm::Twine(peer) + " is out of range (num_ranks is " +
                      llvm::Twine(numRanks_) + ")");
    uint32_t numSucc = read32le(rec + bin::node::NumSucc);
    uint32_t succFirst = read32le(rec + bin::node::SuccFirst);
    uint32_t numISucc = read32le(rec + bin::node::NumISucc);
    uint32_t iSuccFirst = read32le(rec + bin::node::ISuccFirst);
    if (succFirst != running || iSuccFirst != running + numSucc)
      return fail(at + (succFirst != running ? bin::node::SuccFirst : bin::node::ISuccFirst),
                  where(i) + ": its successor list starts at appendix entry " +
                      llvm::Twine(succFirst != running ? succFirst : iSuccFirst) + ", expected " +
                      llvm::Twine(succFirst != running ? running : running + numSucc) +
                      " (successor lists follow each other in operation order)");
    uint64_t total = uint64_t(numSucc) + numISucc;
    if (running + total > appSize)
      return fail(at + bin::node::NumSucc,
                  where(i) + ": its successor lists run past the end of the rank's appendix (" +
                      llvm::Twine(appSize) + " entries)");
    maxCpu = std::max(maxCpu, rec[bin::node::Cpu]);
    maxNic = std::max(maxNic, rec[bin::node::Nic]);
    for (uint64_t k = running; k < running + total; ++k) {
      uint32_t s = read32le(app + 4 * k);
      if (s >= n)
        return fail(appAt + 4 * k, where(i) + ": successor " + llvm::Twine(s) +
                                       " is not an operation of the rank (it has " +
                                       llvm::Twine(n) + ")");
      ++indegree_[s];
    }
    running += total;
  }
  maxCpu_ = std::max<uint32_t>(maxCpu_, maxCpu);
  maxNic_ = std::max<uint32_t>(maxNic_, maxNic);
  if (running != appSize)
    return fail(appAt + 4 * running, "rank " + llvm::Twine(r) + "'s appendix has " +
                                         llvm::Twine(appSize) +
                                         " entries, but its operations' successor lists use " +
                                         llvm::Twine(running));
  // dep_count and the root list must agree with the edges: LogGOPSim trusts them, and
  // so does the simulator.
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t at = nodesAt + bin::NodeSize * uint64_t(i);
    uint32_t depCount = u32(at + bin::node::DepCount);
    if (depCount != indegree_[i])
      return fail(at, where(i) + ": its dependency count is " + llvm::Twine(depCount) + ", but " +
                          llvm::Twine(indegree_[i]) + " successor lists name it");
    if (depCount == 0) {
      if (k >= roots || u32(rootsAt + 4 * uint64_t(k)) != i)
        return fail(rootsAt + 4 * uint64_t(std::min(k, roots)),
                    "rank " + llvm::Twine(r) + "'s root list does not match: operation " +
                        llvm::Twine(i) + " has no dependencies and must be listed (roots are "
                                         "the operations without dependencies, ascending)");
      ++k;
    }
  }
  if (k != roots)
    return fail(rootsAt + 4 * uint64_t(k), "rank " + llvm::Twine(r) + "'s root list has " +
                                               llvm::Twine(roots) + " entries, but " +
                                               llvm::Twine(k) +
                                               " operations have no dependencies");
  return true;
}

std::optional<Schedule> BinaryReader::read() {
  if (!checkLayout())
    return std::nullopt;
  ranks_.resize(numRanks_);
  const char *text = buffer_->getBufferStart();
  uint64_t nextMark = uint64_t(16) << 20;
  for (uint32_t r = 0; r < numRanks_; ++r) {
    if (!checkRank(r))
      return std::nullopt;
    uint64_t done = bin::OffsetBase + u64(bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r) + 8);
    if (done >= nextMark) {
      if (progress_)
        progress_->update(done);
      // Checked records are read again later, in simulation order: until then they
      // need not stay resident.
      if (release_)
        releaseConsumed(*buffer_, released_, text + done);
      nextMark = done + (uint64_t(16) << 20);
    }
  }
  if (progress_)
    progress_->update(size_);
  uint8_t headerCpu = d_[bin::MaxCpuAt], headerNic = d_[bin::MaxNicAt];
  if (headerCpu != maxCpu_ || headerNic != maxNic_) {
    bool cpu = headerCpu != maxCpu_;
    fail(cpu ? bin::MaxCpuAt : bin::MaxNicAt,
         llvm::Twine("the header says the largest ") + (cpu ? "cpu" : "nic") + " index is " +
             llvm::Twine(unsigned(cpu ? headerCpu : headerNic)) + ", but the operations use " +
             llvm::Twine(cpu ? maxCpu_ : maxNic_));
    return std::nullopt;
  }
  return Schedule::viewPacked(numRanks_, ranks_, maxCpu_, maxNic_, totalDeps_, buffer_,
                              buffer_->getBufferIdentifier(), llvm::ArrayRef(d_, size_));
}

} // namespace

std::optional<Schedule> readBinaryGoal(DiagEngine &diags,
                                       std::shared_ptr<const llvm::MemoryBuffer> buffer,
                                       Progress *progress) {
  return BinaryReader(diags, std::move(buffer), progress).read();
}

} // namespace infracc::goal
