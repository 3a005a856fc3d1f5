#include "backends/goal/GoalWriter.h"

#include "support/Progress.h"

#include "ir/Collectives.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

namespace infracc::goal {

namespace {

// Appends to a fixed buffer flushed to the stream: about ten times faster than
// formatting through raw_ostream for hundreds of millions of small numbers.
class LineBuffer {
public:
  explicit LineBuffer(llvm::raw_ostream &os) : os_(os) {}
  ~LineBuffer() { flush(); }

  /// Makes room for one line (every line we write is far shorter).
  void reserveLine() {
    if (pos_ > sizeof(buf_) - 512)
      flush();
  }
  void put(llvm::StringRef s) {
    if (pos_ + s.size() > sizeof(buf_)) {
      flush();
      if (s.size() > sizeof(buf_)) {
        os_ << s;
        return;
      }
    }
    std::memcpy(buf_ + pos_, s.data(), s.size());
    pos_ += s.size();
  }
  void put(char c) { buf_[pos_++] = c; }
  void num(uint64_t v) {
    pos_ = size_t(std::to_chars(buf_ + pos_, buf_ + sizeof(buf_), v).ptr - buf_);
  }
  void label(uint32_t local) {
    put('l');
    num(uint64_t(local) + 1);
  }
  void flush() {
    os_.write(buf_, pos_);
    pos_ = 0;
  }

private:
  llvm::raw_ostream &os_;
  char buf_[1 << 16];
  size_t pos_ = 0;
};

// Ranks and tags; the wildcard (any source, any tag) is written -1.
void printOrWildcard(LineBuffer &b, uint32_t v) {
  if (v == AnySource)
    b.put("-1");
  else
    b.num(v);
}

// `0..7`, `0..14:2`, `7..0`, `3` pieces joined by commas: runs of three or more ranks
// with a constant step (up or down) are written as ranges.
void printRankList(LineBuffer &b, llvm::ArrayRef<uint32_t> ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    if (i)
      text += ',';
    size_t j = i + 1;
    int64_t step = j < ranks.size() ? int64_t(ranks[j]) - int64_t(ranks[i]) : 0;
    if (step != 0)
      while (j + 1 < ranks.size() && int64_t(ranks[j + 1]) - int64_t(ranks[j]) == step)
        ++j;
    text += std::to_string(ranks[i]);
    if (step != 0 && j - i >= 2) {
      text += ".." + std::to_string(ranks[j]);
      if (step != 1 && step != -1)
        text += ":" + std::to_string(step < 0 ? -step : step);
      i = j + 1;
    } else {
      ++i;
    }
  }
  b.put(text);
}

bool isWorld(const Communicator &c, uint32_t numRanks) {
  if (c.id != 0 || c.ranks.size() != numRanks)
    return false;
  for (uint32_t r = 0; r < numRanks; ++r)
    if (c.ranks[r] != r)
      return false;
  return true;
}

void printCollective(LineBuffer &b, const Schedule &s, uint32_t g) {
  const CollectiveInfo &c = s.collectives()[s.peer(g)];
  b.put(collectiveKindName(c.kind));
  if (c.kind == CollectiveKind::Alltoallv) {
    for (uint32_t i = 0; i < c.vsizesCount; ++i) {
      b.put(i ? "," : " ");
      b.put(std::to_string(s.vsizes()[c.vsizesBegin + i]) + "b");
    }
  } else if (c.kind != CollectiveKind::Barrier) {
    b.put(' ');
    b.num(c.bytes);
    b.put('b');
  }
  uint32_t id = c.communicator < s.communicators().size() ? s.communicators()[c.communicator].id
                                                          : c.communicator;
  if (id != 0) {
    b.put(" comm ");
    b.num(id);
  }
  if (collectiveHasRoot(c.kind) && c.root != 0) {
    b.put(" root ");
    b.num(c.root);
  }
  if (c.algorithm) {
    b.put(" algo ");
    b.put(collAlgorithmName(static_cast<CollAlgorithm>(c.algorithm)));
  }
  if (c.protocol) {
    b.put(" proto ");
    b.put(collProtocolName(static_cast<CollProtocol>(c.protocol)));
  }
  if (c.chunkBytes)
    b.put(fmt::format(" chunk {}b", c.chunkBytes));
  if (c.slices)
    b.put(fmt::format(" slices {} {}b {}b", c.slices, c.sliceAlign, c.sliceMin));
}

} // namespace

