#include "passes/Verify.h"

#include "ir/Collectives.h"
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "passes/KernelVerifier.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/Hashing.h>

#include <map>

namespace infracc {

namespace {

namespace cl = llvm::cl;

cl::opt<bool> AllowUnmatched("allow-unmatched",
                             cl::desc("Report sends and recvs without a matching partner as "
                                      "warnings instead of errors (default: errors)"),
                             cl::cat(opts::passCategory()));

/// Kahn's algorithm over one rank's dependencies: `order` gets the ops a topological
/// order takes, and `indegree` stays above 0 on the ops on or behind a cycle. True
/// when every op is taken (the rank has no cycle).
bool topologicalOrder(const RankOps &ops, std::vector<uint32_t> &indegree,
                      std::vector<uint32_t> &order) {
  const uint32_t n = ops.size();
  indegree.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : ops.successorsRaw(i))
      ++indegree[raw & ~Schedule::IRequiresBit];
  order.clear();
  for (uint32_t i = 0; i < n; ++i)
    if (indegree[i] == 0)
      order.push_back(i);
  for (size_t q = 0; q < order.size(); ++q)
    for (uint32_t raw : ops.successorsRaw(order[q]))
      if (--indegree[raw & ~Schedule::IRequiresBit] == 0)
        order.push_back(raw & ~Schedule::IRequiresBit);
  return order.size() == n;
}

// Dinic's maximum flow, for matching the messages left to wildcard operations.
class MaxFlow {
public:
  explicit MaxFlow(uint32_t nodes) : adj_(nodes), level_(nodes), next_(nodes) {}
  uint32_t addEdge(uint32_t from, uint32_t to, uint64_t cap) {
    uint32_t id = static_cast<uint32_t>(edges_.size());
    adj_[from].push_back(id);
    edges_.push_back({to, cap});
    adj_[to].push_back(id + 1);
    edges_.push_back({from, 0});
    return id;
  }
  /// Flow pushed through edge `id` (its reverse edge's residual capacity).
  uint64_t flow(uint32_t id) const { return edges_[id + 1].cap; }
  uint64_t run(uint32_t s, uint32_t t) {
    uint64_t total = 0;
    while (levels(s, t)) {
      std::fill(next_.begin(), next_.end(), 0);
      while (uint64_t f = push(s, t, UINT64_MAX))
        total += f;
    }
    return total;
  }

private:
  struct Edge {
    uint32_t to;
    uint64_t cap;
  };
  bool levels(uint32_t s, uint32_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<uint32_t> queue{s};
    level_[s] = 0;
    for (size_t i = 0; i < queue.size(); ++i)
      for (uint32_t e : adj_[queue[i]])
        if (edges_[e].cap && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[queue[i]] + 1;
          queue.push_back(edges_[e].to);
        }
    return level_[t] >= 0;
  }
  // Depth is at most 3 here (source, send class, recv class, sink).
  uint64_t push(uint32_t v, uint32_t t, uint64_t limit) {
    if (v == t)
      return limit;
    for (; next_[v] < adj_[v].size(); ++next_[v]) {
      Edge &e = edges_[adj_[v][next_[v]]];
      if (!e.cap || level_[e.to] != level_[v] + 1)
        continue;
      if (uint64_t f = push(e.to, t, std::min(limit, e.cap))) {
        e.cap -= f;
        edges_[adj_[v][next_[v]] ^ 1].cap += f;
        return f;
      }
    }
    return 0;
  }
  std::vector<Edge> edges_;
  std::vector<std::vector<uint32_t>> adj_;
  std::vector<int> level_;
  std::vector<size_t> next_;
};

std::string rankOrAny(uint32_t r) {
  return r == AnySource ? "any rank" : "rank " + std::to_string(r);
}
std::string tagText(uint32_t t) { return t == AnyTag ? "any tag" : "tag " + std::to_string(t); }
std::string bytesText(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

class Verifier {
public:
  Verifier(const Schedule &s, DiagEngine &diags, llvm::StringRef where, const VerifyOptions &opts)
      : s_(s), diags_(diags), where_(where.empty() ? "infracc" : where.str()), opts_(opts) {}

  bool run(Statistics *stats);

private:
  bool checkOperands();
  void checkCollectives();
  std::string describeCollective(uint32_t g) const;
  void reportAt(uint32_t g, Severity sev, const llvm::Twine &msg);
  // A message at op g's place in the input (file:line:col, or where_).
  void at(uint32_t g, Severity sev, const llvm::Twine &msg) {
    reportAtOp(diags_, s_, g, where_, sev, msg);
  }
  void checkCycles(uint32_t r);
  void reportCycle(uint32_t r, llvm::ArrayRef<std::pair<uint32_t, uint32_t>> stack, size_t from);
  void matchMessages();
  bool balanced(uint32_t dst);
  void matchWithWildcards(uint32_t dst);
  void reportUnmatched(uint32_t g);
  std::string op(uint32_t g) const {
    return std::string(opKindName(s_.kind(g))) + " " + s_.opName(g);
  }
  uint32_t srcOfSend(uint32_t g, uint32_t &hint) const {
    while (s_.rankBegin(hint) + s_.numOps(hint) <= g)
      ++hint;
    return hint;
  }

  const Schedule &s_;
  DiagEngine &diags_;
  std::string where_;
  VerifyOptions opts_;

  std::vector<uint32_t> indegree_, queue_;
  std::vector<uint8_t> color_;
  unsigned cyclesListed_ = 0;
  uint32_t ranksWithCycles_ = 0, ranksListed_ = 0;

  // Sends grouped by destination: sendsTo_[sendBegin_[d] .. sendBegin_[d+1]), and
  // parallel to it their (source << 32 | tag), read in order rather than gathered
  // from the whole schedule.
  std::vector<uint32_t> sendBegin_, sendsTo_;
  std::vector<uint64_t> sendKey_;
  // balanced(): the sends to one destination from one source, and a cursor into them.
  struct SendGroup {
    uint32_t src, next, end;
  };
  static constexpr uint32_t NoGroup = 0xFFFFFFFFu;
  std::vector<SendGroup> groups_;
  std::vector<uint32_t> groupOf_;   // per source rank: index into groups_, or NoGroup
  void resetGroups() {
    for (const SendGroup &grp : groups_)
      groupOf_[grp.src] = NoGroup;
  }
  llvm::DenseMap<uint64_t, std::pair<uint32_t, uint32_t>> counts_;   // (src,tag) -> sends, recvs
  uint64_t unmatched_ = 0, sends_ = 0;
  // checkOperands' findings for the later checks: the ranks whose dependencies do not
  // all point forward (only they can have a cycle), whether a send or recv has a
  // wildcard, and the sketch of the messages (balanced: every send has its recv).
  std::vector<uint32_t> nonForward_;
  bool wildcard_ = false;
  MessageSketch sketch_;
  std::vector<uint32_t> selfMessages_, zeroByte_;
  uint64_t selfCount_ = 0, zeroCount_ = 0;
};

bool Verifier::checkOperands() {
  bool ok = true;
  uint32_t P = s_.numRanks();
  for (uint32_t r = 0; r < P; ++r) {
    RankOps ops = s_.ops(r);
    bool forward = true;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      uint32_t g = ops.globalIndex(i);
      OpKind k = ops.kind(i);
      uint32_t peer = ops.peer(i);
      // Usually every dependency points to a later op: then op order is a
      // topological order and there is no cycle.
      for (uint32_t raw : ops.successorsRaw(i))
        forward &= (raw & ~Schedule::IRequiresBit) > i;
      auto bad = [&](const llvm::Twine &msg) {
        at(g, Severity::Error, "rank " + llvm::Twine(r) + ": " + op(g) + " " + msg);
        ok = false;
      };
      switch (k) {
      case OpKind::Send:
        if (peer >= P)
          bad("goes to " + rankOrAny(peer) + ", but the schedule has " + llvm::Twine(P) +
              " ranks (0.." + llvm::Twine(P - 1) + ")");
        ++sends_;
        if (peer == r && selfCount_++ < opts_.maxNotes)
          selfMessages_.push_back(g);
        if (ops.opSize(i) == 0 && zeroCount_++ < opts_.maxNotes)
          zeroByte_.push_back(g);
        wildcard_ |= ops.tag(i) == AnyTag;
        sketch_.add(r, peer, ops.tag(i), /*isSend=*/true);
        break;
      case OpKind::Recv:
        if (peer >= P && peer != AnySource)
          bad("comes from rank " + llvm::Twine(peer) + ", but the schedule has " +
              llvm::Twine(P) + " ranks (0.." + llvm::Twine(P - 1) + ")");
        wildcard_ |= peer == AnySource || ops.tag(i) == AnyTag;
        sketch_.add(peer, r, ops.tag(i), /*isSend=*/false);
        break;
      case OpKind::Calc:
        break;
      case OpKind::Collective:
        if (peer >= s_.collectives().size())
          bad("refers to collective " + llvm::Twine(peer) + " of " +
              llvm::Twine(s_.collectives().size()));
        else if (s_.collectives()[peer].communicator >= s_.communicators().size())
          bad("uses communicator #" + llvm::Twine(s_.collectives()[peer].communicator) +
              ", but the schedule has " + llvm::Twine(s_.communicators().size()));
        break;
      case OpKind::Kernel: {
        size_t n = s_.kernels() ? s_.kernels()->kernels.size() : 0;
        if (peer >= n)
          bad("launches kernel " + llvm::Twine(peer) + ", but the schedule has " +
              llvm::Twine(n) + " kernels");
        break;
      }
      }
    }
    if (!forward)
      nonForward_.push_back(r);
  }
  return ok;
}

void Verifier::checkCycles(uint32_t r) {
  uint32_t first = s_.rankBegin(r), n = s_.numOps(r);
  if (topologicalOrder(s_.ops(r), indegree_, queue_))
    return;
  // What is left is on a cycle or behind one. A depth-first search over it finds the
  // cycles: a successor still on the stack closes one.
  uint32_t stuck = n - static_cast<uint32_t>(queue_.size());
  ++ranksWithCycles_;
  if (cyclesListed_ >= opts_.maxListed)
    return;   // counted; summarised at the end
  color_.assign(n, 0);   // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<uint32_t, uint32_t>> stack;   // op, index of its next successor
  unsigned listedHere = 0;
  for (uint32_t start = 0; start < n; ++start) {
    if (indegree_[start] == 0 || color_[start])
      continue;
    stack.push_back({start, 0});
    color_[start] = 1;
    while (!stack.empty()) {
      auto &[v, k] = stack.back();
      SuccessorRange succ = s_.successorsRaw(first + v);
      if (k == succ.size()) {
        color_[v] = 2;
        stack.pop_back();
        continue;
      }
      uint32_t w = succ[k++] & ~Schedule::IRequiresBit;
      if (color_[w] == 0) {
        color_[w] = 1;
        stack.push_back({w, 0});
      } else if (color_[w] == 1 && listedHere < 3 && cyclesListed_ < opts_.maxListed) {
        size_t from = stack.size();
        while (stack[from - 1].first != w)
          --from;
        reportCycle(r, stack, from - 1);
        ++listedHere;
        ++cyclesListed_;
      }
    }
  }
  ++ranksListed_;
  diags_.note(where_, "rank " + llvm::Twine(r) + ": " + llvm::Twine(stuck) + " of its " +
                          llvm::Twine(n) +
                          " operations can never start (they are on or behind a dependency "
                          "cycle)");
}

void Verifier::reportCycle(uint32_t r, llvm::ArrayRef<std::pair<uint32_t, uint32_t>> stack,
                           size_t from) {
  uint32_t first = s_.rankBegin(r), firstNamed = 0;
  constexpr size_t maxEdges = 10;
  std::string text;
  size_t len = stack.size() - from;
  for (size_t i = 0; i < len && i < maxEdges; ++i) {
    uint32_t pred = stack[from + i].first;
    uint32_t raw = s_.successorsRaw(first + pred)[stack[from + i].second - 1];
    uint32_t succ = raw & ~Schedule::IRequiresBit;
    if (i)
      text += ", ";
    else
      firstNamed = first + succ;
    text += s_.opName(first + succ) +
            ((raw & Schedule::IRequiresBit) ? " irequires " : " requires ") +
            s_.opName(first + pred);
  }
  if (len > maxEdges)
    text += ", ... (" + std::to_string(len - maxEdges) + " more)";
  at(firstNamed, Severity::Error, "rank " + llvm::Twine(r) + ": dependency cycle: " + text);
}

std::string ordinal(uint64_t n) {
  const char *suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1)
      suffix = "st";
    else if (n % 10 == 2)
      suffix = "nd";
    else if (n % 10 == 3)
      suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

std::string Verifier::describeCollective(uint32_t g) const {
  const CollectiveInfo &c = s_.collectives()[s_.peer(g)];
  std::string d = collectiveKindName(c.kind).str();
  if (c.kind == CollectiveKind::Alltoallv)
    d += " (" + bytesText(c.bytes) + " in all)";
  else if (c.kind != CollectiveKind::Barrier)
    d += " " + std::to_string(c.bytes) + "b";
  if (collectiveHasRoot(c.kind))
    d += " root " + std::to_string(c.root);
  d += " algo " + collAlgorithmName(static_cast<CollAlgorithm>(c.algorithm)).str();
  if (c.protocol)
    d += " proto " + collProtocolName(static_cast<CollProtocol>(c.protocol)).str();
  if (c.chunkBytes)
    d += " chunk " + std::to_string(c.chunkBytes) + "b";
  if (c.slices)
    d += " slices " + std::to_string(c.slices) + " " + std::to_string(c.sliceAlign) + "b " +
         std::to_string(c.sliceMin) + "b";
  return d;
}

void Verifier::reportAt(uint32_t g, Severity sev, const llvm::Twine &msg) {
  const CollectiveInfo &c = s_.collectives()[s_.peer(g)];
  if (c.loc.isValid())
    diags_.report(c.loc, sev, msg);
  else
    at(g, sev, "rank " + llvm::Twine(s_.rankOf(g)) + " " + op(g) + ": " + msg);
}

// Every member of a communicator issues the same collectives in the same order (op
// order within its rank), with the same kind, size, root, algorithm and NCCL choices
// (protocol, chunk, slices): both ends of every lowered message must agree.
void Verifier::checkCollectives() {
  if (s_.collectives().empty())
    return;
  llvm::ArrayRef<Communicator> comms = s_.communicators();
  std::vector<llvm::DenseMap<uint32_t, uint32_t>> position(comms.size());
  std::vector<std::vector<std::vector<uint32_t>>> issued(comms.size());
  for (size_t c = 0; c < comms.size(); ++c) {
    issued[c].resize(comms[c].ranks.size());
    for (uint32_t i = 0; i < comms[c].ranks.size(); ++i)
      position[c].try_emplace(comms[c].ranks[i], i);
  }
  auto commName = [&](uint32_t c) { return "communicator " + std::to_string(comms[c].id); };
  for (uint32_t r = 0; r < s_.numRanks() && !diags_.shouldStop(); ++r)
    for (uint32_t g = s_.rankBegin(r), e = g + s_.numOps(r); g < e; ++g) {
      if (s_.kind(g) != OpKind::Collective)
        continue;
      uint32_t c = s_.collectives()[s_.peer(g)].communicator;
      auto it = position[c].find(r);
      if (it == position[c].end()) {
        reportAt(g, Severity::Error,
                 "rank " + llvm::Twine(r) + " issues " + describeCollective(g) + " on " +
                     commName(c) + ", but it is not one of that communicator's " +
                     llvm::Twine(comms[c].ranks.size()) + " ranks");
        continue;
      }
      issued[c][it->second].push_back(g);
    }
  for (size_t c = 0; c < comms.size() && !diags_.shouldStop(); ++c) {
    const auto &ref = issued[c][0];
    uint32_t refRank = comms[c].ranks.empty() ? 0 : comms[c].ranks[0];
    for (uint32_t i = 1; i < issued[c].size(); ++i) {
      const auto &mine = issued[c][i];
      uint32_t rank = comms[c].ranks[i];
      std::string who = "rank " + std::to_string(rank) + " (" + commName(uint32_t(c)) +
                        " rank " + std::to_string(i) + ")";
      std::string refWho = "rank " + std::to_string(refRank) + " (its rank 0)";
      size_t n = std::min(ref.size(), mine.size()), k = 0;
      while (k < n) {
        const CollectiveInfo &a = s_.collectives()[s_.peer(ref[k])];
        const CollectiveInfo &b = s_.collectives()[s_.peer(mine[k])];
        bool same = a.kind == b.kind && a.root == b.root && a.algorithm == b.algorithm &&
                    (a.kind == CollectiveKind::Alltoallv || a.bytes == b.bytes) &&
                    a.protocol == b.protocol && a.chunkBytes == b.chunkBytes &&
                    a.slices == b.slices && a.sliceAlign == b.sliceAlign &&
                    a.sliceMin == b.sliceMin;
        if (!same)
          break;
        ++k;
      }
      if (k == n && ref.size() == mine.size())
        continue;
      if (k < n) {
        reportAt(mine[k], Severity::Error,
                 "collective mismatch on " + commName(uint32_t(c)) + ": " + who + " issues '" +
                     describeCollective(mine[k]) + "' as its " + ordinal(k + 1) +
                     " collective there, but " + refWho + " issues '" +
                     describeCollective(ref[k]) + "'");
        reportAt(ref[k], Severity::Note,
                 "the " + ordinal(k + 1) + " collective of rank " + llvm::Twine(refRank) +
                     " on " + commName(uint32_t(c)));
      } else if (mine.size() > ref.size()) {
        reportAt(mine[k], Severity::Error,
                 "collective mismatch on " + commName(uint32_t(c)) + ": " + who + " issues '" +
                     describeCollective(mine[k]) + "' as its " + ordinal(k + 1) +
                     " collective there, but " + refWho + " issues only " +
                     llvm::Twine(ref.size()));
      } else {
        reportAt(ref[k], Severity::Error,
                 "collective mismatch on " + commName(uint32_t(c)) + ": " + refWho + " issues '" +
                     describeCollective(ref[k]) + "' as its " + ordinal(k + 1) +
                     " collective there, but " + who + " issues only " +
                     llvm::Twine(mine.size()));
      }
      break;   // the first mismatch per communicator; later ones usually follow from it
    }
  }
}

// The fast path: per (source, tag), as many sends as recvs and no wildcards.
bool Verifier::balanced(uint32_t dst) {
  // The sends to dst come grouped by source, each group in program order. Usually the
  // recvs from each source name the same tags in the same order: follow that with one
  // cursor per group; anything else is settled by counting.
  const uint32_t begin = sendBegin_[dst], end = sendBegin_[dst + 1];
  groups_.clear();
  for (uint32_t i = begin; i < end; ++i) {
    uint64_t key = sendKey_[i];
    if (uint32_t(key) == AnyTag)
      return resetGroups(), false;
    uint32_t src = uint32_t(key >> 32);
    if (groups_.empty() || groups_.back().src != src) {
      groupOf_[src] = static_cast<uint32_t>(groups_.size());
      groups_.push_back({src, i, i});
    }
    groups_.back().end = i + 1;
  }
  bool inOrder = true;
  RankOps ops = s_.ops(dst);
  for (uint32_t i = 0; i < ops.size() && inOrder; ++i) {
    if (ops.kind(i) != OpKind::Recv)
      continue;
    uint32_t src = ops.peer(i), tag = ops.tag(i);
    if (src == AnySource || tag == AnyTag || groupOf_[src] == NoGroup)
      return resetGroups(), false;
    SendGroup &grp = groups_[groupOf_[src]];
    inOrder = grp.next < grp.end && uint32_t(sendKey_[grp.next]) == tag;
    ++grp.next;
  }
  resetGroups();
  if (inOrder) {
    for (const SendGroup &grp : groups_)
      if (grp.next != grp.end)
        return false;
    return true;
  }
  counts_.clear();
  for (uint32_t i = sendBegin_[dst]; i < sendBegin_[dst + 1]; ++i) {
    uint64_t key = sendKey_[i];
    if (uint32_t(key) == AnyTag)
      return false;
    ++counts_[key].first;
  }
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::Recv)
      continue;
    if (ops.peer(i) == AnySource || ops.tag(i) == AnyTag)
      return false;
    ++counts_[(uint64_t(ops.peer(i)) << 32) | ops.tag(i)].second;
  }
  for (const auto &kv : counts_)
    if (kv.second.first != kv.second.second)
      return false;
  return true;
}

