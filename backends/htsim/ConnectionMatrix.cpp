#include "backends/htsim/ConnectionMatrix.h"

#include "ir/MessageMatching.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace infracc::htsim {

namespace {

constexpr uint32_t NoMessage = ~0u;
constexpr unsigned MaxListed = 5;
// Completions a set keeps when the search for implied ones gives up (huge histories).
constexpr uint64_t SearchLimit = 200000;

using EventSet = llvm::SmallVector<uint32_t, 2>;   // events: message * 2 + side

void normalize(EventSet &s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
}

std::string bytesText(uint64_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); }

class Builder {
public:
  Builder(const Schedule &s, const FlowEnds &ends, uint32_t nodes, DiagEngine &diags,
          llvm::StringRef where, const CmOptions &opts)
      : s_(s), ends_(ends), diags_(diags), where_(where), opts_(opts) {
    cm_.nodes = nodes;
    cm_.recvDoneTriggers = opts.recvDoneTriggers;
  }

  std::optional<ConnectionMatrix> run() {
    if (!checkOperations() || !propagate() || !orderMessages())
      return std::nullopt;
    reduce();
    if (!group())
      return std::nullopt;
    emit();
    return std::move(cm_);
  }

private:
  std::string op(uint32_t g) const {
    return fmt::format("rank {}: {} {}", rankOf_[g], opKindName(s_.kind(g)), s_.opName(g));
  }
  std::string messageText(uint32_t m) const {
    uint32_t g = cm_.messages[m].send;
    return fmt::format("{} ({} to rank {})", op(g), bytesText(s_.size(g)), s_.peer(g));
  }
  uint32_t recvSide() const { return opts_.recvDoneTriggers ? 1 : 0; }

  bool checkOperations();
  bool propagate();
  bool orderMessages();
  void reduce();
  bool group();
  void emit();

  const Schedule &s_;
  FlowEnds ends_;
  DiagEngine &diags_;
  llvm::StringRef where_;
  CmOptions opts_;
  ConnectionMatrix cm_;

  std::vector<uint32_t> rankOf_, partner_, messageOf_;
  std::vector<EventSet> startSet_;     // per message: the completions its flow waits for
  std::vector<double> startNs_;        // per message: compute ahead of it (root flows)
  std::vector<uint32_t> depth_;        // per message: longest chain of messages before it
  // Triggers after grouping: per message the group that starts it (~0u: a root), per
  // group its completions; per event the group it activates (~0u: none).
  std::vector<uint32_t> groupOf_, activates_;
  std::vector<EventSet> groupSet_;
};

bool Builder::checkOperations() {
  if (s_.hasUnloweredOps()) {
    diags_.error(where_, "the workload has collective or GPU operations; htsim flows are "
                         "point-to-point messages, so lower them to sends and recvs first");
    return false;
  }
  const uint32_t P = s_.numRanks();
  if (ends_.hostOfRank.size() < P || ends_.nodeOfOp.size() < s_.numOps()) {
    diags_.error(where_, fmt::format("the workload has {} ranks but only {} are placed on hosts",
                                     P, ends_.hostOfRank.size()));
    return false;
  }
  rankOf_.resize(s_.numOps());
  for (uint32_t r = 0; r < P; ++r)
    std::fill_n(rankOf_.begin() + s_.rankBegin(r), s_.numOps(r), r);
  partner_ = matchMessages(s_);
  uint64_t bad = 0;
  messageOf_.assign(s_.numOps(), NoMessage);
  for (uint32_t g = 0; g < s_.numOps(); ++g) {
    OpKind k = s_.kind(g);
    if (k != OpKind::Send && k != OpKind::Recv)
      continue;
    if (partner_[g] == NoPartner) {
      if (bad++ < MaxListed) {
        bool wild = s_.tag(g) == AnyTag || (k == OpKind::Recv && s_.peer(g) == AnySource);
        if (wild)
          diags_.error(where_, fmt::format("{} has {}; htsim flows need every message's source, "
                                           "destination and tag, matched before the run",
                                           op(g),
                                           s_.peer(g) == AnySource && k == OpKind::Recv
                                               ? "any source (-1)"
                                               : "any tag (-1)"));
        else if (k == OpKind::Send)
          diags_.error(where_, fmt::format("{} ({} to rank {}, tag {}) has no matching recv; "
                                           "only matched messages become htsim flows",
                                           op(g), bytesText(s_.size(g)), s_.peer(g), s_.tag(g)));
        else
          diags_.error(where_, fmt::format("{} ({} from rank {}, tag {}) has no matching send; "
                                           "only matched messages become htsim flows",
                                           op(g), bytesText(s_.size(g)), s_.peer(g), s_.tag(g)));
      }
      continue;
    }
    if (k != OpKind::Send)
      continue;
    if (ends_.hostOfRank[rankOf_[g]] == ends_.hostOfRank[s_.peer(g)]) {
      ++cm_.localMessages;
      continue;
    }
    messageOf_[g] = messageOf_[partner_[g]] = uint32_t(cm_.messages.size());
    cm_.messages.push_back({g, partner_[g], 0, 1, s_.size(g)});
  }
  if (bad > MaxListed)
    diags_.note(where_, fmt::format("{} more unmatched messages not listed", bad - MaxListed));
  return bad == 0;
}

