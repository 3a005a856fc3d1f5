// Block-I/O traces in the SPC format of the UMass Trace Repository (the Storage
// Performance Council's trace specification, e.g. the Financial and WebSearch traces):
// one request per line, `ASU,LBA,Size,Opcode,Timestamp[,more fields]` — application
// storage unit, logical block address (in sectors), size in bytes, R or W (either case),
// seconds since the trace began.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace infracc {

class DiagEngine;

struct IoRequest {
  uint32_t asu;
  uint64_t lba;        // in sectors
  uint64_t bytes;
  bool write;
  uint64_t timeNs;     // since the trace began
  llvm::SMLoc line;    // for messages about the request
};

/// The requests of `text` in file order; nullopt after a located error.
std::optional<std::vector<IoRequest>> readSpcTrace(llvm::StringRef text, DiagEngine &diags);

/// How sure the content `head` is an SPC trace (0..100): a first line of five or more
/// comma-separated fields, the fourth R or W.
int sniffSpc(llvm::StringRef head);

} // namespace infracc
