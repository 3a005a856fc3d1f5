#include "compiler/frontends/mpi/LiballprofReader.h"

#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <cmath>
#include <map>
#include <set>

namespace infracc::mpi {

namespace {

// One traced call: its colon-separated groups (group 0 is the name), each a list of
// comma-separated values.
struct Call {
  llvm::StringRef name;
  llvm::SmallVector<llvm::StringRef, 12> groups;
};

struct CommRef {
  uint64_t handle = 0;
  int64_t rank = 0, size = 0;
};

struct SplitEvent {
  size_t call;          // index into the rank's calls
  bool dup;
  uint64_t parent;      // parent handle
  int64_t color = 0, key = 0, parentRank = 0;
  bool resolved = false;
};

// The group of a call that holds its communicator (-1: none), by call name.
int commGroup(llvm::StringRef n) {
  static const std::map<std::string, int> at = {
      {"MPI_Comm_size", 2}, {"MPI_Comm_rank", 2}, {"MPI_Barrier", 2}, {"MPI_Comm_split", 2},
      {"MPI_Comm_dup", 2},  {"MPI_Send", 7},      {"MPI_Rsend", 7},   {"MPI_Ssend", 7},
      {"MPI_Bsend", 7},     {"MPI_Isend", 7},     {"MPI_Irsend", 7},  {"MPI_Issend", 7},
      {"MPI_Recv", 7},      {"MPI_Irecv", 7},     {"MPI_Sendrecv", 12}, {"MPI_Bcast", 6},
      {"MPI_Allreduce", 7}, {"MPI_Iallreduce", 7}, {"MPI_Reduce", 8}, {"MPI_Allgather", 8},
      {"MPI_Alltoall", 8},  {"MPI_Gather", 9},    {"MPI_Scatter", 9}, {"MPI_Alltoallv", 14},
      {"MPI_Reduce_scatter_block", 7}};
  auto it = at.find(n.str());
  return it == at.end() ? -1 : it->second;
};
class Reader {
public:
  Reader(DiagEngine &diags, const TraceOptions &opts) : diags_(diags), opts_(opts) {}
  std::optional<Schedule> read(const std::vector<std::string> &files);

private:
  bool load(uint32_t rank, const std::string &file);
  void error(llvm::StringRef at, const llvm::Twine &msg) {
    diags_.error(llvm::SMLoc::getFromPointer(at.data()), msg);
  }
  // Group g split at commas; value i of it.
  llvm::StringRef value(const Call &c, size_t g, size_t i = 0) const;
  bool integer(const Call &c, size_t g, size_t i, int64_t &out, llvm::StringRef what);
  bool request(const Call &c, size_t g, size_t i, uint64_t &out);
  bool time(llvm::StringRef text, double &out) const;
  bool comm(const Call &c, size_t g, CommRef &out);
  bool expectGroups(const Call &c, size_t n);
  void buildCommunicators();
  bool bindAfter(uint32_t rank, size_t from, uint32_t commIndex);
  uint32_t commOf(uint32_t rank, const Call &c, size_t g);
  void buildRank(uint32_t rank, ScheduleBuilder &b);

