// Atomic outputs. Every file a target writes goes to a temporary file next to its
// final name and is renamed into place only when the whole run has succeeded, so a
// failed run leaves nothing half-written (and an interrupted one removes its temps:
// LLVM's TempFile registers them with RemoveFileOnSignal). An output directory that
// does not exist yet is made at commit, its files' temporaries waiting beside it.
// Devices and pipes (-o /dev/null) are written directly.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>
#include <vector>

namespace infracc {

class OutputManager {
public:
  /// `path` is the -o value: "" or "-" means standard output (single-file targets
  /// only); for directory targets it names the directory, created if missing.
  OutputManager(std::string path, bool directoryTarget);
  ~OutputManager();
  OutputManager(const OutputManager &) = delete;
  OutputManager &operator=(const OutputManager &) = delete;

  bool toStdout() const { return !directory_ && (path_.empty() || path_ == "-"); }
  const std::string &path() const { return path_; }

  /// The stream of a single-file target.
  llvm::Expected<llvm::raw_ostream &> stream();
  /// The stream of a single-file target if it can also write at earlier offsets (a
  /// file, not standard output or a pipe); null otherwise.
  llvm::raw_pwrite_stream *seekableStream();
  /// A file inside the output directory of a directory target; `relativeName` may name
  /// a subfolder (`trace/traces.otf2`), made at commit.
  llvm::Expected<llvm::raw_ostream &> file(llvm::StringRef relativeName, bool executable = false);

  /// Renames every temporary file into place. On error, everything is discarded.
  llvm::Error commit();
  /// Removes every temporary file (also done by the destructor if not committed).
  void discard();

private:
  struct Pending {
    std::string finalName;
    std::unique_ptr<llvm::sys::fs::TempFile> temp;   // null when written directly
    std::unique_ptr<llvm::raw_fd_ostream> os;
    bool executable = false;
  };
  llvm::Expected<llvm::raw_ostream &> open(const std::string &finalName, bool executable,
                                           llvm::StringRef tempModel);
  llvm::Error prepareDirectory();

  std::string path_;
  bool directory_;
  bool committed_ = false;
  bool dirPrepared_ = false;
  bool newDir_ = false;      // the directory does not exist yet: made at commit
  std::string createdDir_;   // directory we created (removed again on discard)
  std::vector<std::string> createdSubdirs_;   // its subfolders made at commit, outer first
  std::vector<Pending> pending_;
};

} // namespace infracc
