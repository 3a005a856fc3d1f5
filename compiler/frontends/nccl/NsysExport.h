// What the NCCL frontend needs from one Nsight Systems report exported to SQLite
// (`nsys export --type sqlite`): the host it was recorded on, the NVTX strings the
// annotated NCCL emits, and the NCCL kernels CUPTI timed. Read with libsqlite3,
// read-only; a file that is not such an export gets a message naming what is missing.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc::nccl {

struct NvtxEvent {
  int64_t start = 0, end = 0;   // ns; a mark has end == start
  uint64_t row = 0;             // NVTX_EVENTS rowid, for messages
  std::string text;
};

struct KernelEvent {
  int64_t start = 0, end = 0;   // ns, GPU clock as nsys reports it
  uint32_t pid = 0;             // the process that launched it
  uint32_t device = 0;          // CUDA device index on its host
};

struct NsysExport {
  std::string path;
  std::string host;             // TARGET_INFO_SYSTEM_ENV 'Hostname'; empty if absent
  std::vector<NvtxEvent> nvtx;  // ordered by start time (then row)
  std::vector<KernelEvent> kernels;   // NCCL kernels only, ordered by start time
};

/// True if `head` (a file's first bytes) is an SQLite database.
bool isSqliteHeader(llvm::StringRef head);

/// Reads `path`. Errors carry the file name and say what is missing or broken.
llvm::Expected<NsysExport> readNsysExport(const std::string &path);

} // namespace infracc::nccl