  DiagEngine &diags_;
  TraceOptions opts_;
  uint32_t P_ = 0;
  std::vector<std::vector<Call>> calls_;
  std::vector<std::vector<uint32_t>> comms_;                 // members per communicator
  std::vector<llvm::DenseMap<uint64_t, uint32_t>> bound_;    // per rank: handle -> comm
  llvm::StringSet<> warned_;
  std::set<std::pair<uint32_t, uint64_t>> unknownReported_;
  bool failed_ = false;
};

llvm::StringRef Reader::value(const Call &c, size_t g, size_t i) const {
  if (g >= c.groups.size())
    return {};
  llvm::StringRef s = c.groups[g];
  for (size_t k = 0; k < i; ++k) {
    size_t comma = s.find(',');
    if (comma == llvm::StringRef::npos)
      return llvm::StringRef(s.end(), 0);
    s = s.drop_front(comma + 1);
  }
  return s.take_until([](char ch) { return ch == ','; }).trim();
}

bool Reader::expectGroups(const Call &c, size_t n) {
  if (c.groups.size() >= n)
    return true;
  error(c.name, c.name + " has " + llvm::Twine(c.groups.size() - 1) +
                    " fields here, but liballprof writes " + llvm::Twine(n - 1) +
                    " for it (time, arguments, time)");
  failed_ = true;
  return false;
}

bool Reader::integer(const Call &c, size_t g, size_t i, int64_t &out, llvm::StringRef what) {
  llvm::StringRef v = value(c, g, i);
  long long x;
  if (v.empty() || v.getAsInteger(10, x)) {
    error(v.empty() ? c.name : v, "expected a whole number (" + what + ") in " + c.name +
                                      ", found " + (v.empty() ? "nothing" : "'" + v.str() + "'"));
    failed_ = true;
    return false;
  }
  out = x;
  return true;
}

// A request handle: where the MPI_Request lives, in decimal (liballprof's %lu) or in
// hex (0x..., as %p writes it in liballprof2 and other tracers).
bool Reader::request(const Call &c, size_t g, size_t i, uint64_t &out) {
  llvm::StringRef v = value(c, g, i);
  unsigned long long x;
  bool hex = v.starts_with_insensitive("0x");
  if (hex ? v.drop_front(2).getAsInteger(16, x) : v.getAsInteger(10, x)) {
    error(v.empty() ? c.name : v, "expected a request handle (a whole number, or hex with 0x) in " +
                                      c.name + ", found " +
                                      (v.empty() ? "nothing" : "'" + v.str() + "'"));
    failed_ = true;
    return false;
  }
  out = x;
  return true;
}

bool Reader::time(llvm::StringRef text, double &out) const {
  text = text.trim();
  if (text.empty() || text == "-")
    return false;
  return !text.getAsDouble(out) && std::isfinite(out);
}

bool Reader::comm(const Call &c, size_t g, CommRef &out) {
  int64_t h;
  return integer(c, g, 0, h, "communicator handle") && integer(c, g, 1, out.rank, "rank") &&
         integer(c, g, 2, out.size, "communicator size") && ((out.handle = uint64_t(h)), true);
}

bool Reader::load(uint32_t rank, const std::string &file) {
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buf) {
    diags_.error(file, "cannot read the trace of rank " + llvm::Twine(rank) + ": " +
                           buf.getError().message());
    return false;
  }
  unsigned id = diags_.addBuffer(std::move(*buf));
  llvm::StringRef text = diags_.sourceMgr().getMemoryBuffer(id)->getBuffer();
  std::vector<Call> &calls = calls_[rank];
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    line = line.rtrim("\r");
    llvm::StringRef t = line.ltrim(" \t");
    if (t.empty() || t.starts_with("#"))
      continue;
    if (!t.starts_with("MPI_") && !t.starts_with("PMPI_")) {
      error(t, "expected a traced call ('MPI_Name:tstart:...:tend') or a '#' comment, found '" +
                   t.take_front(40) + "'");
      failed_ = true;
      if (diags_.shouldStop())
        return false;
      continue;
    }
    Call c;
    llvm::SmallVector<llvm::StringRef, 12> parts;
    t.split(parts, ':');
    c.name = parts[0].trim();
    for (llvm::StringRef p : parts)
      c.groups.push_back(p.trim());
    if (c.groups.size() < 3) {
      error(t, "a traced call has at least a name, a start and an end time: "
               "'MPI_Name:tstart:...:tend'");
      failed_ = true;
      continue;
    }
    calls.push_back(std::move(c));
  }
  return true;
}

// --- Communicators ------------------------------------------------------------------------

bool Reader::bindAfter(uint32_t rank, size_t from, uint32_t commIndex) {
  // The new handle is the first unknown one used afterwards with the right rank and
  // size (liballprof records where the handle is stored, not the handle).
  const std::vector<uint32_t> &members = comms_[commIndex];
  int64_t me = -1;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == rank)
      me = int64_t(i);
  for (size_t k = from + 1; k < calls_[rank].size(); ++k) {
    const Call &c = calls_[rank][k];
    int g = commGroup(c.name);
    if (g < 0 || size_t(g) >= c.groups.size())
      continue;
    llvm::SmallVector<llvm::StringRef, 3> v;
    c.groups[g].split(v, ',');
    unsigned long long h;
    long long r, sz;
    if (v.size() != 3 || v[0].getAsInteger(10, h) || v[1].getAsInteger(10, r) ||
        v[2].getAsInteger(10, sz))
      continue;
    if (bound_[rank].count(h) || r != me || sz != int64_t(members.size()))
      continue;
    bound_[rank][h] = commIndex;
    return true;
  }
  return false;
}

