// merge-jobs: several workloads (Module::jobs, one per workload file) become one
// schedule, placed by -jobs=<file> (ir/PlacementRequests.h; without
// it every job is packed, multi-job).
//
// Slots: with a fabric, its endpoints (slot i = FabricGraph::endpoints()[i]) grouped
// by host; without one, `slots` numbered slots, `slots-per-host` consecutive ones per
// host (defaults: enough for every rank, one per host).
//
// multi-job: a slot holds one rank and a host belongs to one job. Jobs with a list
// take their slots first, then the interleaved jobs take whole free hosts in turns,
// then packed jobs (free hosts in order) and random jobs (free hosts in a random
// order) in file order; a job fills each host it takes before the next. The merged
// ranks are the occupied slots in slot order; peers are rewritten, tags kept (two
// jobs never share a pair of ranks).
//
// multi-tenant: every job is placed on its own (lists as given, packed on slots
// 0..n-1, random slots, interleaved jobs taking slots in turns and wrapping around),
// so jobs share slots. Every occupied slot is one merged rank; the ranks of different
// jobs on it are members on cpu streams of their own, with the tag rule of
// passes/RankGrouping.h keeping their messages apart; share-nic: false gives each
// member its own nic indices too.
//
// Job ids are kept in Placement::jobOfRank (and in the members of a shared slot).
#include "ir/Module.h"
#include "ir/PlacementRequests.h"
#include "passes/Pass.h"
#include "passes/Placing.h"
#include "passes/RankGrouping.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace infracc {
namespace cl = llvm::cl;

namespace {

using Mode = JobsSpec::Mode;
using Strategy = JobsSpec::Strategy;

struct JobIn {
  std::string source;
  const Schedule *schedule;
};

class MergeJobsPass : public Pass {
public:
  llvm::StringRef name() const override { return "merge-jobs"; }
  llvm::Error run(Module &m, PassContext &ctx) override;
};

class Allocator {
public:
  Allocator(const Module &m, const JobsSpec &spec, llvm::ArrayRef<JobIn> jobs, DiagEngine &diags)
      : m_(m), spec_(spec), jobs_(jobs), diags_(diags) {}

  /// Slot of every rank of every job; false when something was reported.
  bool run(std::vector<std::vector<uint32_t>> &slotOf);
  uint32_t numSlots() const { return numSlots_; }
  NodeId endpointOf(uint32_t slot) const { return m_.fabric->endpoints()[slot]; }

private:
  bool setupSlots();
  bool resolveList(size_t j, std::vector<uint32_t> &out);
  uint32_t hostOf(uint32_t slot) const { return hostOfSlot_[slot]; }
  std::string jobName(size_t j) const {
    return fmt::format("job {} ('{}', {} ranks)", j, jobs_[j].source, jobs_[j].schedule->numRanks());
  }
  bool multiJob(std::vector<std::vector<uint32_t>> &slotOf);
  bool multiTenant(std::vector<std::vector<uint32_t>> &slotOf);
  /// At the job's placement in the jobs file, else its entry, else its workload.
  void errorAt(size_t j, const std::string &msg) {
    const auto &job = spec_.jobs[j];
    if (job.placementLoc.isValid() || job.loc.isValid())
      diags_.error(job.placementLoc.isValid() ? job.placementLoc : job.loc, msg);
    else
      diags_.error(jobs_[j].source, msg);
  }
  uint64_t seedOf(size_t j) const {
    const auto &job = spec_.jobs[j];
    return job.seed ? *job.seed : (spec_.seed ? *spec_.seed : opts::seed()) + j;
  }

