// What the user asked of placement in files beside the workload: the -place-map
// entries (for the place pass), the -jobs description (for merge-jobs) and which NIC
// each rank uses (-nic, for remap-gpus and the packet-level backends). The frontends in
// compiler/frontends/placement read and syntax-check the files; the passes check the
// entries against the workload and the fabric, pointing at the text.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

// A line of a rank map: `rank name`, e.g. `3 dgx.0.xpu.3` in a -place-map file
// (the endpoint the rank runs on) or `3 dgx.0.nic.3` in a -nic=map:FILE file (the
// attach point its traffic uses).
struct RankMapEntry {
  uint32_t rank = 0;
  std::string name;
  llvm::SMLoc rankLoc, nameLoc;
};

struct PlaceMap {
  std::string path;
  std::vector<RankMapEntry> entries;
};

// -nic=affinity|round-robin|map:FILE: which of its host's attach points (NICs, NIC
// ports) a rank's traffic uses (passes/NicAssignment.h).
struct NicRequest {
  enum class Policy { Affinity, RoundRobin, Map };
  Policy policy = Policy::Affinity;
  std::string path;                    // Map: the file
  std::vector<RankMapEntry> entries;   // Map: one per rank
};

// The -jobs file of merge-jobs: how several workloads share the fabric. YAML or JSON
// (JSON is read as YAML), checked with file:line:col messages:
//
//   mode: multi-job          # or multi-tenant (jobs may share slots); default multi-job
//   share-nic: true          # multi-tenant: tenants of a slot share its NICs (default)
//   slots: 16                # without a fabric: slots to place ranks on (default: enough)
//   slots-per-host: 4        # without a fabric: consecutive slots per host (default 1)
//   seed: 7                  # for random placements (default -seed)
//   jobs:                    # one entry per workload, in command-line order
//   - workload: a.goal       # optional check: the workload's file name
//     placement: packed      # packed | random | interleaved | [endpoint names or indices]
//     seed: 3                # random: this job's seed (default: seed + job index)
//   - placement: [dgx.1.xpu.0, dgx.1.xpu.1]
struct JobsSpec {
  enum class Mode { MultiJob, MultiTenant };
  enum class Strategy { Packed, Random, Interleaved, List };
  struct Slot {
    bool isIndex = false;
    uint64_t index = 0;        // a slot number (an index into the fabric's endpoints)
    std::string name;          // an endpoint name
    llvm::SMLoc loc;
  };
  struct Job {
    std::string workload;      // empty: not checked
    llvm::SMLoc loc, workloadLoc, placementLoc;
    Strategy strategy = Strategy::Packed;
    std::vector<Slot> slots;   // Strategy::List
    std::optional<uint64_t> seed;
  };

  std::string path;            // "" when there is no file (every default)
  Mode mode = Mode::MultiJob;
  bool shareNic = true;
  std::optional<uint64_t> slots, slotsPerHost, seed;
  llvm::SMLoc slotsLoc, slotsPerHostLoc, jobsLoc;
  std::vector<Job> jobs;
};

inline llvm::StringRef strategyName(JobsSpec::Strategy s) {
  switch (s) {
  case JobsSpec::Strategy::Packed: return "packed";
  case JobsSpec::Strategy::Random: return "random";
  case JobsSpec::Strategy::Interleaved: return "interleaved";
  case JobsSpec::Strategy::List: return "a list";
  }
  return "";
}

} // namespace infracc
