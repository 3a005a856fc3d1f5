#include "ir/Schedule.h"

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
  case OpKind::GpuLoad: return "load";
  case OpKind::GpuStore: return "store";
  case OpKind::GpuMemcpy: return "memcpy";
  case OpKind::GpuPut: return "put";
  case OpKind::GpuGet: return "get";
  case OpKind::GpuSemAcquire: return "sem_acquire";
  case OpKind::GpuSemRelease: return "sem_release";
  case OpKind::GpuReduce: return "reduce";
  case OpKind::GpuNop: return "nop";
  case OpKind::GpuBarrier: return "barrier";
  }
  return "unknown";
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
  auto bytes = [](const auto &v) { return uint64_t(v.capacity()) * sizeof(v[0]); };
  return bytes(rankBegin_) + bytes(kind_) + bytes(peer_) + bytes(size_) + bytes(tag_) +
         bytes(cpu_) + bytes(nic_) + bytes(succBegin_) + bytes(succ_) + bytes(labelBegin_) +
         bytes(labelChars_) + bytes(collectives_) + bytes(vsizes_) + bytes(gpuOps_);
}

ScheduleBuilder::ScheduleBuilder(uint32_t numRanks, bool keepLabels) : keepLabels_(keepLabels) {
  sched_.numRanks_ = numRanks;
  sched_.rankBegin_.reserve(size_t(numRanks) + 1);
  if (keepLabels_)
    sched_.labelBegin_.push_back(0);
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
  if (keepLabels_) {
    sched_.labelChars_.insert(sched_.labelChars_.end(), label.begin(), label.end());
    sched_.labelBegin_.push_back(static_cast<uint32_t>(sched_.labelChars_.size()));
  }
  return local;
}

void ScheduleBuilder::addDependency(Schedule::OpIndex succ, Schedule::OpIndex pred, DepKind kind) {
  assert(inRank_);
  pending_.push_back({pred, succ | (kind == DepKind::IRequires ? Schedule::IRequiresBit : 0u)});
}

void ScheduleBuilder::endRank() {
  assert(inRank_);
  uint32_t n = opsInRank();
  // Group by predecessor; requires before irequires; otherwise keep insertion order.
  std::stable_sort(pending_.begin(), pending_.end(), [](const PendingDep &a, const PendingDep &b) {
    if (a.pred != b.pred)
      return a.pred < b.pred;
    return (a.succ & Schedule::IRequiresBit) < (b.succ & Schedule::IRequiresBit);
  });
  auto &succBegin = sched_.succBegin_;
  auto &succ = sched_.succ_;
  size_t p = 0;
  for (uint32_t op = 0; op < n; ++op) {
    while (p < pending_.size() && pending_[p].pred == op)
      succ.push_back(pending_[p++].succ);
    if (succ.size() > 0xFFFFFFFFull)
      throw std::length_error("schedule has more than 4294967295 dependencies");
    succBegin.push_back(static_cast<uint32_t>(succ.size()));
  }
  assert(p == pending_.size() && "dependency on an op outside the rank");
  sched_.rankBegin_.push_back(sched_.kind_.size());
  pending_.clear();
  inRank_ = false;
}

uint32_t ScheduleBuilder::addCollective(const CollectiveInfo &info) {
  sched_.collectives_.push_back(info);
  return static_cast<uint32_t>(sched_.collectives_.size() - 1);
}

uint32_t ScheduleBuilder::addCommunicator(Communicator c) {
  sched_.communicators_.push_back(std::move(c));
  return static_cast<uint32_t>(sched_.communicators_.size() - 1);
}

uint32_t ScheduleBuilder::addVSizes(llvm::ArrayRef<uint64_t> sizes) {
  uint32_t begin = static_cast<uint32_t>(sched_.vsizes_.size());
  sched_.vsizes_.insert(sched_.vsizes_.end(), sizes.begin(), sizes.end());
  return begin;
}

uint32_t ScheduleBuilder::addGpuOp(const GpuOpInfo &info) {
  sched_.gpuOps_.push_back(info);
  return static_cast<uint32_t>(sched_.gpuOps_.size() - 1);
}

Schedule ScheduleBuilder::finish() {
  assert(!inRank_);
  // Ranks never begun are empty.
  while (sched_.rankBegin_.size() < size_t(sched_.numRanks_) + 1)
    sched_.rankBegin_.push_back(sched_.kind_.size());
  return std::move(sched_);
}

} // namespace infracc