// Walks every op once, predecessors first (Kahn), computing the set of completions
// each op waits for; a send that is a flow records its set as the flow's start set.
bool Builder::propagate() {
  const uint64_t N = s_.numOps();
  const size_t M = cm_.messages.size();
  startSet_.resize(M);
  startNs_.assign(M, 0);
  std::vector<uint32_t> indeg(N, 0);
  for (uint32_t g = 0; g < N; ++g) {
    uint32_t base = s_.rankBegin(rankOf_[g]);
    for (uint32_t raw : s_.successorsRaw(g))
      ++indeg[base + (raw & ~Schedule::IRequiresBit)];
    if (s_.kind(g) == OpKind::Send && partner_[g] != NoPartner && messageOf_[g] == NoMessage)
      ++indeg[partner_[g]];   // a message inside a host: arrives when the send starts
  }
  std::vector<EventSet> pending(N);
  std::vector<double> pendingNs(N, 0);
  llvm::DenseMap<uint32_t, std::pair<EventSet, double>> arrival;
  std::vector<uint32_t> queue;
  queue.reserve(N);
  for (uint32_t g = 0; g < N; ++g)
    if (!indeg[g])
      queue.push_back(g);
  for (size_t q = 0; q < queue.size(); ++q) {
    const uint32_t g = queue[q];
    EventSet ready = std::move(pending[g]);
    EventSet().swap(pending[g]);
    normalize(ready);
    const double readyNs = pendingNs[g];
    EventSet done;
    double doneNs = 0;
    const uint32_t msg = messageOf_[g];
    switch (s_.kind(g)) {
    case OpKind::Send:
      if (msg != NoMessage) {
        startSet_[msg] = ready;
        startNs_[msg] = readyNs;
        done.push_back(msg * 2);
      } else {
        done = ready;
        doneNs = readyNs;
        uint32_t r = partner_[g];
        arrival[r] = {ready, readyNs};
        if (--indeg[r] == 0)
          queue.push_back(r);
      }
      break;
    case OpKind::Recv:
      if (msg != NoMessage) {
        done.push_back(msg * 2 + recvSide());
      } else {
        auto it = arrival.find(g);
        done = std::move(it->second.first);
        doneNs = it->second.second;
        arrival.erase(it);
      }
      break;
    default:   // calc
      ++cm_.calcs;
      cm_.computeNs += double(s_.size(g));
      done = ready;
      doneNs = readyNs + double(s_.size(g));
      break;
    }
    const uint32_t base = s_.rankBegin(rankOf_[g]);
    for (uint32_t raw : s_.successorsRaw(g)) {
      const uint32_t t = base + (raw & ~Schedule::IRequiresBit);
      const bool req = !(raw & Schedule::IRequiresBit);
      const EventSet &from = req ? done : ready;
      EventSet &to = pending[t];
      to.append(from.begin(), from.end());
      if (to.size() > 64)
        normalize(to);
      pendingNs[t] = std::max(pendingNs[t], req ? doneNs : readyNs);
      if (--indeg[t] == 0)
        queue.push_back(t);
    }
  }
  if (queue.size() == N)
    return true;
  uint32_t stuck = 0;
  while (!indeg[stuck])
    ++stuck;
  diags_.error(where_, fmt::format("{} operations can never start: they wait on a cycle of "
                                   "dependencies (through messages between ranks on one host), "
                                   "e.g. {}",
                                   N - queue.size(), op(stuck)));
  return false;
}

