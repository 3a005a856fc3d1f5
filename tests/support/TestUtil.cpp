#include "tests/support/TestUtil.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/Regex.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace infracc::test {

std::string infraccBinary() {
  if (const char *env = std::getenv("INFRACC"))
    return env;
  return INFRACC_BINARY;
}

RunResult runInfracc(const std::vector<std::string> &args, const std::string &cwd,
                     const std::string &stdinFile) {
  llvm::SmallString<128> outPath, errPath;
  llvm::sys::fs::createTemporaryFile("infracc-out", "txt", outPath);
  llvm::sys::fs::createTemporaryFile("infracc-err", "txt", errPath);
  std::vector<llvm::StringRef> argv;
  std::string bin = infraccBinary();
  argv.push_back(bin);
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(stdinFile), llvm::StringRef(outPath),
                                                llvm::StringRef(errPath)};
  std::string errMsg;
  RunResult r;
  if (cwd.empty()) {
    r.status = llvm::sys::ExecuteAndWait(bin, argv, std::nullopt, redirects, 0, 0, &errMsg);
  } else {
    // ExecuteAndWait has no working-directory parameter: go through /bin/sh with cd.
    std::string cmd = "cd '" + cwd + "' && exec \"$0\" \"$@\"";
    std::vector<llvm::StringRef> shArgv = {"/bin/sh", "-c", cmd};
    for (const auto &a : argv)
      shArgv.push_back(a);
    r.status = llvm::sys::ExecuteAndWait("/bin/sh", shArgv, std::nullopt, redirects, 0, 0, &errMsg);
  }
  r.out = readFile(std::string(outPath));
  r.err = readFile(std::string(errPath));
  llvm::sys::fs::remove(outPath);
  llvm::sys::fs::remove(errPath);
  return r;
}

std::string sourcePath(const std::string &relative) {
  // Appending piecewise: GCC 12 warns (-Warray-bounds, a false positive) about
  // `std::string(literal) + "/" + s`.
  std::string path(INFRACC_SOURCE_DIR);
  path += '/';
  path += relative;
  return path;
}

std::vector<std::string> readmeCommand(const std::string &text) {
  std::istringstream readme(readFile(sourcePath("README.md")));
  const std::string prefix = "./build/infracc ";
  for (std::string line; std::getline(readme, line);) {
    size_t at = line.find(prefix);
    if (at == std::string::npos || line.find(text) == std::string::npos)
      continue;
    std::vector<std::string> args;
    std::istringstream words(line.substr(at + prefix.size()));
    for (std::string w; words >> w;)
      args.push_back(w);
    return args;
  }
  return {};
}

std::string readToEnd(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, size_t(n));
  close(fd);
  return text;
}

std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    throw std::runtime_error("cannot read " + path);
  return (*buf)->getBuffer().str();
}

void writeFile(const std::string &path, const std::string &contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    throw std::runtime_error("cannot write " + path);
  os << contents;
}

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

namespace {
// The directories made by makeTempDir, removed when the test process ends (each ctest
// entry is one process); INFRACC_KEEP_TEMP=1 keeps them for a look after a failure.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    const char *keep = std::getenv("INFRACC_KEEP_TEMP");
    if (keep && std::string(keep) == "1")
      return;
    for (const std::string &d : dirs)
      llvm::sys::fs::remove_directories(d, /*IgnoreErrors=*/true);
  }
};
TempDirs tempDirs;
} // namespace

std::string makeTempDir(const std::string &hint) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("infracc-test-" + hint, dir))
    throw std::runtime_error("cannot create a temporary directory");
  tempDirs.dirs.push_back(std::string(dir));
  return std::string(dir);
}

std::string compareGolden(const std::string &name, const std::string &actual) {
  std::string path = sourcePath("tests/golden/" + name);
  if (const char *u = std::getenv("INFRACC_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
    writeFile(path, actual);
    return {};
  }
  if (!llvm::sys::fs::exists(path))
    return "golden file " + path + " does not exist (set INFRACC_UPDATE_GOLDEN=1 to create it)";
  std::string expected = readFile(path);
  if (expected == actual)
    return {};
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb)
      return "files differ (line endings or final newline)";
    if (!ga || !gb || la != lb)
      return "golden " + name + " differs at line " + std::to_string(line) + ":\n  expected: " +
             (ga ? la : "<end of file>") + "\n  actual:   " + (gb ? lb : "<end of file>");
  }
}

} // namespace infracc::test

namespace infracc::test {

int64_t maximumFinishingTime(const std::string &report) {
  llvm::SmallVector<llvm::StringRef, 2> m;
  int64_t t = -1;
  if (!llvm::Regex("Maximum finishing time at host [0-9]+: ([0-9]+)").match(report, &m) ||
      m[1].getAsInteger(10, t))
    return -1;
  return t;
}

} // namespace infracc::test
