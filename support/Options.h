// Command-line option categories and the options the driver owns that targets and
// passes also read. Options specific to one backend or pass live next to it, in one
// of these categories, so that `--help` groups them.
#pragma once

#include <llvm/Support/CommandLine.h>

#include <optional>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::opts {

llvm::cl::OptionCategory &generalCategory();     // inputs, -emit, -o, diagnostics
llvm::cl::OptionCategory &fabricCategory();      // blueprints, views of the fabric
llvm::cl::OptionCategory &passCategory();        // -passes and pass options
llvm::cl::OptionCategory &simCategory();         // built-in simulator and analyser
llvm::cl::OptionCategory &backendCategory();     // options of file-writing backends

/// The output path given with -o ("" when none, i.e. stdout for single-file targets).
const std::string &outputPath();
/// -lgs-compat: the command line is read with LogGOPSim's spellings (-o <number> is
/// the overhead, -b its batch mode, -f the input schedule).
bool lgsCompat();
/// With -lgs-compat, `-o <number>` is LogGOPSim's overhead o in ns (the last one
/// given); nullopt without -lgs-compat, where -o is always the output.
std::optional<double> numericOverhead();
/// With -lgs-compat: -b was given (LogGOPSim's batch mode).
bool lgsBatch();
/// With -lgs-compat: the inputs given with -f (LogGOPSim's schedule file).
const std::vector<std::string> &lgsInputs();
/// Checks -o and the LogGOPSim spellings: one output; -b and -f only with
/// -lgs-compat (usage errors). Warns about `-o <number>` without it (a file named
/// 1500 is rarely meant).
llvm::Error checkOutputAndCompatOptions(DiagEngine &diags);
/// -format=: the output format a target was asked for ("" = the target's default, or
/// what the -o file's extension implies).
std::string outputFormat();
/// -progress: show progress bars for long reads (only when stderr is a terminal).
bool showProgress();
/// -seed=: seed for everything random (placement, blueprints with randomness).
uint64_t seed();

} // namespace infracc::opts
