// Input formats (frontends). The driver hands each positional input to the format
// that recognises it: by file extension first, by content when the extension is
// shared (e.g. .json) or unknown.
//
//   static infracc::RegisterInputFormat X({
//       .name = "goal", .description = "GOAL schedule, text",
//       .extensions = {".goal"}, .role = infracc::InputRole::Workload,
//       .load = [](infracc::InputContext &ctx) -> llvm::Error { ... }});
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/ErrorOr.h>
#include <llvm/Support/MemoryBuffer.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

struct Module;
class DiagEngine;

enum class InputRole { Fabric, Workload };

struct InputContext {
  Module &module;
  DiagEngine &diags;
  std::string path;   // as given on the command line ("-" for standard input)
  /// Every file of this input: just `path`, or, for a format that combines files,
  /// all its files given in one run, in command-line order (path is the first).
  std::vector<std::string> paths;
};

struct InputFormat {
  std::string name;
  std::string description;
  std::vector<std::string> extensions;   // with the dot, lower case
  InputRole role = InputRole::Workload;
  /// Optional: how sure the format is that `head` (the first bytes) is one of its
  /// files, 0 (no) .. 100 (certain). Decides between formats sharing an extension.
  std::function<int(llvm::StringRef head)> sniff;
  /// Reads the file into the module (a fabric into Module::fabricDefs/fabric, a
  /// workload appended to Module::jobs). Errors already reported through the
  /// DiagEngine return reportedError().
  std::function<llvm::Error(InputContext &)> load;
  /// The format can be given as a directory (e.g. one trace file per rank).
  bool acceptsDirectory = false;
  /// Several files of this format given in one run form one input, read by one call
  /// of `load` (InfraGraph device files plus the infrastructure; the per-node exports
  /// of one traced run).
  bool combinesFiles = false;
  /// Optional, for workloads: reads the file rank by rank, handing each rank to `rank`
  /// and keeping none (streaming conversion). `begin(numRanks)` comes first and returns
  /// the rank consumer. The result has the ranks' sizes, maxCpu and maxNic but no ops;
  /// nullopt after errors reported through the DiagEngine.
  using RankConsumer = std::function<void(uint32_t rank, const RankOps &ops)>;
  std::function<std::optional<Schedule>(
      InputContext &, const std::function<RankConsumer(uint32_t numRanks)> &begin)>
      stream = nullptr;
};

/// Inputs that come from options rather than files (e.g. -fabric=clos:radix=8 builds
/// a fabric from a blueprint). Called once after option parsing, before the files
/// are read; does nothing when its option is not set.
using InputProvider = std::function<llvm::Error(Module &, DiagEngine &)>;

/// Actions that replace the normal run (e.g. -list-blueprints). Called after option
/// parsing; returning an exit status ends the program with it.
using DriverAction = std::function<std::optional<int>()>;

class InputRegistry {
public:
  static void add(InputFormat f);
  static void addProvider(InputProvider p);
  static const std::vector<InputProvider> &providers();
  static void addAction(DriverAction a);
  static const std::vector<DriverAction> &actions();
  static std::vector<const InputFormat *> all();
  /// The format for `path` (a directory: by its files' content, among the formats
  /// that read directories), or an error that lists what is recognised.
  static llvm::Expected<const InputFormat *> classify(llvm::StringRef path);
};

/// The whole text of the input (mapped, or standard input), registered with the
/// diagnostics so that locations in it can be reported; nullopt after reporting that it
/// cannot be read.
std::optional<llvm::StringRef> readInputText(InputContext &ctx);

/// The regular files directly in directory `dir`, sorted by path (formats read as a
/// folder, and recognising one by its files).
std::vector<std::string> filesInDirectory(llvm::StringRef dir);

struct RegisterInputFormat {
  explicit RegisterInputFormat(InputFormat f) { InputRegistry::add(std::move(f)); }
};

} // namespace infracc
