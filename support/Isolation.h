// Running code that may crash or hang on hostile input (a third-party parser) in a child
// process, so that the crash or hang becomes an error message instead of ending or
// stopping infracc; what the code read comes back as bytes.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace infracc {

/// Why a run in a child failed.
struct ChildFailure {
  enum Kind {
    Crashed,     // a signal ended it
    Stalled,     // it read no byte and no record for the stall limit
    Rereading,   // it called back with more records than it had read bytes
  } kind;
  std::string signal;   // Crashed: its description ("Segmentation fault")
};

/// What came of running `f` in a child.
struct ChildRun {
  std::optional<ChildFailure> failure;
  /// What `f` wrote, mapped, when the child got to hand it back. Neither this nor a
  /// failure: the child could not be started or ended without it (it called exit itself,
  /// or the bytes could not be stored); the caller runs `f` here instead.
  std::unique_ptr<llvm::MemoryBuffer> output;
};

/// Runs `f` in a forked child with the default actions for crash and interrupt signals,
/// and waits for it. The child is killed when infracc itself ends first (a killed infracc
/// leaves no orphan spinning) and when it stops making progress: `stallLimit` without
/// reading a byte or a record (a call of noteChildProgress()), or more records than
/// bytes read (every record is at least a byte, so it is parsing a stale buffer again).
/// Nothing of the child's state comes back but the bytes `f` writes to its stream (an
/// anonymous file, so they may be far more than a pipe holds).
ChildRun runInChild(llvm::function_ref<void(llvm::raw_ostream &)> f,
                    std::chrono::milliseconds stallLimit);

/// Tells the child's watchdog that `f` has read one more record. Costs one relaxed
/// atomic increment; does nothing outside runInChild.
void noteChildProgress();

} // namespace infracc