// Messages to `dst` per class (source, tag), either side possibly a wildcard: exact
// classes pair up first, in program order (the k-th send with the k-th recv); what is
// left goes to a maximum matching between compatible classes. Within a class the
// operations that stay unmatched are the last ones in program order.
void Verifier::matchWithWildcards(uint32_t dst) {
  struct Class {
    uint64_t count = 0, matched = 0, seen = 0;
    uint32_t first = 0;   // first op of the class in program order
  };
  using Key = std::pair<uint32_t, uint32_t>;   // source (or any), tag (or any)
  std::map<Key, Class> sendCls, recvCls;
  uint32_t hint = 0;
  for (uint32_t i = sendBegin_[dst]; i < sendBegin_[dst + 1]; ++i) {
    uint32_t g = sendsTo_[i];
    Class &c = sendCls[{srcOfSend(g, hint), s_.tag(g)}];
    if (c.count++ == 0)
      c.first = g;
  }
  uint32_t rb = s_.rankBegin(dst), re = rb + s_.numOps(dst);
  for (uint32_t g = rb; g < re; ++g) {
    if (s_.kind(g) != OpKind::Recv)
      continue;
    Class &c = recvCls[{s_.peer(g), s_.tag(g)}];
    if (c.count++ == 0)
      c.first = g;
  }

  for (auto &[key, sc] : sendCls) {
    if (key.second == AnyTag)
      continue;
    auto it = recvCls.find(key);
    if (it == recvCls.end())
      continue;
    uint64_t m = std::min(sc.count, it->second.count);
    sc.matched += m;
    it->second.matched += m;
  }
  std::vector<std::pair<Class *, Key>> left, right;
  for (auto &[key, c] : sendCls)
    if (c.matched < c.count)
      left.push_back({&c, key});
  for (auto &[key, c] : recvCls)
    if (c.matched < c.count)
      right.push_back({&c, key});
  // Any maximum matching proves the same; offering the earliest operations first makes
  // the ones left over the later ones, as when messages meet posted recvs in order.
  auto byFirst = [](const auto &a, const auto &b) { return a.first->first < b.first->first; };
  llvm::sort(left, byFirst);
  llvm::sort(right, byFirst);
  if (!left.empty() && !right.empty()) {
    uint32_t source = 0, sink = 1, base = 2;
    uint32_t rightBase = base + static_cast<uint32_t>(left.size());
    MaxFlow flow(rightBase + static_cast<uint32_t>(right.size()));
    std::vector<uint32_t> leftEdge, rightEdge;
    for (size_t i = 0; i < left.size(); ++i)
      leftEdge.push_back(flow.addEdge(source, base + uint32_t(i),
                                      left[i].first->count - left[i].first->matched));
    for (size_t j = 0; j < right.size(); ++j)
      rightEdge.push_back(flow.addEdge(rightBase + uint32_t(j), sink,
                                       right[j].first->count - right[j].first->matched));
    for (size_t i = 0; i < left.size(); ++i) {
      Key sk = left[i].second;
      for (size_t j = 0; j < right.size(); ++j) {
        Key rk = right[j].second;
        bool src = rk.first == AnySource || rk.first == sk.first;
        bool tag = rk.second == AnyTag || sk.second == AnyTag || rk.second == sk.second;
        if (src && tag)
          flow.addEdge(base + uint32_t(i), rightBase + uint32_t(j), UINT64_MAX);
      }
    }
    flow.run(source, sink);
    for (size_t i = 0; i < left.size(); ++i)
      left[i].first->matched += flow.flow(leftEdge[i]);
    for (size_t j = 0; j < right.size(); ++j)
      right[j].first->matched += flow.flow(rightEdge[j]);
  }
  // Report what is left, recvs of dst first, then the sends to it.
  for (uint32_t g = rb; g < re; ++g) {
    if (s_.kind(g) != OpKind::Recv)
      continue;
    Class &c = recvCls[{s_.peer(g), s_.tag(g)}];
    if (++c.seen > c.matched)
      reportUnmatched(g);
  }
  hint = 0;
  for (uint32_t i = sendBegin_[dst]; i < sendBegin_[dst + 1]; ++i) {
    uint32_t g = sendsTo_[i];
    Class &c = sendCls[{srcOfSend(g, hint), s_.tag(g)}];
    if (++c.seen > c.matched)
      reportUnmatched(g);
  }
}

