#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <string>

namespace infracc {
/// Runs the infracc command line; returns the process exit status.
int runDriver(int argc, char **argv);
/// Runs one command line (without the program name) inside a process that runs many,
/// as the fuzz targets do: the options start again from their defaults each time.
int runDriverInProcess(llvm::ArrayRef<std::string> args);
} // namespace infracc
