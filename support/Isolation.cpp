#include "support/Isolation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// In a sanitizer build (CI's ASan+UBSan tests, the fuzz targets) the runtime has these;
// without one they are null.
extern "C" void __sanitizer_set_report_fd(void *fd) __attribute__((weak));
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace infracc {

namespace {
// In a worker only: the counter it shares with infracc. Null in infracc, so
// noteChildProgress() is free there.
std::atomic<uint64_t> *childProgress = nullptr;

// A worker serves this many requests, then the next request gets a new one: libotf2
// leaks a file descriptor and about 20 KB for every archive it cannot read.
constexpr unsigned RequestsPerWorker = 100;
constexpr size_t MaxRequest = 64 << 10;

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

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd &) = delete;
  Fd(Fd &&o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd &operator=(Fd &&o) noexcept {
    reset();
    fd = std::exchange(o.fd, -1);
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0)
      close(fd);
    fd = -1;
  }
};

// A message header over `size` bytes at `data`, with room for one descriptor.
struct OneFdMessage {
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  OneFdMessage(void *data, size_t size) : iov{data, size} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  OneFdMessage(const OneFdMessage &) = delete;
};

// A request goes as one message: a byte 'R' (so that no message is empty, which would
// read as the other end closing), the request, and the descriptor of the file the
// answer goes to.
bool sendRequest(int sock, llvm::StringRef request, int outputFd) {
  std::string bytes = "R" + request.str();
  OneFdMessage m(bytes.data(), bytes.size());
  cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &outputFd, sizeof outputFd);
  ssize_t sent;
  do
    sent = sendmsg(sock, &m.msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent == ssize_t(bytes.size());
}

