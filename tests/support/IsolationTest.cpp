// runInWorker: a crash in the worker is reported, not suffered; a request that stops
// making progress is stopped; a worker never outlives infracc; what the worker returns
// comes back whole, and nothing else of its state does; one worker serves many requests,
// and a new one follows a worker that crashed.
#include "support/Isolation.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

// Present in a sanitizer build only.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

using namespace std::chrono_literals;
using infracc::runInWorker;

namespace {
// The failure as a word, or the output prefixed with "output:", or "none".
std::string outcome(const infracc::ChildRun &run) {
  if (run.failure)
    switch (run.failure->kind) {
    case infracc::ChildFailure::Crashed: return run.failure->signal;
    case infracc::ChildFailure::Stalled: return "stalled";
    case infracc::ChildFailure::Rereading: return "rereading";
    }
  return run.output ? "output:" + run.output->getBuffer().str() : "none";
}

// Reads `n` bytes of /dev/zero: what a parser does between records.
void readBytes(size_t n) {
  int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  char buf[64];
  while (n > 0) {
    ssize_t got = read(zero, buf, std::min(n, sizeof buf));
    if (got <= 0)
      break;
    n -= size_t(got);
  }
  close(zero);
}

int touched = 0;

// One task that does what its request says; a worker serves one task, so the tests
// share this one and its worker.
void act(llvm::StringRef request, llvm::raw_ostream &os) {
  if (request == "segv")
    std::raise(SIGSEGV);
  else if (request == "abort")
    std::abort();
  else if (request == "exit0")
    _exit(0);
  else if (request == "exit3")
    _exit(3);
  else if (request == "overflow") {
    // One byte past a heap block: what libotf2 does on some damaged anchor files.
    char *block = new char[1];
    volatile size_t past = 1;
    volatile char c = block[past];
    (void)c;
    delete[] block;
  } else if (request == "touch")
    touched = 1;
  else if (request == "pid")
    os << getpid();
  else if (request == "big")
    for (size_t i = 0; i < (20u << 20); ++i)
      os << char(i * 2654435761u >> 13);
  else if (request == "wait")
    for (;;)
      pause();
  else if (request == "progress")
    // Three times the stall limit below, reading a record of 16 bytes every 20 ms.
    for (int i = 0; i < 30; ++i) {
      std::this_thread::sleep_for(20ms);
      readBytes(16);
      infracc::noteChildProgress();
    }
  else if (request == "reread") {
    readBytes(64);
    for (;;) {
      std::this_thread::sleep_for(1ms);
      infracc::noteChildProgress();
    }
  } else if (request == "eof-loop") {
    // Reads the end of a file over and over: every read returns nothing.
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    char buf[64];
    for (;;)
      (void)!read(null, buf, sizeof buf);
  } else if (request.consume_front("announce:")) {
    // Writes its pid to the file named, then waits for ever, making progress.
    std::ofstream(request.str()) << getpid() << "\n";
    for (;;) {
      pause();
      infracc::noteChildProgress();
    }
  } else
    os << request;
}

std::string run(llvm::StringRef request, std::chrono::milliseconds limit = 10s) {
  return outcome(runInWorker(act, request, limit));
}
} // namespace

TEST(Isolation, CrashInWorkerIsReported) {
  EXPECT_EQ(run("segv"), "Segmentation fault");
  EXPECT_EQ(run("abort"), "Aborted");
  // Ended without handing anything back: neither a failure nor an output.
  EXPECT_EQ(run("exit0"), "none");
  EXPECT_EQ(run("exit3"), "none");
  EXPECT_EQ(run("touch"), "output:");
  EXPECT_EQ(touched, 0);
  // Each of those ended its worker; the next request has a new one.
  EXPECT_EQ(run("still here"), "output:still here");
}

// A sanitizer's report in the worker (libotf2 reading a byte past a heap block, found by
// the otf2 target under ASan) ends the worker with SIGABRT: the library crashed, and
// infracc does not read the archive again in its own process.
TEST(Isolation, SanitizerReportInWorkerIsACrash) {
  if (!__sanitizer_set_death_callback)
    GTEST_SKIP() << "not a sanitizer build: nothing would see the overflow (CI's ASan build runs this)";
  // In a fresh copy of this program with the sanitizer's default abort_on_error=0, as
  // libFuzzer runs: without the worker's death callback the worker would then end with
  // the sanitizer's exit status, not SIGABRT (CI runs the tests with abort_on_error=1,
  // under which it would abort either way).
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char *was = std::getenv("ASAN_OPTIONS");
  const std::string saved = was ? was : "";
  setenv("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=0", 1);
  auto check = [] {
    std::string overflow = run("overflow");
    std::string after = run("after the report");
    std::fprintf(stderr, "overflow: %s; after: %s\n", overflow.c_str(), after.c_str());
    _exit(overflow == "Aborted" && after == "output:after the report" ? 0 : 1);
  };
  EXPECT_EXIT(check(), testing::ExitedWithCode(0),
              "overflow: Aborted; after: output:after the report");
  GTEST_FLAG_SET(death_test_style, style);
  if (was)
    setenv("ASAN_OPTIONS", saved.c_str(), 1);
  else
    unsetenv("ASAN_OPTIONS");
}