// Messages in dependency order; a cycle means flows that wait for each other.
bool Builder::orderMessages() {
  const size_t M = cm_.messages.size();
  std::vector<uint32_t> indeg(M, 0), begin(M + 1, 0), succ;
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t e : startSet_[m])
      ++begin[e / 2 + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  succ.resize(begin[M]);
  {
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t m = 0; m < M; ++m)
      for (uint32_t e : startSet_[m]) {
        succ[fill[e / 2]++] = m;
        ++indeg[m];
      }
  }
  depth_.assign(M, 0);
  std::vector<uint32_t> queue;
  for (uint32_t m = 0; m < M; ++m)
    if (!indeg[m])
      queue.push_back(m);
  for (size_t q = 0; q < queue.size(); ++q) {
    uint32_t m = queue[q];
    for (uint32_t i = begin[m]; i < begin[m + 1]; ++i) {
      uint32_t t = succ[i];
      depth_[t] = std::max(depth_[t], depth_[m] + 1);
      if (--indeg[t] == 0)
        queue.push_back(t);
    }
  }
  if (queue.size() == M)
    return true;
  uint32_t stuck = 0;
  while (!indeg[stuck])
    ++stuck;
  diags_.error(where_, fmt::format("{} messages could never be sent: their sends wait, directly "
                                   "or not, for messages that wait for them, e.g. {}",
                                   M - queue.size(), messageText(stuck)));
  return false;
}

// Drops completions implied by another of the same set: a completion of message m
// implies everything m's flow waited for before starting, and its sender's completion
// implies its receiver's.
void Builder::reduce() {
  const size_t M = cm_.messages.size();
  std::vector<uint32_t> mark(2 * M, 0);
  uint32_t epoch = 0;
  std::vector<uint32_t> stack;
  auto depthOf = [&](uint32_t e) { return depth_[e / 2]; };
  for (uint32_t m = 0; m < M; ++m) {
    EventSet &set = startSet_[m];
    if (set.size() < 2)
      continue;
    std::sort(set.begin(), set.end(),
              [&](uint32_t a, uint32_t b) { return depthOf(a) > depthOf(b); });
    const uint32_t minDepth = depthOf(set.back());
    EventSet kept;
    std::vector<bool> implied(set.size(), false);
    for (size_t i = 0; i < set.size(); ++i) {
      if (implied[i])
        continue;
      ++epoch;
      uint64_t visits = 0;
      stack.assign(1, set[i]);
      while (!stack.empty() && visits < SearchLimit) {
        uint32_t e = stack.back();
        stack.pop_back();
        ++visits;
        auto visit = [&](uint32_t x) {
          if (mark[x] != epoch && depthOf(x) >= minDepth) {
            mark[x] = epoch;
            stack.push_back(x);
          }
        };
        if (e % 2 == 0)
          visit(e + 1);
        for (uint32_t x : startSet_[e / 2])
          visit(x);
      }
      for (size_t j = 0; j < set.size(); ++j)
        if (j != i && mark[set[j]] == epoch)
          implied[j] = true;
    }
    for (size_t i = 0; i < set.size(); ++i)
      if (!implied[i])
        kept.push_back(set[i]);
    normalize(kept);
    set = std::move(kept);
  }
}

