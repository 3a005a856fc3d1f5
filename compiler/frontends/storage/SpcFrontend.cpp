// SPC block-I/O traces (UMass Trace Repository) as a workload: the requests of the trace
// (SpcTrace.h) run on the storage service of -storage-layout (StorageLayout.h), each
// request the message exchanges of DirectDrive.h. Recognised by the .spc extension or
// by content (a first line `ASU,LBA,Size,Opcode,Timestamp`).
#include "compiler/frontends/storage/DirectDrive.h"
#include "compiler/frontends/storage/SpcTrace.h"
#include "compiler/frontends/storage/StorageLayout.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>

namespace infracc {
namespace {
namespace cl = llvm::cl;

cl::opt<std::string> LayoutFile(
    "storage-layout", cl::value_desc("file"),
    cl::desc("SPC storage traces: the storage service they run on (YAML: role counts or "
             "ranks, placement, slice size, replicas, issue: trace|closed, rates and message "
             "sizes; default: ATLAHS's 1 SLB, 1 GS, 1 MDS, 8 CCS, 64 BSS, one host per ASU; "
             "docs/workloads.md)"),
    cl::cat(opts::generalCategory()));

llvm::Error load(InputContext &ctx) {
  std::optional<llvm::StringRef> text = readInputText(ctx);
  if (!text)
    return reportedError();
  auto requests = readSpcTrace(*text, ctx.diags);
  if (!requests)
    return reportedError();
  auto layout = readStorageLayout(LayoutFile, ctx.diags);
  if (!layout)
    return reportedError();
  auto s = directDriveSchedule(*requests, *layout, ctx.diags, ctx.path);
  if (!s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(*s), layout->issue == StorageLayout::Issue::Trace});
  return llvm::Error::success();
}

RegisterInputFormat format({.name = "spc",
                            .description = "SPC block-I/O trace (UMass Trace Repository) on a "
                                           "Direct-Drive-like storage service (-storage-layout)",
                            .extensions = {".spc"},
                            .role = InputRole::Workload,
                            .sniff = sniffSpc,
                            .load = load});

} // namespace
} // namespace infracc