void Reader::buildCommunicators() {
  comms_.push_back({});
  for (uint32_t r = 0; r < P_; ++r)
    comms_[0].push_back(r);

  // The world: the communicator of the first call whose communicator spans all ranks.
  std::vector<std::vector<SplitEvent>> events(P_);
  for (uint32_t r = 0; r < P_; ++r) {
    bool world = false;
    for (size_t k = 0; k < calls_[r].size(); ++k) {
      const Call &c = calls_[r][k];
      int g = commGroup(c.name);
      if (g < 0 || size_t(g) >= c.groups.size())
        continue;
      CommRef cr;
      if (!comm(c, size_t(g), cr))
        continue;
      // The rank field is not trusted here: old liballprof versions wrote 0 for
      // every rank (the bcast sample of Schedgen's repository does).
      if (!world && cr.size == int64_t(P_)) {
        bound_[r][cr.handle] = 0;
        world = true;
      }
      if (c.name == "MPI_Comm_split" || c.name == "MPI_Comm_dup") {
        SplitEvent e{k, c.name == "MPI_Comm_dup", cr.handle, 0, 0, cr.rank, false};
        if (!e.dup && (!integer(c, 3, 0, e.color, "color") || !integer(c, 4, 0, e.key, "key")))
          continue;
        events[r].push_back(e);
      }
    }
  }
  // Splits and dups whose parent is known, in rounds (a split of a split needs its
  // parent first). Each rank's events are taken in order, each once: a cursor per rank,
  // ordinals per parent kept across rounds, and only the ranks that bound a new handle
  // look again (rebuilding every group each round was quadratic in a chain of dups:
  // 60,000 took 44 s).
  using GroupKey = std::tuple<uint32_t, uint32_t, bool>;   // (parent comm, ordinal, dup)
  std::map<GroupKey, std::vector<std::pair<uint32_t, size_t>>> groups;   // -> (rank, event)
  std::vector<size_t> cursor(P_, 0);
  std::vector<llvm::DenseMap<uint32_t, uint32_t>> ordinal(P_);
  std::vector<uint32_t> look(P_);
  for (uint32_t r = 0; r < P_; ++r)
    look[r] = r;
  std::vector<uint8_t> inNext(P_, 0);
  while (!look.empty()) {
    std::set<GroupKey> touched;
    for (uint32_t r : look)
      for (; cursor[r] < events[r].size(); ++cursor[r]) {
        SplitEvent &e = events[r][cursor[r]];
        auto it = bound_[r].find(e.parent);
        if (it == bound_[r].end())
          break;   // later events may depend on this one
        GroupKey key{it->second, ordinal[r][it->second]++, e.dup};
        groups[key].push_back({r, cursor[r]});
        touched.insert(key);
      }
    std::vector<uint32_t> next;
    for (const GroupKey &key : touched) {   // in key order, as the rounds always went
      auto git = groups.find(key);
      std::vector<std::pair<uint32_t, size_t>> &list = git->second;
      uint32_t parent = std::get<0>(key);
      if (list.size() != comms_[parent].size())
        continue;   // not every member has got there yet
      std::map<int64_t, std::vector<std::tuple<int64_t, int64_t, uint32_t>>> byColor;
      llvm::DenseMap<uint32_t, size_t> eventOf;
      for (auto [r, i] : list) {
        SplitEvent &e = events[r][i];
        e.resolved = true;
        eventOf[r] = i;
        if (e.dup || e.color >= 0)
          byColor[e.dup ? 0 : e.color].push_back({e.dup ? 0 : e.key, e.parentRank, r});
      }
      for (auto &[color, members] : byColor) {
        std::sort(members.begin(), members.end());
        std::vector<uint32_t> ranks;
        for (auto &m : members)
          ranks.push_back(std::get<2>(m));
        uint32_t idx = uint32_t(comms_.size());
        comms_.push_back(ranks);
        for (uint32_t r : ranks)
          if (bindAfter(r, events[r][eventOf[r]].call, idx) && !inNext[r]) {
            inNext[r] = 1;
            next.push_back(r);
          }
      }
      groups.erase(git);
    }
    for (uint32_t r : next)
      inNext[r] = 0;
    look = std::move(next);
  }
  // What is left: ranks using the same handle with the same size, each communicator
  // rank once.
  std::map<std::pair<uint64_t, int64_t>, std::vector<std::pair<int64_t, uint32_t>>> loose;
  for (uint32_t r = 0; r < P_; ++r)
    for (const Call &c : calls_[r]) {
      int g = commGroup(c.name);
      CommRef cr;
      if (g < 0 || size_t(g) >= c.groups.size() || !comm(c, size_t(g), cr))
        continue;
      if (bound_[r].count(cr.handle))
        continue;
      loose[{cr.handle, cr.size}].push_back({cr.rank, r});   // repeats go below
    }
  for (auto &[key, v] : loose) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    bool ok = int64_t(v.size()) == key.second;
    for (size_t i = 0; ok && i < v.size(); ++i)
      ok = v[i].first == int64_t(i);
    if (!ok)
      continue;   // reported where it is used
    uint32_t idx = uint32_t(comms_.size());
    std::vector<uint32_t> ranks;
    for (auto &m : v)
      ranks.push_back(m.second);
    comms_.push_back(ranks);
    for (uint32_t r : ranks)
      bound_[r][key.first] = idx;
  }
}