void Verifier::reportUnmatched(uint32_t g) {
  if (unmatched_++ >= opts_.maxListed)
    return;
  uint32_t r = s_.rankOf(g);
  std::string msg = "rank " + std::to_string(r) + ": " + op(g) + " (" + bytesText(s_.size(g)) + " ";
  if (s_.kind(g) == OpKind::Send)
    msg += "to rank " + std::to_string(s_.peer(g)) + ", " + tagText(s_.tag(g)) +
           ") has no matching recv in rank " + std::to_string(s_.peer(g));
  else
    msg += "from " + rankOrAny(s_.peer(g)) + ", " + tagText(s_.tag(g)) +
           ") has no matching send";
  at(g, opts_.allowUnmatched ? Severity::Warning : Severity::Error, msg);
}

void Verifier::matchMessages() {
  if (!wildcard_ && sketch_.balanced())
    return;   // every class has as many sends as recvs: all match
  uint32_t P = s_.numRanks();
  sendBegin_.assign(size_t(P) + 1, 0);
  for (uint32_t r = 0; r < P; ++r) {
    RankOps ops = s_.ops(r);
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (ops.kind(i) == OpKind::Send)
        ++sendBegin_[ops.peer(i) + 1];
  }
  for (uint32_t d = 0; d < P; ++d)
    sendBegin_[d + 1] += sendBegin_[d];
  sendsTo_.resize(sendBegin_[P]);
  sendKey_.resize(sendBegin_[P]);
  groupOf_.assign(P, NoGroup);
  {
    std::vector<uint32_t> fill(sendBegin_.begin(), sendBegin_.end() - 1);
    for (uint32_t r = 0; r < P; ++r) {
      RankOps ops = s_.ops(r);
      for (uint32_t i = 0; i < ops.size(); ++i)
        if (ops.kind(i) == OpKind::Send) {
          uint32_t at = fill[ops.peer(i)]++;
          sendsTo_[at] = ops.globalIndex(i);
          sendKey_[at] = (uint64_t(r) << 32) | ops.tag(i);
        }
    }
  }
  for (uint32_t d = 0; d < P; ++d)
    if (!balanced(d))
      matchWithWildcards(d);
  std::vector<uint32_t>().swap(sendsTo_);
  std::vector<uint64_t>().swap(sendKey_);
  if (unmatched_ > opts_.maxListed)
    diags_.report(where_, opts_.allowUnmatched ? Severity::Warning : Severity::Error,
                  llvm::Twine(unmatched_ - opts_.maxListed) +
                      " more sends or recvs have no matching partner");
  if (unmatched_ && !opts_.allowUnmatched)
    diags_.note(where_, "with -allow-unmatched these are warnings");
}

