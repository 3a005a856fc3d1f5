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
#pragma once

#include "ir/PlacementRequests.h"

#include <optional>

namespace infracc {

class DiagEngine;

/// Reads and checks `path`; problems are reported through diags (nullopt then).
std::optional<JobsSpec> readJobsFile(llvm::StringRef path, DiagEngine &diags);

} // namespace infracc
