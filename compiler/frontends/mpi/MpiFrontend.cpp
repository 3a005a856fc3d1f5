// Registers the liballprof MPI trace reader as an input format: recognised by content
// (`# collprof` header or `MPI_...:` lines), or given as a directory of rank files.
#include "compiler/frontends/mpi/LiballprofReader.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

namespace infracc::mpi {
namespace {

namespace cl = llvm::cl;

cl::opt<std::string> MpiImpl("mpi-impl", cl::init("openmpi"), cl::value_desc("name"),
                             cl::desc("MPI traces: the MPI the trace was taken with, for the "
                                      "values of MPI_ANY_SOURCE/MPI_PROC_NULL and the request "
                                      "size: openmpi (-1/-2, 8 bytes; default) or mpich "
                                      "(-2/-1, 4 bytes)"),
                             cl::cat(opts::generalCategory()));

llvm::Error load(InputContext &ctx) {
  if (MpiImpl != "openmpi" && MpiImpl != "mpich")
    return usageError("-mpi-impl must be openmpi or mpich (got '" + MpiImpl + "')");
  std::vector<std::string> files = traceFiles(ctx.diags, ctx.path);
  if (files.empty())
    return reportedError();
  TraceOptions opts;
  opts.mpich = MpiImpl == "mpich";
  std::optional<Schedule> s = readLiballprof(ctx.diags, files, opts);
  if (!s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(*s)});
  return llvm::Error::success();
}

RegisterInputFormat format({.name = "liballprof",
                            .description = "MPI trace, liballprof text (rank 0's file, or a "
                                           "directory of rank files)",
                            .extensions = {},
                            .role = InputRole::Workload,
                            .sniff = [](llvm::StringRef head) { return sniffLiballprof(head.str()); },
                            .load = load,
                            .acceptsDirectory = true});

} // namespace
} // namespace infracc::mpi