uint32_t Reader::commOf(uint32_t rank, const Call &c, size_t g) {
  CommRef cr;
  if (!comm(c, g, cr))
    return ~0u;
  auto it = bound_[rank].find(cr.handle);
  if (it == bound_[rank].end()) {
    failed_ = true;
    if (!unknownReported_.insert({rank, cr.handle}).second)
      return ~0u;   // reported at its first use
    error(c.groups[g], "cannot tell which ranks form communicator " + llvm::Twine(cr.handle) +
                           " (rank " + llvm::Twine(cr.rank) + " of " + llvm::Twine(cr.size) +
                           ") in the trace of rank " + llvm::Twine(rank) +
                           ": it is not the world, no MPI_Comm_split or MPI_Comm_dup in the "
                           "traces creates it, and the ranks using this handle do not form it");
    failed_ = true;
    return ~0u;
  }
  const std::vector<uint32_t> &m = comms_[it->second];
  if (it->second == 0 && cr.size == int64_t(m.size()))
    return 0;   // the world: its rank is the global one, whatever the field says
  if (cr.size != int64_t(m.size()) || cr.rank < 0 || cr.rank >= cr.size || m[cr.rank] != rank) {
    error(c.groups[g], "communicator " + llvm::Twine(cr.handle) + " says rank " +
                           llvm::Twine(cr.rank) + " of " + llvm::Twine(cr.size) +
                           ", which does not agree with the communicator rebuilt from the "
                           "traces (" + llvm::Twine(m.size()) + " ranks)");
    failed_ = true;
    return ~0u;
  }
  return it->second;
}

// --- Schedule ---------------------------------------------------------------------------

