// A -sim-model=gpu run as the command line asks for it: the model's options, the machine
// (the module's fabric, or the paper's generic GPUs when there is none) and the result.
// -emit=sim reports it; -emit=timeline draws its workgroups.
#pragma once

#include "backends/gpu/GpuModel.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>

namespace infracc {
class DiagEngine;
struct Module;
} // namespace infracc

namespace infracc::gpu {

struct GpuRun {
  std::unique_ptr<FabricGraph> generic;   // the generic GPUs' graph, when built here
  std::unique_ptr<GpuMachine> machine;
  std::string machineName;                // the fabric's source, or the generic blueprint
  GpuModelOptions options;
  GpuRunResult result;
};

/// Runs the module's kernels. A run that cannot finish is reported through `diags`
/// (against `where`, one note per thing that waits) and returns reportedError().
llvm::Expected<GpuRun> runFromOptions(const Module &m, DiagEngine &diags,
                                      const std::string &where);

} // namespace infracc::gpu
