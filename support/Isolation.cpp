#include "support/Isolation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <new>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace infracc {

namespace {
// In the child only: the counter it shares with the parent. Null in the parent, so
// noteDryRunProgress() is free there.
std::atomic<uint64_t> *childProgress = nullptr;

// Waits for `pid` to end and returns its status; -1 when it cannot be waited for.
int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return status;
}
} // namespace

void noteDryRunProgress() {
  if (childProgress)
    childProgress->fetch_add(1, std::memory_order_relaxed);
}

std::optional<DryRunFailure> dryRunInChild(llvm::function_ref<void()> f,
                                           std::chrono::milliseconds stallLimit) {
  // The counter lives in a shared page; the pipe's write end is held by the child alone,
  // so the parent's poll wakes the moment the child ends, however it ends.
  void *page = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return std::nullopt;   // no dry run: the caller reads without it
  auto *progress = new (page) std::atomic<uint64_t>(0);
  struct Unmap {
    void *p;
    ~Unmap() { munmap(p, sizeof(std::atomic<uint64_t>)); }
  } unmap{page};
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0)
    return std::nullopt;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(ends[0]);
    close(ends[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    // Dies with infracc: a parent killed by `timeout` or libFuzzer must not leave this
    // child running. The check covers a parent that ended before prctl.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    close(ends[0]);
    // Sanitizers and libFuzzer catch the crash signals to report and save the input, and
    // the driver's handlers remove its temporary outputs on an interrupt; here a crash is
    // an answer, not a finding, and the outputs are the parent's.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGTERM, SIGHUP})
      std::signal(sig, SIG_DFL);
    childProgress = progress;
    f();
    _exit(0);
  }
  close(ends[1]);
  // What the child has read, from the kernel's count (/proc/PID/io's rchar). Every record
  // is at least a byte, so a reader calling back with more records than it has read bytes
  // is parsing a stale buffer over and over (libotf2 at the end of some damaged definition
  // files) and is stopped at once. Without /proc, records alone count.
  const int io = open(fmt::format("/proc/{}/io", pid).c_str(), O_RDONLY | O_CLOEXEC);
  struct Reading {
    uint64_t records, bytes;
    bool operator==(const Reading &) const = default;
  };
  auto look = [&] {
    Reading r{progress->load(std::memory_order_relaxed), UINT64_MAX};
    char text[512];
    ssize_t n = io < 0 ? -1 : pread(io, text, sizeof text - 1, 0);
    unsigned long long bytes = 0;
    if (n > 0 && (text[n] = 0, sscanf(text, "rchar: %llu", &bytes) == 1))
      r.bytes = bytes;
    return r;
  };
  using Clock = std::chrono::steady_clock;
  Reading seen = look();
  Clock::time_point lastProgress = Clock::now();
  // Looks a few times per stall limit, at least every 100 ms.
  const int step = int(std::clamp<int64_t>(stallLimit.count() / 4, 1, 100));
  std::optional<DryRunFailure::Kind> stopped;
  for (;;) {
    pollfd p{ends[0], POLLIN, 0};
    int n = poll(&p, 1, step);
    if (n > 0)
      break;   // the write end closed: the child has ended
    if (n < 0 && errno != EINTR)
      break;   // cannot watch it any more; wait for it as before
    Reading now = look();
    if (now.records > now.bytes)
      stopped = DryRunFailure::Rereading;
    else if (now == seen && Clock::now() - lastProgress >= stallLimit)
      stopped = DryRunFailure::Stalled;
    if (stopped) {
      kill(pid, SIGKILL);
      break;
    }
    if (now != seen) {
      seen = now;
      lastProgress = Clock::now();
    }
  }
  close(ends[0]);
  if (io >= 0)
    close(io);
  const int status = reap(pid);
  if (stopped)
    return DryRunFailure{*stopped, {}};
  if (status != -1 && WIFSIGNALED(status))
    return DryRunFailure{DryRunFailure::Crashed, strsignal(WTERMSIG(status))};
  return std::nullopt;
}

} // namespace infracc
