// Diagnostics: every message about user input goes through DiagEngine, which prints
// `file:line:col: error: message`, the source line and a caret (via llvm::SourceMgr),
// counts errors and stops a frontend after a configurable number of them.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

namespace infracc {

enum class Severity { Error, Warning, Note, Remark };

class DiagEngine {
public:
  explicit DiagEngine(llvm::raw_ostream &os = llvm::errs());

  /// Takes ownership of a buffer so locations inside it can be reported.
  /// The buffer's identifier is the file name printed in messages.
  unsigned addBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer);
  llvm::SourceMgr &sourceMgr() { return srcMgr_; }

  /// A message at a location inside a registered buffer: file:line:col, line, caret.
  void report(llvm::SMLoc loc, Severity sev, const llvm::Twine &msg,
              llvm::ArrayRef<llvm::SMRange> ranges = {});
  void error(llvm::SMLoc loc, const llvm::Twine &msg) { report(loc, Severity::Error, msg); }
  void warning(llvm::SMLoc loc, const llvm::Twine &msg) { report(loc, Severity::Warning, msg); }
  void note(llvm::SMLoc loc, const llvm::Twine &msg) { report(loc, Severity::Note, msg); }

  /// A message without a source line, e.g. about a binary file at an offset, a
  /// generated fabric element, or a whole file: `<where>: error: message`.
  /// An empty `where` prints `infracc: error: message`.
  void report(llvm::StringRef where, Severity sev, const llvm::Twine &msg);
  void error(llvm::StringRef where, const llvm::Twine &msg) { report(where, Severity::Error, msg); }
  void warning(llvm::StringRef where, const llvm::Twine &msg) { report(where, Severity::Warning, msg); }
  void note(llvm::StringRef where, const llvm::Twine &msg) { report(where, Severity::Note, msg); }

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ != 0; }

  /// After this many errors further errors are suppressed and shouldStop() turns
  /// true, so that frontends can give up early. 0 means no limit.
  void setErrorLimit(unsigned n) { errorLimit_ = n; }
  bool shouldStop() const { return errorLimit_ && errors_ >= errorLimit_; }
  /// For a frontend that gives up because shouldStop() turned true while input was
  /// left: prints the "too many errors" note (once).
  void announceStop();

  /// Turn warnings into errors (-Werror style) or silence them.
  void setWarningsAsErrors(bool b) { warningsAsErrors_ = b; }
  void setSuppressWarnings(bool b) { suppressWarnings_ = b; }

  llvm::raw_ostream &stream() { return os_; }

private:
  bool admit(Severity &sev);
  void printPlain(llvm::StringRef where, Severity sev, const llvm::Twine &msg);

  llvm::raw_ostream &os_;
  llvm::SourceMgr srcMgr_;
  unsigned errors_ = 0, warnings_ = 0, errorLimit_ = 20;
  bool limitAnnounced_ = false, warningsAsErrors_ = false, suppressWarnings_ = false;
  bool lastWasSuppressed_ = false;
};

/// An llvm::Error meaning "the problem was already reported through DiagEngine";
/// the driver exits with status 1 without printing anything more.
class ReportedError : public llvm::ErrorInfo<ReportedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override { os << "error already reported"; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};
inline llvm::Error reportedError() { return llvm::make_error<ReportedError>(); }

/// An llvm::Error for misuse of the command line (exit status 2).
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string msg) : msg_(std::move(msg)) {}
  void log(llvm::raw_ostream &os) const override { os << msg_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string msg_;
};
inline llvm::Error usageError(const llvm::Twine &msg) {
  return llvm::make_error<UsageError>(msg.str());
}

/// An input error with a plain message (exit status 1), printed as `infracc: error: msg`.
inline llvm::Error inputError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The entry of `names` closest to `bad` with fewer than `limit` edits (the first of
/// equally close ones), or "" — for "did you mean" hints in messages.
template <typename Range>
std::string closestName(llvm::StringRef bad, const Range &names, unsigned limit = 3) {
  unsigned best = limit;
  llvm::StringRef pick;
  for (llvm::StringRef n : names) {
    unsigned d = bad.edit_distance(n, true, best);
    if (d < best) {
      best = d;
      pick = n;
    }
  }
  return pick.str();
}

/// "; did you mean 'x'?" for closestName(), or "".
template <typename Range>
std::string didYouMean(llvm::StringRef bad, const Range &names, unsigned limit = 3) {
  std::string pick = closestName(bad, names, limit);
  return pick.empty() ? std::string() : "; did you mean '" + pick + "'?";
}

} // namespace infracc