  const Module &m_;
  const JobsSpec &spec_;
  llvm::ArrayRef<JobIn> jobs_;
  DiagEngine &diags_;
  uint32_t numSlots_ = 0;
  std::vector<uint32_t> hostOfSlot_;
  std::vector<std::vector<uint32_t>> slotsOfHost_;
  llvm::DenseMap<NodeId, uint32_t> slotOfEndpoint_;
};

bool Allocator::setupSlots() {
  uint64_t total = 0, largest = 0;
  for (const JobIn &j : jobs_) {
    total += j.schedule->numRanks();
    largest = std::max<uint64_t>(largest, j.schedule->numRanks());
  }
  if (m_.hasFabric()) {
    if (spec_.slots || spec_.slotsPerHost) {
      diags_.error(spec_.slots ? spec_.slotsLoc : spec_.slotsPerHostLoc,
                   "slots and slots-per-host describe the slots when there is no fabric; with "
                   "the fabric '" + m_.fabricSource + "' the slots are its endpoints");
      return false;
    }
    const FabricGraph &g = *m_.fabric;
    EndpointPool pool(g);
    numSlots_ = static_cast<uint32_t>(g.endpoints().size());
    hostOfSlot_.resize(numSlots_);
    slotsOfHost_.resize(pool.hosts().size());
    for (uint32_t i = 0; i < numSlots_; ++i) {
      NodeId e = g.endpoints()[i];
      hostOfSlot_[i] = pool.hostOf(e);
      slotsOfHost_[hostOfSlot_[i]].push_back(i);
      slotOfEndpoint_[e] = i;
    }
    return true;
  }
  uint64_t slots = spec_.slots ? *spec_.slots
                               : (spec_.mode == Mode::MultiJob ? total : largest);
  if (slots > 0xFFFFFFF0ull) {
    diags_.error(spec_.slotsLoc, "too many slots");
    return false;
  }
  numSlots_ = static_cast<uint32_t>(slots);
  uint64_t per = spec_.slotsPerHost.value_or(1);
  hostOfSlot_.resize(numSlots_);
  slotsOfHost_.resize((slots + per - 1) / per);
  for (uint32_t i = 0; i < numSlots_; ++i) {
    hostOfSlot_[i] = static_cast<uint32_t>(i / per);
    slotsOfHost_[hostOfSlot_[i]].push_back(i);
  }
  return true;
}

bool Allocator::resolveList(size_t j, std::vector<uint32_t> &out) {
  const auto &job = spec_.jobs[j];
  const uint32_t n = jobs_[j].schedule->numRanks();
  if (job.slots.size() != n) {
    diags_.error(job.placementLoc, fmt::format("the placement list of {} has {} entries; it "
                                               "needs one per rank ({})",
                                               jobName(j), job.slots.size(), n));
    return false;
  }
  std::optional<EndpointNames> names;
  if (m_.hasFabric())
    names.emplace(*m_.fabric);
  bool ok = true;
  llvm::DenseMap<uint32_t, size_t> seen;
  for (size_t r = 0; r < n; ++r) {
    const JobsSpec::Slot &s = job.slots[r];
    uint32_t slot = 0;
    if (s.isIndex) {
      if (s.index >= numSlots_) {
        diags_.error(s.loc, fmt::format("slot {} does not exist: there are {} slots (0 to {}){}",
                                        s.index, numSlots_, numSlots_ - 1,
                                        m_.hasFabric() ? ", the fabric's endpoints in order" : ""));
        ok = false;
        continue;
      }
      slot = static_cast<uint32_t>(s.index);
    } else if (!names) {
      diags_.error(s.loc, fmt::format("'{}' is a name, but without a fabric slots are numbers "
                                      "(0 to {})",
                                      s.name, numSlots_ - 1));
      ok = false;
      continue;
    } else {
      auto node = names->resolve(s.name);
      if (!node) {
        diags_.error(s.loc, llvm::toString(node.takeError()));
        ok = false;
        continue;
      }
      slot = slotOfEndpoint_.lookup(*node);
    }
    auto [it, fresh] = seen.try_emplace(slot, r);
    if (!fresh) {
      diags_.error(s.loc, fmt::format("ranks {} and {} of job {} are both placed on slot {}; a "
                                      "slot holds one rank of each job",
                                      it->second, r, j, slot));
      ok = false;
      continue;
    }
    out[r] = slot;
  }
  return ok;
}

bool Allocator::run(std::vector<std::vector<uint32_t>> &slotOf) {
  if (!setupSlots())
    return false;
  slotOf.resize(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j)
    slotOf[j].assign(jobs_[j].schedule->numRanks(), ~0u);
  return spec_.mode == Mode::MultiJob ? multiJob(slotOf) : multiTenant(slotOf);
}

bool Allocator::multiJob(std::vector<std::vector<uint32_t>> &slotOf) {
  const uint32_t H = static_cast<uint32_t>(slotsOfHost_.size());
  std::vector<int64_t> owner(H, -1);
  std::vector<size_t> ownerRank(H, 0);
  std::vector<uint8_t> used(numSlots_, 0);
  bool ok = true;
  // 1. Explicit lists.
  for (size_t j = 0; j < jobs_.size(); ++j) {
    if (spec_.jobs[j].strategy != Strategy::List)
      continue;
    if (!resolveList(j, slotOf[j])) {
      ok = false;
      continue;
    }
    for (size_t r = 0; r < slotOf[j].size(); ++r) {
      uint32_t slot = slotOf[j][r], h = hostOf(slot);
      const auto &loc = spec_.jobs[j].slots[r].loc;
      if (used[slot]) {
        diags_.error(loc, fmt::format("slot {} is already taken by job {}; in multi-job mode a "
                                      "slot holds one rank",
                                      slot, owner[h]));
        ok = false;
      } else if (owner[h] >= 0 && owner[h] != int64_t(j)) {
        diags_.error(loc, fmt::format("job {} and job {} would share a host (slot {} is on the "
                                      "host of slot {}); in multi-job mode a host belongs to "
                                      "one job (mode: multi-tenant lets jobs share hosts)",
                                      owner[h], j, slot, slotOf[owner[h]][ownerRank[h]]));
        ok = false;
      }
      used[slot] = 1;
      if (owner[h] < 0) {
        owner[h] = int64_t(j);
        ownerRank[h] = r;
      }
    }
  }
  if (!ok)
    return false;
  // Takes free host h for job j, filling it with the job's next ranks.
  std::vector<size_t> next(jobs_.size(), 0);
  auto take = [&](size_t j, uint32_t h) {
    owner[h] = int64_t(j);
    for (uint32_t slot : slotsOfHost_[h]) {
      if (next[j] == slotOf[j].size())
        break;
      slotOf[j][next[j]++] = slot;
      used[slot] = 1;
    }
  };
  auto capacityError = [&](size_t j) {
    errorAt(j, fmt::format("{} does not fit: {} of its ranks have no slot and every host is "
                             "taken (multi-job mode gives each job hosts of its own; mode: "
                             "multi-tenant lets jobs share them)",
                             jobName(j), slotOf[j].size() - next[j]));
  };
  // 2. Interleaved jobs take free hosts in turns.
  std::vector<size_t> inter;
  for (size_t j = 0; j < jobs_.size(); ++j)
    if (spec_.jobs[j].strategy == Strategy::Interleaved)
      inter.push_back(j);
  uint32_t h = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t j : inter) {
      if (next[j] == slotOf[j].size())
        continue;
      while (h < H && owner[h] >= 0)
        ++h;
      if (h == H) {
        capacityError(j);
        return false;
      }
      take(j, h);
      progress = true;
    }
  }
  // 3. Packed and random jobs in file order.
  for (size_t j = 0; j < jobs_.size(); ++j) {
    Strategy st = spec_.jobs[j].strategy;
    if (st != Strategy::Packed && st != Strategy::Random)
      continue;
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < H; ++k)
      if (owner[k] < 0)
        order.push_back(k);
    if (st == Strategy::Random) {
      std::mt19937_64 rng(seedOf(j));
      seededShuffle(order, rng);
    }
    for (uint32_t k : order) {
      if (next[j] == slotOf[j].size())
        break;
      take(j, k);
    }
    if (next[j] < slotOf[j].size()) {
      capacityError(j);
      return false;
    }
  }
  return true;
}

