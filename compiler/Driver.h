#pragma once

namespace infracc {
/// Runs the infracc command line; returns the process exit status.
int runDriver(int argc, char **argv);
} // namespace infracc