llvm::Error checkPlainText(const Schedule &s, DiagEngine &diags, llvm::StringRef where) {
  unsigned before = diags.errorCount();
  uint64_t collectives = 0;
  for (uint32_t r = 0; r < s.numRanks() && !diags.shouldStop(); ++r) {
    uint32_t end = s.rankBegin(r) + s.numOps(r);
    for (uint32_t g = s.rankBegin(r); g < end && !diags.shouldStop(); ++g) {
      OpKind k = s.kind(g);
      if (isGoalCoreKind(k) && k != OpKind::Send && k != OpKind::Calc)
        continue;
      std::string op = "rank " + std::to_string(r) + " operation " + s.opName(g);
      if (k == OpKind::Collective) {
        if (collectives++)
          continue;
        std::string what = "collective";
        if (s.peer(g) < s.collectives().size())
          what += " (" + collectiveKindName(s.collectives()[s.peer(g)].kind).str() + ")";
        diags.error(where, op + " is a " + what +
                               ", which plain GOAL cannot express; lower it to sends, recvs "
                               "and calcs with -passes=lower-collectives (or write the "
                               "extended dialect with -emit=goal-extended)");
      } else if (!isGoalCoreKind(k)) {
        diags.error(where, op + " is a " + opKindName(k) +
                               ", which plain GOAL cannot express; lower it first (plain GOAL "
                               "has send, recv and calc)");
      } else if (k == OpKind::Send && s.peer(g) == AnySource) {
        diags.error(where, op + " is a send to any rank (-1), which GOAL cannot express");
      } else if (k == OpKind::Calc && s.nic(g) != 0) {
        diags.error(where, op + " is a calc on nic " + std::to_string(s.nic(g)) +
                               "; GOAL text has no nic clause for calc (binary GOAL does)");
      }
    }
  }
  if (collectives > 1)
    diags.note(where, llvm::Twine(collectives - 1) + " more collective operations are not lowered");
  return diags.errorCount() != before ? reportedError() : llvm::Error::success();
}

void printText(const Schedule &s, llvm::raw_ostream &os, bool extended, Progress *progress) {
  LineBuffer b(os);
  b.put("num_ranks ");
  b.num(s.numRanks());
  b.put('\n');
  if (extended)
    for (const Communicator &c : s.communicators()) {
      if (isWorld(c, s.numRanks()))
        continue;
      b.reserveLine();
      b.put("comm ");
      b.num(c.id);
      b.put(" ranks ");
      printRankList(b, c.ranks);
      if (!c.treeUp.empty()) {   // may be longer than a line's reserve: one put
        std::string tree = " tree ";
        for (size_t i = 0; i < c.treeUp.size(); ++i)
          tree += (i ? "," : "") + (c.treeUp[i] < 0 ? std::string("-") : std::to_string(c.treeUp[i]));
        b.put(tree);
      }
      b.put('\n');
    }
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    if (progress)
      progress->update(s.rankBegin(r));
    b.reserveLine();
    b.put("\nrank ");
    b.num(r);
    b.put(" {\n");
    RankOps ops = s.ops(r);
    const uint32_t n = ops.size();
    for (uint32_t i = 0; i < n; ++i) {
      b.reserveLine();
      b.label(i);
      b.put(": ");
      OpKind k = ops.kind(i);
      switch (k) {
      case OpKind::Send:
      case OpKind::Recv:
        b.put(k == OpKind::Send ? "send " : "recv ");
        b.num(ops.opSize(i));
        b.put(k == OpKind::Send ? "b to " : "b from ");
        printOrWildcard(b, ops.peer(i));
        b.put(" tag ");
        printOrWildcard(b, ops.tag(i));
        break;
      case OpKind::Calc:
        b.put("calc ");
        b.num(ops.opSize(i));
        break;
      case OpKind::Collective:
        if (extended && ops.peer(i) < s.collectives().size()) {
          printCollective(b, s, ops.globalIndex(i));
          break;
        }
        [[fallthrough]];
      case OpKind::Kernel:
        // Only reachable with `extended`: -print-after shows the launch.
        b.put("kernel ");
        b.num(ops.peer(i));
        break;
      default:
        // Only reachable with `extended` (checkPlainText rejects the rest).
        b.put(opKindName(k));
        b.put(' ');
        b.num(ops.opSize(i));
        b.put('b');
        break;
      }
      if (uint32_t cpu = ops.cpu(i)) {
        b.put(" cpu ");
        b.num(cpu);
      }
      if (uint32_t nic = ops.nic(i); nic && (k != OpKind::Calc || extended)) {
        b.put(" nic ");
        b.num(nic);
      }
      b.put('\n');
    }
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t raw : ops.successorsRaw(i)) {
        b.reserveLine();
        b.label(raw & ~Schedule::IRequiresBit);
        b.put((raw & Schedule::IRequiresBit) ? " irequires " : " requires ");
        b.label(i);
        b.put('\n');
      }
    }
    b.put("}\n");
  }
  if (progress)
    progress->update(s.numOps());
}

} // namespace infracc::goal