bool Allocator::multiTenant(std::vector<std::vector<uint32_t>> &slotOf) {
  bool ok = true;
  std::vector<size_t> inter;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const uint32_t n = jobs_[j].schedule->numRanks();
    if (spec_.jobs[j].strategy != Strategy::List && n > numSlots_) {
      errorAt(j, fmt::format("{} has more ranks than there are slots ({}); a slot holds one "
                               "rank of each job",
                               jobName(j), numSlots_));
      ok = false;
      continue;
    }
    switch (spec_.jobs[j].strategy) {
    case Strategy::List:
      ok &= resolveList(j, slotOf[j]);
      break;
    case Strategy::Packed:
      std::iota(slotOf[j].begin(), slotOf[j].end(), 0u);
      break;
    case Strategy::Random: {
      std::vector<uint32_t> all(numSlots_);
      std::iota(all.begin(), all.end(), 0u);
      std::mt19937_64 rng(seedOf(j));
      seededShuffle(all, rng);
      std::copy(all.begin(), all.begin() + n, slotOf[j].begin());
      break;
    }
    case Strategy::Interleaved:
      inter.push_back(j);
      break;
    }
  }
  // Interleaved tenants take slots in turns, wrapping around.
  std::vector<size_t> next(jobs_.size(), 0);
  uint64_t turn = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t j : inter)
      if (next[j] < slotOf[j].size()) {
        slotOf[j][next[j]++] = static_cast<uint32_t>(turn++ % numSlots_);
        progress = true;
      }
  }
  for (size_t j : inter) {
    std::vector<uint32_t> sorted = slotOf[j];
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      errorAt(j, fmt::format("interleaving puts two ranks of {} on one slot: taking the {} "
                               "slots in turns with the other interleaved jobs, it comes round "
                               "to a slot it already has; use packed or random for some jobs",
                               jobName(j), numSlots_));
      ok = false;
    }
  }
  return ok;
}

