// -emit=goal and -emit=goal-bin, and the schedule printer behind -print-after.
#include "backends/goal/GoalWriter.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"
#include "support/Progress.h"

namespace infracc::goal {
namespace {

/// A schedule that launches GPU kernels is lowered to messages first.
std::vector<std::string> lowerKernels(const Module &m) {
  if (m.schedule && m.schedule->kernels())
    return {"lower-kernels"};
  return {};
}

std::string writingWhat(const TargetContext &ctx) {
  return "writing " + (ctx.output.toStdout() ? std::string("standard output") : ctx.output.path());
}

llvm::Error emitText(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  if (llvm::Error e = checkPlainText(s, ctx.diags, ctx.module.workloadSource))
    return e;
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  Progress progress(writingWhat(ctx), s.numOps(), "ops");
  printText(s, *os, /*extended=*/false, &progress);
  return llvm::Error::success();
}

llvm::Error emitExtended(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  printText(s, *os, /*extended=*/true);
  return llvm::Error::success();
}

llvm::Error emitBinary(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  if (llvm::Error e = checkBinary(s, ctx.diags, ctx.module.workloadSource))
    return e;
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  Progress progress(writingWhat(ctx), s.numOps(), "ops");
  writeBinary(s, *os, &progress);
  return llvm::Error::success();
}

RegisterTarget textTarget({.name = "goal",
                           .description = "plain GOAL text (for LogGOPSim's txt2bin and LLAMP)",
                           .needs = TargetNeeds::Workload,
                           .pointToPoint = true,
                           .defaultPipeline = lowerKernels,
                           .run = emitText});

RegisterTarget extendedTarget({.name = "goal-extended",
                               .description = "GOAL text in infracc's extended dialect "
                                              "(communicators and collectives kept)",
                               .needs = TargetNeeds::Workload,
                               .defaultPipeline = lowerKernels,
                               .run = emitExtended});

std::unique_ptr<ScheduleStreamWriter> streamBinary(TargetContext &ctx, uint32_t numRanks) {
  if (llvm::raw_pwrite_stream *os = ctx.output.seekableStream())
    return binaryStreamWriter(*os, numRanks);
  auto os = ctx.output.stream();
  if (!os) {
    llvm::consumeError(os.takeError());
    return nullptr;
  }
  return binaryTwoPassWriter(*os, numRanks);
}

RegisterTarget binaryTarget({.name = "goal-bin",
                             .description = "binary GOAL, byte for byte as txt2bin writes it",
                             .needs = TargetNeeds::Workload,
                             .pointToPoint = true,
                             .defaultPipeline = lowerKernels,
                             .run = emitBinary,
                             .streamWriter = streamBinary});

struct RegisterPrinter {
  RegisterPrinter() {
    setSchedulePrinter([](const Module &m, llvm::raw_ostream &os) {
      printText(*m.schedule, os, /*extended=*/true);
    });
  }
} printer;

} // namespace
} // namespace infracc::goal
