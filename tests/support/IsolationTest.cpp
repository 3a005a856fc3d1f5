// dryRunInChild: a crash in the dry run is reported, not suffered; a dry run that stops
// making progress is stopped; a dry run never outlives infracc; anything else is not a
// failure, and the dry run's effects stay in the child.
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
using infracc::dryRunInChild;

namespace {
std::optional<std::string> crash(std::optional<infracc::DryRunFailure> f) {
  if (!f)
    return std::nullopt;
  switch (f->kind) {
  case infracc::DryRunFailure::Crashed: return f->signal;
  case infracc::DryRunFailure::Stalled: return "stalled";
  case infracc::DryRunFailure::Rereading: return "rereading";
  }
  return "?";
}
} // namespace

TEST(Isolation, CrashInChildIsReported) {
  EXPECT_EQ(crash(dryRunInChild([] { std::raise(SIGSEGV); }, 10s)), "Segmentation fault");
  EXPECT_EQ(crash(dryRunInChild([] { std::abort(); }, 10s)), "Aborted");
  EXPECT_EQ(crash(dryRunInChild([] { _exit(3); }, 10s)), std::nullopt);
  int touched = 0;
  EXPECT_EQ(crash(dryRunInChild([&] { touched = 1; }, 10s)), std::nullopt);
  EXPECT_EQ(touched, 0);
}

TEST(Isolation, ChildWithoutProgressIsStopped) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(crash(dryRunInChild([] { for (;;) pause(); }, 200ms)), "stalled");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  // Progress outside a dry run is a no-op, not a crash.
  infracc::noteDryRunProgress();
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
  EXPECT_EQ(crash(dryRunInChild(
                [] {
                  for (int i = 0; i < 30; ++i) {
                    std::this_thread::sleep_for(20ms);
                    readBytes(16);
                    infracc::noteDryRunProgress();
                  }
                },
                200ms)),
            std::nullopt);
}

// libotf2 at the end of some damaged definitions: no more bytes come in, yet the same
// buffer is parsed again and again, each pass calling back with its records.
TEST(Isolation, ChildRereadingAStaleBufferIsStopped) {
  // Without the kernel's count of read bytes the rule cannot apply (records alone
  // count, and the stall limit below is long).
  if (access("/proc/self/io", R_OK) != 0)
    GTEST_SKIP() << "no /proc/self/io: this kernel does not count the bytes a process reads";
  EXPECT_EQ(crash(dryRunInChild(
                [] {
                  readBytes(64);
                  for (;;) {
                    std::this_thread::sleep_for(1ms);
                    infracc::noteDryRunProgress();
                  }
                },
                1000s)),
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
    dryRunInChild(
        [&] {
          pid_t self = getpid();
          (void)!write(up[1], &self, sizeof self);
          for (;;) {
            pause();
            infracc::noteDryRunProgress();
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
