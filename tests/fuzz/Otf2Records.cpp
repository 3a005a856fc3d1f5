// The otf2-records fuzz target's input format (fuzz binary only): OTF2 records written
// straight as bytes, handed to the OTF2 frontend's trace model (compiler/frontends/otf2/
// Otf2Trace.h) as libotf2's callbacks hand them, then packed, unpacked and run as the
// frontend runs them. The otf2 target feeds whole archives through libotf2, a process per
// archive (tens of executions per second); this one fuzzes infracc's own part of reading
// OTF2 at the speed of the other targets. docs/reliability.md.
//
// A record is a letter and its fields, little-endian: u8 (b), u16 (w), u64 (q).
//   definitions   L loc:q   K ticks_per_second:q   G self:w comm:b n:b members:n*q
//                 M comm:w group:w   D (end of definitions; the first event ends them too)
//   events        R (the next rank's events begin; the first R is rank 0)
//                 e time:q (Enter)   x time:q (Leave)
//                 s time:q receiver:w comm:w tag:w bytes:q (MpiSend)
//                 i time:q receiver:w comm:w tag:w bytes:q request:w (MpiIsend)
//                 I time:q request:w (MpiIsendComplete)
//                 r time:q sender:w comm:w tag:w bytes:q (MpiRecv)
//                 p time:q request:w (MpiIrecvRequest)
//                 q time:q sender:w comm:w tag:w bytes:q request:w (MpiIrecv)
//                 c time:q op:b comm:w root:w sent:q received:q (MpiCollectiveEnd)
#include "compiler/frontends/otf2/Otf2Trace.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"

#include <llvm/Support/DataExtractor.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>

#include <cstdlib>

namespace infracc::otf2 {
namespace {

// The fields of the records in order (llvm::DataExtractor, little-endian). A read past
// the end gives 0 and leaves the cursor in error, which the record's check then sees.
struct RecordReader {
  explicit RecordReader(llvm::StringRef bytes) : data(bytes, /*IsLittleEndian=*/true, 8) {}
  uint8_t b() { return data.getU8(at); }
  uint16_t w() { return data.getU16(at); }
  uint64_t q() { return data.getU64(at); }
  /// False after a read past the end (the error is consumed).
  bool whole() {
    if (at)
      return true;
    llvm::consumeError(at.takeError());
    return false;
  }
  llvm::DataExtractor data;
  llvm::DataExtractor::Cursor at{0};
};

// The message when the records do not make a trace; the builder holds it otherwise.
std::optional<std::string> replay(llvm::StringRef bytes, TraceBuilder &t) {
  RecordReader in(bytes);
  bool defined = false;
  int64_t rank = -1;
  while (!in.data.eof(in.at)) {
    const uint64_t at = in.at.tell();
    const char letter = char(in.b());
    const bool event = llvm::StringRef("RexsiIrpqc").contains(letter);
    if (event && !defined) {
      if (std::optional<std::string> why = t.endDefinitions())
        return why;
      defined = true;
    }
    if (event && letter != 'R' && rank < 0)
      return fmt::format("offset {}: an event before the first rank's R", at);
    bool carryOn = true;
    switch (letter) {
    case 'L': t.location(in.q()); break;
    case 'K': t.clock(in.q()); break;
    case 'G': {
      uint32_t self = in.w();
      bool comm = in.b() != 0;
      std::vector<uint64_t> members(in.b());
      for (uint64_t &m : members)
        m = in.q();
      t.group(self, comm, members);
      break;
    }
    case 'M': {
      uint32_t self = in.w();
      t.communicator(self, in.w());
      break;
    }
    case 'D':
      if (defined)
        return fmt::format("offset {}: D after the definitions ended", at);
      if (std::optional<std::string> why = t.endDefinitions())
        return why;
      defined = true;
      break;
    case 'R':
      if (++rank >= int64_t(t.numRanks()))
        return fmt::format("offset {}: events of rank {}, but the trace has {} locations", at,
                           rank, t.numRanks());
      t.beginRank(uint32_t(rank));
      break;
    case 'e': t.enter(in.q()); break;
    case 'x': t.leave(in.q()); break;
    case 's': case 'r': case 'i': case 'q': {
      uint64_t time = in.q();
      uint32_t peer = in.w(), comm = in.w(), tag = in.w();
      uint64_t bytes = in.q();
      if (letter == 's')
        carryOn = t.send(time, peer, comm, tag, bytes);
      else if (letter == 'r')
        carryOn = t.recv(time, peer, comm, tag, bytes);
      else if (letter == 'i')
        carryOn = t.isend(time, peer, comm, tag, bytes, in.w());
      else
        carryOn = t.irecv(time, peer, comm, tag, bytes, in.w());
      break;
    }
    case 'I': {
      uint64_t time = in.q();
      carryOn = t.isendComplete(time, in.w());
      break;
    }
    case 'p': {
      uint64_t time = in.q();
      t.irecvRequest(time, in.w());
      break;
    }
    case 'c': {
      uint64_t time = in.q();
      uint8_t op = in.b();
      uint32_t comm = in.w(), root = in.w();
      uint64_t sent = in.q();
      carryOn = t.collectiveEnd(time, op, comm, root, sent, in.q());
      break;
    }
    default:
      return fmt::format("offset {}: unknown record '{}'", at, letter);
    }
    if (!in.whole())
      return fmt::format("offset {}: the record '{}' is cut short", at, letter);
    if (!carryOn)
      return t.error();
  }
  if (!defined)
    return t.endDefinitions();
  return std::nullopt;
}

llvm::Error load(InputContext &ctx) {
  auto fail = [&](const std::string &msg) {
    ctx.diags.error(ctx.path, msg);
    return reportedError();
  };
  auto file = llvm::MemoryBuffer::getFile(ctx.path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(file.getError().message());
  TraceBuilder t;
  if (std::optional<std::string> why = replay((*file)->getBuffer(), t))
    return fail(*why);
  std::string words;
  llvm::raw_string_ostream os(words);
  t.pack(os);
  // What pack() writes, unpack() must read back: a failure here is a finding.
  std::optional<Schedule> schedule = unpack(words);
  if (!schedule) {
    llvm::errs() << "otf2-records: the trace's packed words do not unpack\n";
    std::abort();
  }
  ctx.module.jobs.push_back({ctx.path, std::move(*schedule)});
  return llvm::Error::success();
}

RegisterInputFormat format({.name = "otf2-records",
                            .description = "OTF2 records as bytes (the otf2-records fuzz target)",
                            .extensions = {".otf2rec"},
                            .role = InputRole::Workload,
                            .sniff = nullptr,
                            .load = load});

} // namespace
} // namespace infracc::otf2
