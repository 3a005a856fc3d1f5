#include "ir/Schedule.h"

#include "ir/Kernels.h"
#include "support/Diagnostics.h"
#include "support/HugePages.h"
#include "support/InputFile.h"
#include "support/Limits.h"

#include <llvm/Support/Endian.h>

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace infracc {

llvm::StringRef opKindName(OpKind k) {
  switch (k) {
  case OpKind::Send: return "send";
  case OpKind::Recv: return "recv";
  case OpKind::Calc: return "calc";
  case OpKind::Collective: return "collective";
  case OpKind::Kernel: return "kernel";
  }
  return "unknown";
}

llvm::StringRef loweringPassFor(OpKind k) {
  return k == OpKind::Kernel ? "lower-kernels" : "lower-collectives";
}

llvm::StringRef collectiveKindName(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::Allreduce: return "allreduce";
  case CollectiveKind::Allgather: return "allgather";
  case CollectiveKind::Reducescatter: return "reducescatter";
  case CollectiveKind::Bcast: return "bcast";
  case CollectiveKind::Reduce: return "reduce";
  case CollectiveKind::Alltoall: return "alltoall";
  case CollectiveKind::Alltoallv: return "alltoallv";
  case CollectiveKind::Barrier: return "barrier";
  case CollectiveKind::Gather: return "gather";
  case CollectiveKind::Scatter: return "scatter";
  }
  return "unknown";
}

uint64_t Schedule::memoryBytes() const {
  // Sizes, not capacities: reserved capacity that was never written is not resident.
  auto bytes = [](const auto &v) { return uint64_t(v.size()) * sizeof(v[0]); };
  return bytes(rankBegin_) + bytes(kind_) + bytes(peer_) + bytes(size_) + bytes(tag_) +
         bytes(cpu_) + bytes(nic_) + bytes(succBegin_) + bytes(succ_) + bytes(labelCode_) +
         bytes(labelChars_) + bytes(collectives_) + bytes(vsizes_) + bytes(sourceBase_) +
         bytes(sourceOffset_) + bytes(packedRanks_) + bytes(chunkRank_) + bytes(wideCpu_) +
         bytes(wideNic_) + packedBytes_ +
         (kernels_ ? bytes(kernels_->kernels) + bytes(kernels_->workgroups) +
                         bytes(kernels_->ops) + bytes(kernels_->semaphores)
                   : 0);
}

llvm::SMLoc Schedule::sourceLoc(uint32_t g) const {
  if (sourceOffset_.empty() || sourceOffset_[g] == NoSource)
    return {};
  uint64_t at = sourceBase_[rankOf(g)] + sourceOffset_[g];
  return llvm::SMLoc::getFromPointer(reinterpret_cast<const char *>(uintptr_t(at)));
}

std::optional<uint64_t> Schedule::recordOffset(uint32_t g) const {
  if (!recordSize_)
    return std::nullopt;
  uint32_t r = rankOf(g);
  return sourceBase_[r] + uint64_t(recordSize_) * (g - rankBegin(r));
}

void reportAtOp(DiagEngine &diags, const Schedule &s, uint32_t g, llvm::StringRef where,
                Severity sev, const llvm::Twine &msg) {
  llvm::SMLoc loc = s.sourceLoc(g);
  if (loc.isValid() && diags.sourceMgr().FindBufferContainingLoc(loc))
    return diags.report(loc, sev, msg);
  if (std::optional<uint64_t> at = s.recordOffset(g))
    return diags.report(s.recordFile() + ":offset " + std::to_string(*at), sev, msg);
  diags.report(where, sev, msg);
}

