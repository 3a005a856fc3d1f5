// -place-map=<file>, -jobs=<file> and -nic=...: placement asked for on the command line
// and in files beside the workload. They are read and syntax-checked here, before the
// workloads, into the module (Module::placeMap, Module::jobsSpec, Module::nicRequest);
// the passes check them against the workload and the fabric.
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

cl::opt<std::string> NicOpt(
    "nic", cl::value_desc("affinity|round-robin|map:FILE"),
    cl::desc("Which of its host's attach points (NICs, NIC ports) a rank's traffic uses, for "
             "remap-gpus and -emit=htsim: affinity (the nearest to the rank's xpu inside the "
             "host, ties shared out in index order), round-robin (the k-th rank of a host on "
             "its k-th attach point, cyclically), or map:FILE (lines 'rank nic-name'); default "
             "affinity"),
    cl::cat(opts::passCategory()));
cl::alias HtsimNicAlias("htsim-nic", cl::desc("Alias for -nic"), cl::aliasopt(NicOpt));

cl::opt<std::string> JobsFileOpt("jobs", cl::value_desc("file"),
                                 cl::desc("merge-jobs: how the workloads share the fabric (YAML "
                                          "or JSON; default: multi-job, every job packed)"),
                                 cl::cat(opts::passCategory()));

llvm::Error providePlacementFiles(Module &m, DiagEngine &diags) {
  if (!PlaceMapFile.empty()) {
    auto entries = readRankMap(PlaceMapFile, diags, "placement map", "endpoint", "dgx.0.xpu.");
    if (!entries)
      return reportedError();
    m.placeMap = PlaceMap{PlaceMapFile, std::move(*entries)};
  }
  if (NicOpt.getNumOccurrences()) {
    llvm::StringRef v = NicOpt;
    NicRequest req;
    if (v == "affinity") {
      req.policy = NicRequest::Policy::Affinity;
    } else if (v == "round-robin") {
      req.policy = NicRequest::Policy::RoundRobin;
    } else if (v.consume_front("map:") && !v.empty()) {
      req.policy = NicRequest::Policy::Map;
      req.path = v.str();
      auto entries = readRankMap(v, diags, "NIC map", "nic", "dgx.0.nic.");
      if (!entries)
        return reportedError();
      req.entries = std::move(*entries);
    } else {
      return usageError("-nic=" + NicOpt + ": valid values are affinity, round-robin and "
                        "map:FILE (a file of 'rank nic-name' lines)");
    }
    m.nicRequest = std::move(req);
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
