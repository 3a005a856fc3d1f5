// An interrupted emit leaves nothing behind: SIGINT while a target writes removes its
// temporary files, and a directory that did not exist is not created.
#include "tests/support/TestUtil.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace infracc::test;

namespace {

// An alltoall of 1024 ranks: a small input whose lowered schedule (2 million sends and
// receives, ~85 MB of GOAL text) takes a while to write.
std::string writeAlltoall(const std::string &dir) {
  std::ofstream os(dir + "/a2a.goal");
  os << "num_ranks 1024\n";
  for (int r = 0; r < 1024; ++r)
    os << "rank " << r << " {\nl1: alltoall 1024b\n}\n";
  return dir + "/a2a.goal";
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    names.push_back(std::string(llvm::sys::path::filename(it->path())));
  std::sort(names.begin(), names.end());
  return names;
}

struct Interrupted {
  bool caught = false;    // the signal arrived while a temporary file existed
  int status = 0;         // as llvm::sys::Wait reports it (-2 for a signal)
};

// Starts infracc with `args`, waits until a temporary output appears in `dir`, sends
// SIGINT, and waits for the process.
Interrupted interruptWhileWriting(const std::string &dir, std::vector<std::string> args) {
  std::string bin = infraccBinary();
  std::vector<llvm::StringRef> argv{bin};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef("/dev/null"),
                                                llvm::StringRef("/dev/null"),
                                                llvm::StringRef("/dev/null")};
  std::string err;
  llvm::sys::ProcessInfo pi = llvm::sys::ExecuteNoWait(bin, argv, std::nullopt, redirects, 0, &err);
  Interrupted r;
  if (pi.Pid <= 0) {
    ADD_FAILURE() << "cannot start " << bin << ": " << err;
    return r;
  }
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    bool temp = false;
    for (const std::string &n : entries(dir))
      temp |= llvm::StringRef(n).contains(".tmp-");
    if (temp) {
      r.caught = ::kill(pi.Pid, SIGINT) == 0;
      break;
    }
    llvm::sys::ProcessInfo done = llvm::sys::Wait(pi, /*SecondsToWait=*/0u, &err);
    if (done.Pid == pi.Pid)
      return r;   // finished before any temporary file was seen
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  llvm::sys::ProcessInfo done = llvm::sys::Wait(pi, std::nullopt, &err);
  r.status = done.ReturnCode;
  return r;
}

TEST(Interrupt, SigintDuringAFileEmitLeavesNoFile) {
  std::string dir = makeTempDir("interrupt");
  std::string input = writeAlltoall(dir);
  std::string out = dir + "/out";
  std::filesystem::create_directory(out);
  Interrupted r = interruptWhileWriting(
      out, {input, "-passes=lower-collectives", "-emit=goal", "-o", out + "/a2a-lowered.goal"});
  ASSERT_TRUE(r.caught) << "infracc finished before its output file appeared";
  EXPECT_EQ(r.status, -2);   // ended by the signal
  EXPECT_EQ(entries(out), std::vector<std::string>{});
}

TEST(Interrupt, SigintDuringADirectoryEmitCreatesNoDirectory) {
  std::string dir = makeTempDir("interrupt");
  std::string input = writeAlltoall(dir);
  std::string out = dir + "/out";
  std::filesystem::create_directory(out);
  Interrupted r = interruptWhileWriting(
      out, {"-fabric=leaf_spine:leaves=32,spines=8,hosts_per_leaf=32,host=simple_host,bw0=100G,"
            "bw1=100G,lat0=500ns,lat1=500ns",
            input, "-passes=lower-collectives,place", "-emit=htsim", "-o", out + "/htsim"});
  ASSERT_TRUE(r.caught) << "infracc finished before its output files appeared";
  EXPECT_EQ(r.status, -2);
  EXPECT_EQ(entries(out), std::vector<std::string>{});
}

} // namespace
