// Targets (-emit=NAME): each backend registers one or more with a one-line
// description, what inputs it needs, and the function that writes its output.
//
//   static infracc::RegisterTarget X({
//       .name = "fqg", .description = "the fully qualified graph as JSON or TSV",
//       .needs = infracc::TargetNeeds::Fabric,
//       .run = [](infracc::TargetContext &ctx) -> llvm::Error { ... }});
#pragma once

#include "support/Output.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace infracc {

struct Module;
class DiagEngine;
class RankOps;
class Schedule;

enum class TargetNeeds { Nothing, Fabric, Workload, FabricOrWorkload, FabricAndWorkload };

struct TargetContext {
  Module &module;
  OutputManager &output;
  DiagEngine &diags;
};

/// A target's writer for a workload streamed rank by rank (the whole schedule never in
/// memory), for targets whose output can be written that way.
class ScheduleStreamWriter {
public:
  virtual ~ScheduleStreamWriter() = default;
  /// The next rank (all ranks come, in order). False: this schedule cannot be written
  /// this way (e.g. it holds what the format cannot express); the driver then reads the
  /// whole schedule and runs the target normally, which reports it.
  virtual bool rank(uint32_t r, const RankOps &ops) = 0;
  /// After the last rank: `summary` has the ranks' sizes, maxCpu and maxNic, no ops.
  virtual llvm::Error finish(const Schedule &summary) = 0;
  /// A writer that cannot go back to fill in what comes first (binary GOAL's header and
  /// jump table, on a pipe) measures on a first pass over the input, writing nothing,
  /// and writes on a second: true until startWriting().
  virtual bool measuring() const { return false; }
  /// Between the two passes; `summary` as for finish().
  virtual void startWriting(const Schedule &summary) { (void)summary; }
};

struct Target {
  std::string name;
  std::string description;
  TargetNeeds needs = TargetNeeds::Nothing;
  bool writesDirectory = false;
  /// The target takes sends, recvs and calcs only: without -passes, the driver lowers
  /// collectives first (lower-collectives); with -passes they must be lowered there.
  bool pointToPoint = false;
  /// Passes run before the backend when -passes is not given (after the verifier).
  std::function<std::vector<std::string>(const Module &)> defaultPipeline;
  std::function<llvm::Error(TargetContext &)> run;
  /// Optional: a writer for a streamed schedule of `numRanks` ranks (null when the
  /// output cannot be written so). Used when the workload is the only input and no pass
  /// is asked for; the output must equal run()'s.
  std::function<std::unique_ptr<ScheduleStreamWriter>(TargetContext &, uint32_t numRanks)>
      streamWriter = nullptr;
};

class TargetRegistry {
public:
  static void add(Target t);
  static const Target *find(llvm::StringRef name);
  /// All targets, sorted by name.
  static std::vector<const Target *> all();
};

struct RegisterTarget {
  explicit RegisterTarget(Target t) { TargetRegistry::add(std::move(t)); }
};

} // namespace infracc
