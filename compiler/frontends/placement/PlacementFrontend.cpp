// -place-map=<file> and -jobs=<file>: placement asked for in files beside the
// workload. Both are read and syntax-checked here, before the workloads, into the
// module (Module::placeMap, Module::jobsSpec); the place and merge-jobs passes check
// them against the workload and the fabric.
#include "compiler/frontends/placement/JobsFile.h"
#include "compiler/frontends/placement/PlaceMap.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

namespace infracc {
namespace {
namespace cl = llvm::cl;

cl::opt<std::string> PlaceMapFile("place-map", cl::value_desc("file"),
                                  cl::desc("Placement map for the place pass: lines "
                                           "'rank endpoint-name' (implies -place=map)"),
                                  cl::cat(opts::passCategory()));

cl::opt<std::string> JobsFileOpt("jobs", cl::value_desc("file"),
                                 cl::desc("merge-jobs: how the workloads share the fabric (YAML "
                                          "or JSON; default: multi-job, every job packed)"),
                                 cl::cat(opts::passCategory()));

llvm::Error providePlacementFiles(Module &m, DiagEngine &diags) {
  if (!PlaceMapFile.empty()) {
    auto entries = readPlaceMap(PlaceMapFile, diags);
    if (!entries)
      return reportedError();
    m.placeMap = PlaceMap{PlaceMapFile, std::move(*entries)};
  }
  if (!JobsFileOpt.empty()) {
    auto spec = readJobsFile(JobsFileOpt, diags);
    if (!spec)
      return reportedError();
    m.jobsSpec = std::move(*spec);
  }
  return llvm::Error::success();
}

struct Registration {
  Registration() { InputRegistry::addProvider(providePlacementFiles); }
} registration;

} // namespace
} // namespace infracc
