// Helpers shared by the tests: run the infracc binary, read and write files, locate
// the source tree's examples and golden files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infracc::test {

struct RunResult {
  int status = -1;     // exit status
  std::string out;     // standard output
  std::string err;     // standard error
};

/// Runs the built infracc with `args` (no shell involved), in `cwd` if given.
/// The infracc binary under test: $INFRACC, else the one this build made.
std::string infraccBinary();

/// Runs the infracc binary; standard input is `stdinFile` (default: empty).
RunResult runInfracc(const std::vector<std::string> &args, const std::string &cwd = "",
                     const std::string &stdinFile = "");

/// Path of a file in the source tree, e.g. sourcePath("examples/clos.yaml").
std::string sourcePath(const std::string &relative);

/// The arguments of the README's command line `./build/infracc ...` that contains
/// `text` (words split at spaces; run them from sourcePath("")), or {} when there is
/// no such line: tests that run a README example run exactly what it says.
std::vector<std::string> readmeCommand(const std::string &text);

std::string readFile(const std::string &path);
/// Everything readable from `fd` until end of file (a pipe from a forked child); closes it.
std::string readToEnd(int fd);

/// The time of LogGOPSim's "Maximum finishing time at host H: T" line in a report
/// (-emit=sim, -sim-batch), or -1 when there is none. (llvm::Regex, not std::regex:
/// GCC 12's <regex> warns under the -O1 sanitizer build.)
int64_t maximumFinishingTime(const std::string &report);
void writeFile(const std::string &path, const std::string &contents);

/// How many times `what` occurs in `text` (overlapping occurrences counted).
size_t countOf(const std::string &text, const std::string &what);

/// A fresh, empty directory `infracc-test-<hint>-*` in the system's temp directory
/// ($TMPDIR), removed with everything in it when the test process exits (kept with
/// INFRACC_KEEP_TEMP=1).
std::string makeTempDir(const std::string &hint = "t");

/// Compares `actual` with the golden file `tests/golden/<name>`. With the environment
/// variable INFRACC_UPDATE_GOLDEN=1 the golden file is (re)written instead.
/// Returns an empty string on match, else a readable diff summary.
std::string compareGolden(const std::string &name, const std::string &actual);

} // namespace infracc::test
