#include "backends/tracer/Otf2Writer.h"

#include "backends/tracer/MpiProgram.h"
#include "ir/MessageMatching.h"
#include "support/Diagnostics.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <otf2/otf2.h>

#include <fmt/format.h>

#include <map>

namespace infracc::tracer {
namespace {

OTF2_FlushType preFlush(void *, OTF2_FileType, OTF2_LocationRef, void *, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp postFlush(void *, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks FlushCallbacks = {preFlush, postFlush};

// What TraceR replays, and the OTF2 sizes it reads back (its otf2_reader.C):
// allreduce size = sizeSent / ranks, alltoall(v) sizeSent / ranks, allgather
// sizeReceived / ranks, bcast sizeReceived, reduce sizeSent, scatter sizeReceived.
struct CollOp {
  OTF2_CollectiveOp op;
  const char *region;
  OTF2_RegionRole role;
};
std::optional<CollOp> collOp(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::Allreduce: return CollOp{OTF2_COLLECTIVE_OP_ALLREDUCE, "MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL};
  case CollectiveKind::Allgather: return CollOp{OTF2_COLLECTIVE_OP_ALLGATHER, "MPI_Allgather", OTF2_REGION_ROLE_COLL_ALL2ALL};
  case CollectiveKind::Alltoall: return CollOp{OTF2_COLLECTIVE_OP_ALLTOALL, "MPI_Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL};
  case CollectiveKind::Alltoallv: return CollOp{OTF2_COLLECTIVE_OP_ALLTOALLV, "MPI_Alltoallv", OTF2_REGION_ROLE_COLL_ALL2ALL};
  case CollectiveKind::Bcast: return CollOp{OTF2_COLLECTIVE_OP_BCAST, "MPI_Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL};
  case CollectiveKind::Reduce: return CollOp{OTF2_COLLECTIVE_OP_REDUCE, "MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE};
  case CollectiveKind::Scatter: return CollOp{OTF2_COLLECTIVE_OP_SCATTER, "MPI_Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL};
  case CollectiveKind::Barrier: return CollOp{OTF2_COLLECTIVE_OP_BARRIER, "MPI_Barrier", OTF2_REGION_ROLE_BARRIER};
  default: return std::nullopt;   // reduce-scatter, gather: TraceR has no replay for them
  }
}

class Definitions {
public:
  OTF2_StringRef string(const std::string &s) {
    auto [it, fresh] = strings_.try_emplace(s, uint32_t(strings_.size()));
    return it->second;
  }
  OTF2_RegionRef region(const std::string &name, OTF2_RegionRole role) {
    auto [it, fresh] = regions_.try_emplace(name, std::pair(uint32_t(regions_.size()), role));
    string(name);
    return it->second.first;
  }
  void write(OTF2_GlobalDefWriter *w) {
    std::vector<std::pair<uint32_t, std::string>> s;
    for (auto &[k, v] : strings_)
      s.push_back({v, k});
    std::sort(s.begin(), s.end());
    for (auto &[ref, str] : s)
      OTF2_GlobalDefWriter_WriteString(w, ref, str.c_str());
    std::vector<std::tuple<uint32_t, std::string, OTF2_RegionRole>> r;
    for (auto &[k, v] : regions_)
      r.push_back({v.first, k, v.second});
    std::sort(r.begin(), r.end());
    for (auto &[ref, name, role] : r)
      OTF2_GlobalDefWriter_WriteRegion(w, ref, strings_[name], strings_[name], string(""),
                                       role,
                                       name.rfind("MPI_", 0) == 0 ? OTF2_PARADIGM_MPI
                                                                  : OTF2_PARADIGM_USER,
                                       OTF2_REGION_FLAG_NONE, string(""), 0, 0);
  }

private:
  std::map<std::string, uint32_t> strings_;
  std::map<std::string, std::pair<uint32_t, OTF2_RegionRole>> regions_;
};

llvm::Error otf2Failed(OTF2_ErrorCode e, const char *what) {
  return inputError(fmt::format("OTF2: {} failed: {}", what, OTF2_Error_GetDescription(e)));
}

} // namespace

llvm::Expected<Otf2Stats> writeOtf2(const Schedule &s, OutputManager &out, const std::string &dir,
                                    const std::string &name, DiagEngine &diags,
                                    llvm::StringRef where, llvm::ArrayRef<uint32_t> job) {
  // The trace's ranks: the job's (local rank i = global rank job[i]), or all.
  std::vector<uint32_t> globalOf;
  if (job.empty())
    for (uint32_t r = 0; r < s.numRanks(); ++r)
      globalOf.push_back(r);
  else
    globalOf.assign(job.begin(), job.end());
  const uint32_t P = uint32_t(globalOf.size());
  std::vector<uint32_t> localOf(s.numRanks(), ~0u);
  for (uint32_t i = 0; i < P; ++i)
    localOf[globalOf[i]] = i;
  std::vector<uint32_t> partner = matchMessages(s);
  // Check what the trace cannot say before writing anything.
  for (uint32_t gr : globalOf)
    for (uint32_t g = s.rankBegin(gr); g < s.rankBegin(gr) + s.numOps(gr); ++g) {
    OpKind k = s.kind(uint32_t(g));
    if ((k == OpKind::Send || k == OpKind::Recv) && s.peer(g) != AnySource &&
        (s.peer(g) >= s.numRanks() || localOf[s.peer(g)] == ~0u)) {
      diags.error(where, fmt::format("rank {} exchanges messages with rank {} of another job: "
                                     "a trace holds one job",
                                     gr, s.peer(g)));
      return reportedError();
    }
    if (k == OpKind::Recv && (s.peer(uint32_t(g)) == AnySource || s.tag(uint32_t(g)) == AnyTag) &&
        partner[g] == NoPartner) {
      diags.error(where, fmt::format("rank {}: a receive from any source or with any tag that "
                                     "no send matches: an MPI trace records its sender",
                                     s.rankOf(uint32_t(g))));
      return reportedError();
    }
    if (k == OpKind::Collective && !collOp(s.collectives()[s.peer(uint32_t(g))].kind)) {
      diags.error(where, fmt::format("rank {}: TraceR does not replay {}; lower it with "
                                     "-passes=lower-collectives",
                                     s.rankOf(uint32_t(g)),
                                     collectiveKindName(s.collectives()[s.peer(uint32_t(g))].kind).str()));
      return reportedError();
    }
    if (!isGoalCoreKind(k) && k != OpKind::Collective) {
      diags.error(where, fmt::format("a {} op: lower it first (-passes={})",
                                     opKindName(k).str(), loweringPassFor(k).str()));
      return reportedError();
    }
  }

  // OTF2 writes files itself: into a scratch directory, then through `out` so the
  // output stays whole or absent.
  llvm::SmallString<128> scratch;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("infracc-otf2", scratch))
    return inputError("cannot make a scratch directory: " + ec.message());
  struct Cleanup {
    std::string dir;
    ~Cleanup() { llvm::sys::fs::remove_directories(dir); }
  } cleanup{scratch.str().str()};

  OTF2_Archive *ar = OTF2_Archive_Open(scratch.c_str(), name.c_str(), OTF2_FILEMODE_WRITE,
                                       1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                       OTF2_COMPRESSION_NONE);
  if (!ar)
    return inputError("OTF2: cannot open an archive");
  OTF2_Archive_SetFlushCallbacks(ar, &FlushCallbacks, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_Archive_SetDescription(ar, "written by infracc");
  OTF2_Archive_SetCreator(ar, "infracc");
  if (OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(ar); e != OTF2_SUCCESS)
    return otf2Failed(e, "opening the event files");

  Definitions defs;
  const OTF2_RegionRef init = defs.region("MPI_Init", OTF2_REGION_ROLE_FUNCTION),
                       fin = defs.region("MPI_Finalize", OTF2_REGION_ROLE_FUNCTION),
                       isend = defs.region("MPI_Isend", OTF2_REGION_ROLE_POINT2POINT),
                       irecv = defs.region("MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT),
                       waitR = defs.region("MPI_Wait", OTF2_REGION_ROLE_POINT2POINT);
  // Communicator refs: 0 = MPI_COMM_WORLD (also for the schedule's communicators of all
  // ranks in order), then one per other communicator, dense as TraceR indexes them.
  std::vector<uint32_t> commRef(s.communicators().size(), 0);
  std::vector<uint32_t> ownComms;   // schedule communicators with a ref of their own
  for (size_t c = 0; c < s.communicators().size(); ++c) {
    const auto &ranks = s.communicators()[c].ranks;
    if (ranks.empty() || localOf[ranks[0]] == ~0u)
      continue;   // another job's
    bool world = ranks.size() == P;
    for (uint32_t i = 0; i < ranks.size() && world; ++i)
      world = localOf[ranks[i]] == i;
    if (!world) {
      ownComms.push_back(uint32_t(c));
      commRef[c] = uint32_t(ownComms.size());
    }
  }
  Otf2Stats st;
  std::vector<uint64_t> events(P, 0);
  uint64_t lastTime = 0;
  for (uint32_t r = 0; r < P; ++r) {
    const uint32_t gr = globalOf[r];
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, r);
    if (!w)
      return inputError("OTF2: no event writer");
    uint64_t t = 0, n = 0;
    auto enter = [&](OTF2_RegionRef reg) { OTF2_EvtWriter_Enter(w, nullptr, t, reg); ++n; };
    auto leave = [&](OTF2_RegionRef reg) { OTF2_EvtWriter_Leave(w, nullptr, t, reg); ++n; };
    enter(init);
    leave(init);
    for (MpiCall c : mpiProgram(s, gr, partner)) {
      const uint32_t g = s.globalIndex(gr, c.op);
      if (c.kind == MpiCall::Isend || c.kind == MpiCall::Irecv || c.kind == MpiCall::WaitRecv)
        c.peer = localOf[c.peer];
      if (s.cpu(g) != 0)
        ++st.serializedOps;
      switch (c.kind) {
      case MpiCall::Compute: t += c.size; break;
      case MpiCall::Isend:
        enter(isend);
        OTF2_EvtWriter_MpiIsend(w, nullptr, t, c.peer, 0, c.tag, c.size, c.op);
        ++n;
        leave(isend);
        break;
      case MpiCall::Irecv:
        enter(irecv);
        OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, c.op);
        ++n;
        leave(irecv);
        break;
      case MpiCall::WaitSend:
        enter(waitR);
        OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, c.op);
        ++n;
        leave(waitR);
        break;
      case MpiCall::WaitRecv:
        enter(waitR);
        OTF2_EvtWriter_MpiIrecv(w, nullptr, t, c.peer, 0, c.tag, c.size, c.op);
        ++n;
        leave(waitR);
        break;
      case MpiCall::Collective: {
        const CollectiveInfo &ci = s.collectives()[s.peer(g)];
        CollOp op = *collOp(ci.kind);
        const uint64_t members = s.communicators()[ci.communicator].ranks.size();
        uint64_t sent = 0, received = 0;
        switch (ci.kind) {
        case CollectiveKind::Allreduce: sent = received = ci.bytes * members; break;
        case CollectiveKind::Allgather: sent = ci.bytes; received = ci.bytes * members; break;
        case CollectiveKind::Alltoall: sent = received = ci.bytes * members; break;
        case CollectiveKind::Alltoallv:
          for (uint64_t v : s.vsizes().slice(ci.vsizesBegin, ci.vsizesCount))
            sent += v;
          received = sent;
          break;
        case CollectiveKind::Bcast: sent = received = ci.bytes; break;
        case CollectiveKind::Reduce: sent = received = ci.bytes; break;
        case CollectiveKind::Scatter: sent = ci.bytes * members; received = ci.bytes; break;
        default: break;
        }
        OTF2_RegionRef reg = defs.region(op.region, op.role);
        enter(reg);
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, op.op, commRef[ci.communicator], ci.root,
                                        sent, received);
        n += 2;
        leave(reg);
        break;
      }
      }
    }
    enter(fin);
    leave(fin);
    events[r] = n;
    lastTime = std::max(lastTime, t);
    OTF2_Archive_CloseEvtWriter(ar, w);
  }
  OTF2_Archive_CloseEvtFiles(ar);
  // Local definition files, empty, as Score-P leaves them (readers open them).
  OTF2_Archive_OpenDefFiles(ar);
  for (uint32_t r = 0; r < P; ++r)
    if (OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, r))
      OTF2_Archive_CloseDefWriter(ar, dw);
  OTF2_Archive_CloseDefFiles(ar);

  OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
  OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000, 0, lastTime + 1, OTF2_UNDEFINED_TIMESTAMP);
  const OTF2_StringRef world = defs.string("MPI_COMM_WORLD"), machine = defs.string("machine"),
                       node = defs.string("node");
  std::vector<OTF2_StringRef> rankNames(P), threadNames(P);
  for (uint32_t r = 0; r < P; ++r) {
    rankNames[r] = defs.string(fmt::format("MPI Rank {}", r));
    threadNames[r] = defs.string("Master thread");
  }
  std::vector<OTF2_StringRef> commNames;
  for (uint32_t c : ownComms)
    commNames.push_back(defs.string(fmt::format("communicator {}", s.communicators()[c].id)));
  defs.write(gw);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, machine, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (uint32_t r = 0; r < P; ++r)
    OTF2_GlobalDefWriter_WriteLocationGroup(gw, r, rankNames[r], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                            0, OTF2_UNDEFINED_LOCATION_GROUP);
  for (uint32_t r = 0; r < P; ++r)
    OTF2_GlobalDefWriter_WriteLocation(gw, r, threadNames[r], OTF2_LOCATION_TYPE_CPU_THREAD,
                                       events[r], r);
  // Groups: 0 the locations (MPI ranks), 1 MPI_COMM_WORLD's, then one per communicator.
  std::vector<uint64_t> all(P);
  for (uint32_t r = 0; r < P; ++r)
    all[r] = r;
  OTF2_GlobalDefWriter_WriteGroup(gw, 0, defs.string(""), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                  OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P, all.data());
  OTF2_GlobalDefWriter_WriteGroup(gw, 1, world, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, P, all.data());
  OTF2_GlobalDefWriter_WriteComm(gw, 0, world, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  for (size_t k = 0; k < ownComms.size(); ++k) {
    std::vector<uint64_t> members;
    for (uint32_t m : s.communicators()[ownComms[k]].ranks)
      members.push_back(localOf[m]);
    OTF2_GlobalDefWriter_WriteGroup(gw, uint32_t(k + 2), commNames[k], OTF2_GROUP_TYPE_COMM_GROUP,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    uint32_t(members.size()), members.data());
    OTF2_GlobalDefWriter_WriteComm(gw, uint32_t(k + 1), commNames[k], uint32_t(k + 2), 0,
                                   OTF2_COMM_FLAG_NONE);
  }
  if (OTF2_ErrorCode e = OTF2_Archive_Close(ar); e != OTF2_SUCCESS)
    return otf2Failed(e, "closing the archive");

  // Everything the archive holds, into the output.
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(scratch, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (it->type() != llvm::sys::fs::file_type::regular_file)
      continue;
    llvm::StringRef rel = llvm::StringRef(it->path()).drop_front(scratch.size() + 1);
    auto buf = llvm::MemoryBuffer::getFile(it->path(), false, false);
    if (!buf)
      return inputError("cannot read back " + it->path());
    auto os = out.file(dir.empty() ? rel.str() : dir + "/" + rel.str());
    if (!os)
      return os.takeError();
    *os << (*buf)->getBuffer();
  }
  if (ec)
    return inputError("cannot list the OTF2 archive: " + ec.message());
  return st;
}

} // namespace infracc::tracer