void Reader::buildRank(uint32_t rank, ScheduleBuilder &b) {
  b.beginRank(rank);
  std::vector<std::pair<uint32_t, DepKind>> cur;   // what the next op waits for
  llvm::DenseMap<uint64_t, uint32_t> requests;
  double prevEnd = 0;
  bool havePrev = false;
  int64_t anySource = opts_.mpich ? -2 : -1, procNull = opts_.mpich ? -1 : -2;
  uint64_t reqSize = opts_.mpich ? 4 : 8;
  auto link = [&](uint32_t op) {
    for (auto [p, kind] : cur)
      b.addDependency(op, p, kind);
  };
  auto then = [&](uint32_t op, DepKind k = DepKind::Requires) {
    link(op);
    cur.assign(1, {op, k});
  };
  // A nonblocking call remembers its request (the field at group g) for the wait, and
  // the next op only irequires it: the transfer overlaps what follows. False on a bad
  // request field (already reported).
  auto thenMaybeNonblocking = [&](uint32_t op, bool nonblocking, const Call &c, size_t g) {
    if (!nonblocking) {
      then(op);
      return true;
    }
    uint64_t req;
    if (!request(c, g, 0, req))
      return false;
    requests[req] = op;
    then(op, DepKind::IRequires);
    return true;
  };
  auto tagFor = [&](const Call &c, size_t g, uint32_t commIndex, bool recv, uint32_t &out) {
    int64_t tag;
    if (!integer(c, g, 0, tag, "tag"))
      return false;
    if (recv && tag == -1) {
      out = AnyTag;
      return true;
    }
    if (tag < 0 || tag >= (1 << 24) || commIndex >= 128) {
      error(value(c, g), "tag " + llvm::Twine(tag) + " on communicator #" +
                             llvm::Twine(commIndex) +
                             " does not fit the GOAL tag (communicator << 24 | tag needs tags "
                             "below 16777216 and at most 128 communicators)");
      failed_ = true;
      return false;
    }
    out = uint32_t(commIndex << 24 | uint32_t(tag));
    return true;
  };
  auto peerFor = [&](const Call &c, size_t g, uint32_t commIndex, bool recv, uint32_t &out,
                     bool &skip) {
    int64_t p;
    skip = false;
    if (!integer(c, g, 0, p, recv ? "source" : "destination"))
      return false;
    if (p == procNull) {
      skip = true;
      return true;
    }
    if (recv && p == anySource) {
      out = AnySource;
      return true;
    }
    const std::vector<uint32_t> &m = comms_[commIndex];
    if (p < 0 || p >= int64_t(m.size())) {
      error(value(c, g), llvm::Twine(recv ? "source " : "destination ") + llvm::Twine(p) +
                             " is not a rank of the communicator (" + llvm::Twine(m.size()) +
                             " ranks)");
      failed_ = true;
      return false;
    }
    out = m[p];
    return true;
  };
  auto bytes = [&](const Call &c, size_t countGroup, size_t typeGroup, uint64_t &out) {
    int64_t count, size;
    if (!integer(c, countGroup, 0, count, "count") ||
        !integer(c, typeGroup, 1, size, "datatype size"))
      return false;
    if (count < 0 || size < 0) {
      error(value(c, countGroup), "negative count or datatype size");
      failed_ = true;
      return false;
    }
    out = uint64_t(count) * uint64_t(size);
    return true;
  };
  auto collective = [&](const Call &c, CollectiveKind k, size_t commGroup, uint64_t n,
                        int64_t root, llvm::ArrayRef<uint64_t> vsizes) -> uint32_t {
    uint32_t ci = commOf(rank, c, commGroup);
    if (ci == ~0u)
      return ~0u;
    if (root < 0 || root >= int64_t(comms_[ci].size())) {
      error(c.name, "root " + llvm::Twine(root) + " is not a rank of the communicator");
      failed_ = true;
      return ~0u;
    }
    CollectiveInfo info;
    info.kind = k;
    info.communicator = ci;
    info.root = uint32_t(root);
    info.bytes = n;
    info.loc = llvm::SMLoc::getFromPointer(c.name.data());
    if (!vsizes.empty()) {
      info.vsizesBegin = b.addVSizes(vsizes);
      info.vsizesCount = uint32_t(vsizes.size());
    }
    return b.addOp(OpKind::Collective, b.addCollective(info), n);
  };

  for (const Call &c : calls_[rank]) {
    if (diags_.shouldStop())
      break;
    // The ops this call makes (and the calc before it) are located at its line.
    struct LocateOps {
      ScheduleBuilder &b;
      uint32_t from;
      llvm::StringRef at;
      ~LocateOps() { b.setSourceLoc(from, llvm::SMLoc::getFromPointer(at.data())); }
    } locate{b, b.opsInRank(), c.name};
    double tstart, tend;
    bool hasStart = time(c.groups[1], tstart), hasEnd = time(c.groups.back(), tend);
    if (c.name == "MPI_Init" || c.name == "MPI_Init_thread") {
      if (hasEnd) {
        prevEnd = tend;
        havePrev = true;
      }
      continue;
    }
    if (hasStart && havePrev && tstart > prevEnd) {
      double ns = std::round((tstart - prevEnd) * 1000.0);
      // A GOAL calc holds 64 bits of ns; a gap past 2^63 ns (292 years) is a broken clock.
      if (ns >= 0x1p63) {
        error(c.groups[1], "this call starts " + llvm::Twine(fmt::format("{:g}", tstart - prevEnd)) +
                               " us after the previous one ended; a gap must be shorter than "
                               "2^63 ns (292 years)");
        continue;
      }
      if (ns >= 1)
        then(b.addCalc(uint64_t(ns)));
    }
    if (hasEnd) {
      prevEnd = tend;
      havePrev = true;
    }
    llvm::StringRef n = c.name;
    bool isend = n == "MPI_Isend" || n == "MPI_Irsend" || n == "MPI_Issend";
    if (n == "MPI_Send" || n == "MPI_Rsend" || n == "MPI_Ssend" || n == "MPI_Bsend" || isend) {
      if (!expectGroups(c, isend ? 10 : 9))
        continue;
      uint32_t ci = commOf(rank, c, 7), peer, tag;
      uint64_t size;
      bool skip;
      if (ci == ~0u || !bytes(c, 3, 4, size) || !peerFor(c, 5, ci, false, peer, skip) ||
          !tagFor(c, 6, ci, false, tag) || skip)
        continue;
      uint32_t op = b.addSend(size, peer, tag);
      if (!thenMaybeNonblocking(op, isend, c, 8))
        continue;
    } else if (n == "MPI_Recv" || n == "MPI_Irecv") {
      if (!expectGroups(c, 10))
        continue;
      uint32_t ci = commOf(rank, c, 7), peer, tag;
      uint64_t size;
      bool skip;
      if (ci == ~0u || !bytes(c, 3, 4, size) || !peerFor(c, 5, ci, true, peer, skip) ||
          !tagFor(c, 6, ci, true, tag) || skip)
        continue;
      uint32_t op = b.addRecv(size, peer, tag);
      if (!thenMaybeNonblocking(op, n == "MPI_Irecv", c, 8))
        continue;
    } else if (n == "MPI_Sendrecv") {
      if (!expectGroups(c, 15))
        continue;
      uint32_t ci = commOf(rank, c, 12), dst, src, stag, rtag;
      uint64_t ssize, rsize;
      bool skipS, skipR;
      if (ci == ~0u || !bytes(c, 3, 4, ssize) || !peerFor(c, 5, ci, false, dst, skipS) ||
          !tagFor(c, 6, ci, false, stag) || !bytes(c, 8, 9, rsize) ||
          !peerFor(c, 10, ci, true, src, skipR) || !tagFor(c, 11, ci, true, rtag))
        continue;
      std::vector<std::pair<uint32_t, DepKind>> next;
      if (!skipS) {
        uint32_t s = b.addSend(ssize, dst, stag);
        link(s);
        next.push_back({s, DepKind::Requires});
      }
      if (!skipR) {
        uint32_t r = b.addRecv(rsize, src, rtag);
        link(r);
        next.push_back({r, DepKind::Requires});
      }
      if (!next.empty())
        cur = next;
    } else if (n == "MPI_Wait" || n == "MPI_Waitall") {
      bool all = n == "MPI_Waitall";
      if (!expectGroups(c, all ? 6 : 5))
        continue;
      int64_t count = 1;
      uint64_t base;
      if ((all && !integer(c, 2, 0, count, "request count")) || !request(c, all ? 3 : 2, 0, base))
        continue;
      if (count < 0) {
        error(value(c, 2), "negative request count");
        failed_ = true;
        continue;
      }
      uint32_t w = b.addCalc(0);
      link(w);
      // The array's handles in array order; entries that are not outstanding requests
      // are MPI_REQUEST_NULL or already completed. A count larger than the outstanding
      // requests is answered from them, so an absurd count costs nothing.
      std::vector<uint64_t> handles;
      if (uint64_t(count) <= requests.size()) {
        for (int64_t i = 0; i < count; ++i)
          handles.push_back(base + uint64_t(i) * reqSize);
      } else {
        for (const auto &[h, op] : requests)
          if (h >= base && (h - base) % reqSize == 0 && (h - base) / reqSize < uint64_t(count))
            handles.push_back(h);
        llvm::sort(handles);
      }
      for (uint64_t h : handles) {
        auto it = requests.find(h);
        if (it == requests.end())
          continue;
        b.addDependency(w, it->second, DepKind::Requires);
        requests.erase(it);
      }
      cur.assign(1, {w, DepKind::Requires});
    } else if (n == "MPI_Barrier") {
      if (!expectGroups(c, 4))
        continue;
      uint32_t op = collective(c, CollectiveKind::Barrier, 2, 0, 0, {});
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Bcast") {
      uint64_t size;
      int64_t root;
      if (!expectGroups(c, 8) || !bytes(c, 3, 4, size) || !integer(c, 5, 0, root, "root"))
        continue;
      uint32_t op = collective(c, CollectiveKind::Bcast, 6, size, root, {});
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Allreduce" || n == "MPI_Iallreduce" ||
               n == "MPI_Reduce_scatter_block") {
      bool nb = n == "MPI_Iallreduce";
      uint64_t size;
      if (!expectGroups(c, nb ? 10 : 9) || !bytes(c, 4, 5, size))
        continue;
      CollectiveKind k = n == "MPI_Reduce_scatter_block" ? CollectiveKind::Reducescatter
                                                         : CollectiveKind::Allreduce;
      uint32_t op = collective(c, k, 7, size, 0, {});
      if (op == ~0u)
        continue;
      if (!thenMaybeNonblocking(op, nb, c, 8))
        continue;
    } else if (n == "MPI_Reduce") {
      uint64_t size;
      int64_t root;
      if (!expectGroups(c, 10) || !bytes(c, 4, 5, size) || !integer(c, 7, 0, root, "root"))
        continue;
      uint32_t op = collective(c, CollectiveKind::Reduce, 8, size, root, {});
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Allgather" || n == "MPI_Alltoall") {
      uint64_t size;
      if (!expectGroups(c, 10) || !bytes(c, 3, 4, size))
        continue;
      uint32_t op = collective(c, n == "MPI_Allgather" ? CollectiveKind::Allgather
                                                       : CollectiveKind::Alltoall,
                               8, size, 0, {});
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Gather" || n == "MPI_Scatter") {
      bool gather = n == "MPI_Gather";
      uint64_t size;
      int64_t root;
      // The block each rank contributes (gather) or gets (scatter).
      if (!expectGroups(c, 11) || !bytes(c, gather ? 3 : 6, gather ? 4 : 7, size) ||
          !integer(c, 8, 0, root, "root"))
        continue;
      uint32_t op = collective(c, gather ? CollectiveKind::Gather : CollectiveKind::Scatter, 9,
                               size, root, {});
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Alltoallv") {
      if (!expectGroups(c, 16))
        continue;
      int64_t tsize;
      if (!integer(c, 7, 1, tsize, "datatype size"))
        continue;
      llvm::SmallVector<llvm::StringRef, 16> counts;
      c.groups[4].split(counts, ',');
      std::vector<uint64_t> sizes;
      uint64_t total = 0;
      bool bad = false;
      for (llvm::StringRef v : counts) {
        long long x;
        if (v.trim().getAsInteger(10, x) || x < 0) {
          error(v, "expected a send count in MPI_Alltoallv, found '" + v + "'");
          failed_ = bad = true;
          break;
        }
        sizes.push_back(uint64_t(x) * uint64_t(tsize));
        total += sizes.back();
      }
      if (bad)
        continue;
      CommRef cr;
      if (!comm(c, 14, cr))
        continue;
      if (int64_t(sizes.size()) != cr.size) {
        error(c.groups[4], "MPI_Alltoallv gives " + llvm::Twine(sizes.size()) +
                               " send counts for a communicator of " + llvm::Twine(cr.size) +
                               " ranks");
        failed_ = true;
        continue;
      }
      uint32_t op = collective(c, CollectiveKind::Alltoallv, 14, total, 0, sizes);
      if (op != ~0u)
        then(op);
    } else if (n == "MPI_Finalize") {
      break;
    } else if (n == "MPI_Comm_split" || n == "MPI_Comm_dup" || n == "MPI_Comm_rank" ||
               n == "MPI_Comm_size" || n == "MPI_Test" || n == "MPI_Testall" ||
               n == "MPI_Iprobe" || n == "MPI_Get_count" || n == "MPI_Wtime" ||
               n == "MPI_Comm_free") {
      // No communication; the time they take counts as computation.
    } else if (warned_.insert(n).second) {
      diags_.warning(llvm::SMLoc::getFromPointer(n.data()),
                     n + " is not understood by the trace reader; its time counts as "
                         "computation (docs/collectives.md lists the calls read)");
    }
  }
  b.endRank();
}

