// What the records of an OTF2 MPI trace make of a schedule, record by record. The OTF2
// frontend's libotf2 callbacks call these; so does the otf2-records fuzz target, which
// feeds records straight from its bytes. The model is apart from libotf2's reader
// because that reader runs in a worker process (docs/reliability.md): what is
// infracc's own code here can be fuzzed millions of times without it.
#ifndef INFRACC_COMPILER_FRONTENDS_OTF2_OTF2TRACE_H
#define INFRACC_COMPILER_FRONTENDS_OTF2_OTF2TRACE_H

#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace infracc::otf2 {

/// Per rank the events become ops in program order:
///
///   time before an Enter    a calc of that many ns (time inside regions is not compute,
///                           as TraceR counts it)
///   MpiSend / MpiRecv       a send / recv the rest of the program waits for
///   MpiIsend                a send that starts here; MpiIsendComplete: later ops wait for it
///   MpiIrecvRequest         where a recv starts; MpiIrecv (its completion, with sender, tag
///                           and size): the recv, which later ops wait for
///   MpiCollectiveEnd        a collective (sizes read back as TraceR reads them)
///
/// Each op requires what finished before it in program order, so the schedule runs the
/// program the trace recorded. Location i (in definition order) is rank i, as TraceR
/// takes them. The event calls return false when the trace cannot be read on (error()
/// says why); the reader then stops.
class TraceBuilder {
public:
  TraceBuilder();
  ~TraceBuilder();
  TraceBuilder(const TraceBuilder &) = delete;
  TraceBuilder &operator=(const TraceBuilder &) = delete;

  // --- global definitions ---------------------------------------------------------------
  void location(uint64_t loc);
  void clock(uint64_t ticksPerSecond);
  /// A group; only communicator groups (`comm`: OTF2's COMM_GROUP and COMM_SELF) count.
  void group(uint32_t self, bool comm, llvm::ArrayRef<uint64_t> members);
  void communicator(uint32_t self, uint32_t group);
  /// The definitions are read: one rank per location. The message when there is none.
  std::optional<std::string> endDefinitions();
  uint32_t numRanks() const;
  uint64_t locationOfRank(uint32_t rank) const;

  // --- events of one rank -----------------------------------------------------------------
  void beginRank(uint32_t rank);
  void enter(uint64_t time);
  void leave(uint64_t time);
  bool send(uint64_t time, uint32_t receiver, uint32_t comm, uint32_t tag, uint64_t bytes);
  bool isend(uint64_t time, uint32_t receiver, uint32_t comm, uint32_t tag, uint64_t bytes,
             uint64_t request);
  bool isendComplete(uint64_t time, uint64_t request);
  bool recv(uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag, uint64_t bytes);
  void irecvRequest(uint64_t time, uint64_t request);
  bool irecv(uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag, uint64_t bytes,
             uint64_t request);
  /// `op` is OTF2's OTF2_CollectiveOp code.
  bool collectiveEnd(uint64_t time, uint8_t op, uint32_t comm, uint32_t root, uint64_t sent,
                     uint64_t received);
  const std::string &error() const;

  /// The ops as 32-bit words (what crosses from the reading worker to infracc).
  void pack(llvm::raw_ostream &os) const;

private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The schedule in pack()'s words; nullopt when they do not make one.
std::optional<Schedule> unpack(llvm::StringRef words);

} // namespace infracc::otf2

#endif
