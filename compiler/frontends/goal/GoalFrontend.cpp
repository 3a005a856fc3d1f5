// Registers the GOAL readers as input formats: text (.goal) and binary (.bin,
// recognised by its magic number).
#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "compiler/frontends/goal/GoalTextParser.h"
#include "formats/GoalBinaryFormat.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/InputFile.h"
#include "support/Progress.h"

#include <llvm/Support/Endian.h>
#include <llvm/Support/MemoryBuffer.h>

namespace infracc::goal {
namespace {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> openInput(const std::string &path,
                                                              bool nulTerminated) {
  auto buf = openInputFile(path, nulTerminated);
  if (!buf)
    return inputError("cannot read '" + path + "': " + buf.getError().message());
  return std::move(*buf);
}

/// Parses a text input; with `streamTo`, rank by rank (see TextParser::Options).
llvm::Expected<std::optional<Schedule>>
parseText(InputContext &ctx,
          std::function<ScheduleBuilder::RankSink(uint32_t numRanks)> streamTo = nullptr) {
  auto buf = openInput(ctx.path, /*nulTerminated=*/true);
  if (!buf)
    return buf.takeError();
  uint64_t size = (*buf)->getBufferSize();
  unsigned id = ctx.diags.addBuffer(std::move(*buf));
  Progress progress("reading " + ctx.path, size);
  TextParser::Options opts;
  opts.progress = &progress;
  opts.streamTo = std::move(streamTo);
  std::optional<Schedule> s = TextParser(ctx.diags, id, Dialect::extended(), opts).parse();
  progress.finish();
  return s;
}

llvm::Error loadText(InputContext &ctx) {
  auto s = parseText(ctx);
  if (!s)
    return s.takeError();
  if (!*s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(**s)});
  return llvm::Error::success();
}

std::optional<Schedule>
streamText(InputContext &ctx,
           const std::function<InputFormat::RankConsumer(uint32_t numRanks)> &begin) {
  auto s = parseText(ctx, begin);
  if (!s) {
    ctx.diags.error(ctx.path, llvm::toString(s.takeError()));
    return std::nullopt;
  }
  return std::move(*s);
}

llvm::Error loadBinary(InputContext &ctx) {
  auto buf = openInput(ctx.path, /*nulTerminated=*/false);
  if (!buf)
    return buf.takeError();
  Progress progress("reading " + ctx.path, (*buf)->getBufferSize());
  std::optional<Schedule> s = readBinaryGoal(ctx.diags, std::move(*buf), &progress);
  progress.finish();
  if (!s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(*s)});
  return llvm::Error::success();
}

int sniffText(llvm::StringRef head) {
  // Blank lines and comments may come before the header.
  for (;;) {
    head = head.ltrim(" \t\r\n");
    if (head.consume_front("//")) {
      size_t nl = head.find('\n');
      head = nl == llvm::StringRef::npos ? llvm::StringRef() : head.drop_front(nl);
    } else if (head.consume_front("/*")) {
      size_t close = head.find("*/");
      head = close == llvm::StringRef::npos ? llvm::StringRef() : head.drop_front(close + 2);
    } else {
      break;
    }
  }
  return head.starts_with("num_ranks") ? 80 : 0;
}

int sniffBinary(llvm::StringRef head) {
  if (head.size() < 8)
    return 0;
  uint64_t magic = llvm::support::endian::read64le(head.data());
  return magic == bin::Magic || magic == bin::MagicInvalidated ? 100 : 0;
}

RegisterInputFormat textFormat({.name = "goal",
                                .description = "GOAL schedule, text (txt2bin syntax; collectives allowed)",
                                .extensions = {".goal"},
                                .role = InputRole::Workload,
                                .sniff = sniffText,
                                .load = loadText,
                                .stream = streamText});

RegisterInputFormat binaryFormat({.name = "goal-bin",
                                  .description = "GOAL schedule, binary (as written by txt2bin)",
                                  .extensions = {".bin"},
                                  .role = InputRole::Workload,
                                  .sniff = sniffBinary,
                                  .load = loadBinary});

} // namespace
} // namespace infracc::goal