void packed::writeRecord(uint8_t *rec, OpKind kind, uint32_t peer, uint64_t size, uint32_t tag,
                         uint32_t cpu, uint32_t nic, uint32_t depCount, uint32_t numSucc,
                         uint32_t succFirst, uint32_t numISucc) {
  using llvm::support::endian::write32le;
  using llvm::support::endian::write64le;
  write32le(rec + field::DepCount, depCount);
  rec[field::Type] = static_cast<uint8_t>(kind);   // OpKind values are GOAL's type numbers
  write32le(rec + field::Peer, peer);
  write64le(rec + field::Size, size);
  write32le(rec + field::Tag, tag);
  rec[field::Cpu] = static_cast<uint8_t>(cpu);
  rec[field::Nic] = static_cast<uint8_t>(nic);
  write32le(rec + field::NumSucc, numSucc);
  write32le(rec + field::SuccFirst, succFirst);
  write32le(rec + field::NumISucc, numISucc);
  write32le(rec + field::ISuccFirst, succFirst + numSucc);
}

Schedule Schedule::viewPacked(uint32_t numRanks, llvm::ArrayRef<PackedRank> ranks,
                              uint32_t maxCpu, uint32_t maxNic, uint64_t numDeps,
                              std::shared_ptr<const void> owner, llvm::StringRef file,
                              llvm::ArrayRef<uint8_t> fileBytes) {
  assert(ranks.size() == numRanks);
  const uint8_t *fileStart = fileBytes.data();
  Schedule s = packedShell(numRanks, maxCpu, maxNic, numDeps);
  s.packedOwner_ = std::move(owner);
  s.viewedBytes_ = fileBytes;
  s.packedRanks_.assign(ranks.begin(), ranks.end());
  s.rankBegin_.resize(size_t(numRanks) + 1);
  s.recordFile_ = file.str();
  s.recordSize_ = packed::RecordSize;
  s.sourceBase_.resize(numRanks);
  uint64_t at = 0;
  for (uint32_t r = 0; r < numRanks; ++r) {
    s.rankBegin_[r] = at;
    at += ranks[r].numOps;
    s.sourceBase_[r] = uint64_t(ranks[r].records - fileStart);
  }
  s.rankBegin_[numRanks] = at;
  if (at > 0xFFFFFFFFull)
    throw std::length_error("schedule has more than 4294967295 operations");
  s.indexChunks();
  return s;
}

uint64_t Schedule::adviseSimulationAccess() const {
  if (viewedBytes_.empty())
    return 0;
  const uint64_t memory = availableMemory(), readAround = readAroundBytes(recordFile_);
  if (!randomAccessHelps(viewedBytes_.size(), numRanks_, memory, readAround))
    return 0;
  adviseRandomAccess(viewedBytes_.data(), viewedBytes_.size());
  return streamWindowBytes(2 * uint64_t(numRanks_), memory, readAround);
}

void Schedule::indexChunks() {
  uint64_t n = numOps();
  chunkRank_.assign((n >> ChunkBits) + 1, 0);
  uint32_t r = 0;
  for (uint64_t c = 0; c < chunkRank_.size(); ++c) {
    uint64_t g = c << ChunkBits;
    while (r + 1 < numRanks_ && rankBegin_[r + 1] <= g)
      ++r;
    chunkRank_[c] = r;
  }
}

Schedule Schedule::packedShell(uint32_t numRanks, uint32_t maxCpu, uint32_t maxNic,
                               uint64_t numDeps) {
  Schedule s;
  s.packed_ = true;
  s.numRanks_ = numRanks;
  s.maxCpu_ = maxCpu;
  s.maxNic_ = maxNic;
  s.packedDeps_ = numDeps;
  return s;
}

