#include "support/Output.h"

#include <algorithm>

#include <llvm/Support/Path.h>

#include <csignal>

namespace infracc {

namespace fs = llvm::sys::fs;

namespace {
// SIGINT, SIGTERM and SIGHUP wait while it lives: TempFile::create makes the file and
// only then registers it for removal on a signal, and commit renames several files,
// so a signal in either would leave a stray temporary or half an output directory.
class DeferInterrupts {
public:
  DeferInterrupts() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~DeferInterrupts() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

private:
  sigset_t old_;
};
} // namespace

OutputManager::OutputManager(std::string path, bool directoryTarget)
    : path_(std::move(path)), directory_(directoryTarget) {}

OutputManager::~OutputManager() {
  if (!committed_)
    discard();
}

// A directory that does not exist yet is created only when the run commits: until then
// its files are temporaries beside it, which an error or an interrupt removes, so the
// directory appears whole or not at all.
llvm::Error OutputManager::prepareDirectory() {
  if (dirPrepared_)
    return llvm::Error::success();
  if (path_.empty() || path_ == "-")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "this target writes several files; name a directory with -o");
  if (fs::exists(path_)) {
    if (!fs::is_directory(path_))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + path_ + "' exists and is not a directory");
  } else {
    llvm::SmallString<256> parent(path_);
    llvm::sys::path::remove_dots(parent, /*remove_dot_dot=*/true);
    llvm::sys::path::remove_filename(parent);
    if (!parent.empty())
      if (std::error_code ec = fs::create_directories(parent))
        return llvm::createStringError(ec, "cannot create directory '" + std::string(parent) +
                                               "': " + ec.message());
    newDir_ = true;
  }
  dirPrepared_ = true;
  return llvm::Error::success();
}

llvm::Expected<llvm::raw_ostream &> OutputManager::open(const std::string &finalName,
                                                        bool executable,
                                                        llvm::StringRef tempModel) {
  llvm::SmallString<256> model(tempModel.empty() ? llvm::StringRef(finalName) : tempModel);
  model += ".tmp-%%%%%%";
  auto temp = [&] {
    DeferInterrupts defer;
    return fs::TempFile::create(model);
  }();
  if (!temp)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + finalName +
                                       "': " + llvm::toString(temp.takeError()));
  Pending p;
  p.finalName = finalName;
  p.temp = std::make_unique<fs::TempFile>(std::move(*temp));
  p.os = std::make_unique<llvm::raw_fd_ostream>(p.temp->FD, /*shouldClose=*/false);
  p.executable = executable;
  pending_.push_back(std::move(p));
  return *pending_.back().os;
}

llvm::Expected<llvm::raw_ostream &> OutputManager::stream() {
  if (directory_)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: stream() on a directory target");
  if (toStdout())
    return llvm::outs();
  if (!pending_.empty())
    return *pending_.front().os;
  if (fs::is_directory(path_))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path_ + "' is a directory; this target writes one file");
  // A device or pipe (-o /dev/null, a FIFO) is written directly: renaming a
  // temporary file onto it would replace the device with a regular file.
  fs::file_status st;
  if (!fs::status(path_, st) && fs::exists(st) && st.type() != fs::file_type::regular_file) {
    std::error_code ec;
    auto os = std::make_unique<llvm::raw_fd_ostream>(path_, ec, fs::OF_None);
    if (ec)
      return llvm::createStringError(ec, "cannot write '" + path_ + "': " + ec.message());
    Pending p;
    p.finalName = path_;
    p.os = std::move(os);
    pending_.push_back(std::move(p));
    return *pending_.back().os;
  }
  return open(path_, false, "");
}

llvm::raw_pwrite_stream *OutputManager::seekableStream() {
  if (toStdout())
    return nullptr;
  auto os = stream();
  if (!os) {
    llvm::consumeError(os.takeError());
    return nullptr;
  }
  auto *fd = static_cast<llvm::raw_fd_ostream *>(&*os);   // every file stream is one
  return fd->supportsSeeking() ? fd : nullptr;
}