// Flows with the same start set share a trigger; triggers that need the same completion
// are merged (each flow activates one trigger per side).
bool Builder::group() {
  const size_t M = cm_.messages.size();
  std::map<EventSet, uint32_t> index;
  std::vector<uint32_t> candidate(M, ~0u);
  std::vector<const EventSet *> sets;
  for (uint32_t m = 0; m < M; ++m) {
    if (startSet_[m].empty())
      continue;
    auto [it, fresh] = index.try_emplace(startSet_[m], uint32_t(sets.size()));
    if (fresh)
      sets.push_back(&it->first);
    candidate[m] = it->second;
  }
  const uint32_t C = uint32_t(sets.size());
  std::vector<uint32_t> parent(C);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](uint32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<uint32_t> owner(2 * M, ~0u);
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t e : *sets[c]) {
      if (owner[e] == ~0u)
        owner[e] = c;
      else
        parent[find(c)] = find(owner[e]);
    }
  // Merged groups, numbered in order of their first candidate.
  std::vector<uint32_t> groupOfRoot(C, ~0u), sizeOf;
  groupOf_.assign(M, ~0u);
  for (uint32_t c = 0; c < C; ++c) {
    uint32_t r = find(c);
    if (groupOfRoot[r] == ~0u) {
      groupOfRoot[r] = uint32_t(groupSet_.size());
      groupSet_.emplace_back();
      sizeOf.push_back(0);
    }
    uint32_t gi = groupOfRoot[r];
    groupSet_[gi].append(sets[c]->begin(), sets[c]->end());
    ++sizeOf[gi];
  }
  for (EventSet &s : groupSet_)
    normalize(s);
  cm_.mergedTriggers = C - groupSet_.size();
  for (uint32_t m = 0; m < M; ++m)
    if (candidate[m] != ~0u) {
      groupOf_[m] = groupOfRoot[find(candidate[m])];
      if (sizeOf[groupOf_[m]] > 1)
        ++cm_.widenedFlows;
    }
  activates_.assign(2 * M, ~0u);
  for (uint32_t gi = 0; gi < groupSet_.size(); ++gi)
    for (uint32_t e : groupSet_[gi])
      activates_[e] = gi;

  // Merging can make a trigger wait for a flow it starts itself: check that every
  // message still starts.
  const uint32_t G = uint32_t(groupSet_.size());
  std::vector<uint32_t> remaining(G);
  std::vector<std::vector<uint32_t>> targets(G);
  for (uint32_t gi = 0; gi < G; ++gi)
    remaining[gi] = uint32_t(groupSet_[gi].size());
  std::vector<uint32_t> queue;
  for (uint32_t m = 0; m < M; ++m) {
    if (groupOf_[m] == ~0u)
      queue.push_back(m);
    else
      targets[groupOf_[m]].push_back(m);
  }
  for (size_t q = 0; q < queue.size(); ++q) {
    uint32_t m = queue[q];
    for (uint32_t side = 0; side < 2; ++side) {
      uint32_t gi = activates_[m * 2 + side];
      if (gi != ~0u && --remaining[gi] == 0)
        queue.insert(queue.end(), targets[gi].begin(), targets[gi].end());
    }
  }
  if (queue.size() == M)
    return true;
  std::vector<bool> started(M, false);
  for (uint32_t m : queue)
    started[m] = true;
  uint32_t stuck = 0;
  while (started[stuck])
    ++stuck;
  diags_.error(where_, fmt::format("htsim cannot express these dependencies: a flow can "
                                   "activate only one trigger, so triggers that wait for the "
                                   "same message had to be merged, and {} flows would then wait "
                                   "for flows that wait for them, e.g. the flow of {}",
                                   M - queue.size(), messageText(stuck)));
  return false;
}