Schedule Schedule::packedCopy() const {
  Schedule s = packedShell(numRanks_, maxCpu_, maxNic_, numDependencies());
  s.rankBegin_ = rankBegin_;
  s.sourceBase_ = sourceBase_;
  s.sourceOffset_ = sourceOffset_;
  s.recordFile_ = recordFile_;
  s.recordSize_ = recordSize_;
  uint64_t n = numOps();
  const uint64_t recordBytes = packed::RecordSize * n;
  // Records, then successor entries, then root lists (each op at most once).
  s.packedBytes_ = recordBytes + 4 * s.packedDeps_ + 4 * n;
  auto buffer = std::shared_ptr<uint8_t[]>(new uint8_t[s.packedBytes_ + 1]);
  uint8_t *records = buffer.get(), *succ = records + recordBytes;
  uint8_t *roots = succ + 4 * s.packedDeps_;
  s.packedOwner_ = buffer;
  // 0xFF in a record's cpu/nic byte sends the reader to these tables.
  bool wideCpu = maxCpu_ >= 0xFF, wideNic = maxNic_ >= 0xFF;
  if (wideCpu)
    s.wideCpu_.assign(cpu_.begin(), cpu_.end());
  if (wideNic)
    s.wideNic_.assign(nic_.begin(), nic_.end());
  s.packedRanks_.resize(numRanks_);
  std::vector<uint32_t> indegree;
  for (uint32_t r = 0; r < numRanks_; ++r) {
    uint32_t first = rankBegin(r), count = numOps(r);
    indegree.assign(count, 0);
    for (uint32_t g = first; g < first + count; ++g)
      for (uint32_t raw : successorsRaw(g))
        ++indegree[raw & ~IRequiresBit];
    uint32_t numRoots = 0;
    for (uint32_t i = 0; i < count; ++i)
      if (indegree[i] == 0)
        llvm::support::endian::write32le(roots + 4 * size_t(numRoots++), i);
    s.packedRanks_[r] = {records + packed::RecordSize * uint64_t(first), succ, roots, count,
                         numRoots};
    roots += 4 * size_t(numRoots);
    uint32_t running = 0;
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t g = first + i;
      SuccessorRange list = successorsRaw(g);
      uint32_t numReq = 0;
      while (numReq < list.size() && !(list[numReq] & IRequiresBit))
        ++numReq;
      packed::writeRecord(records + packed::RecordSize * uint64_t(g), kind_[g], peer_[g], size_[g],
                          tag_[g], wideCpu ? std::min<uint32_t>(cpu_[g], 0xFF) : cpu_[g],
                          wideNic ? std::min<uint32_t>(nic_[g], 0xFF) : nic_[g], indegree[i],
                          numReq, running, list.size() - numReq);
      for (uint32_t raw : list)
        llvm::support::endian::write32le(succ + 4 * size_t(running++), raw & ~IRequiresBit);
    }
    succ += 4 * size_t(running);
  }
  s.indexChunks();
  return s;
}

std::string Schedule::label(uint32_t g) const {
  if (labelCode_.empty() || isPacked() || labelCode_[g] == NoLabel)
    return {};
  uint32_t code = labelCode_[g];
  if (code & LabelInTable)
    return std::string(labelChars_.data() + (code & ~LabelInTable));
  return "l" + std::to_string(code);
}

std::string Schedule::opName(uint32_t g) const {
  std::string l = label(g);
  if (!l.empty())
    return "'" + l + "'";
  return "#" + std::to_string(g - rankBegin(rankOf(g)));
}

uint32_t Schedule::rankOf(uint32_t g) const {
  // The last rank whose first op is <= g (empty ranks share their begin).
  auto first = rankBegin_.begin(), last = rankBegin_.end() - 1;
  if (!chunkRank_.empty()) {
    uint32_t r = chunkRank_[g >> ChunkBits];
    if (rankBegin_[r + 1] > g)
      return r;   // usually: the chunk's first rank holds g
    first += r;
    if (size_t(g >> ChunkBits) + 1 < chunkRank_.size())
      last = rankBegin_.begin() + chunkRank_[(g >> ChunkBits) + 1] + 1;
  }
  auto it = std::upper_bound(first, last, uint64_t(g));
  return static_cast<uint32_t>(it - rankBegin_.begin()) - 1;
}

ScheduleBuilder::ScheduleBuilder(uint32_t numRanks, bool keepLabels) : keepLabels_(keepLabels) {
  sched_.numRanks_ = numRanks;
  // numRanks may come from an untrusted header: the table grows as ranks are begun.
  sched_.rankBegin_.reserve(std::min<size_t>(size_t(numRanks) + 1, size_t(1) << 20));
}

