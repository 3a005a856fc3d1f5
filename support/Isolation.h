// Running code that may crash or hang on hostile input (a third-party parser) in a
// separate process, so that the crash or hang becomes an error message instead of ending
// or stopping infracc; what the code read comes back as bytes.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace infracc {

/// Why a run in the worker failed.
struct ChildFailure {
  enum Kind {
    Crashed,     // a signal ended it
    Stalled,     // it read no byte and no record for the stall limit
    Rereading,   // more records than bytes read, or read calls that return nothing
  } kind;
  std::string signal;   // Crashed: its description ("Segmentation fault")
};

/// What came of running a task in the worker.
struct ChildRun {
  std::optional<ChildFailure> failure;
  /// What the task wrote, mapped, when the worker got to hand it back. Neither this nor
  /// a failure: the worker could not be started or ended without it (the task called
  /// exit itself, or the bytes could not be stored); the caller runs the task here.
  std::unique_ptr<llvm::MemoryBuffer> output;
};

/// What a worker does with one request: reads what `request` names and writes what it
/// read to `os`. A plain function, because the worker is forked before the requests it
/// serves exist: all that reaches it of a request is its bytes.
using WorkerTask = void (*)(llvm::StringRef request, llvm::raw_ostream &os);

/// Runs `task` on `request` in a worker process and waits for it. The worker is forked
/// at the first request for `task` and kept for the next ones (a hundred at most, so
/// that what a library leaks per request stays bounded), which spares a fork of infracc
/// per request: in a process that reads many inputs (the fuzz targets) the fork was most
/// of the cost. It runs with the default actions for crash and interrupt signals; it is
/// killed when infracc itself ends (a killed infracc leaves no orphan spinning) and when
/// a request stops making progress: `stallLimit` without reading a byte or a record (a
/// call of noteChildProgress()), more records than bytes read (every record is at
/// least a byte, so it is parsing a stale buffer again), or a thousand read calls more
/// than bytes read between two looks 20 ms apart (it is reading the end of a file over
/// and over). A worker that crashed or was
/// stopped is gone; the next request gets a new one. Nothing of the worker's state comes
/// back but the bytes the task writes (to an anonymous file, so they may be far more
/// than a pipe holds). Requests are at most 64 KiB (a path and a few options).
ChildRun runInWorker(WorkerTask task, llvm::StringRef request,
                     std::chrono::milliseconds stallLimit);

/// Tells the worker's watchdog that the task has read one more record. Costs one relaxed
/// atomic increment; does nothing outside a worker.
void noteChildProgress();

} // namespace infracc
