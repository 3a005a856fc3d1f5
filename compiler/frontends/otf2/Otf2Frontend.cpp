// OTF2 MPI traces (Score-P's, TraceR's, infracc's -emit=otf2) as a workload: the anchor
// file `<name>.otf2` (docs/scale-out.md, "Reading OTF2"). libotf2 reads the archive, in a
// worker process; its callbacks hand each record to the trace model (Otf2Trace.h), which
// says what the records make of a schedule.
#include "compiler/frontends/otf2/Otf2Trace.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Isolation.h"

#include <llvm/Support/MemoryBuffer.h>

#include <otf2/otf2.h>

#include <fmt/format.h>

#include <cstdarg>
#include <cstring>
#include <optional>

namespace infracc::otf2 {
namespace {

// Every callback is a record read, which is what the reading worker's watchdog counts.
TraceBuilder &progressed(void *userData) {
  noteChildProgress();
  return *static_cast<TraceBuilder *>(userData);
}
OTF2_CallbackCode carryOn(bool ok) { return ok ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT; }

OTF2_CallbackCode defLocation(void *userData, OTF2_LocationRef loc, OTF2_StringRef,
                              OTF2_LocationType, uint64_t, OTF2_LocationGroupRef) {
  progressed(userData).location(loc);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defClock(void *userData, uint64_t resolution, uint64_t, uint64_t, uint64_t) {
  progressed(userData).clock(resolution);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defGroup(void *userData, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm, OTF2_GroupFlag, uint32_t n, const uint64_t *members) {
  progressed(userData).group(
      self, type == OTF2_GROUP_TYPE_COMM_GROUP || type == OTF2_GROUP_TYPE_COMM_SELF,
      llvm::ArrayRef(members, n));
  return OTF2_CALLBACK_SUCCESS;
}
// Strings and regions are the bulk of a trace's global definitions; read only so the
// watchdog sees them go by.
OTF2_CallbackCode defString(void *userData, OTF2_StringRef, const char *) {
  progressed(userData);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defRegion(void *userData, OTF2_RegionRef, OTF2_StringRef, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                            OTF2_StringRef, uint32_t, uint32_t) {
  progressed(userData);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defComm(void *userData, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  progressed(userData).communicator(self, group);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode enter(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, OTF2_RegionRef) {
  progressed(userData).enter(time);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode leave(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, OTF2_RegionRef) {
  progressed(userData).leave(time);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode send(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                       OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                       uint64_t len) {
  return carryOn(progressed(userData).send(time, receiver, comm, tag, len));
}
OTF2_CallbackCode isend(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                        uint64_t len, uint64_t request) {
  return carryOn(progressed(userData).isend(time, receiver, comm, tag, len, request));
}
OTF2_CallbackCode isendDone(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                            OTF2_AttributeList *, uint64_t request) {
  return carryOn(progressed(userData).isendComplete(time, request));
}
OTF2_CallbackCode recv(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                       OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                       uint64_t len) {
  return carryOn(progressed(userData).recv(time, sender, comm, tag, len));
}
OTF2_CallbackCode irecvPosted(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                              OTF2_AttributeList *, uint64_t request) {
  progressed(userData).irecvRequest(time, request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode irecvDone(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                            OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm,
                            uint32_t tag, uint64_t len, uint64_t request) {
  return carryOn(progressed(userData).irecv(time, sender, comm, tag, len, request));
}
OTF2_CallbackCode collectiveEnd(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                                OTF2_AttributeList *, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                uint32_t root, uint64_t sent, uint64_t received) {
  return carryOn(progressed(userData).collectiveEnd(time, op, comm, root, sent, received));
}

OTF2_ErrorCode quiet(void *, const char *, uint64_t, const char *, OTF2_ErrorCode e,
                     const char *, va_list) {
  return e;
}

// The counts of an anchor file that OTF2 3.0.2 allocates by before it reads what they
// count (OTF2_AnchorFile_Load: calloc(2 * properties) pointers; found by the otf2 fuzz
// target, up to 32 GiB from one damaged word), checked against the bytes that must
// follow. The layout (OTF2_AnchorFile.c): a chunk header byte, the endianness byte, the
// magic string, the anchor format, trace format, version (3 bytes), chunk sizes (2 x 8),
// substrate, compression, locations and global definitions (2 x 8), machine, creator and
// description strings, then (format >= 2) the property count (4) and name/value strings.
// Nullopt when the counts fit or the file is not laid out so far (the library says why).
std::optional<std::string> damagedAnchor(llvm::StringRef b) {
  const bool little = b.size() > 1 && b[1] == 'B';   // OTF2_LITTLE_ENDIAN, as written here
  size_t pos = 2;
  auto string = [&]() {
    size_t end = b.find('\0', pos);
    if (end == llvm::StringRef::npos)
      return false;
    pos = end + 1;
    return true;
  };
  auto word = [&](unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) {
      uint64_t byte = uint8_t(b[pos + i]);
      v |= little ? byte << (8 * i) : byte << (8 * (bytes - 1 - i));
    }
    pos += bytes;
    return v;
  };
  if (b.size() < 2 || !string() || pos + 39 > b.size())
    return std::nullopt;
  const unsigned format = uint8_t(b[pos++]);
  pos += 1 + 3 + 16 + 2;
  const uint64_t locations = word(8), globalDefs = word(8);
  if (locations > globalDefs)
    return fmt::format("damaged anchor file: it announces {} locations but only {} global "
                       "definitions, one of which each location needs",
                       locations, globalDefs);
  if (format < 2 || !string() || !string() || !string() || pos + 4 > b.size())
    return std::nullopt;
  const uint64_t properties = word(4), left = b.size() - pos;
  if (2 * properties > left)
    return fmt::format("damaged anchor file: it announces {} properties, whose names and "
                       "values need at least {} bytes, but {} follow",
                       properties, 2 * properties, left);
  return std::nullopt;
}

// How long the reading worker may go without reading a byte or a record before it is
// taken for a hang: reading one chunk of a sound archive takes milliseconds. Under the
// fuzz targets' -timeout=10.
constexpr std::chrono::milliseconds StallLimit{5000};

// Reads the archive's definitions and events into `t`; the error message when it cannot.
std::optional<std::string> readArchive(const std::string &path, TraceBuilder &t) {
  OTF2_Reader *rd = OTF2_Reader_Open(path.c_str());
  if (!rd)
    return "not an OTF2 trace (its anchor file could not be read)";
  struct Close {
    OTF2_Reader *r;
    ~Close() { OTF2_Reader_Close(r); }
  } closer{rd};
  OTF2_Reader_SetSerialCollectiveCallbacks(rd);
  OTF2_GlobalDefReader *gd = OTF2_Reader_GetGlobalDefReader(rd);
  if (!gd)
    return "not an OTF2 trace (no global definitions)";
  OTF2_GlobalDefReaderCallbacks *gc = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gc, defLocation);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gc, defClock);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(gc, defGroup);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(gc, defComm);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gc, defString);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(gc, defRegion);
  OTF2_Reader_RegisterGlobalDefCallbacks(rd, gd, gc, &t);
  OTF2_GlobalDefReaderCallbacks_Delete(gc);
  uint64_t read = 0;
  if (OTF2_ErrorCode e = OTF2_Reader_ReadAllGlobalDefinitions(rd, gd, &read); e != OTF2_SUCCESS)
    return fmt::format("damaged OTF2 definitions: {}", OTF2_Error_GetDescription(e));
  if (std::optional<std::string> why = t.endDefinitions())
    return why;
  for (uint32_t r = 0; r < t.numRanks(); ++r)
    OTF2_Reader_SelectLocation(rd, t.locationOfRank(r));
  bool defs = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
  if (OTF2_ErrorCode e = OTF2_Reader_OpenEvtFiles(rd); e != OTF2_SUCCESS)
    return fmt::format("cannot open the event files: {}", OTF2_Error_GetDescription(e));
  for (uint32_t r = 0; r < t.numRanks(); ++r) {
    if (defs)
      if (OTF2_DefReader *d = OTF2_Reader_GetDefReader(rd, t.locationOfRank(r))) {
        uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(rd, d, &n);
        OTF2_Reader_CloseDefReader(rd, d);
      }
    OTF2_EvtReader *ev = OTF2_Reader_GetEvtReader(rd, t.locationOfRank(r));
    if (!ev)
      return fmt::format("no events for location {} (rank {})", t.locationOfRank(r), r);
    OTF2_EvtReaderCallbacks *ec = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(ec, enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(ec, leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(ec, send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(ec, isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(ec, isendDone);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(ec, recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(ec, irecvPosted);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(ec, irecvDone);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(ec, collectiveEnd);
    t.beginRank(r);
    OTF2_Reader_RegisterEvtCallbacks(rd, ev, ec, &t);
    OTF2_EvtReaderCallbacks_Delete(ec);
    uint64_t n = 0;
    OTF2_ErrorCode e = OTF2_Reader_ReadAllLocalEvents(rd, ev, &n);
    OTF2_Reader_CloseEvtReader(rd, ev);
    if (!t.error().empty())
      return t.error();
    if (e != OTF2_SUCCESS)
      return fmt::format("damaged events of rank {}: {}", r, OTF2_Error_GetDescription(e));
  }
  OTF2_Reader_CloseEvtFiles(rd);
  if (defs)
    OTF2_Reader_CloseDefFiles(rd);
  return std::nullopt;
}

// The worker's task: the archive whose anchor file is `path`, read and packed.
void readInWorker(llvm::StringRef path, llvm::raw_ostream &os) {
  OTF2_Error_RegisterCallback(quiet, nullptr);
  TraceBuilder t;
  if (std::optional<std::string> why = readArchive(path.str(), t))
    os << "E" << *why;
  else
    t.pack(os << "T");
}

llvm::Error load(InputContext &ctx) {
  OTF2_Error_RegisterCallback(quiet, nullptr);
  auto fail = [&](const std::string &msg) {
    ctx.diags.error(ctx.path, msg);
    return reportedError();
  };
  // Mapped, not copied: a hostile anchor file may be large.
  if (auto anchor = llvm::MemoryBuffer::getFile(ctx.path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false))
    if (std::optional<std::string> why = damagedAnchor((*anchor)->getBuffer()))
      return fail(*why);
  // Debian's libotf2 3.0.2 reads past its buffers on some damaged definitions (found by
  // fuzzing: OTF2_Buffer_ReadUint64 under OTF2_GlobalDefReader_ReadDefinitions, a
  // segmentation fault, and once a read loop that never ended). So the archive is read
  // in a worker process, which hands back what it read, and such an archive is an error
  // here, not the end or the hang of infracc (docs/reliability.md).
  ChildRun run = runInWorker(readInWorker, ctx.path, StallLimit);
  if (run.failure)
    switch (run.failure->kind) {
    case ChildFailure::Crashed:
      return fail(fmt::format(
          "damaged OTF2 archive: the OTF2 library crashed reading it ({})", run.failure->signal));
    case ChildFailure::Stalled:
      return fail(fmt::format("damaged OTF2 archive: the OTF2 library read nothing of it for "
                              "{} s and was stopped",
                              StallLimit.count() / 1000));
    case ChildFailure::Rereading:
      return fail("damaged OTF2 archive: the OTF2 library went round parsing the same data "
                  "again and was stopped");
    }
  std::string here;
  llvm::StringRef out;
  if (run.output) {
    out = run.output->getBuffer();
  } else {
    // No worker (fork refused, say): the worker's task here, unguarded, as a last resort.
    llvm::raw_string_ostream os(here);
    readInWorker(ctx.path, os);
    out = here;
  }
  if (out.consume_front("E"))
    return fail(out.str());
  std::optional<Schedule> schedule;
  if (!out.consume_front("T") || !(schedule = unpack(out)))
    return fail("internal error: the trace read in the worker process came back damaged");
  ctx.module.jobs.push_back({ctx.path, std::move(*schedule)});
  return llvm::Error::success();
}

RegisterInputFormat format({.name = "otf2",
                            .description = "OTF2 MPI trace (its .otf2 anchor file: Score-P, "
                                           "TraceR, -emit=otf2)",
                            .extensions = {".otf2"},
                            .role = InputRole::Workload,
                            .sniff = nullptr,
                            .load = load});

} // namespace
} // namespace infracc::otf2
