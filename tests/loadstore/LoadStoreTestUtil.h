// Helpers for the kernel-level tests: run infracc on a kernel level or a plan given as
// text, and locate a piece of that text as `line:col` for expected messages.
#pragma once

#include "tests/support/TestUtil.h"

#include <string>
#include <vector>

namespace infracc::test {

/// Writes `text` to a fresh file `name` and runs infracc on it with `args`.
RunResult runOnText(const std::string &name, const std::string &text,
                    const std::vector<std::string> &args);

/// "line:col" of the first occurrence of `needle` in `text` (after `after`, if given).
std::string at(const std::string &text, const std::string &needle, const std::string &after = "");

/// The diagnostics of stderr without their file name: "3:7: error: ...", one per
/// message (source and caret lines dropped).
std::vector<std::string> messages(const std::string &err);

/// A kernel level of two GPUs, one kernel each (1024-byte buffers), whose workgroup 0
/// on gpu 0 holds `ops0` (one op per line) and on gpu 1 `ops1`; `header` goes after
/// the `gpus` line (semaphores, multicast groups).
std::string twoGpuKernels(const std::string &header, const std::string &ops0,
                          const std::string &ops1 = "");

} // namespace infracc::test
