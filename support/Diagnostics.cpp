#include "support/Diagnostics.h"

#include <llvm/ADT/SmallString.h>

namespace infracc {

char ReportedError::ID = 0;
char UsageError::ID = 0;

DiagEngine::DiagEngine(llvm::raw_ostream &os) : os_(os) {}

unsigned DiagEngine::addBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer) {
  return srcMgr_.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
}

// One write per message: llvm::errs() is unbuffered, and SourceMgr prints a message in
// pieces (the caret line a space at a time), 26 system calls for one error; written
// whole, messages from infracc runs sharing a terminal or log do not interleave either.
static void emit(llvm::raw_ostream &os, llvm::StringRef text) {
  os << text;
  os.flush();
}

static llvm::SourceMgr::DiagKind toKind(Severity sev) {
  switch (sev) {
  case Severity::Error: return llvm::SourceMgr::DK_Error;
  case Severity::Warning: return llvm::SourceMgr::DK_Warning;
  case Severity::Note: return llvm::SourceMgr::DK_Note;
  case Severity::Remark: return llvm::SourceMgr::DK_Remark;
  }
  return llvm::SourceMgr::DK_Error;
}

// Decides whether a message is printed and keeps the counts. Notes attach to the
// message before them, so they are dropped when that one was suppressed.
bool DiagEngine::admit(Severity &sev) {
  if (sev == Severity::Warning && warningsAsErrors_)
    sev = Severity::Error;
  if (sev == Severity::Note || sev == Severity::Remark)
    return !lastWasSuppressed_;
  if (sev == Severity::Warning) {
    lastWasSuppressed_ = suppressWarnings_;
    if (!suppressWarnings_)
      ++warnings_;
    return !suppressWarnings_;
  }
  // An error.
  if (errorLimit_ && errors_ >= errorLimit_) {
    ++errors_;
    lastWasSuppressed_ = true;
    announceStop();
    return false;
  }
  ++errors_;
  lastWasSuppressed_ = false;
  return true;
}

void DiagEngine::announceStop() {
  if (limitAnnounced_)
    return;
  limitAnnounced_ = true;
  emit(os_, (llvm::Twine("infracc: note: too many errors (limit ") + llvm::Twine(errorLimit_) +
        ", see -error-limit); stopping here\n")
           .str());
}

void DiagEngine::report(llvm::SMLoc loc, Severity sev, const llvm::Twine &msg,
                        llvm::ArrayRef<llvm::SMRange> ranges) {
  if (!admit(sev))
    return;
  if (!loc.isValid() || !srcMgr_.FindBufferContainingLoc(loc)) {
    printPlain(llvm::StringRef(), sev, msg);
    return;
  }
  // SourceMgr hands even this overload to an installed diagnostic handler (the YAML
  // parser's messages are routed here through one): print directly.
  auto handler = srcMgr_.getDiagHandler();
  void *context = srcMgr_.getDiagContext();
  srcMgr_.setDiagHandler(nullptr, nullptr);
  llvm::SmallString<256> text;
  llvm::raw_svector_ostream line(text);
  srcMgr_.PrintMessage(line, loc, toKind(sev), msg, ranges, {}, /*ShowColors=*/false);
  srcMgr_.setDiagHandler(handler, context);
  emit(os_, text);
}

void DiagEngine::report(llvm::StringRef where, Severity sev, const llvm::Twine &msg) {
  if (admit(sev))
    printPlain(where, sev, msg);
}

void DiagEngine::printPlain(llvm::StringRef where, Severity sev, const llvm::Twine &msg) {
  const char *kind = sev == Severity::Error     ? "error"
                     : sev == Severity::Warning ? "warning"
                     : sev == Severity::Note    ? "note"
                                                : "remark";
  llvm::SmallString<256> text;
  llvm::raw_svector_ostream line(text);
  line << (where.empty() ? llvm::StringRef("infracc") : where) << ": " << kind << ": " << msg
       << "\n";
  emit(os_, text);
}

} // namespace infracc
