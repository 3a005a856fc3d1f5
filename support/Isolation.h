// Running code that may crash or hang on hostile input (a third-party parser) in a child
// process first, so that the crash or hang becomes an error message instead of ending
// or stopping infracc.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>

#include <chrono>
#include <optional>
#include <string>

namespace infracc {

/// Why a dry run failed.
struct DryRunFailure {
  enum Kind {
    Crashed,     // a signal ended it
    Stalled,     // it read no byte and no record for the stall limit
    Rereading,   // it called back with more records than it had read bytes
  } kind;
  std::string signal;   // Crashed: its description ("Segmentation fault")
};

/// Runs `f` in a forked child with the default actions for crash and interrupt signals,
/// and waits for it. The child is killed when infracc itself ends first (a killed infracc
/// leaves no orphan spinning) and when it stops making progress: `stallLimit` without
/// reading a byte or a record (a call of noteDryRunProgress()), or more records than
/// bytes read (every record is at least a byte, so it is parsing a stale buffer again).
/// Returns the failure, or nullopt when the child exited (whatever its status) or could
/// not be started. The child never returns to the caller and writes nothing back: `f` is
/// a dry run.
std::optional<DryRunFailure> dryRunInChild(llvm::function_ref<void()> f,
                                           std::chrono::milliseconds stallLimit);

/// Tells the dry run's watchdog that `f` has read one more record. Costs one relaxed
/// atomic increment; does nothing outside a dry run.
void noteDryRunProgress();

} // namespace infracc