std::string ordinal(size_t i) {
  static const char *names[] = {"1st", "2nd", "3rd"};
  return i < 3 ? names[i] : std::to_string(i + 1) + "th";
}

llvm::Error MergeJobsPass::run(Module &m, PassContext &ctx) {
  std::vector<JobIn> jobs;
  for (const Module::Job &j : m.jobs) {
    jobs.push_back({j.source, &j.schedule});
    m.timedWorkload |= j.timed;
  }
  if (jobs.empty() && m.hasSchedule())
    jobs.push_back({m.workloadSource, &*m.schedule});
  if (jobs.empty())
    return usageError("merge-jobs needs workloads (one or more .goal files)");
  if (!m.placement.empty() || m.placement.hasMembers())
    return usageError("merge-jobs places the jobs itself; run it before place and remap-gpus");

  JobsSpec spec;
  if (m.jobsSpec) {
    spec = *m.jobsSpec;
    if (spec.jobs.size() != jobs.size()) {
      std::string names;
      for (const JobIn &j : jobs)
        names += (names.empty() ? "" : ", ") + j.source;
      ctx.diags.error(spec.jobsLoc, fmt::format("the jobs file describes {} job{} but {} "
                                                "workload{} given ({}); give one entry per "
                                                "workload, in command-line order",
                                                spec.jobs.size(), spec.jobs.size() == 1 ? "" : "s",
                                                jobs.size(), jobs.size() == 1 ? " was" : "s were",
                                                names));
      return reportedError();
    }
    for (size_t j = 0; j < jobs.size(); ++j) {
      const std::string &w = spec.jobs[j].workload;
      if (!w.empty() && w != jobs[j].source &&
          w != llvm::sys::path::filename(jobs[j].source).str())
        ctx.diags.error(spec.jobs[j].workloadLoc,
                        fmt::format("job {} names the workload '{}', but the {} workload on the "
                                    "command line is '{}'",
                                    j, w, ordinal(j), jobs[j].source));
    }
    if (ctx.diags.hasErrors())
      return reportedError();
  } else {
    spec.jobs.resize(jobs.size());
  }

  Allocator alloc(m, spec, jobs, ctx.diags);
  std::vector<std::vector<uint32_t>> slotOf;
  if (!alloc.run(slotOf))
    return reportedError();

  // Members of every occupied slot, in slot order; within a slot by job, then rank.
  struct Entry {
    uint32_t slot, job, rank;
  };
  std::vector<Entry> entries;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    for (uint32_t r = 0; r < slotOf[j].size(); ++r)
      entries.push_back({slotOf[j][r], j, r});
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.slot, a.job, a.rank) < std::tie(b.slot, b.job, b.rank);
  });
  GroupingPlan plan;
  plan.pass = "merge-jobs";
  for (const JobIn &j : jobs) {
    plan.sources.push_back(j.schedule);
    plan.sourceNames.push_back(j.source);
  }
  plan.begin.push_back(0);
  std::vector<uint32_t> slotOfRank;
  for (size_t i = 0; i < entries.size(); ++i) {
    plan.members.push_back({entries[i].job, entries[i].rank});
    if (i + 1 == entries.size() || entries[i + 1].slot != entries[i].slot) {
      plan.begin.push_back(static_cast<uint32_t>(plan.members.size()));
      slotOfRank.push_back(entries[i].slot);
    }
  }
  const bool tenants = plan.maxMembers() > 1;
  uint32_t nics = 1;
  for (const JobIn &j : jobs)
    nics = std::max(nics, j.schedule->maxNic() + 1);
  if (tenants && !spec.shareNic)
    plan.nicOf = [&](uint32_t member, uint32_t nic) {
      uint32_t q = static_cast<uint32_t>(
          std::upper_bound(plan.begin.begin(), plan.begin.end(), member) - plan.begin.begin() - 1);
      return (member - plan.begin[q]) * nics + nic;
    };
  std::optional<Schedule> merged = regroup(plan, ctx.diags);
  if (!merged)
    return reportedError();

  std::vector<uint32_t> offset(jobs.size() + 1, 0);
  for (size_t j = 0; j < jobs.size(); ++j)
    offset[j + 1] = offset[j] + jobs[j].schedule->numRanks();
  Placement p;
  const uint32_t Q = plan.numRanks();
  for (uint32_t q = 0; q < Q; ++q) {
    if (m.hasFabric())
      p.endpointOfRank.push_back(alloc.endpointOf(slotOfRank[q]));
    p.jobOfRank.push_back(plan.members[plan.begin[q]].source);
  }
  uint64_t shared = 0;
  if (tenants) {
    p.cpusPerMember = cpusPerMember(plan.sources);
    p.nicsPerMember = spec.shareNic ? 0 : nics;
    p.memberBegin = plan.begin;
    for (uint32_t q = 0; q < Q; ++q) {
      shared += plan.begin[q + 1] - plan.begin[q] > 1;
      for (uint32_t i = plan.begin[q]; i < plan.begin[q + 1]; ++i) {
        const GroupMember &gm = plan.members[i];
        p.members.push_back({offset[gm.source] + gm.rank, gm.source,
                             m.hasFabric() ? p.endpointOfRank[q] : InvalidNode});
      }
    }
  }
  std::string names;
  for (const JobIn &j : jobs)
    names += (names.empty() ? "" : "+") + j.source;
  m.schedule = std::move(*merged);
  m.jobs.clear();
  m.workloadSource = names;
  m.placement = std::move(p);
  ctx.stats.add("merge-jobs", "jobs", "Jobs merged", jobs.size());
  ctx.stats.add("merge-jobs", "ranks", "Ranks after merge-jobs", Q);
  ctx.stats.add("merge-jobs", "shared", "Slots shared by several jobs", shared);
  if (m.hasFabric())
    recordPlacementStats(m, ctx.stats, "merge-jobs");
  return llvm::Error::success();
}

RegisterPass<MergeJobsPass> X("merge-jobs", "several workloads -> one schedule, placed by "
                                            "-jobs=<file> (multi-job or multi-tenant)");

} // namespace
} // namespace infracc
