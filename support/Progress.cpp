#include "support/Progress.h"

#include "support/Options.h"

#include <llvm/Support/Format.h>

namespace infracc {

Progress::Progress(llvm::StringRef what, uint64_t total, llvm::StringRef unit)
    : Progress(what, total, unit, opts::showProgress(), llvm::errs()) {}

Progress::Progress(llvm::StringRef what, uint64_t total, llvm::StringRef unit, bool enabled,
                   llvm::raw_ostream &os)
    : what_(what.str()), unit_(unit.str()), total_(total), enabled_(enabled), os_(os) {
  start_ = lastDraw_ = std::chrono::steady_clock::now();
}

static std::string amount(uint64_t n, bool bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes)
    os << llvm::format("%.1f MB", double(n) / 1e6);
  else
    os << n;
  return s;
}

std::string Progress::render(uint64_t done, double seconds, llvm::StringRef detail) const {
  bool bytes = unit_ == "bytes";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << what_ << " ";
  if (total_) {
    constexpr int width = 30;
    uint64_t shown = std::min(done, total_);
    int filled = int(double(shown) / double(total_) * width);
    os << "[" << std::string(filled, '#') << std::string(width - filled, ' ') << "] "
       << llvm::format("%3d%%", int(double(shown) * 100 / double(total_))) << " "
       << amount(done, bytes) << " of " << amount(total_, bytes);
  } else {
    os << amount(done, bytes);
  }
  if (!detail.empty()) {
    if (!bytes)   // the rate named the unit; the detail does not
      os << " " << unit_;
    os << ", " << detail;
  } else if (seconds > 0) {
    double rate = double(done) / seconds;
    if (bytes)
      os << llvm::format(", %.1f MB/s", rate / 1e6);
    else
      os << llvm::format(", %.0f %s/s", rate, unit_.c_str());
  }
  return s;
}

void Progress::maybeDraw(uint64_t done, llvm::function_ref<std::string(double)> detail) {
  last_ = done;
  auto now = std::chrono::steady_clock::now();
  if (now - lastDraw_ < interval_)
    return;
  lastDraw_ = now;
  if (detail)
    detail_ = detail(std::chrono::duration<double>(now - start_).count());
  draw(done);
}

void Progress::draw(uint64_t done) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r and "erase to end of line" keep the bar on one terminal line.
  os_ << "\r" << render(done, seconds, detail_) << "\x1b[K";
  os_.flush();
}

void Progress::finish(llvm::function_ref<std::string(double)> detail) {
  if (enabled_ && !finished_)
    detail_ = detail(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  finish();
}

void Progress::finish() {
  if (!enabled_ || finished_)
    return;
  finished_ = true;
  draw(last_);
  os_ << "\n";
  os_.flush();
}

} // namespace infracc
