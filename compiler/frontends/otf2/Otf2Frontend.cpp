// OTF2 MPI traces (Score-P's, TraceR's, infracc's -emit=otf2) as a workload: the anchor
// file `<name>.otf2` (docs/scale-out.md, "Reading OTF2"). Location i is rank i, as TraceR
// takes them. Per rank the events become ops in program order:
//
//   time before an Enter    a calc of that many ns (time inside regions is not compute,
//                           as TraceR counts it)
//   MpiSend / MpiRecv       a send / recv the rest of the program waits for
//   MpiIsend                a send that starts here; MpiIsendComplete: later ops wait for it
//   MpiIrecvRequest         where a recv starts; MpiIrecv (its completion, with sender, tag
//                           and size): the recv, which later ops wait for
//   MpiCollectiveEnd        a collective (sizes read back as TraceR reads them)
//
// Each op requires what finished before it in program order, so the schedule runs the
// program the trace recorded.
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Isolation.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/MemoryBuffer.h>

#include <otf2/otf2.h>

#include <fmt/format.h>

#include <cstdarg>
#include <cstring>
#include <map>
#include <optional>

namespace infracc::otf2 {
namespace {

struct Op {
  Op(OpKind k, uint32_t p = 0, uint32_t t = 0, uint64_t s = 0) : kind(k), peer(p), tag(t), size(s) {}
  OpKind kind;
  uint32_t peer = 0, tag = 0;
  uint64_t size = 0;
  uint32_t collective = ~0u;
  std::vector<uint32_t> requires_;   // local indices
};

struct RankState {
  std::vector<Op> ops;
  std::vector<uint32_t> pending;     // ops the next op in program order waits for
  uint64_t lastTime = 0;
  bool started = false;
  std::map<uint64_t, uint32_t> isends;                   // request -> op
  std::map<uint64_t, std::vector<uint32_t>> irecvs;      // request -> pending when posted
};

struct Trace {
  uint64_t resolution = 1000000000;
  std::vector<uint64_t> locations;                        // definition order = rank
  llvm::DenseMap<uint64_t, uint32_t> rankOfLocation;
  std::map<uint32_t, std::vector<uint64_t>> groups;       // group -> members
  std::map<uint32_t, uint32_t> commGroup;                 // comm -> group
  std::vector<RankState> ranks;
  uint32_t current = 0;
  std::vector<CollectiveInfo> collectives;
  std::map<std::vector<uint32_t>, uint32_t> communicators;   // ranks -> index
  std::string error;
};

// `op` has finished: later ops wait for it, and no longer need what it waited for.
void finished(RankState &r, uint32_t op) {
  const auto &req = r.ops[op].requires_;
  llvm::erase_if(r.pending, [&](uint32_t p) {
    return std::find(req.begin(), req.end(), p) != req.end();
  });
  r.pending.push_back(op);
}

uint64_t toNs(const Trace &t, uint64_t ticks) {
  return uint64_t((unsigned __int128)ticks * 1000000000u / t.resolution);
}

uint32_t add(RankState &r, Op op, bool completes) {
  op.requires_ = r.pending;
  uint32_t i = uint32_t(r.ops.size());
  r.ops.push_back(std::move(op));
  if (completes)
    r.pending = {i};
  return i;
}

void computeUntil(Trace &t, uint64_t time) {
  RankState &r = t.ranks[t.current];
  if (r.started && time > r.lastTime)
    add(r, Op(OpKind::Calc, 0, 0, toNs(t, time - r.lastTime)), true);
  r.started = true;
  r.lastTime = time;
}

void seen(Trace &t, uint64_t time) {
  RankState &r = t.ranks[t.current];
  r.lastTime = std::max(r.lastTime, time);
}

// The rank of member `i` of communicator `comm`; ~0u and an error when unknown.
uint32_t memberRank(Trace &t, OTF2_CommRef comm, uint32_t i) {
  auto c = t.commGroup.find(comm);
  if (c == t.commGroup.end() || !t.groups.count(c->second) || i >= t.groups[c->second].size()) {
    if (t.error.empty())
      t.error = fmt::format("an event names member {} of communicator {}, which is not defined",
                            i, comm);
    return ~0u;
  }
  uint64_t m = t.groups[c->second][i];
  if (m >= t.ranks.size()) {
    if (t.error.empty())
      t.error = fmt::format("communicator {} has member {}, beyond the {} ranks", comm, m,
                            t.ranks.size());
    return ~0u;
  }
  return uint32_t(m);
}

// Every callback is a record read, which is what the dry run's watchdog counts.
template <class T> T *progressed(void *userData) {
  noteChildProgress();
  return static_cast<T *>(userData);
}
#define CB(T) progressed<T>(userData)

OTF2_CallbackCode defLocation(void *userData, OTF2_LocationRef loc, OTF2_StringRef,
                              OTF2_LocationType, uint64_t, OTF2_LocationGroupRef) {
  Trace *t = CB(Trace);
  t->rankOfLocation[loc] = uint32_t(t->locations.size());
  t->locations.push_back(loc);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defClock(void *userData, uint64_t resolution, uint64_t, uint64_t, uint64_t) {
  CB(Trace)->resolution = resolution ? resolution : 1;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defGroup(void *userData, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm, OTF2_GroupFlag, uint32_t n, const uint64_t *members) {
  if (type == OTF2_GROUP_TYPE_COMM_GROUP || type == OTF2_GROUP_TYPE_COMM_SELF)
    CB(Trace)->groups[self].assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}
// Strings and regions are the bulk of a trace's global definitions; read only so the
// dry run's watchdog sees them go by.
OTF2_CallbackCode defString(void *userData, OTF2_StringRef, const char *) {
  CB(Trace);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defRegion(void *userData, OTF2_RegionRef, OTF2_StringRef, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                            OTF2_StringRef, uint32_t, uint32_t) {
  CB(Trace);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode defComm(void *userData, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  CB(Trace)->commGroup[self] = group;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode enter(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, OTF2_RegionRef) {
  computeUntil(*CB(Trace), time);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode leave(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, OTF2_RegionRef) {
  seen(*CB(Trace), time);
  return OTF2_CALLBACK_SUCCESS;
}
// A send or recv of the current rank to or from member `member` of `comm`, waiting for
// what finished before it; `completes`: later ops wait for it. ~0u after an error.
uint32_t message(Trace &t, OTF2_TimeStamp time, OpKind kind, OTF2_CommRef comm, uint32_t member,
                 uint32_t tag, uint64_t len, bool completes) {
  seen(t, time);
  uint32_t peer = memberRank(t, comm, member);
  return peer == ~0u ? ~0u : add(t.ranks[t.current], Op(kind, peer, tag, len), completes);
}

OTF2_CallbackCode send(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                       OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                       uint64_t len) {
  return message(*CB(Trace), time, OpKind::Send, comm, receiver, tag, len, true) == ~0u
             ? OTF2_CALLBACK_INTERRUPT
             : OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode isend(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                        OTF2_AttributeList *, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                        uint64_t len, uint64_t request) {
  Trace &t = *CB(Trace);
  uint32_t op = message(t, time, OpKind::Send, comm, receiver, tag, len, false);
  if (op == ~0u)
    return OTF2_CALLBACK_INTERRUPT;
  t.ranks[t.current].isends[request] = op;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode isendDone(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                            OTF2_AttributeList *, uint64_t request) {
  Trace &t = *CB(Trace);
  seen(t, time);
  RankState &r = t.ranks[t.current];
  auto it = r.isends.find(request);
  if (it == r.isends.end()) {
    t.error = fmt::format("rank {}: MpiIsendComplete of request {}, which no MpiIsend opened",
                          t.current, request);
    return OTF2_CALLBACK_INTERRUPT;
  }
  finished(r, it->second);
  r.isends.erase(it);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode recv(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                       OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                       uint64_t len) {
  return message(*CB(Trace), time, OpKind::Recv, comm, sender, tag, len, true) == ~0u
             ? OTF2_CALLBACK_INTERRUPT
             : OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode irecvPosted(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                              OTF2_AttributeList *, uint64_t request) {
  Trace &t = *CB(Trace);
  seen(t, time);
  RankState &r = t.ranks[t.current];
  r.irecvs[request] = r.pending;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode irecvDone(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                            OTF2_AttributeList *, uint32_t sender, OTF2_CommRef comm,
                            uint32_t tag, uint64_t len, uint64_t request) {
  Trace &t = *CB(Trace);
  seen(t, time);
  uint32_t from = memberRank(t, comm, sender);
  if (from == ~0u)
    return OTF2_CALLBACK_INTERRUPT;
  RankState &r = t.ranks[t.current];
  auto it = r.irecvs.find(request);
  std::vector<uint32_t> after = it == r.irecvs.end() ? r.pending : it->second;
  if (it != r.irecvs.end())
    r.irecvs.erase(it);
  Op op(OpKind::Recv, from, tag, len);
  op.requires_ = after;
  uint32_t i = uint32_t(r.ops.size());
  r.ops.push_back(std::move(op));
  finished(r, i);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode collectiveEnd(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void *userData,
                                OTF2_AttributeList *, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                uint32_t root, uint64_t sent, uint64_t received) {
  Trace &t = *CB(Trace);
  seen(t, time);
  auto c = t.commGroup.find(comm);
  if (c == t.commGroup.end() || !t.groups.count(c->second)) {
    t.error = fmt::format("a collective on communicator {}, which is not defined", comm);
    return OTF2_CALLBACK_INTERRUPT;
  }
  const auto &members = t.groups[c->second];
  if (members.size() <= 1)
    return OTF2_CALLBACK_SUCCESS;   // MPI_COMM_SELF: nothing moves
  CollectiveInfo ci;
  const uint64_t n = members.size();
  switch (op) {
  case OTF2_COLLECTIVE_OP_ALLREDUCE: ci.kind = CollectiveKind::Allreduce; ci.bytes = sent / n; break;
  case OTF2_COLLECTIVE_OP_ALLTOALL: ci.kind = CollectiveKind::Alltoall; ci.bytes = sent / n; break;
  case OTF2_COLLECTIVE_OP_ALLGATHER: ci.kind = CollectiveKind::Allgather; ci.bytes = received / n; break;
  case OTF2_COLLECTIVE_OP_BCAST: ci.kind = CollectiveKind::Bcast; ci.bytes = received; break;
  case OTF2_COLLECTIVE_OP_REDUCE: ci.kind = CollectiveKind::Reduce; ci.bytes = sent; break;
  case OTF2_COLLECTIVE_OP_SCATTER: ci.kind = CollectiveKind::Scatter; ci.bytes = received; break;
  case OTF2_COLLECTIVE_OP_BARRIER: ci.kind = CollectiveKind::Barrier; break;
  default:
    t.error = fmt::format("rank {}: collective operation {} is not read (allreduce, alltoall, "
                          "allgather, bcast, reduce, scatter and barrier are)",
                          t.current, int(op));
    return OTF2_CALLBACK_INTERRUPT;
  }
  std::vector<uint32_t> ranks;
  for (uint64_t m : members) {
    if (m >= t.ranks.size()) {
      t.error = fmt::format("communicator {} has member {}, beyond the {} ranks", comm, m,
                            t.ranks.size());
      return OTF2_CALLBACK_INTERRUPT;
    }
    ranks.push_back(uint32_t(m));
  }
  auto [it, fresh] = t.communicators.try_emplace(ranks, uint32_t(t.communicators.size()));
  ci.communicator = it->second;
  ci.root = root < n ? root : 0;
  t.collectives.push_back(ci);
  Op o(OpKind::Collective);
  o.collective = uint32_t(t.collectives.size() - 1);
  o.size = ci.bytes;
  add(t.ranks[t.current], std::move(o), true);
  return OTF2_CALLBACK_SUCCESS;
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

// How long the reading child may go without reading a byte or a record before it is
// taken for a hang: reading one chunk of a sound archive takes milliseconds. Under the
// fuzz targets' -timeout=10.
constexpr std::chrono::milliseconds StallLimit{5000};

// Reads the archive's definitions and events into `t`; the error message when it cannot.
std::optional<std::string> readArchive(const std::string &path, Trace &t) {
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
  if (t.locations.empty())
    return "the trace defines no locations (ranks)";
  t.ranks.resize(t.locations.size());
  for (uint64_t loc : t.locations)
    OTF2_Reader_SelectLocation(rd, loc);
  bool defs = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
  if (OTF2_ErrorCode e = OTF2_Reader_OpenEvtFiles(rd); e != OTF2_SUCCESS)
    return fmt::format("cannot open the event files: {}", OTF2_Error_GetDescription(e));
  for (uint32_t r = 0; r < t.locations.size(); ++r) {
    if (defs)
      if (OTF2_DefReader *d = OTF2_Reader_GetDefReader(rd, t.locations[r])) {
        uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(rd, d, &n);
        OTF2_Reader_CloseDefReader(rd, d);
      }
    OTF2_EvtReader *ev = OTF2_Reader_GetEvtReader(rd, t.locations[r]);
    if (!ev)
      return fmt::format("no events for location {} (rank {})", t.locations[r], r);
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
    t.current = r;
    OTF2_Reader_RegisterEvtCallbacks(rd, ev, ec, &t);
    OTF2_EvtReaderCallbacks_Delete(ec);
    uint64_t n = 0;
    OTF2_ErrorCode e = OTF2_Reader_ReadAllLocalEvents(rd, ev, &n);
    OTF2_Reader_CloseEvtReader(rd, ev);
    if (!t.error.empty())
      return t.error;
    if (e != OTF2_SUCCESS)
      return fmt::format("damaged events of rank {}: {}", r, OTF2_Error_GetDescription(e));
  }
  OTF2_Reader_CloseEvtFiles(rd);
  if (defs)
    OTF2_Reader_CloseDefFiles(rd);
  return std::nullopt;
}

// What load() takes from a read trace, as 32-bit words: it crosses from the reading
// child to infracc, which builds the schedule straight from them. The number of ranks;
// the communicators (index, member count, members) in index order; the collectives
// (kind, communicator, root, bytes as two words); then per rank its op count and per op
// kind, peer, tag, size (two words), collective, the count of ops it requires and those.
void pack(const Trace &t, llvm::raw_ostream &os) {
  auto put = [&](uint32_t w) { os.write(reinterpret_cast<const char *>(&w), sizeof w); };
  auto put64 = [&](uint64_t w) {
    put(uint32_t(w));
    put(uint32_t(w >> 32));
  };
  put(uint32_t(t.ranks.size()));
  std::vector<std::pair<uint32_t, const std::vector<uint32_t> *>> comms;
  for (const auto &[ranks, index] : t.communicators)
    comms.emplace_back(index, &ranks);
  std::sort(comms.begin(), comms.end());
  put(uint32_t(comms.size()));
  for (const auto &[index, ranks] : comms) {
    put(index);
    put(uint32_t(ranks->size()));
    for (uint32_t r : *ranks)
      put(r);
  }
  put(uint32_t(t.collectives.size()));
  for (const CollectiveInfo &c : t.collectives) {
    put(uint32_t(c.kind));
    put(c.communicator);
    put(c.root);
    put64(c.bytes);
  }
  for (const RankState &r : t.ranks) {
    put(uint32_t(r.ops.size()));
    for (const Op &o : r.ops) {
      put(uint32_t(o.kind));
      put(o.peer);
      put(o.tag);
      put64(o.size);
      put(o.collective);
      put(uint32_t(o.requires_.size()));
      for (uint32_t p : o.requires_)
        put(p);
    }
  }
}

// The schedule in pack()'s words; nullopt when they do not make one.
std::optional<Schedule> unpack(llvm::StringRef bytes) {
  if (bytes.size() % sizeof(uint32_t))
    return std::nullopt;
  const uint64_t words = bytes.size() / sizeof(uint32_t);
  uint64_t at = 0;
  bool ok = true;
  // The next word, if it is at most `limit`; else `ok` turns false. Counts are at most
  // the words left, so nothing is sized beyond the input.
  auto next = [&](uint64_t limit = UINT32_MAX) -> uint32_t {
    uint32_t w = 0;
    if (at < words)
      memcpy(&w, bytes.data() + at * sizeof w, sizeof w);
    if (at >= words || w > limit) {
      ok = false;
      return 0;
    }
    ++at;
    return w;
  };
  auto next64 = [&] {
    uint64_t low = next();
    return low | uint64_t(next()) << 32;
  };
  const uint32_t numRanks = next(words);
  if (!ok)
    return std::nullopt;
  ScheduleBuilder b(numRanks);
  for (uint32_t n = next(words); ok && n > 0; --n) {
    Communicator c;
    c.id = next();
    c.ranks.resize(next(words - at));
    for (uint32_t &r : c.ranks)
      r = next(numRanks - 1);
    if (ok)
      b.addCommunicator(std::move(c));
  }
  std::vector<uint32_t> collectiveIndex;
  for (uint32_t n = next(words); ok && n > 0; --n) {
    CollectiveInfo ci;
    ci.kind = CollectiveKind(next(UINT8_MAX));
    ci.communicator = next();
    ci.root = next();
    ci.bytes = next64();
    if (ok)
      collectiveIndex.push_back(b.addCollective(ci));
  }
  for (uint32_t r = 0; ok && r < numRanks; ++r) {
    b.beginRank(r);
    const uint32_t numOps = next(words - at);
    const uint64_t first = at;
    // Two passes over the rank's words: its ops, then what each requires.
    for (uint32_t i = 0; ok && i < numOps; ++i) {
      const OpKind kind = OpKind(next(UINT8_MAX));
      const uint32_t peer = next();
      const uint32_t tag = next();
      const uint64_t size = next64();
      const uint32_t collective = next();
      at += next(words - at);
      if (kind == OpKind::Collective && collective >= collectiveIndex.size())
        ok = false;
      else if (kind == OpKind::Collective)
        b.addOp(OpKind::Collective, collectiveIndex[collective], size);
      else if (kind == OpKind::Send || kind == OpKind::Recv || kind == OpKind::Calc)
        b.addOp(kind, peer, size, tag);
      else
        ok = false;
    }
    at = first;
    for (uint32_t i = 0; ok && i < numOps; ++i) {
      at += 6;
      for (uint32_t n = next(words - at); ok && n > 0; --n)
        if (uint32_t p = next(); p < i)
          b.addDependency(i, p, DepKind::Requires);
        else
          ok = false;
    }
    b.endRank();
  }
  if (!ok || at != words)
    return std::nullopt;
  return b.finish();
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
  // in a child process, which hands back what it read, and such an archive is an error
  // here, not the end or the hang of infracc (docs/reliability.md).
  ChildRun run = runInChild(
      [&](llvm::raw_ostream &os) {
        Trace t;
        if (std::optional<std::string> why = readArchive(ctx.path, t))
          os << "E" << *why;
        else
          pack(t, os << "T");
      },
      StallLimit);
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
    // No child (fork refused, say): read here, unguarded, as a last resort.
    Trace t;
    if (std::optional<std::string> why = readArchive(ctx.path, t))
      return fail(*why);
    llvm::raw_string_ostream os(here);
    pack(t, os << "T");
    out = here;
  }
  if (out.consume_front("E"))
    return fail(out.str());
  std::optional<Schedule> schedule;
  if (!out.consume_front("T") || !(schedule = unpack(out)))
    return fail("internal error: the trace read in the child process came back damaged");
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
