// VEF3 MPI traces (VEF-Prospector's `vef_mixer` output, docs/workloads.md) as a workload,
// recognised by content (a first line `VEF3 ...`). The grammar, as reconstructed from
// real traces and VEF-TraceLIB's parser (../shared/reference/peers.md §3.1):
//
//   VEF3 <tasks> <msgs> <comms> <collectives> <collective lines> <flag> [<clock ps>]
//   C<id> <task> <task> ...                               one line per communicator
//   <id> <src> <dst> <bytes> <dep> <time> <ref>           a message
//   G<id> C<comm> <op> <task> <send> <recv> <dep> <time> <ref>   a task's part of a collective
//
// A record fires <time> clock cycles (<clock> ps each, 1000 when omitted) after its
// dependency: dep & 3 = 0 none, 1 the send of message <ref>, 2 its reception, 3 collective
// G<ref>, on the record's own task (dep & 4 is set on every message between two tasks in
// Prospector's traces and not otherwise used). Each record becomes, on its task, a calc
// of that time (when not zero) requiring the dependency's op, then the send or the
// collective; a message's reception is a recv its destination posts from the start
// (tag = the message id, so messages pair exactly). A record from a task to itself is a
// local sync point: only its calc (of zero time if need be), which later records can
// depend on. Collective ops: 0 bcast, 1 reduce, 2 allreduce, 3 gather, 4 scatter,
// 5 allgather, 6 barrier, 7 alltoall (MPI's count per process: <send> bytes, scatter
// <recv>), root 0 of the communicator; they stay collectives (lower-collectives).
// A trace whose second line is `EXT <model>` is generated instead (VefGenerators.h).
#include "compiler/frontends/vef/VefGenerators.h"
#include "compiler/frontends/vef/VefText.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <map>
#include <optional>

namespace infracc::vef {
namespace {

constexpr const char *CollectiveOps = "0 bcast, 1 reduce, 2 allreduce, 3 gather, 4 scatter, "
                                      "5 allgather, 6 barrier, 7 alltoall";

std::optional<CollectiveKind> collectiveOf(uint64_t code) {
  static const CollectiveKind kinds[] = {CollectiveKind::Bcast,   CollectiveKind::Reduce,
                                         CollectiveKind::Allreduce, CollectiveKind::Gather,
                                         CollectiveKind::Scatter, CollectiveKind::Allgather,
                                         CollectiveKind::Barrier, CollectiveKind::Alltoall};
  if (code >= std::size(kinds))
    return std::nullopt;
  return kinds[code];
}

struct Op {
  OpKind kind;
  uint32_t peer = 0, tag = 0;
  uint64_t size = 0;
  uint32_t collective = ~0u;
  uint32_t requires_ = ~0u;   // local index of the one op it waits for
  llvm::SMLoc loc;
};

// A record as read; its ops are made once every record is known (references may point
// forward).
struct Record {
  bool collective = false;
  uint64_t id = 0;              // message id, or collective id
  uint32_t src = 0, dst = 0;    // collective: the task in src
  uint64_t bytes = 0, recvBytes = 0;
  uint32_t comm = 0;            // collective: index in the builder
  CollectiveKind kind = CollectiveKind::Allreduce;
  uint64_t dep = 0, time = 0;
  bool refIsCollective = false;
  int64_t ref = -1;
  llvm::SMLoc loc, depLoc;
  uint32_t sendOp = ~0u, recvOp = ~0u;   // local indices on src / dst (self: both the calc)
  uint32_t firstOp = ~0u;                 // on src: the op that waits for the dependency
};

class Reader {
public:
  Reader(DiagEngine &d, llvm::StringRef text, std::string path)
      : diags_(d), in_(d, text), path_(std::move(path)) {}
  std::optional<Schedule> read();
  /// The trace generated arrivals (FLOWS, DCNW, CDCNW): see Module::Job::timed.
  bool timed() const { return timed_; }

private:
  bool error(llvm::StringRef at, const llvm::Twine &msg) { return in_.error(at, msg.str()); }
  bool nextLine(Tokens &tokens) { return in_.next(tokens); }
  bool number(llvm::StringRef tok, llvm::StringRef what, uint64_t &out, uint64_t max = UINT64_MAX) {
    return in_.number(tok, what, out, max);
  }
  bool task(llvm::StringRef tok, llvm::StringRef what, uint32_t &out);
  bool dependency(llvm::ArrayRef<llvm::StringRef> t, Record &r);
  bool message(llvm::ArrayRef<llvm::StringRef> t);
  bool collective(llvm::ArrayRef<llvm::StringRef> t);
  std::optional<uint32_t> dependencyOp(const Record &r, uint32_t task);
  uint32_t addOp(uint32_t rank, Op op) {
    ops_[rank].push_back(op);
    return uint32_t(ops_[rank].size() - 1);
  }

