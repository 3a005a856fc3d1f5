// runInChild: a crash in the child is reported, not suffered; a child that stops making
// progress is stopped; a child never outlives infracc; what the child returns comes
// back whole, and nothing else of its state does.
#include "support/Isolation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace std::chrono_literals;
using infracc::runInChild;

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
// `f` as a child that returns nothing.
template <class F> std::string runVoid(F f, std::chrono::milliseconds limit) {
  return outcome(runInChild([&](llvm::raw_ostream &) { f(); }, limit));
}
} // namespace

TEST(Isolation, CrashInChildIsReported) {
  EXPECT_EQ(runVoid([] { std::raise(SIGSEGV); }, 10s), "Segmentation fault");
  EXPECT_EQ(runVoid([] { std::abort(); }, 10s), "Aborted");
  // Ended without handing anything back: neither a failure nor an output.
  EXPECT_EQ(runVoid([] { _exit(0); }, 10s), "none");
  EXPECT_EQ(runVoid([] { _exit(3); }, 10s), "none");
  int touched = 0;
  EXPECT_EQ(runVoid([&] { touched = 1; }, 10s), "output:");
  EXPECT_EQ(touched, 0);
}

TEST(Isolation, OutputComesBackWhole) {
  EXPECT_EQ(outcome(runInChild([](llvm::raw_ostream &os) { os << "read in the child"; }, 10s)),
            "output:read in the child");
  // Far more than a pipe holds, with every byte value.
  std::string big(20 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = char(i * 2654435761u >> 13);
  infracc::ChildRun run = runInChild([&](llvm::raw_ostream &os) { os << big; }, 10s);
  ASSERT_FALSE(run.failure);
  ASSERT_TRUE(run.output);
  EXPECT_TRUE(run.output->getBuffer() == big);
}

TEST(Isolation, ChildWithoutProgressIsStopped) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(runVoid([] { for (;;) pause(); }, 200ms), "stalled");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  // Progress outside a dry run is a no-op, not a crash.
  infracc::noteChildProgress();
}

namespace {
// Reads `n` bytes of /dev/zero: what a parser does between records.
void readBytes(size_t n) {
  static const int zero = open("/dev/zero", O_RDONLY);
  char buf[64];
  while (n > 0) {
    ssize_t got = read(zero, buf, std::min(n, sizeof buf));
    if (got <= 0)
      return;
    n -= size_t(got);
  }
}
} // namespace

TEST(Isolation, ChildMakingProgressIsNotStopped) {
  // Runs three times the stall limit, reading a record of 16 bytes every 20 ms.
  EXPECT_EQ(runVoid(
                [] {
                  for (int i = 0; i < 30; ++i) {
                    std::this_thread::sleep_for(20ms);
                    readBytes(16);
                    infracc::noteChildProgress();
                  }
                },
                200ms),
            "output:");
}

// libotf2 at the end of some damaged definitions: no more bytes come in, yet the same
// buffer is parsed again and again, each pass calling back with its records.
TEST(Isolation, ChildRereadingAStaleBufferIsStopped) {
  // Without the kernel's count of read bytes the rule cannot apply (records alone
  // count, and the stall limit below is long).
  if (access("/proc/self/io", R_OK) != 0)
    GTEST_SKIP() << "no /proc/self/io: this kernel does not count the bytes a process reads";
  EXPECT_EQ(runVoid(
                [] {
                  readBytes(64);
                  for (;;) {
                    std::this_thread::sleep_for(1ms);
                    infracc::noteChildProgress();
                  }
                },
                1000s),
            "rereading");
}

// The stop-36 finding: a parent killed while its dry run spun (libFuzzer's timeout, a
// user's `timeout`) left the child running under init. Here a middle process runs a dry
// run that would wait forever, sends its child's pid up a pipe and is killed; this test,
// as the subreaper, gets the orphan and must see it die of SIGKILL at once.
TEST(Isolation, ChildDiesWithItsParent) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int up[2];
  ASSERT_EQ(pipe(up), 0);
  pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    close(up[0]);
    runVoid(
        [&] {
          pid_t self = getpid();
          (void)!write(up[1], &self, sizeof self);
          for (;;) {
            pause();
            infracc::noteChildProgress();
          }
        },
        1000s);
    _exit(0);
  }
  close(up[1]);
  pid_t child = 0;
  ASSERT_EQ(read(up[0], &child, sizeof child), ssize_t(sizeof child));
  close(up[0]);
  kill(middle, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(middle, &status, 0), middle);
  // The orphan is now this process's child; it must already be dying. If it were not,
  // this would wait forever, so wait with a deadline and kill it ourselves after.
  pid_t got = 0;
  for (int i = 0; i < 500 && got == 0; ++i) {
    got = waitpid(child, &status, WNOHANG);
    if (got == 0)
      std::this_thread::sleep_for(10ms);
  }
  if (got == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    ADD_FAILURE() << "the dry run outlived its parent by 5 s";
  } else {
    ASSERT_EQ(got, child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}