void ScheduleBuilder::reserve(uint64_t ops, uint64_t deps) {
  // Passes and analyses read these at random: huge pages when they are large.
  reserveHugePages(sched_.kind_, ops);
  reserveHugePages(sched_.peer_, ops);
  reserveHugePages(sched_.size_, ops);
  reserveHugePages(sched_.tag_, ops);
  reserveHugePages(sched_.cpu_, ops);
  reserveHugePages(sched_.nic_, ops);
  reserveHugePages(sched_.succBegin_, ops + 1);
  reserveHugePages(sched_.succ_, deps);
  if (keepLabels_)
    reserveHugePages(sched_.labelCode_, ops);
  if (keepSourceLocs_)
    reserveHugePages(sched_.sourceOffset_, ops);
}

void ScheduleBuilder::beginRank(uint32_t rank) {
  assert(!inRank_ && "beginRank inside a rank");
  assert((rank_ == ~0u || rank > rank_) && "ranks must be built in increasing order");
  assert(rank < sched_.numRanks_);
  // Ranks skipped over are empty.
  while (sched_.rankBegin_.size() < size_t(rank) + 1) {
    sched_.rankBegin_.push_back(builtOps());
    if (sink_)
      emitRank(static_cast<uint32_t>(sched_.rankBegin_.size() - 2));
  }
  rank_ = rank;
  rankStart_ = builtOps();
  inRank_ = true;
  pending_.clear();
}

uint32_t ScheduleBuilder::encodeLabel(llvm::StringRef label) {
  if (label.empty())
    return Schedule::NoLabel;
  // `l<n>` without leading zeros and below 2^31 is stored as n.
  if (label.size() >= 2 && label.size() <= 10 && label[0] == 'l' &&
      (label[1] != '0' || label.size() == 2)) {
    uint64_t n = 0;
    bool digits = true;
    for (char c : label.drop_front()) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      n = n * 10 + uint64_t(c - '0');
    }
    if (digits && n < Schedule::LabelInTable)
      return static_cast<uint32_t>(n);
  }
  uint64_t offset = sched_.labelChars_.size();
  if (offset >= Schedule::LabelInTable)
    throw std::length_error("too many distinct labels (more than 2 GB of label text)");
  sched_.labelChars_.insert(sched_.labelChars_.end(), label.begin(), label.end());
  sched_.labelChars_.push_back('\0');
  return static_cast<uint32_t>(offset) | Schedule::LabelInTable;
}

Schedule::OpIndex ScheduleBuilder::addOp(OpKind kind, uint32_t peer, uint64_t size, uint32_t tag,
                                         uint32_t cpu, uint32_t nic, llvm::StringRef label) {
  assert(inRank_);
  assert(cpu <= MaxCpu && nic <= MaxNic);
  if (builtOps() >= 0xFFFFFFFFull)
    throw std::length_error("schedule has more than 4294967295 operations");
  Schedule::OpIndex local = opsInRank();
  sched_.kind_.push_back(kind);
  sched_.peer_.push_back(peer);
  sched_.size_.push_back(size);
  sched_.tag_.push_back(tag);
  sched_.cpu_.push_back(static_cast<uint16_t>(cpu));
  sched_.nic_.push_back(static_cast<uint16_t>(nic));
  sched_.maxCpu_ = std::max(sched_.maxCpu_, cpu);
  sched_.maxNic_ = std::max(sched_.maxNic_, nic);
  if (keepLabels_ && !sink_)
    sched_.labelCode_.push_back(encodeLabel(label));
  if (keepSourceLocs_)
    sched_.sourceOffset_.push_back(Schedule::NoSource);
  return local;
}

void ScheduleBuilder::setSourceLoc(Schedule::OpIndex from, llvm::SMLoc loc) {
  assert(inRank_ && keepSourceLocs_);
  if (sched_.sourceBase_.size() <= rank_)
    sched_.sourceBase_.resize(size_t(rank_) + 1, 0);
  uint64_t &base = sched_.sourceBase_[rank_];
  uint64_t at = uintptr_t(loc.getPointer());
  if (!base)
    base = at;   // the rank's first located op
  // Ops further than 4 GiB from the rank's first one keep no location.
  uint32_t offset = at >= base && at - base < Schedule::NoSource ? uint32_t(at - base)
                                                                  : Schedule::NoSource;
  for (uint64_t a = rankStart_ + from - sched_.arrayBase_; a < sched_.sourceOffset_.size(); ++a)
    sched_.sourceOffset_[a] = offset;
}