  DiagEngine &diags_;
  VefText in_;
  std::string path_;
  uint32_t tasks_ = 0;
  bool timed_ = false;
  uint64_t clockPs_ = 1000;
  std::vector<Record> records_;
  llvm::DenseMap<uint64_t, uint32_t> messageIndex_;                 // id -> record
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> collectiveIndex_;   // (G id, task) -> record
  std::map<uint64_t, std::vector<uint32_t>> communicatorTasks_;       // C id -> tasks
  llvm::DenseMap<uint64_t, uint32_t> communicatorIndex_;              // C id -> builder index
  std::vector<std::vector<Op>> ops_;
  std::vector<CollectiveInfo> collectives_;
};

bool Reader::task(llvm::StringRef tok, llvm::StringRef what, uint32_t &out) {
  uint64_t v = 0;
  if (!number(tok, what, v))
    return false;
  if (v >= tasks_)
    return error(tok, fmt::format("{} {} is not a task of this trace (it has {}: 0..{})",
                                  what.str(), v, tasks_, tasks_ - 1));
  out = uint32_t(v);
  return true;
}

// <dep> <time> <ref>: the last three tokens of a record.
bool Reader::dependency(llvm::ArrayRef<llvm::StringRef> t, Record &r) {
  if (!number(t[0], "a dependency kind", r.dep, 7) || !number(t[1], "a time in cycles", r.time))
    return false;
  r.depLoc = llvm::SMLoc::getFromPointer(t[2].data());
  llvm::StringRef ref = t[2];
  if (ref == "-1")
    r.ref = -1;
  else {
    r.refIsCollective = ref.consume_front("G");
    uint64_t v = 0;
    if (!number(ref, r.refIsCollective ? "a collective id after G" : "a message id, G<id> or -1",
                v, INT64_MAX))
      return false;
    r.ref = int64_t(v);
  }
  const uint64_t kind = r.dep & 3;
  if (kind != 0 && r.ref < 0)
    return error(t[2], fmt::format("dependency kind {} ({}) needs a reference, not -1", r.dep,
                                   kind == 1 ? "after a send" : kind == 2 ? "after a reception"
                                                                          : "after a collective"));
  if (kind == 3 && !r.refIsCollective && t[2] != "-1")
    r.refIsCollective = true;   // kind 3 refers to a collective id, with or without its G
  if (kind != 0 && kind != 3 && r.refIsCollective)
    return error(t[2], fmt::format("dependency kind {} refers to a message, not to collective {}",
                                   r.dep, t[2].str()));
  return true;
}

bool Reader::message(llvm::ArrayRef<llvm::StringRef> t) {
  if (t.size() != 7)
    return error(t[0], fmt::format("a message record has 7 fields (<id> <src> <dst> <bytes> "
                                   "<dep> <time> <ref>), this one {}",
                                   t.size()));
  Record r;
  r.loc = llvm::SMLoc::getFromPointer(t[0].data());
  if (!number(t[0], "a message id", r.id, AnyTag - 1) || !task(t[1], "source task", r.src) ||
      !task(t[2], "destination task", r.dst) || !number(t[3], "a size in bytes", r.bytes) ||
      !dependency(t.drop_front(4), r))
    return false;
  auto [it, fresh] = messageIndex_.try_emplace(r.id, uint32_t(records_.size()));
  if (!fresh)
    return error(t[0], fmt::format("message id {} is used twice", r.id));
  records_.push_back(r);
  return true;
}

bool Reader::collective(llvm::ArrayRef<llvm::StringRef> t) {
  if (t.size() != 9)
    return error(t[0], fmt::format("a collective record has 9 fields (G<id> C<comm> <op> <task> "
                                   "<send bytes> <recv bytes> <dep> <time> <ref>), this one {}",
                                   t.size()));
  Record r;
  r.collective = true;
  r.loc = llvm::SMLoc::getFromPointer(t[0].data());
  uint64_t comm = 0, op = 0;
  llvm::StringRef c = t[1];
  if (!number(t[0].drop_front(1), "a collective id after G", r.id))
    return false;
  if (!c.consume_front("C"))
    return error(t[1], fmt::format("expected a communicator C<id>, found '{}'", t[1].str()));
  if (!number(c, "a communicator id after C", comm) || !number(t[2], "a collective op", op) ||
      !task(t[3], "task", r.src) || !number(t[4], "a send size in bytes", r.bytes) ||
      !number(t[5], "a receive size in bytes", r.recvBytes) || !dependency(t.drop_front(6), r))
    return false;
  auto kind = collectiveOf(op);
  if (!kind)
    return error(t[2], fmt::format("unknown collective op {} (VEF's ops: {})", op, CollectiveOps));
  r.kind = *kind;
  auto members = communicatorTasks_.find(comm);
  if (members == communicatorTasks_.end())
    return error(t[1], fmt::format("communicator C{} is not declared", comm));
  if (!llvm::is_contained(members->second, r.src))
    return error(t[3], fmt::format("task {} is not a member of communicator C{}", r.src, comm));
  r.comm = communicatorIndex_[comm];
  auto [it, fresh] = collectiveIndex_.try_emplace({r.id, r.src}, uint32_t(records_.size()));
  if (!fresh)
    return error(t[0], fmt::format("task {} has collective G{} twice", r.src, r.id));
  records_.push_back(r);
  return true;
}

// The op on `task` that record r waits for, ~0u for none; nullopt after an error.
std::optional<uint32_t> Reader::dependencyOp(const Record &r, uint32_t task) {
  const uint64_t kind = r.dep & 3;
  if (kind == 0)
    return ~0u;
  auto at = [&](const llvm::Twine &msg) {
    diags_.error(r.depLoc, msg);
    return std::nullopt;
  };
  if (kind == 3) {
    auto it = collectiveIndex_.find({uint64_t(r.ref), task});
    if (it == collectiveIndex_.end())
      return at(fmt::format("task {} takes no part in collective G{}", task, r.ref));
    return records_[it->second].sendOp;
  }
  auto it = messageIndex_.find(uint64_t(r.ref));
  if (it == messageIndex_.end())
    return at(fmt::format("there is no message {}", r.ref));
  const Record &q = records_[it->second];
  if (kind == 1 && q.src != task)
    return at(fmt::format("task {} depends on the send of message {}, which task {} sends",
                          task, r.ref, q.src));
  if (kind == 2 && q.dst != task)
    return at(fmt::format("task {} depends on the reception of message {}, which task {} "
                          "receives",
                          task, r.ref, q.dst));
  return kind == 1 ? q.sendOp : q.recvOp;
}

std::optional<Schedule> Reader::read() {
  Tokens t;
  if (!nextLine(t) || t[0] != "VEF3") {
    error(t.empty() ? in_.rest() : t[0], "not a VEF3 trace: the first line must be 'VEF3 <tasks> "
                                    "<msgs> <comms> <collectives> <collective lines> <flag> "
                                    "[<clock ps>]'");
    return std::nullopt;
  }
  if (t.size() != 7 && t.size() != 8) {
    error(t[0], fmt::format("the VEF3 header has 6 or 7 numbers after VEF3, this one {}",
                            t.size() - 1));
    return std::nullopt;
  }
  uint64_t tasks = 0, msgs = 0, comms = 0, unused = 0;
  if (!number(t[1], "the task count", tasks, 1u << 30) || !number(t[2], "the message count", msgs) ||
      !number(t[3], "the communicator count", comms, 1u << 24))
    return std::nullopt;
  for (size_t i = 4; i < 7; ++i)
    if (!number(t[i], "a header count", unused))
      return std::nullopt;
  const llvm::SMLoc msgsLoc = llvm::SMLoc::getFromPointer(t[2].data()),
                    commsLoc = llvm::SMLoc::getFromPointer(t[3].data());
  if (t.size() == 8 && !number(t[7], "the clock in picoseconds per cycle", clockPs_, 1000000000))
    return std::nullopt;
  if (tasks == 0 || clockPs_ == 0) {
    error(tasks == 0 ? t[1] : t[7], "must be at least 1");
    return std::nullopt;
  }
  if (auto msg = exceedsMemory(fmt::format("{} tasks", tasks), tasks, 64)) {
    error(t[1], *msg);
    return std::nullopt;
  }
  tasks_ = uint32_t(tasks);
  ScheduleBuilder b(tasks_);
  // Communicators.
  const llvm::StringRef msgsToken = t[2];
  bool more = nextLine(t);
  if (more && t[0] == "EXT") {
    ExtendedHeader h{tasks_, msgs, clockPs_, msgsToken, path_};
    return generateExtended(in_, h, t, timed_);
  }
  uint64_t declared = 0;
  for (; more && t[0].starts_with("C"); more = nextLine(t), ++declared) {
    uint64_t id = 0;
    if (!number(t[0].drop_front(1), "a communicator id after C", id, UINT32_MAX))
      return std::nullopt;
    std::vector<uint32_t> members;
    for (llvm::StringRef tok : llvm::ArrayRef(t).drop_front()) {
      uint32_t m = 0;
      if (!task(tok, "member", m))
        return std::nullopt;
      if (llvm::is_contained(members, m)) {
        error(tok, fmt::format("task {} appears twice in communicator C{}", m, id));
        return std::nullopt;
      }
      members.push_back(m);
    }
    if (members.empty()) {
      error(t[0], fmt::format("communicator C{} has no tasks", id));
      return std::nullopt;
    }
    if (communicatorTasks_.count(id)) {
      error(t[0], fmt::format("communicator C{} is declared twice", id));
      return std::nullopt;
    }
    communicatorTasks_[id] = members;
    communicatorIndex_[id] = b.addCommunicator(Communicator{uint32_t(id), members, {}});
  }
  if (declared != comms)
    diags_.warning(commsLoc,
                   fmt::format("the header announces {} communicator(s); {} are declared",
                               comms, declared));
  // Records.
  for (; more; more = nextLine(t)) {
    bool ok = t[0].starts_with("G") ? collective(t) : message(t);
    if (!ok && diags_.shouldStop())
      return std::nullopt;
  }
  if (diags_.hasErrors())
    return std::nullopt;
  // Ops, in record order on each task: the time as a calc, then the send or collective;
  // the reception on the destination.
  ops_.resize(tasks_);
  for (Record &r : records_) {
    uint64_t ns = 0;
    if (r.time > UINT64_MAX / clockPs_) {
      diags_.error(r.depLoc, fmt::format("time {} cycles of {} ps overflows", r.time, clockPs_));
      return std::nullopt;
    }
    ns = (r.time * clockPs_ + 500) / 1000;
    const bool self = !r.collective && r.src == r.dst;
    uint32_t calc = ~0u;
    if (ns > 0 || self)
      calc = addOp(r.src, {OpKind::Calc, 0, 0, ns, ~0u, ~0u, r.loc});
    r.firstOp = calc;
    if (self) {
      r.sendOp = r.recvOp = calc;
      continue;
    }
    if (r.collective) {
      CollectiveInfo ci;
      ci.kind = r.kind;
      ci.communicator = r.comm;
      ci.bytes = r.kind == CollectiveKind::Scatter ? r.recvBytes
                 : r.kind == CollectiveKind::Barrier ? 0
                                                     : r.bytes;
      ci.loc = r.loc;
      collectives_.push_back(ci);
      r.sendOp = addOp(r.src, {OpKind::Collective, 0, 0, ci.bytes,
                               uint32_t(collectives_.size() - 1), calc, r.loc});
    } else {
      r.sendOp = addOp(r.src, {OpKind::Send, r.dst, uint32_t(r.id), r.bytes, ~0u, calc, r.loc});
      r.recvOp = addOp(r.dst, {OpKind::Recv, r.src, uint32_t(r.id), r.bytes, ~0u, ~0u, r.loc});
    }
    if (calc == ~0u)
      r.firstOp = r.sendOp;
  }
  // Dependencies: the first op of each record waits for what the record names.
  for (const Record &r : records_) {
    auto dep = dependencyOp(r, r.src);
    if (!dep)
      return std::nullopt;
    if (*dep == ~0u)
      continue;
    ops_[r.src][r.firstOp].requires_ = *dep;
  }
  std::vector<uint32_t> collectiveIndex;
  for (const CollectiveInfo &ci : collectives_)
    collectiveIndex.push_back(b.addCollective(ci));
  b.keepSourceLocs();   // the verifier's messages point at the records
  for (uint32_t r = 0; r < tasks_; ++r) {
    b.beginRank(r);
    for (const Op &o : ops_[r]) {
      const uint32_t i = o.kind == OpKind::Collective
                             ? b.addOp(OpKind::Collective, collectiveIndex[o.collective], o.size)
                             : b.addOp(o.kind, o.peer, o.size, o.tag);
      b.setSourceLoc(i, o.loc);
    }
    for (uint32_t i = 0; i < ops_[r].size(); ++i)
      if (ops_[r][i].requires_ != ~0u)
        b.addDependency(i, ops_[r][i].requires_, DepKind::Requires);
    b.endRank();
  }
  uint64_t messages = 0;
  for (const Record &r : records_)
    messages += !r.collective;
  if (messages != msgs)
    diags_.warning(msgsLoc,
                   fmt::format("the header announces {} message record(s); the trace has {}",
                               msgs, messages));
  return b.finish();
}

llvm::Error load(InputContext &ctx) {
  std::optional<llvm::StringRef> text = readInputText(ctx);
  if (!text)
    return reportedError();
  Reader reader(ctx.diags, *text, ctx.path);
  std::optional<Schedule> s = reader.read();
  if (!s)
    return reportedError();
  ctx.module.jobs.push_back({ctx.path, std::move(*s), reader.timed()});
  return llvm::Error::success();
}

RegisterInputFormat format({.name = "vef",
                            .description = "VEF3 MPI trace (VEF-Prospector's vef_mixer output, "
                                           "-emit=vef)",
                            .extensions = {".vef"},
                            .role = InputRole::Workload,
                            .sniff = [](llvm::StringRef head) {
                              return head.starts_with("VEF3 ") || head.starts_with("VEF3\t") ? 100 : 0;
                            },
                            .load = load});

} // namespace
} // namespace infracc::vef