TEST(Isolation, OutputComesBackWhole) {
  EXPECT_EQ(run("read in the worker"), "output:read in the worker");
  EXPECT_EQ(run(""), "output:");
  // Far more than a pipe holds, with every byte value.
  std::string big(20 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = char(i * 2654435761u >> 13);
  infracc::ChildRun r = runInWorker(act, "big", 10s);
  ASSERT_FALSE(r.failure);
  ASSERT_TRUE(r.output);
  EXPECT_TRUE(r.output->getBuffer() == big);
  // A request too long for the worker is not sent: the caller runs the task itself.
  EXPECT_EQ(run(std::string(64 << 10, 'x')), "output:" + std::string(64 << 10, 'x'));
  EXPECT_EQ(run(std::string((64 << 10) + 1, 'x')), "none");
}

// The point of a worker: no fork per request. A hundred requests per worker, then a new
// one (what a library leaks per request stays bounded).
TEST(Isolation, OneWorkerServesManyRequests) {
  run("segv");   // whatever served before, the next request starts a worker
  std::vector<std::string> pids;
  for (int i = 0; i < 250; ++i)
    pids.push_back(run("pid"));
  EXPECT_NE(pids[0], "output:" + std::to_string(getpid()));
  EXPECT_EQ(std::count(pids.begin(), pids.end(), pids[0]), 100);
  EXPECT_EQ(std::count(pids.begin(), pids.end(), pids[100]), 100);
  EXPECT_EQ(std::count(pids.begin(), pids.end(), pids[200]), 50);
  EXPECT_EQ(std::set<std::string>(pids.begin(), pids.end()).size(), 3u);
}

TEST(Isolation, WorkerWithoutProgressIsStopped) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run("wait", 200ms), "stalled");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_EQ(run("after the stall"), "output:after the stall");
  // Progress outside a worker is a no-op, not a crash.
  infracc::noteChildProgress();
}

TEST(Isolation, WorkerMakingProgressIsNotStopped) {
  EXPECT_EQ(run("progress", 200ms), "output:");
}

// libotf2 at the end of some damaged definitions: no more bytes come in, yet the same
// buffer is parsed again and again, each pass calling back with its records. The worker
// has read bytes for earlier requests; only this request's count.
TEST(Isolation, WorkerRereadingAStaleBufferIsStopped) {
  // Without the kernel's count of read bytes the rule cannot apply (records alone
  // count, and the stall limit below is long).
  if (access("/proc/self/io", R_OK) != 0)
    GTEST_SKIP() << "no /proc/self/io: this kernel does not count the bytes a process reads";
  EXPECT_EQ(run("progress"), "output:");
  EXPECT_EQ(run("reread", 1000s), "rereading");
}

// libotf2 on other damaged archives (found with a worker that had read archives before):
// it reads the end of a file again and again, each read returning nothing, and calls
// back with no record. Stopped at the first look, not after the stall limit.
TEST(Isolation, WorkerReadingTheEndOfAFileOverAndOverIsStopped) {
  if (access("/proc/self/io", R_OK) != 0)
    GTEST_SKIP() << "no /proc/self/io: this kernel does not count a process's read calls";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run("eof-loop", 1000s), "rereading");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100s);
  EXPECT_EQ(run("after the loop"), "output:after the loop");
}

// The stop-36 finding: a parent killed while its reader spun (libFuzzer's timeout, a
// user's `timeout`) left the reader running under init. Here a middle process sends a
// request that would wait forever (the worker writes its pid to a file) and is killed;
// this test, as the subreaper, gets the orphan and must see it die of SIGKILL at once.
TEST(Isolation, WorkerDiesWithItsParent) {
  char dir[] = "/tmp/infracc-isolation-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string pidFile = std::string(dir) + "/worker.pid";
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    run("announce:" + pidFile, 1000s);
    _exit(0);
  }
  pid_t worker = 0;
  for (int i = 0; i < 1000 && worker == 0; ++i) {
    std::ifstream in(pidFile);
    std::string line;
    if (std::getline(in, line) && !line.empty())
      worker = pid_t(std::stol(line));
    else
      std::this_thread::sleep_for(10ms);
  }
  kill(middle, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(middle, &status, 0), middle);
  ASSERT_GT(worker, 0) << "the worker never announced itself";
  // The orphan is now this process's child; it must already be dying. If it were not,
  // this would wait forever, so wait with a deadline and kill it ourselves after.
  pid_t got = 0;
  for (int i = 0; i < 500 && got == 0; ++i) {
    got = waitpid(worker, &status, WNOHANG);
    if (got == 0)
      std::this_thread::sleep_for(10ms);
  }
  if (got == 0) {
    kill(worker, SIGKILL);
    waitpid(worker, &status, 0);
    ADD_FAILURE() << "the worker outlived its parent by 5 s";
  } else {
    ASSERT_EQ(got, worker);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  unlink(pidFile.c_str());
  rmdir(dir);
}

// A process forked from infracc (a test, a helper) inherits the worker's socket; it must
// not send its requests to the parent's worker, nor take it away from the parent.
TEST(Isolation, ForkedProcessStartsItsOwnWorker) {
  const std::string parentWorker = run("pid");
  int up[2];
  ASSERT_EQ(pipe(up), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(up[0]);
    std::string mine = run("pid") + " " + run("pid");
    (void)!write(up[1], mine.data(), mine.size());
    _exit(0);
  }
  close(up[1]);
  std::string got = infracc::test::readToEnd(up[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string childWorker = got.substr(0, got.find(' '));
  EXPECT_EQ(got, childWorker + " " + childWorker);
  EXPECT_NE(childWorker, parentWorker);
  EXPECT_NE(childWorker, "output:" + std::to_string(child));
  EXPECT_EQ(run("pid"), parentWorker);
}
