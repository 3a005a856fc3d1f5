// Placement: which endpoint of the fabric each workload rank runs on, and which job
// it belongs to (for merged multi-job workloads).
//
// A rank can also stand for several original ranks ("members"): remap-gpus turns one
// rank per GPU into one rank per host, multi-tenant merge-jobs puts several jobs'
// ranks on one slot. Member k of rank r then owns the cpu streams
// [k*cpusPerMember, (k+1)*cpusPerMember), and nic index n of rank r stands for the
// fabric node nicNodes(r)[n] (the NIC the member's traffic leaves through) or, without
// a fabric, member k owns nic indices [k*nicsPerMember, (k+1)*nicsPerMember).
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <vector>

namespace infracc {

struct Placement {
  std::vector<NodeId> endpointOfRank;   // FQG node (an xpu, or a host's nic) per rank
  std::vector<uint32_t> jobOfRank;      // empty: a single job

  struct Member {
    uint32_t rank = 0;                  // the original rank (a GPU's rank, a job's rank)
    uint32_t job = 0;
    NodeId endpoint = InvalidNode;      // where it runs, when placed on a fabric
    NodeId nic = InvalidNode;           // the attach point its traffic uses (remap-gpus)
  };
  uint32_t cpusPerMember = 0;
  uint32_t nicsPerMember = 0;           // 0: nics are shared, or given by `nics`
  std::vector<uint32_t> memberBegin;    // CSR over ranks into `members`; empty: no members
  std::vector<Member> members;
  std::vector<uint32_t> nicBegin;       // CSR over ranks into `nics`; empty: none known
  std::vector<NodeId> nics;

  bool empty() const { return endpointOfRank.empty(); }
  uint32_t numRanks() const { return static_cast<uint32_t>(endpointOfRank.size()); }
  uint32_t job(uint32_t rank) const { return jobOfRank.empty() ? 0 : jobOfRank[rank]; }

  bool hasMembers() const { return !memberBegin.empty(); }
  llvm::ArrayRef<Member> membersOf(uint32_t rank) const {
    return {members.data() + memberBegin[rank], members.data() + memberBegin[rank + 1]};
  }
  /// The member that owns cpu stream `cpu` of `rank`, or null (no members, or a
  /// stream beyond the last member).
  const Member *memberOfCpu(uint32_t rank, uint32_t cpu) const {
    if (!hasMembers() || cpusPerMember == 0)
      return nullptr;
    uint32_t k = cpu / cpusPerMember;
    return k < memberBegin[rank + 1] - memberBegin[rank] ? &members[memberBegin[rank] + k]
                                                         : nullptr;
  }
  llvm::ArrayRef<NodeId> nicNodes(uint32_t rank) const {
    if (nicBegin.empty())
      return {};
    return {nics.data() + nicBegin[rank], nics.data() + nicBegin[rank + 1]};
  }
  void clearMembers() {
    cpusPerMember = nicsPerMember = 0;
    memberBegin.clear();
    members.clear();
    nicBegin.clear();
    nics.clear();
  }
  void clear() {
    endpointOfRank.clear();
    jobOfRank.clear();
    clearMembers();
  }
};

} // namespace infracc
