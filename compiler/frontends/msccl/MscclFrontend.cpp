// Registers the MSCCL++ execution-plan reader: a .json workload recognised by its
// content (InfraGraph fabrics share the extension).
#include "compiler/frontends/msccl/MscclReader.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"
#include "support/Options.h"

namespace infracc::msccl {
namespace {

namespace cl = llvm::cl;

cl::opt<std::string> MessageSize(
    "msg-size", cl::init("1048576"), cl::value_desc("bytes"),
    cl::desc("MSCCL++ plans: the collective's buffer size in bytes, or with a binary suffix "
             "(512KiB, 1MiB, 1M), which fixes the chunk size (allgather: the output buffer, "
             "reducescatter: the input, others: both, as MSCCL++'s executor tests give it); "
             "default 1048576"),
    cl::cat(opts::generalCategory()));

RegisterInputFormat PlanFormat({
    .name = "msccl",
    .description = "MSCCL++ execution plan (JSON, recognised by content; -msg-size)",
    .extensions = {".json"},
    .role = InputRole::Workload,
    .sniff = [](llvm::StringRef head) { return looksLikePlan(head) ? 80 : 0; },
    .load = [](InputContext &ctx) -> llvm::Error {
      ReadOptions o;
      std::optional<uint64_t> bytes = parseByteSize(MessageSize);
      if (!bytes)
        return usageError("-msg-size=" + MessageSize +
                          ": expected a byte count such as 1048576, 512KiB or 1MiB");
      o.messageBytes = *bytes;
      std::optional<Schedule> s = readPlan(ctx.path, o, ctx.diags);
      if (!s)
        return reportedError();
      ctx.module.jobs.push_back({ctx.path, std::move(*s)});
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc::msccl
