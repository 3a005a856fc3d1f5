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
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace infracc {

namespace {
// In the child only: the counter it shares with the parent. Null in the parent, so
// noteChildProgress() is free there.
std::atomic<uint64_t> *childProgress = nullptr;

// Waits for `pid` to end and returns its status; -1 when it cannot be waited for.
int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return status;
}
// Writes all of `n` bytes; false when it cannot.
bool writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t done = write(fd, p, n);
    if (done < 0 && errno == EINTR)
      continue;
    if (done <= 0)
      return false;
    p += done;
    n -= size_t(done);
  }
  return true;
}
} // namespace

void noteChildProgress() {
  if (childProgress)
    childProgress->fetch_add(1, std::memory_order_relaxed);
}

ChildRun runInChild(llvm::function_ref<void(llvm::raw_ostream &)> f,
                    std::chrono::milliseconds stallLimit) {
  // The counter lives in a shared page; the pipe's write end is held by the child alone,
  // so the parent's poll wakes the moment the child ends, however it ends. The output
  // goes to an anonymous file: it may be far larger than a pipe holds, and the parent
  // maps it once the child is done.
  void *page = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return {};
  auto *progress = new (page) std::atomic<uint64_t>(0);
  struct Unmap {
    void *p;
    ~Unmap() { munmap(p, sizeof(std::atomic<uint64_t>)); }
  } unmap{page};
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0)
        close(fd);
    }
  } output{memfd_create("infracc-child-output", MFD_CLOEXEC)}, watch, ends[2];
  int pipeEnds[2];
  if (output.fd < 0 || pipe2(pipeEnds, O_CLOEXEC) != 0)
    return {};
  ends[0].fd = pipeEnds[0];
  ends[1].fd = pipeEnds[1];
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0)
    return {};
  if (pid == 0) {
    // Dies with infracc: a parent killed by `timeout` or libFuzzer must not leave this
    // child running. The check covers a parent that ended before prctl.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    close(ends[0].fd);
    // Sanitizers and libFuzzer catch the crash signals to report and save the input, and
    // the driver's handlers remove its temporary outputs on an interrupt; here a crash is
    // an answer, not a finding, and the outputs are the parent's.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGTERM, SIGHUP})
      std::signal(sig, SIG_DFL);
    childProgress = progress;
    // The length goes first, written last: a child that ends early (exit() in `f`)
    // leaves it zero, which no output can have.
    const uint64_t unset = 0;
    if (!writeAll(output.fd, &unset, sizeof unset))
      _exit(3);
    uint64_t length = 0;
    {
      llvm::raw_fd_ostream os(output.fd, /*shouldClose=*/false);
      os.SetBufferSize(1 << 20);
      const uint64_t start = os.tell();
      f(os);
      os.flush();
      if (os.has_error())
        _exit(3);
      length = os.tell() - start + 1;   // + 1: an empty output is not "unset"
    }
    if (pwrite(output.fd, &length, sizeof length, 0) != ssize_t(sizeof length))
      _exit(3);
    _exit(0);
  }
  close(ends[1].fd);
  ends[1].fd = -1;
  // What the child has read, from the kernel's count (/proc/PID/io's rchar). Every record
  // is at least a byte, so a reader calling back with more records than it has read bytes
  // is parsing a stale buffer over and over (libotf2 at the end of some damaged definition
  // files) and is stopped at once. Without /proc, records alone count.
  watch.fd = open(fmt::format("/proc/{}/io", pid).c_str(), O_RDONLY | O_CLOEXEC);
  struct Reading {
    uint64_t records, bytes;
    bool operator==(const Reading &) const = default;
  };
  auto look = [&] {
    Reading r{progress->load(std::memory_order_relaxed), UINT64_MAX};
    char text[512];
    ssize_t n = watch.fd < 0 ? -1 : pread(watch.fd, text, sizeof text - 1, 0);
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
  std::optional<ChildFailure::Kind> stopped;
  for (;;) {
    pollfd p{ends[0].fd, POLLIN, 0};
    int n = poll(&p, 1, step);
    if (n > 0)
      break;   // the write end closed: the child has ended
    if (n < 0 && errno != EINTR)
      break;   // cannot watch it any more; wait for it as before
    Reading now = look();
    if (now.records > now.bytes)
      stopped = ChildFailure::Rereading;
    else if (now == seen && Clock::now() - lastProgress >= stallLimit)
      stopped = ChildFailure::Stalled;
    if (stopped) {
      kill(pid, SIGKILL);
      break;
    }
    if (now != seen) {
      seen = now;
      lastProgress = Clock::now();
    }
  }
  const int status = reap(pid);
  if (stopped)
    return {ChildFailure{*stopped, {}}, nullptr};
  if (status != -1 && WIFSIGNALED(status))
    return {ChildFailure{ChildFailure::Crashed, strsignal(WTERMSIG(status))}, nullptr};
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {};
  uint64_t length = 0;
  struct stat st;
  if (fstat(output.fd, &st) != 0 || uint64_t(st.st_size) < sizeof length ||
      pread(output.fd, &length, sizeof length, 0) != ssize_t(sizeof length) || length == 0 ||
      length - 1 != uint64_t(st.st_size) - sizeof length)
    return {};
  // Mapped, not copied: the output of a large trace is large.
  auto mapped = llvm::MemoryBuffer::getOpenFileSlice(output.fd, "child output", length - 1,
                                                     sizeof length);
  if (!mapped)
    return {};
  return {std::nullopt, std::move(*mapped)};
}

} // namespace infracc