// The worker: one request at a time until infracc closes its end. Its answer is written
// to the file that came with the request, the length first, written last: a worker that
// ends early (exit() in the task) leaves it zero, which no answer can have. Then a byte
// 'D' on the socket says it is done.
[[noreturn]] void serve(WorkerTask task, int sock) {
  // Freed memory is kept for the next request instead of being handed back to the
  // kernel and faulted in again (libotf2 allocates a chunk buffer of 256 KiB or more
  // per file it reads). Not M_PERTURB, which would make the memory a request finds
  // the same whatever the requests before left in it: it writes every allocation
  // twice, and libotf2 allocates by damaged counts (128 MiB for one fuzzed group).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  std::vector<char> buffer(MaxRequest + 2);
  for (;;) {
    OneFdMessage m(buffer.data(), buffer.size());
    ssize_t n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(0);   // infracc closed its end, or ended
    int out = -1;
    for (cmsghdr *c = CMSG_FIRSTHDR(&m.msg); c; c = CMSG_NXTHDR(&m.msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        std::memcpy(&out, CMSG_DATA(c), sizeof out);
    if (out < 0 || (m.msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || buffer[0] != 'R')
      _exit(3);
    const uint64_t unset = 0;
    if (!writeAll(out, &unset, sizeof unset))
      _exit(3);
    uint64_t length = 0;
    {
      llvm::raw_fd_ostream os(out, /*shouldClose=*/false);
      os.SetBufferSize(64 << 10);
      const uint64_t start = os.tell();
      task(llvm::StringRef(buffer.data() + 1, size_t(n) - 1), os);
      os.flush();
      if (os.has_error())
        _exit(3);
      length = os.tell() - start + 1;   // + 1: an empty answer is not "unset"
    }
    if (pwrite(out, &length, sizeof length, 0) != ssize_t(sizeof length))
      _exit(3);
    close(out);
    const char done = 'D';
    if (send(sock, &done, 1, MSG_NOSIGNAL) != 1)
      _exit(0);
  }
}

struct Worker {
  WorkerTask task = nullptr;
  pid_t owner = -1;   // the process that started the worker
  pid_t pid = -1;
  Fd sock;   // infracc's end of the socket pair
  Fd io;     // /proc/PID/io: what the worker has read, by the kernel's count
  std::atomic<uint64_t> *progress = nullptr;   // in a page shared with the worker
  unsigned served = 0;

  // Kills the worker (idle, hung or dead already) and forgets it.
  void end() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      reap(pid);
    }
    pid = -1;
    sock.reset();
    io.reset();
    if (progress)
      munmap(progress, sizeof *progress);
    progress = nullptr;
    served = 0;
  }

  bool start() {
    void *page = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      return false;
    progress = new (page) std::atomic<uint64_t>(0);
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
      end();
      return false;
    }
    const pid_t parent = getpid();
    pid = fork();
    if (pid < 0) {
      close(ends[0]);
      close(ends[1]);
      end();
      return false;
    }
    if (pid == 0) {
      // Dies with infracc: a parent killed by `timeout` or libFuzzer must not leave the
      // worker running. The check covers a parent that ended before prctl.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent)
        _exit(0);
      // Holds nothing of infracc's: not its output files, nor the write end of a pipe
      // someone waits on, nor another worker's socket (which would then not see EOF).
      const int own = ends[1];
      if (own > 3)
        close_range(3, own - 1, 0);
      close_range(own + 1, ~0U, 0);
      // Sanitizers and libFuzzer catch the crash signals to report and save the input,
      // and the driver's handlers remove its temporary outputs on an interrupt; here a
      // crash is an answer, not a finding, and the outputs are infracc's.
      for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGTERM, SIGHUP})
        std::signal(sig, SIG_DFL);
      // Under a sanitizer, a memory error in the worker (in the library, which the
      // worker is there to contain) is the worker's crash, answered as one: the report
      // goes to standard error and the worker ends with SIGABRT, not with the sanitizer's
      // exit status, which would have infracc read the archive again in its own process.
      // Standard error because the report descriptor libFuzzer gives the sanitizer
      // belongs to infracc's process: in another process the runtime gives it up and
      // writes a file ".<pid>" in the working directory instead. And not libFuzzer's death
      // callback, inherited from infracc, which would save the input that was current
      // when the worker was forked.
      if (__sanitizer_set_report_fd)
        __sanitizer_set_report_fd(reinterpret_cast<void *>(uintptr_t(STDERR_FILENO)));
      if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback([] { std::abort(); });
      childProgress = progress;
      serve(task, own);
    }
    close(ends[1]);
    owner = parent;
    sock = Fd(ends[0]);
    io = Fd(open(fmt::format("/proc/{}/io", pid).c_str(), O_RDONLY | O_CLOEXEC));
    return true;
  }

  // The kernel's counts of the bytes the worker has read and of its read calls; both
  // UINT64_MAX without /proc.
  struct Reads {
    uint64_t bytes = UINT64_MAX, calls = UINT64_MAX;
  };
  Reads reads() const {
    char text[512];
    ssize_t n = io.fd < 0 ? -1 : pread(io.fd, text, sizeof text - 1, 0);
    unsigned long long bytes = 0, written = 0, calls = 0;
    if (n > 0 && (text[n] = 0, sscanf(text, "rchar: %llu wchar: %llu syscr: %llu", &bytes,
                                      &written, &calls) == 3))
      return {bytes, calls};
    return {};
  }
};

std::mutex workersLock;
// One worker per task. Never destroyed: when infracc exits, the kernel closes its end of
// each socket and the worker, reading EOF, exits too.
std::vector<Worker> &workers() {
  static auto *all = new std::vector<Worker>;
  return *all;
}
} // namespace

void noteChildProgress() {
  if (childProgress)
    childProgress->fetch_add(1, std::memory_order_relaxed);
}