bool Verifier::run(Statistics *stats) {
  unsigned errorsBefore = diags_.errorCount();
  if (!checkOperands())
    return false;
  if (s_.kernels() && !verifyKernels(s_, diags_, where_, stats))
    return false;
  checkCollectives();
  for (uint32_t r : nonForward_) {
    if (diags_.shouldStop())
      break;
    checkCycles(r);
  }
  if (ranksWithCycles_ > ranksListed_)
    diags_.error(where_, llvm::Twine(ranksWithCycles_ - ranksListed_) +
                             " more ranks have dependency cycles");
  if (!diags_.shouldStop())
    matchMessages();
  for (uint32_t g : selfMessages_)
    at(g, Severity::Note,
       "rank " + llvm::Twine(s_.rankOf(g)) + ": " + op(g) + " is a message to its own rank");
  if (selfCount_ > selfMessages_.size())
    diags_.note(where_, llvm::Twine(selfCount_ - selfMessages_.size()) +
                            " more messages go to their own rank");
  for (uint32_t g : zeroByte_)
    at(g, Severity::Note,
       "rank " + llvm::Twine(s_.rankOf(g)) + ": " + op(g) + " to rank " +
           llvm::Twine(s_.peer(g)) + " is a zero-byte message");
  if (zeroCount_ > zeroByte_.size())
    diags_.note(where_, llvm::Twine(zeroCount_ - zeroByte_.size()) +
                            " more messages carry zero bytes");
  if (zeroCount_)
    diags_.note(where_, "LogGOPSim charges (size-1)*G for a message; for 0 bytes that wraps "
                        "around and acts as -G");
  if (stats) {
    stats->add("verify", "ops", "Operations verified", s_.numOps());
    stats->add("verify", "deps", "Dependencies verified", s_.numDependencies());
    stats->add("verify", "messages", "Sends matched with a recv",
               sends_ - std::min<uint64_t>(sends_, unmatched_));
  }
  return diags_.errorCount() == errorsBefore;
}

