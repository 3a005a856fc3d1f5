#include "compiler/frontends/goal/GoalBinaryReader.h"

#include "compiler/frontends/goal/MappedInput.h"
#include "formats/GoalBinaryFormat.h"
#include "support/Diagnostics.h"
#include "support/Progress.h"

#include <llvm/Support/Endian.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace infracc::goal {

namespace {

using llvm::support::endian::read32le;
using llvm::support::endian::read64le;

constexpr size_t PrefetchBytes = 1024;

/// One checking thread's share: ranks [from, to), its scratch, what it found. The
/// threads check disjoint ranks and meet only in the results, merged in rank order.
struct RankCheck {
  unsigned part = 0;
  uint32_t from = 0, to = 0;
  std::vector<uint32_t> indegree;   // per op of the rank being checked
  uint8_t maxCpu = 0, maxNic = 0;
  bool failed = false;
  uint64_t failAt = 0;
  std::string failure;
  std::exception_ptr thrown;   // out of memory, say: rethrown once every thread is joined
};

class BinaryReader {
public:
  BinaryReader(DiagEngine &diags, std::shared_ptr<const llvm::MemoryBuffer> buffer,
               Progress *progress, unsigned threads)
      : diags_(diags), buffer_(std::move(buffer)), progress_(progress), threads_(threads),
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
  bool checkRank(uint32_t r, RankCheck &c);
  void checkRanks(RankCheck &c);
  unsigned checkingThreads() const;
  uint64_t rankEnd(uint32_t r) const {
    return bin::OffsetBase + u64(bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r) + 8);
  }

  DiagEngine &diags_;
  std::shared_ptr<const llvm::MemoryBuffer> buffer_;
  Progress *progress_;
  unsigned threads_;
  const uint8_t *d_;
  uint64_t size_;
  const char *released_;
  bool release_;
  uint32_t numRanks_ = 0;
  uint64_t totalOps_ = 0, totalDeps_ = 0;
  uint32_t maxCpu_ = 0, maxNic_ = 0;
  std::vector<Schedule::PackedRank> ranks_;
  std::atomic<uint64_t> checkedBytes_{0};
  // The first share with an error: the shares after it may give up.
  std::atomic<unsigned> firstFailed_{~0u};
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

bool BinaryReader::checkRank(uint32_t r, RankCheck &c) {
  auto fail = [&c](uint64_t offset, const llvm::Twine &msg) {
    c.failed = true;
    c.failAt = offset;
    c.failure = msg.str();
    return false;
  };
  uint64_t base = bin::OffsetBase + u64(bin::JumpTableAt + bin::JumpEntrySize * uint64_t(r));
  uint64_t end = rankEnd(r);
  uint32_t n = u32(base), roots = u32(base + 4);
  uint64_t rootsAt = base + bin::RankHeaderSize;
  uint64_t nodesAt = rootsAt + 4 * uint64_t(roots);
  uint64_t appAt = nodesAt + bin::NodeSize * uint64_t(n);
  uint64_t appSize = (end - appAt) / 4;
  auto where = [&](uint32_t i) {
    return "rank " + std::to_string(r) + " operation " + std::to_string(i);
  };

  ranks_[r] = {d_ + nodesAt, d_ + appAt, d_ + rootsAt, n, roots};
  c.indegree.assign(n, 0);
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
      ++c.indegree[s];
    }
    running += total;
  }
  c.maxCpu = std::max(c.maxCpu, maxCpu);
  c.maxNic = std::max(c.maxNic, maxNic);
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
    if (depCount != c.indegree[i])
      return fail(at, where(i) + ": its dependency count is " + llvm::Twine(depCount) + ", but " +
                          llvm::Twine(c.indegree[i]) + " successor lists name it");
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

// Checks ranks [c.from, c.to) in order, stopping at the first error or when a share
// before this one found one. The first share also moves the progress bar.
void BinaryReader::checkRanks(RankCheck &c) {
  const char *text = buffer_->getBufferStart();
  uint64_t lastMark = c.from == 0 ? 0 : rankEnd(c.from - 1);
  const char *released = text + lastMark;   // this share's pages only
  for (uint32_t r = c.from; r < c.to; ++r) {
    if (!checkRank(r, c)) {
      unsigned first = firstFailed_.load();
      while (c.part < first && !firstFailed_.compare_exchange_weak(first, c.part)) {
      }
      return;
    }
    uint64_t done = rankEnd(r);
    if (done - lastMark >= (uint64_t(16) << 20)) {
      uint64_t total = checkedBytes_ += done - lastMark;
      lastMark = done;
      if (c.part == 0 && progress_)
        progress_->update(total);
      // Checked records are read again later, in simulation order: until then they
      // need not stay resident.
      if (release_)
        releaseConsumed(*buffer_, released, text + done);
      // Only ranks after a bad one may be left unchecked: the error reported is the
      // first in the file.
      if (firstFailed_.load(std::memory_order_relaxed) < c.part)
        return;
    }
  }
}

// How many threads check the ranks: the number asked for, else one per CPU up to four
// when the file is large enough (16 MiB) for a thread to pay. Checking reads the whole
// file once, and on a machine whose page faults are costly that is most of the time
// before the simulation starts.
unsigned BinaryReader::checkingThreads() const {
  unsigned n = threads_;
  if (n == 0)
    n = size_ < (uint64_t(16) << 20) ? 1 : std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  return std::max(1u, std::min<unsigned>(n, numRanks_));
}

std::optional<Schedule> BinaryReader::read() {
  if (!checkLayout())
    return std::nullopt;
  ranks_.resize(numRanks_);
  // Contiguous shares of about equal bytes, rank order kept across them.
  const unsigned parts = checkingThreads();
  std::vector<RankCheck> checks(parts);
  const uint64_t dataStart = bin::OffsetBase + bin::firstRankStart(numRanks_);
  const uint64_t data = size_ - dataStart;
  uint32_t r = 0;
  for (unsigned p = 0; p < parts; ++p) {
    checks[p].part = p;
    checks[p].from = r;
    uint64_t until = dataStart + data / parts * (p + 1);
    if (p + 1 == parts)
      r = numRanks_;
    else
      while (r < numRanks_ - (parts - 1 - p) && (r == checks[p].from || rankEnd(r - 1) < until))
        ++r;
    checks[p].to = r;
  }
  // What a share throws (out of memory) waits until every thread is joined.
  auto check = [this, &checks](unsigned p) {
    try {
      checkRanks(checks[p]);
    } catch (...) {
      checks[p].thrown = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  unsigned started = 1;
  for (; started < parts; ++started) {
    try {
      helpers.emplace_back(check, started);
    } catch (const std::system_error &) {
      break;   // no thread to be had: this one checks the shares left, in order
    }
  }
  check(0);
  for (unsigned p = started; p < parts; ++p)
    check(p);
  for (std::thread &t : helpers)
    t.join();
  for (const RankCheck &c : checks) {
    if (c.thrown)
      std::rethrow_exception(c.thrown);
    if (c.failed) {
      fail(c.failAt, c.failure);
      return std::nullopt;
    }
    maxCpu_ = std::max<uint32_t>(maxCpu_, c.maxCpu);
    maxNic_ = std::max<uint32_t>(maxNic_, c.maxNic);
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
                                       Progress *progress, unsigned threads) {
  return BinaryReader(diags, std::move(buffer), progress, threads).read();
}

} // namespace infracc::goal