ChildRun runInWorker(WorkerTask task, llvm::StringRef request,
                     std::chrono::milliseconds stallLimit) {
  if (request.size() > MaxRequest)
    return {};
  std::lock_guard<std::mutex> lock(workersLock);
  auto found = std::find_if(workers().begin(), workers().end(),
                            [&](const Worker &w) { return w.task == task; });
  Worker &w = found != workers().end() ? *found : workers().emplace_back();
  w.task = task;
  if (w.pid > 0 && w.owner != getpid()) {
    // Inherited by a fork of infracc: the worker is the parent's, and so are its
    // requests. Forgotten here, not killed.
    w.pid = -1;
    w.end();
  }
  if (w.pid > 0 && w.served >= RequestsPerWorker)
    w.end();
  if (w.pid <= 0 && !w.start())
    return {};
  Fd output(memfd_create("infracc-worker-output", MFD_CLOEXEC));
  if (output.fd < 0)
    return {};
  w.progress->store(0, std::memory_order_relaxed);
  const Worker::Reads before = w.reads();
  if (!sendRequest(w.sock.fd, request, output.fd)) {
    w.end();
    return {};
  }
  ++w.served;
  // What the request has read so far: records, bytes and read calls (the last two
  // UINT64_MAX without /proc). Progress is a record or a byte; calls are not.
  struct Reading {
    uint64_t records, bytes, calls;
    bool progressedSince(const Reading &r) const {
      return records != r.records || bytes != r.bytes;
    }
  };
  const bool counted = before.bytes != UINT64_MAX;
  auto look = [&] {
    Worker::Reads now = w.reads();
    bool known = counted && now.bytes != UINT64_MAX;
    return Reading{w.progress->load(std::memory_order_relaxed),
                   known ? now.bytes - before.bytes : UINT64_MAX,
                   known ? now.calls - before.calls : UINT64_MAX};
  };
  // Each read call that returns something returns a byte at least, so between two looks
  // more calls than bytes are calls that returned nothing: reading the end of a file
  // over and over (libotf2 on some damaged archives, at tens of thousands of calls in
  // 20 ms). A sound reader meets the end of each file once or twice.
  constexpr uint64_t EmptyReadLimit = 1000;
  using Clock = std::chrono::steady_clock;
  Reading seen = look();
  Clock::time_point lastProgress = Clock::now();
  // Looks a few times per stall limit, at least every 20 ms (a look is one pread).
  const int step = int(std::clamp<int64_t>(stallLimit.count() / 4, 1, 20));
  bool answered = false;
  for (;;) {
    pollfd p{w.sock.fd, POLLIN, 0};
    int n = poll(&p, 1, step);
    if (n > 0) {
      char reply = 0;
      ssize_t got;
      do
        got = recv(w.sock.fd, &reply, 1, 0);
      while (got < 0 && errno == EINTR);
      answered = got == 1 && reply == 'D';
      break;   // an answer, or the worker has ended
    }
    if (n < 0 && errno != EINTR)
      break;   // cannot watch it any more; wait for it to end
    Reading now = look();
    std::optional<ChildFailure::Kind> stopped;
    if (now.records > now.bytes ||
        (now.calls != UINT64_MAX && now.calls - seen.calls > now.bytes - seen.bytes + EmptyReadLimit))
      stopped = ChildFailure::Rereading;
    else if (!now.progressedSince(seen) && Clock::now() - lastProgress >= stallLimit)
      stopped = ChildFailure::Stalled;
    if (stopped) {
      w.end();
      return {ChildFailure{*stopped, {}}, nullptr};
    }
    if (now.progressedSince(seen))
      lastProgress = Clock::now();
    seen = now;
  }
  if (!answered) {
    // The worker has ended (or must): how is the answer.
    w.sock.reset();
    const int status = reap(w.pid);
    w.pid = -1;
    w.end();
    if (status != -1 && WIFSIGNALED(status))
      return {ChildFailure{ChildFailure::Crashed, strsignal(WTERMSIG(status))}, nullptr};
    return {};
  }
  uint64_t length = 0;
  struct stat st;
  if (fstat(output.fd, &st) != 0 || uint64_t(st.st_size) < sizeof length ||
      pread(output.fd, &length, sizeof length, 0) != ssize_t(sizeof length) || length == 0 ||
      length - 1 != uint64_t(st.st_size) - sizeof length)
    return {};
  // Mapped, not copied: the answer for a large trace is large.
  auto mapped = llvm::MemoryBuffer::getOpenFileSlice(output.fd, "worker output", length - 1,
                                                     sizeof length);
  if (!mapped)
    return {};
  return {std::nullopt, std::move(*mapped)};
}

} // namespace infracc
