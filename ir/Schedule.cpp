#include "ir/Schedule.h"

#include "ir/Kernels.h"
#include "support/Diagnostics.h"

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
         bytes(sourceOffset_) +
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

std::string Schedule::label(uint32_t g) const {
  if (labelCode_.empty() || labelCode_[g] == NoLabel)
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
  auto it = std::upper_bound(rankBegin_.begin(), rankBegin_.end() - 1, uint64_t(g));
  return static_cast<uint32_t>(it - rankBegin_.begin()) - 1;
}

ScheduleBuilder::ScheduleBuilder(uint32_t numRanks, bool keepLabels) : keepLabels_(keepLabels) {
  sched_.numRanks_ = numRanks;
  // numRanks may come from an untrusted header: the table grows as ranks are begun.
  sched_.rankBegin_.reserve(std::min<size_t>(size_t(numRanks) + 1, size_t(1) << 20));
}

void ScheduleBuilder::reserve(uint64_t ops, uint64_t deps) {
  sched_.kind_.reserve(ops);
  sched_.peer_.reserve(ops);
  sched_.size_.reserve(ops);
  sched_.tag_.reserve(ops);
  sched_.cpu_.reserve(ops);
  sched_.nic_.reserve(ops);
  sched_.succBegin_.reserve(ops + 1);
  sched_.succ_.reserve(deps);
  if (keepLabels_)
    sched_.labelCode_.reserve(ops);
  if (keepSourceLocs_)
    sched_.sourceOffset_.reserve(ops);
}

void ScheduleBuilder::beginRank(uint32_t rank) {
  assert(!inRank_ && "beginRank inside a rank");
  assert((rank_ == ~0u || rank > rank_) && "ranks must be built in increasing order");
  assert(rank < sched_.numRanks_);
  // Ranks skipped over are empty.
  while (sched_.rankBegin_.size() < size_t(rank) + 1)
    sched_.rankBegin_.push_back(sched_.kind_.size());
  rank_ = rank;
  rankStart_ = sched_.kind_.size();
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
  if (sched_.kind_.size() >= 0xFFFFFFFFull)
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
  if (keepLabels_)
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
  for (uint64_t g = rankStart_ + from; g < sched_.sourceOffset_.size(); ++g)
    sched_.sourceOffset_[g] = offset;
}

void ScheduleBuilder::setRecordLayout(llvm::StringRef file, uint32_t recordSize) {
  sched_.recordFile_ = file.str();
  sched_.recordSize_ = recordSize;
  sched_.sourceBase_.assign(sched_.numRanks_, 0);
}

void ScheduleBuilder::setRecordsAt(uint64_t offset) {
  assert(sched_.recordSize_ && rank_ < sched_.sourceBase_.size());
  sched_.sourceBase_[rank_] = offset;
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
  sched_.rankBegin_.push_back(sched_.kind_.size());
  pending_.clear();
  inRank_ = false;
}

ScheduleBuilder::RankArrays ScheduleBuilder::appendRank(uint32_t rank, uint32_t numOps,
                                                       uint32_t numDeps) {
  beginRank(rank);
  Schedule &s = sched_;
  size_t first = s.kind_.size();
  size_t total = first + numOps;
  if (total > 0xFFFFFFFFull || s.succ_.size() + uint64_t(numDeps) > 0xFFFFFFFFull)
    throw std::length_error("schedule has more than 4294967295 operations or dependencies");
  s.kind_.resize(total);
  s.peer_.resize(total);
  s.size_.resize(total);
  s.tag_.resize(total);
  s.cpu_.resize(total);
  s.nic_.resize(total);
  if (keepLabels_)
    s.labelCode_.resize(total, Schedule::NoLabel);
  if (keepSourceLocs_)
    s.sourceOffset_.resize(total, Schedule::NoSource);
  size_t succFirst = s.succBegin_.size();
  s.succBegin_.resize(succFirst + numOps);
  size_t depFirst = s.succ_.size();
  s.succ_.resize(depFirst + numDeps);
  return {{s.kind_.data() + first, numOps},       {s.peer_.data() + first, numOps},
          {s.size_.data() + first, numOps},       {s.tag_.data() + first, numOps},
          {s.cpu_.data() + first, numOps},        {s.nic_.data() + first, numOps},
          {s.succBegin_.data() + succFirst, numOps}, {s.succ_.data() + depFirst, numDeps}};
}

void ScheduleBuilder::commitRank() {
  assert(inRank_);
  Schedule &s = sched_;
  size_t first = rankStart_, end = s.kind_.size();
  uint16_t maxCpu = 0, maxNic = 0;
  for (size_t g = first; g < end; ++g) {
    maxCpu = std::max(maxCpu, s.cpu_[g]);
    maxNic = std::max(maxNic, s.nic_[g]);
  }
  s.maxCpu_ = std::max<uint32_t>(s.maxCpu_, maxCpu);
  s.maxNic_ = std::max<uint32_t>(s.maxNic_, maxNic);
  // succBegin_ holds counts for this rank's ops: turn them into running ends.
  size_t n = end - first;
  uint32_t at = s.succBegin_[s.succBegin_.size() - n - 1];
  for (size_t i = s.succBegin_.size() - n; i < s.succBegin_.size(); ++i)
    s.succBegin_[i] = at += s.succBegin_[i];
  assert(at == s.succ_.size() && "successor counts do not add up to the rank's dependencies");
  s.rankBegin_.push_back(end);
  inRank_ = false;
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
  while (sched_.rankBegin_.size() < size_t(sched_.numRanks_) + 1)
    sched_.rankBegin_.push_back(sched_.kind_.size());
  if (!sched_.sourceOffset_.empty())
    sched_.sourceBase_.resize(sched_.numRanks_, 0);
  return std::move(sched_);
}

} // namespace infracc
