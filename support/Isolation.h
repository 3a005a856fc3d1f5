// Running code that may crash on hostile input (a third-party parser) in a child process
// first, so that the crash becomes an error message instead of ending infracc.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>

#include <optional>
#include <string>

namespace infracc {

/// Runs `f` in a forked child with the default actions for crash signals and waits for
/// it. Returns the description of the signal that ended the child ("Segmentation
/// fault"), or nullopt when it exited (whatever its status) or could not be started.
/// The child never returns to the caller and writes nothing back: `f` is a dry run.
std::optional<std::string> crashInChild(llvm::function_ref<void()> f);

} // namespace infracc
