// The unit the driver, passes and backends work on: the fabric (definitions and their
// expansion), the workload schedule, and the placement of ranks on the fabric.
#pragma once

#include "ir/FabricGraph.h"
#include "ir/Placement.h"
#include "ir/PlacementRequests.h"
#include "ir/Schedule.h"
#include "ir/Topology.h"

#include <memory>
#include <optional>
#include <string>

namespace infracc {

class DiagEngine;

struct Module {
  explicit Module(DiagEngine &diags) : diags(diags) {}

  DiagEngine &diags;

  // Fabric: the definitions as read or generated, and the fully qualified graph.
  std::shared_ptr<const Infrastructure> fabricDefs;
  std::unique_ptr<FabricGraph> fabric;
  std::string fabricSource;       // file name or blueprint spec, for messages

  // Workload. Frontends append each workload file they read to `jobs`; with a single
  // job the driver moves it into `schedule`, several are combined by merge-jobs.
  struct Job {
    std::string source;
    Schedule schedule;
    /// Generated arrivals (VEF's FLOWS/DCNW/CDCNW, SPC with issue: trace): messages wait
    /// for a clock on another cpu, whose time LogGOPSim v1 does not carry over.
    bool timed = false;
  };
  std::vector<Job> jobs;
  std::optional<Schedule> schedule;
  std::string workloadSource;
  bool timedWorkload = false;   // `schedule` has a timed job (Job::timed)
  /// Which node each rank of `schedule` ran on, when the trace says so (NCCL's Nsight
  /// exports name each GPU's host); remap-gpus groups by it. Empty: unknown.
  std::vector<uint32_t> traceNodeOfRank;

  Placement placement;
  // Placement asked for in files and options (-place-map, -jobs, -nic), read by their
  // frontend for the place, merge-jobs and remap-gpus passes and the backends that
  // simulate NICs (none: affinity).
  std::optional<PlaceMap> placeMap;
  std::optional<JobsSpec> jobsSpec;
  std::optional<NicRequest> nicRequest;

  bool hasFabric() const { return fabric != nullptr; }
  bool hasSchedule() const { return schedule.has_value(); }
};

} // namespace infracc
