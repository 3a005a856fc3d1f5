// Helpers for the pass tests: inputs copied into a fresh directory and infracc run
// there, so that messages name files as short relative paths.
#pragma once

#include "tests/support/TestUtil.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace infracc::test {

/// A temp directory holding copies of tests/passes/inputs/<name> and written files.
class PassDir {
public:
  explicit PassDir(std::initializer_list<const char *> inputs = {}) : dir_(makeTempDir("pass")) {
    for (const char *n : inputs)
      writeFile(dir_ + "/" + n, readFile(sourcePath(std::string("tests/passes/inputs/") + n)));
  }
  const std::string &path() const { return dir_; }
  void write(const std::string &name, const std::string &text) const {
    writeFile(dir_ + "/" + name, text);
  }
  std::string read(const std::string &name) const { return readFile(dir_ + "/" + name); }
  RunResult run(const std::vector<std::string> &args) const { return runInfracc(args, dir_); }

private:
  std::string dir_;
};

/// The LogGOPSim report without the PERFORMANCE line (wall-clock figures).
inline std::string stableSim(const std::string &out) {
  std::string kept;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(out), '\n'))
    if (!line.empty() && !line.starts_with("PERFORMANCE: "))
      kept += line.str() + "\n";
  return kept;
}

/// The number after "Maximum finishing time at host H: " (run with -sim-batch).
inline std::string makespan(const std::string &out) {
  size_t at = out.find("Maximum finishing time at host ");
  if (at == std::string::npos)
    return "(none)";
  at = out.find(": ", at) + 2;
  return out.substr(at, out.find(' ', at) - at);
}

} // namespace infracc::test
