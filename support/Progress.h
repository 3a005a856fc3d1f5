// A progress bar on stderr for long-running stages (reading multi-GB traces, long
// simulations). Shown only when asked for (-progress) and stderr is a terminal;
// otherwise every call is a cheap no-op, so stages can report unconditionally.
//
//   Progress bar("reading x.goal", fileSize);
//   ... bar.update(bytesDone); ...
//   bar.finish();
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace infracc {

class Progress {
public:
  /// Enabled when -progress is given and stderr is a terminal. `total` is in `unit`s
  /// ("bytes" are shown as MB; anything else as plain counts); 0 = unknown.
  Progress(llvm::StringRef what, uint64_t total, llvm::StringRef unit = "bytes");
  /// Explicitly enabled or not, drawing on `os` (for tests and tools).
  Progress(llvm::StringRef what, uint64_t total, llvm::StringRef unit, bool enabled,
           llvm::raw_ostream &os);
  ~Progress() { finish(); }
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  bool enabled() const { return enabled_; }
  /// Records that `done` units are finished; redraws at most every `interval`.
  void update(uint64_t done) {
    if (enabled_)
      maybeDraw(done, nullptr);
  }
  /// The same with a stage-specific addition instead of the rate (e.g. a simulation's
  /// events per second and simulated time), built only when the bar is redrawn, from
  /// the seconds since the start.
  void update(uint64_t done, llvm::function_ref<std::string(double seconds)> detail) {
    if (enabled_)
      maybeDraw(done, detail);
  }
  /// Draws the final state and ends the line.
  void finish();
  /// The same with a last stage-specific addition (see update).
  void finish(llvm::function_ref<std::string(double seconds)> detail);

  /// Redraw interval (default 100 ms; 0 draws on every update, for tests).
  void setInterval(std::chrono::milliseconds ms) { interval_ = ms; }
  /// Formats one line of the bar (no carriage return), for tests; `detail` replaces
  /// the rate when given.
  std::string render(uint64_t done, double seconds, llvm::StringRef detail = {}) const;

private:
  void maybeDraw(uint64_t done, llvm::function_ref<std::string(double)> detail);
  void draw(uint64_t done);

  std::string what_, unit_;
  uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  uint64_t last_ = 0;
  std::string detail_;
  llvm::raw_ostream &os_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  std::chrono::milliseconds interval_{100};
};

} // namespace infracc