std::optional<Schedule> Reader::read(const std::vector<std::string> &files) {
  P_ = uint32_t(files.size());
  calls_.resize(P_);
  bound_.resize(P_);
  for (uint32_t r = 0; r < P_; ++r)
    if (!load(r, files[r]))
      return std::nullopt;
  if (failed_)
    return std::nullopt;
  buildCommunicators();
  if (failed_)
    return std::nullopt;
  ScheduleBuilder b(P_);
  b.keepSourceLocs();
  for (size_t i = 0; i < comms_.size(); ++i)
    b.addCommunicator(Communicator{uint32_t(i), comms_[i], {}});
  for (uint32_t r = 0; r < P_; ++r)
    buildRank(r, b);
  if (failed_ || diags_.hasErrors())
    return std::nullopt;
  return b.finish();
}

} // namespace

std::vector<std::string> traceFiles(DiagEngine &diags, const std::string &path) {
  std::string rank0 = path;
  if (llvm::sys::fs::is_directory(path)) {
    std::vector<std::string> candidates;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
      llvm::StringRef name = llvm::sys::path::filename(it->path());
      size_t at = name.find("-0");
      if (at != llvm::StringRef::npos && name.find("-0", at + 1) == llvm::StringRef::npos &&
          (at + 2 == name.size() || !llvm::isDigit(name[at + 2])))
        candidates.push_back(it->path());
    }
    std::sort(candidates.begin(), candidates.end());
    if (candidates.size() != 1) {
      diags.error(path, candidates.empty()
                            ? "no rank-0 trace in this directory (a file whose name holds '-0', "
                              "like pmpi-trace-rank-0.txt)"
                            : "several files could be rank 0's trace (" +
                                  llvm::join(candidates, ", ") + "); name the one to read");
      return {};
    }
    rank0 = candidates[0];
  }
  llvm::StringRef dir = llvm::sys::path::parent_path(rank0);
  std::string name = llvm::sys::path::filename(rank0).str();
  size_t at = name.find("-0");
  if (at == std::string::npos || name.find("-0", at + 1) != std::string::npos) {
    diags.error(rank0, "the name of rank 0's trace must hold '-0' exactly once (the other "
                       "ranks' names replace it with -1, -2, ...)");
    return {};
  }
  std::vector<std::string> files;
  for (uint32_t r = 0;; ++r) {
    std::string n = name.substr(0, at) + "-" + std::to_string(r) + name.substr(at + 2);
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, n);
    if (!llvm::sys::fs::exists(p))
      break;
    files.push_back(std::string(p));
  }
  return files;
}

std::optional<Schedule> readLiballprof(DiagEngine &diags, const std::vector<std::string> &files,
                                       const TraceOptions &opts) {
  return Reader(diags, opts).read(files);
}

int sniffLiballprof(const std::string &head) {
  llvm::StringRef h(head);
  if (h.starts_with("# collprof") || h.starts_with("# liballprof") ||
      h.starts_with("# htor's PMPI Tracer"))   // liballprof's own header line
    return 90;
  llvm::StringRef first = h.ltrim(" \t\r\n");
  while (first.starts_with("#"))
    first = first.drop_until([](char c) { return c == '\n'; }).ltrim(" \t\r\n");
  return first.starts_with("MPI_") && first.contains(':') ? 70 : 0;
}

} // namespace infracc::mpi
