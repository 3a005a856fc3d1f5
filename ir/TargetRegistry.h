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
#include <string>
#include <vector>

namespace infracc {

struct Module;
class DiagEngine;

enum class TargetNeeds { Nothing, Fabric, Workload, FabricOrWorkload, FabricAndWorkload };

struct TargetContext {
  Module &module;
  OutputManager &output;
  DiagEngine &diags;
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
