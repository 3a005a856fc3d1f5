// Passes transform or analyse a Module. Each is a small class with a name, options
// (llvm::cl in passes' category) and statistics; the PassManager runs a pipeline with
// LLVM's conventions: -passes=a,b,c, -print-after=NAME, -verify-each, -stats,
// -time-passes.
//
//   class PlacePass : public Pass { ... };
//   static RegisterPass<PlacePass> X("place", "map ranks to fabric endpoints");
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infracc {

struct Module;
class DiagEngine;

/// Named counters, printed by -stats in LLVM's format.
class Statistics {
public:
  void add(llvm::StringRef group, llvm::StringRef name, llvm::StringRef description,
           uint64_t value);
  void print(llvm::raw_ostream &os) const;
  bool empty() const { return entries_.empty(); }
  uint64_t get(llvm::StringRef group, llvm::StringRef name) const;

private:
  struct Entry {
    std::string description;
    uint64_t value = 0;
  };
  std::map<std::pair<std::string, std::string>, Entry> entries_;
};

struct PassContext {
  DiagEngine &diags;
  Statistics &stats;
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual llvm::StringRef name() const = 0;
  virtual llvm::Error run(Module &module, PassContext &ctx) = 0;
};

struct PassInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Pass>()> create;
};

class PassRegistry {
public:
  static void add(PassInfo info);
  static const PassInfo *find(llvm::StringRef name);
  static std::vector<const PassInfo *> all();   // sorted by name
};

template <typename P> struct RegisterPass {
  RegisterPass(llvm::StringRef name, llvm::StringRef description) {
    PassRegistry::add({name.str(), description.str(), [] { return std::make_unique<P>(); }});
  }
};

/// How -print-after shows the module: set by the GOAL backend (extended GOAL text).
using ModulePrinter = std::function<void(const Module &, llvm::raw_ostream &)>;
void setSchedulePrinter(ModulePrinter printer);

struct PipelineOptions {
  std::vector<std::string> printAfter;   // pass names; "all" prints after every pass
  bool printAfterAll = false;
  bool verifyEach = false;
  bool timePasses = false;
};

class PassManager {
public:
  PassManager(PassContext ctx, PipelineOptions opts) : ctx_(ctx), opts_(std::move(opts)) {}

  /// Builds the pipeline from pass names; unknown names are a usage error listing
  /// the registered passes.
  llvm::Error addPipeline(llvm::ArrayRef<std::string> names);
  llvm::Error run(Module &module);
  bool empty() const { return passes_.empty(); }
  bool contains(llvm::StringRef name) const;

private:
  PassContext ctx_;
  PipelineOptions opts_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

} // namespace infracc