void Builder::emit() {
  std::vector<uint32_t> idOfGroup(groupSet_.size(), 0);
  auto triggerId = [&](uint32_t gi) {
    if (!idOfGroup[gi]) {
      cm_.triggers.push_back({uint32_t(groupSet_[gi].size())});
      idOfGroup[gi] = uint32_t(cm_.triggers.size());
    }
    return idOfGroup[gi];
  };
  for (uint32_t m = 0; m < cm_.messages.size(); ++m) {
    CmMessage &msg = cm_.messages[m];
    const uint32_t g = msg.send;
    const uint32_t src = ends_.nodeOfOp[g], dst = ends_.nodeOfOp[msg.recv];
    uint64_t bytes = msg.bytes;
    if (bytes == 0) {
      ++cm_.zeroByteMessages;
      bytes = 1;
    }
    const uint32_t parts = uint32_t((bytes + MaxFlowBytes - 1) / MaxFlowBytes);
    if (parts > 1)
      ++cm_.splitMessages;
    msg.firstFlow = uint32_t(cm_.flows.size());
    msg.flows = parts;
    for (uint32_t k = 0; k < parts; ++k) {
      CmFlow f;
      f.src = src;
      f.dst = dst;
      f.message = m;
      f.size = k + 1 < parts ? MaxFlowBytes : bytes - uint64_t(k) * MaxFlowBytes;
      if (k == 0) {
        if (groupOf_[m] == ~0u) {
          f.startPs = std::llround(startNs_[m] * 1000.0);
          if (f.startPs > 0)
            ++cm_.delayedRoots;
          cm_.maxStartNs = std::max(cm_.maxStartNs, startNs_[m]);
        } else {
          f.trigger = triggerId(groupOf_[m]);
        }
      } else {
        // The next part starts when the previous one is acknowledged.
        cm_.triggers.push_back({1});
        cm_.flows.back().sendDoneTrigger = f.trigger = uint32_t(cm_.triggers.size());
      }
      cm_.flows.push_back(f);
    }
    CmFlow &last = cm_.flows.back();
    if (activates_[m * 2] != ~0u)
      last.sendDoneTrigger = triggerId(activates_[m * 2]);
    if (activates_[m * 2 + 1] != ~0u)
      last.recvDoneTrigger = triggerId(activates_[m * 2 + 1]);
  }
}

} // namespace

std::optional<ConnectionMatrix> buildConnectionMatrix(const Schedule &s, const FlowEnds &ends,
                                                      uint32_t nodes, DiagEngine &diags,
                                                      llvm::StringRef where,
                                                      const CmOptions &opts) {
  return Builder(s, ends, nodes, diags, where, opts).run();
}

void writeConnectionMatrix(const ConnectionMatrix &cm, llvm::ArrayRef<std::string> comments,
                           llvm::raw_ostream &os) {
  for (const std::string &c : comments)
    os << "# " << c << "\n";
  os << fmt::format("Nodes {}\nConnections {}\nTriggers {}\n", cm.nodes, cm.flows.size(),
                    cm.triggers.size());
  std::string line;
  for (size_t i = 0; i < cm.flows.size(); ++i) {
    const CmFlow &f = cm.flows[i];
    line = fmt::format("{}->{} id {}", f.src, f.dst, i + 1);
    if (f.trigger)
      line += fmt::format(" trigger {}", f.trigger);
    else
      line += fmt::format(" start {}", f.startPs);
    line += fmt::format(" size {}", f.size);
    if (f.sendDoneTrigger)
      line += fmt::format(" send_done_trigger {}", f.sendDoneTrigger);
    if (f.recvDoneTrigger)
      line += fmt::format(" recv_done_trigger {}", f.recvDoneTrigger);
    os << line << "\n";
  }
  for (size_t i = 0; i < cm.triggers.size(); ++i) {
    if (cm.triggers[i].count == 1)
      os << fmt::format("trigger id {} oneshot\n", i + 1);
    else
      os << fmt::format("trigger id {} barrier count {}\n", i + 1, cm.triggers[i].count);
  }
}

} // namespace infracc::htsim