llvm::Expected<llvm::raw_ostream &> OutputManager::file(llvm::StringRef relativeName,
                                                        bool executable) {
  if (!directory_)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: file() on a single-file target");
  if (llvm::Error e = prepareDirectory())
    return e;
  llvm::SmallString<256> full(path_);
  llvm::sys::path::append(full, relativeName);
  const bool nested = !llvm::sys::path::parent_path(relativeName).empty();
  if (!newDir_ && !nested)
    return open(std::string(full.str()), executable, "");
  // Beside the directory to be (out/ -> out.fabric.topo.tmp-XXXXXX), and so are files
  // of subdirectories that do not exist yet (out/trace/a.evt -> out.trace_a.evt.tmp-...):
  // their folders are made at commit.
  std::string model = path_;
  while (model.size() > 1 && llvm::sys::path::is_separator(model.back()))
    model.pop_back();
  std::string flat = relativeName.str();
  std::replace(flat.begin(), flat.end(), '/', '_');
  model += "." + flat;
  return open(std::string(full.str()), executable, model);
}

llvm::Error OutputManager::commit() {
  DeferInterrupts defer;
  if (toStdout()) {
    llvm::outs().flush();
    committed_ = true;
    if (llvm::outs().has_error()) {
      llvm::outs().clear_error();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "error writing to standard output");
    }
    return llvm::Error::success();
  }
  for (Pending &p : pending_) {
    p.os->flush();
    if (p.os->has_error()) {
      std::error_code ec = p.os->error();
      p.os->clear_error();
      discard();
      return llvm::createStringError(ec, "error writing '" + p.finalName + "': " + ec.message());
    }
  }
  if (newDir_ && !pending_.empty()) {
    if (std::error_code ec = fs::create_directory(path_)) {
      discard();
      return llvm::createStringError(ec, "cannot create directory '" + path_ + "': " + ec.message());
    }
    createdDir_ = path_;
    newDir_ = false;
  }
  for (Pending &p : pending_) {
    if (!p.temp) {   // written directly (a device or pipe)
      p.os.reset();
      continue;
    }
    // Subfolders of the output directory (a trace archive's), made when first needed.
    llvm::StringRef parent = llvm::sys::path::parent_path(p.finalName);
    if (!parent.empty() && parent != llvm::StringRef(path_) && !fs::is_directory(parent)) {
      llvm::SmallVector<std::string, 4> made;
      for (llvm::StringRef d = parent; !d.empty() && !fs::exists(d);
           d = llvm::sys::path::parent_path(d))
        made.push_back(d.str());
      if (std::error_code ec = fs::create_directories(parent)) {
        discard();
        return llvm::createStringError(ec, "cannot create directory '" + parent.str() +
                                               "': " + ec.message());
      }
      createdSubdirs_.insert(createdSubdirs_.end(), made.rbegin(), made.rend());
    }
    if (p.executable)
      fs::setPermissions(p.temp->FD, fs::perms(fs::all_read | fs::all_exe | fs::owner_write));
    else
      fs::setPermissions(p.temp->FD, fs::perms(fs::all_read | fs::owner_write));
    p.os.reset();
    if (llvm::Error e = p.temp->keep(p.finalName)) {
      std::string msg = llvm::toString(std::move(e));
      discard();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot write '" + p.finalName + "': " + msg);
    }
    p.temp.reset();
  }
  pending_.clear();
  committed_ = true;
  return llvm::Error::success();
}

void OutputManager::discard() {
  for (Pending &p : pending_) {
    p.os.reset();
    if (p.temp)
      llvm::consumeError(p.temp->discard());
  }
  pending_.clear();
  for (auto it = createdSubdirs_.rbegin(); it != createdSubdirs_.rend(); ++it)
    fs::remove(*it);   // only succeeds when empty
  createdSubdirs_.clear();
  if (!createdDir_.empty()) {
    fs::remove(createdDir_);   // only succeeds when empty, which it is
    createdDir_.clear();
  }
}

} // namespace infracc