class VerifyPass : public Pass {
public:
  llvm::StringRef name() const override { return "verify"; }
  llvm::Error run(Module &m, PassContext &ctx) override {
    VerifyOptions o;
    o.allowUnmatched = AllowUnmatched;
    if (m.schedule)
      verifySchedule(*m.schedule, ctx.diags, m.workloadSource, o, &ctx.stats);
    else
      for (const Module::Job &job : m.jobs)
        verifySchedule(job.schedule, ctx.diags, job.source, o, &ctx.stats);
    return llvm::Error::success();   // the PassManager stops on reported errors
  }
};

RegisterPass<VerifyPass> X("verify", "check the schedule: operands, dependency cycles, "
                                     "send/recv matching");

} // namespace

bool verifySchedule(const Schedule &s, DiagEngine &diags, llvm::StringRef where,
                    const VerifyOptions &opts, Statistics *stats) {
  return Verifier(s, diags, where, opts).run(stats);
}

void MessageSketch::add(uint32_t src, uint32_t dst, uint32_t tag, bool isSend) {
  // LLVM's 16-byte mix (CityHash's), twice with different inputs: two 64-bit hashes.
  uint64_t key = uint64_t(src) << 32 | dst;
  uint64_t h0 = llvm::hashing::detail::hash_16_bytes(key, tag);
  uint64_t h1 = llvm::hashing::detail::hash_16_bytes(tag ^ 0x9E3779B97F4A7C15ull, key);
  sum_[0] += isSend ? h0 : -h0;
  sum_[1] += isSend ? h1 : -h1;
}

bool QuietVerification::rank(uint32_t r, uint32_t numRanks, const RankOps &ops) {
  const uint32_t n = ops.size();
  bool forward = true;
  for (uint32_t i = 0; i < n; ++i) {
    OpKind k = ops.kind(i);
    uint32_t peer = ops.peer(i), tag = ops.tag(i);
    if (k == OpKind::Send) {
      if (peer >= numRanks || peer == r || ops.opSize(i) == 0 || tag == AnyTag)
        return false;
      sketch_.add(r, peer, tag, /*isSend=*/true);
    } else if (k == OpKind::Recv) {
      if (peer >= numRanks || tag == AnyTag)
        return false;
      sketch_.add(peer, r, tag, /*isSend=*/false);
    } else if (k != OpKind::Calc) {
      return false;
    }
    for (uint32_t raw : ops.successorsRaw(i))
      forward &= (raw & ~Schedule::IRequiresBit) > i;
  }
  if (forward)
    return true;
  // Some dependency points backwards: a topological order must take every op.
  return topologicalOrder(ops, indegree_, queue_);
}

} // namespace infracc
