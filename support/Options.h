// Command-line option categories and the options the driver owns that targets and
// passes also read. Options specific to one backend or pass live next to it, in one
// of these categories, so that `--help` groups them.
#pragma once

#include <llvm/Support/CommandLine.h>

#include <optional>
#include <string>

namespace infracc::opts {

llvm::cl::OptionCategory &generalCategory();     // inputs, -emit, -o, diagnostics
llvm::cl::OptionCategory &fabricCategory();      // blueprints, views of the fabric
llvm::cl::OptionCategory &passCategory();        // -passes and pass options
llvm::cl::OptionCategory &simCategory();         // built-in simulator and analyser
llvm::cl::OptionCategory &backendCategory();     // options of file-writing backends

/// The output path given with -o ("" when none, i.e. stdout for single-file targets).
const std::string &outputPath();
/// `-o <number>`: LogGOPSim's overhead o in ns for the simulator targets. A path that
/// is only digits would be ambiguous; write it as ./1500 to mean a file.
std::optional<double> numericOverhead();
/// -format=: the output format a target was asked for ("" = the target's default, or
/// what the -o file's extension implies).
std::string outputFormat();
/// -progress: show progress bars for long reads (only when stderr is a terminal).
bool showProgress();
/// -seed=: seed for everything random (placement, blueprints with randomness).
uint64_t seed();

} // namespace infracc::opts
