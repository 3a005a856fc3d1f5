#include "support/Isolation.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace infracc {

std::optional<std::string> crashInChild(llvm::function_ref<void()> f) {
  const pid_t pid = fork();
  if (pid < 0)
    return std::nullopt;   // no child: the caller reads without the dry run
  if (pid == 0) {
    // Sanitizers and libFuzzer catch these signals to report and save the input; a crash
    // here is an answer, not a finding.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
      std::signal(sig, SIG_DFL);
    f();
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return std::nullopt;
  if (WIFSIGNALED(status))
    return std::string(strsignal(WTERMSIG(status)));
  return std::nullopt;
}

} // namespace infracc