void ScheduleBuilder::addDependency(Schedule::OpIndex succ, Schedule::OpIndex pred, DepKind kind) {
  assert(inRank_);
  pending_.push_back({pred, succ | (kind == DepKind::IRequires ? Schedule::IRequiresBit : 0u)});
}

void ScheduleBuilder::endRank() {
  assert(inRank_);
  uint32_t n = opsInRank();
  // Counting sort by predecessor: each op's requires-successors, then its
  // irequires-successors, each in the order the dependencies were added.
  auto &succBegin = sched_.succBegin_;
  auto &succ = sched_.succ_;
  uint64_t base = succ.size();
  if (base + pending_.size() > 0xFFFFFFFFull)
    throw std::length_error("schedule has more than 4294967295 dependencies");
  fill_.assign(size_t(n) * 2, 0);   // [2*op]: requires count, [2*op+1]: irequires count
  for (const PendingDep &d : pending_) {
    assert(d.pred < n && (d.succ & ~Schedule::IRequiresBit) < n &&
           "dependency on an op outside the rank");
    ++fill_[size_t(d.pred) * 2 + ((d.succ & Schedule::IRequiresBit) ? 1 : 0)];
  }
  uint32_t at = static_cast<uint32_t>(base);
  for (uint32_t op = 0; op < n; ++op) {
    uint32_t req = fill_[size_t(op) * 2], ireq = fill_[size_t(op) * 2 + 1];
    fill_[size_t(op) * 2] = at;
    fill_[size_t(op) * 2 + 1] = at + req;
    at += req + ireq;
    succBegin.push_back(at);
  }
  succ.resize(at);
  for (const PendingDep &d : pending_)
    succ[fill_[size_t(d.pred) * 2 + ((d.succ & Schedule::IRequiresBit) ? 1 : 0)]++] = d.succ;
  sched_.rankBegin_.push_back(builtOps());
  pending_.clear();
  inRank_ = false;
  if (sink_)
    emitRank(rank_);
}

void ScheduleBuilder::emitRank(uint32_t r) {
  sink_(r, sched_.ops(r));
  sched_.arrayBase_ = builtOps();
  sched_.kind_.clear();
  sched_.peer_.clear();
  sched_.size_.clear();
  sched_.tag_.clear();
  sched_.cpu_.clear();
  sched_.nic_.clear();
  sched_.succBegin_.assign(1, 0);
  sched_.succ_.clear();
  sched_.sourceOffset_.clear();
}

uint32_t ScheduleBuilder::addCollective(const CollectiveInfo &info) {
  sched_.collectives_.push_back(info);
  return static_cast<uint32_t>(sched_.collectives_.size() - 1);
}

uint32_t ScheduleBuilder::addCommunicator(Communicator c) {
  commIndex_.try_emplace(c.id, static_cast<uint32_t>(sched_.communicators_.size()));
  sched_.communicators_.push_back(std::move(c));
  return static_cast<uint32_t>(sched_.communicators_.size() - 1);
}

uint32_t ScheduleBuilder::addVSizes(llvm::ArrayRef<uint64_t> sizes) {
  uint32_t begin = static_cast<uint32_t>(sched_.vsizes_.size());
  sched_.vsizes_.insert(sched_.vsizes_.end(), sizes.begin(), sizes.end());
  return begin;
}

Schedule ScheduleBuilder::finish() {
  assert(!inRank_);
  // Ranks never begun are empty.
  while (sched_.rankBegin_.size() < size_t(sched_.numRanks_) + 1) {
    sched_.rankBegin_.push_back(builtOps());
    if (sink_)
      emitRank(static_cast<uint32_t>(sched_.rankBegin_.size() - 2));
  }
  if (!sched_.sourceOffset_.empty())
    sched_.sourceBase_.resize(sched_.numRanks_, 0);
  return std::move(sched_);
}

} // namespace infracc
