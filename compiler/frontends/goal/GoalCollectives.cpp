// The extended GOAL dialect (docs/collectives.md): communicator declarations between
// `num_ranks` and the first rank block, and collective statements inside rank blocks.
//
//   comm 1 ranks 0,2,4,6
//   comm 2 ranks 0..7, 16..31:3
//   l4: allreduce 1048576b comm 1 algo ring cpu 1
//   l8: allgather 65536b comm 1 algo ring proto ll128 chunk 8192b
//   l9: allreduce 1048576b comm 1 algo ring proto simple chunk 65536b slices 2 64b 4096b
//   l5: bcast 4096b comm 2 root 3
//   l6: alltoallv 10b,0b,30b,7b comm 1
//   l7: barrier
//
// Rank lists are comma-separated ranks and ranges a..b or a..b:step (b < a counts
// down). Clauses come in the order comm, root, algo, proto, chunk, slices, cpu, nic, each
// at most once; `comm` defaults to 0, the communicator of all ranks; `proto`, `chunk` and
// `slices` (what a trace says NCCL chose) override -coll-protocol and -coll-chunk-size
// for this statement and split its ring steps as NCCL's Simple protocol does.
#include "compiler/frontends/goal/GoalTextParser.h"

#include "ir/Collectives.h"
#include "support/Limits.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>

#include <cctype>
#include <iterator>
#include <optional>
#include <string>

namespace infracc::goal {

namespace {

// A communicator member while its line is read: 4 bytes in the schedule's list and a
// set entry (about 12) for the check that no rank is listed twice.
constexpr uint64_t BytesPerMember = 16;

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

llvm::StringRef peekWord(const char *p) {
  const char *q = p;
  while (isWordChar(*q))
    ++q;
  return llvm::StringRef(p, size_t(q - p));
}

bool atStatementEnd(const char *p) {
  return *p == '\n' || *p == '\r' || *p == '/' || *p == '\0';
}

// --- comm <id> ranks <list> [tree <parents>] ------------------------------------------

/// `tree -,0,1,1`: each communicator rank's parent (a communicator rank), `-` at the root.
bool parseTree(TextParser &p, Communicator &c) {
  const char *treeLoc = p.pos();
  p.consume("tree");
  const uint64_t n = c.ranks.size();
  for (;;) {
    p.skipBlanks();
    const char *loc = p.pos();
    if (p.consume("-")) {
      c.treeUp.push_back(-1);
    } else {
      uint64_t up;
      if (!p.parseNumber(up, "parent (a communicator rank, or - for the root)", n - 1))
        return false;
      if (up == c.treeUp.size()) {
        p.error(loc, "communicator rank " + llvm::Twine(up) + " is its own parent");
        return false;
      }
      c.treeUp.push_back(int32_t(up));
    }
    if (!p.consume(","))
      break;
  }
  if (c.treeUp.size() != n) {
    p.error(treeLoc, "the tree gives " + llvm::Twine(c.treeUp.size()) + " parents for " +
                         llvm::Twine(n) + " ranks (one per communicator rank, '-' for the root)");
    return false;
  }
  if (std::string why = treeProblem(c.treeUp); !why.empty()) {
    p.error(treeLoc, "the tree " + why);
    return false;
  }
  return true;
}

bool parseCommDecl(TextParser &p, const char *keywordLoc) {
  p.skipBlanks();
  const char *idLoc = p.pos();
  uint64_t id;
  if (!p.parseNumber(id, "communicator id", 0xFFFFFFFEull))
    return false;
  if (id == 0) {
    p.error(idLoc, "communicator 0 is predeclared as all ranks (0.." +
                       llvm::Twine(p.numRanks() - 1) + "); declare others with ids from 1");
    return false;
  }
  if (p.builder().findCommunicator(static_cast<uint32_t>(id)) != ~0u) {
    p.error(idLoc, "communicator " + llvm::Twine(id) + " is declared twice");
    return false;
  }
  if (!p.expect("ranks", "after the communicator id: comm <id> ranks <list>"))
    return false;
  Communicator c;
  c.id = static_cast<uint32_t>(id);
  llvm::DenseSet<uint32_t> seen;
  std::string rangeHint = "rank";
  uint64_t maxRank = p.numRanks() - 1;
  for (;;) {
    p.skipBlanks();
    const char *loc = p.pos();
    uint64_t a, b, step = 1;
    if (!p.parseNumber(a, rangeHint, maxRank))
      return false;
    b = a;
    if (p.consume("..")) {
      p.skipBlanks();
      const char *bLoc = p.pos();
      if (!p.parseNumber(b, rangeHint, maxRank))
        return false;
      (void)bLoc;
      if (p.consume(":")) {
        p.skipBlanks();
        const char *sLoc = p.pos();
        if (!p.parseNumber(step, "range step", UINT32_MAX))
          return false;
        if (step == 0) {
          p.error(sLoc, "a range step must be at least 1");
          return false;
        }
      }
    }
    // a..b counts down when b < a (a reversed order is a different communicator).
    uint64_t count = (a <= b ? b - a : a - b) / step + 1;
    // A line of a few bytes may list every rank: thousands of such lines are billions
    // of members (4 bytes each in the schedule, and a set entry while the line is read).
    // Said once: the lines after the first too many are dropped without a word.
    auto tooMany = [&](uint64_t members) {
      return exceedsMemory("the communicators' " + std::to_string(members) + " members",
                           members, BytesPerMember);
    };
    bool saidSo = tooMany(p.communicatorMembers).has_value();
    p.communicatorMembers += count;
    if (std::optional<std::string> msg = tooMany(p.communicatorMembers)) {
      if (!saidSo)
        p.error(loc, *msg);
      return false;
    }
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t r = a <= b ? a + k * step : a - k * step;
      if (!seen.insert(static_cast<uint32_t>(r)).second) {
        p.error(loc, "rank " + llvm::Twine(r) + " is listed twice in communicator " +
                         llvm::Twine(id));
        return false;
      }
      c.ranks.push_back(static_cast<uint32_t>(r));
    }
    if (!p.consume(","))
      break;
  }
  (void)keywordLoc;
  p.skipBlanks();
  if (peekWord(p.pos()) == "tree" && !parseTree(p, c))
    return false;
  if (!p.endStatement([&] {
        return std::string(c.treeUp.empty() ? "',' and more ranks, 'tree', or the end of the line"
                                            : "',' and more parents, or the end of the line");
      }))
    return false;
  p.builder().addCommunicator(std::move(c));
  return true;
}

// --- collective statements -------------------------------------------------------------

uint32_t worldCommunicator(TextParser &p) {
  uint32_t idx = p.builder().findCommunicator(0);
  if (idx != ~0u)
    return idx;
  Communicator world;
  world.id = 0;
  world.ranks.resize(p.numRanks());
  for (uint32_t r = 0; r < p.numRanks(); ++r)
    world.ranks[r] = r;
  return p.builder().addCommunicator(std::move(world));
}

bool parseCollective(TextParser &p, const OpStatement &st, CollectiveKind kind) {
  CollectiveInfo info;
  info.kind = kind;
  info.loc = llvm::SMLoc::getFromPointer(st.keyword);
  llvm::StringRef name = collectiveKindName(kind);
  llvm::SmallVector<uint64_t, 16> vsizes;
  const char *sizesLoc = nullptr;
  if (kind == CollectiveKind::Alltoallv) {
    p.skipBlanks();
    sizesLoc = p.pos();
    do {
      uint64_t v;
      if (!p.parseNumber(v, "bytes sent to a peer", UINT64_MAX) ||
          !p.expect("b", "after a size (alltoallv takes one size per peer: 8b,0b,16b)"))
        return false;
      vsizes.push_back(v);
    } while (p.consume(","));
  } else if (collectiveHasSize(kind)) {
    if (!p.parseNumber(info.bytes, "size in bytes", UINT64_MAX) ||
        !p.expect("b", "after the size (sizes are written like 1024b)"))
      return false;
  }

  static constexpr llvm::StringRef Order[] = {"comm", "root", "algo", "proto", "chunk", "slices", "cpu", "nic"};
  constexpr size_t NumClauses = std::size(Order);
  bool present[NumClauses] = {};
  const char *clauseLoc[NumClauses] = {};
  uint64_t commId = 0, root = 0, cpu = 0, nic = 0;
  size_t next = 0;
  auto expected = [&] {
    std::string s;
    for (size_t k = next; k < NumClauses; ++k) {
      if (k == 1 && !collectiveHasRoot(kind))
        continue;
      s += "'" + Order[k].str() + "', ";
    }
    return s + "or the end of the line";
  };
  for (;;) {
    p.skipBlanks();
    if (atStatementEnd(p.pos()))
      break;   // consumed after the checks below (a failed statement skips its line)
    llvm::StringRef word = peekWord(p.pos());
    size_t i = 0;
    while (i < NumClauses && word != Order[i])
      ++i;
    if (i == NumClauses) {
      std::string found = word.empty() ? std::string("'") + *p.pos() + "'" : "'" + word.str() + "'";
      p.error(p.pos(), "expected " + expected() + " after the " + name + ", found " + found);
      return false;
    }
    if (i == 1 && !collectiveHasRoot(kind)) {
      p.error(p.pos(), name + " has no root (only bcast, reduce, gather and scatter do)");
      return false;
    }
    if (present[i]) {
      p.error(p.pos(), "'" + Order[i] + "' is given twice");
      return false;
    }
    if (i < next) {
      p.error(p.pos(), "'" + Order[i] + "' must come before '" + Order[next - 1] +
                           "' (clauses go in the order comm, root, algo, proto, chunk, slices, cpu, nic)");
      return false;
    }
    clauseLoc[i] = p.pos();
    p.consume(Order[i]);
    present[i] = true;
    next = i + 1;
    switch (i) {
    case 0:
      if (!p.parseNumber(commId, "communicator id", 0xFFFFFFFEull))
        return false;
      break;
    case 1:
      if (!p.parseNumber(root, "root", UINT32_MAX))
        return false;
      break;
    case 2: {
      p.skipBlanks();
      const char *loc = p.pos();
      llvm::StringRef algo = peekWord(loc);
      std::optional<CollAlgorithm> a = parseCollAlgorithm(algo);
      if (!a) {
        p.error(loc, "unknown algorithm " + (algo.empty() ? std::string("(none)") : "'" + algo.str() + "'") +
                         "; algorithms are auto, " + collAlgorithmList());
        return false;
      }
      p.consume(algo);
      info.algorithm = static_cast<uint32_t>(*a);
      break;
    }
    case 3: {
      p.skipBlanks();
      const char *loc = p.pos();
      llvm::StringRef proto = peekWord(loc);
      std::optional<CollProtocol> pr = parseCollProtocol(proto);
      if (!pr) {
        p.error(loc, "unknown protocol " +
                         (proto.empty() ? std::string("(none)") : "'" + proto.str() + "'") +
                         "; protocols are simple, ll and ll128");
        return false;
      }
      p.consume(proto);
      info.protocol = static_cast<uint8_t>(*pr);
      break;
    }
    case 4:
      if (!p.parseNumber(info.chunkBytes, "chunk size in bytes", UINT64_MAX) ||
          !p.expect("b", "after the chunk size (sizes are written like 1024b)"))
        return false;
      if (info.chunkBytes == 0) {
        p.error(clauseLoc[4], "a chunk of 0 bytes; leave 'chunk' out to use -coll-chunk-size");
        return false;
      }
      break;
    case 5: {   // slices <count> <align>b <min>b
      uint64_t count = 0;
      if (!p.parseNumber(count, "number of slices", 1024))
        return false;
      p.skipBlanks();
      if (!p.parseNumber(info.sliceAlign, "slice alignment in bytes", UINT32_MAX) ||
          !p.expect("b", "after the slice alignment (slices <count> <align>b <min>b)"))
        return false;
      p.skipBlanks();
      if (!p.parseNumber(info.sliceMin, "smallest slice in bytes", UINT64_MAX) ||
          !p.expect("b", "after the smallest slice (slices <count> <align>b <min>b)"))
        return false;
      if (count == 0 || info.sliceAlign == 0) {
        p.error(clauseLoc[5], "slices need a count and an alignment of at least 1");
        return false;
      }
      info.slices = uint32_t(count);
      break;
    }
    case 6:
      if (!p.parseNumber(cpu, "cpu index", ScheduleBuilder::MaxCpu))
        return false;
      break;
    case 7:
      if (!p.parseNumber(nic, "nic index", ScheduleBuilder::MaxNic))
        return false;
      break;
    }
  }

  uint32_t comm;
  if (commId == 0) {
    comm = worldCommunicator(p);
  } else {
    comm = p.builder().findCommunicator(static_cast<uint32_t>(commId));
    if (comm == ~0u) {
      const char *loc = clauseLoc[0];
      p.error(loc, "communicator " + llvm::Twine(commId) +
                       " is not declared; declare it after num_ranks: comm " +
                       llvm::Twine(commId) + " ranks <list>");
      return false;
    }
  }
  info.communicator = comm;
  size_t commSize = p.builder().communicator(comm).ranks.size();
  if (root >= commSize) {
    p.error(clauseLoc[1], "root " + llvm::Twine(root) + " is not a rank of communicator " +
                              llvm::Twine(commId) + ", which has " + llvm::Twine(commSize) +
                              " ranks (roots are communicator ranks 0.." +
                              llvm::Twine(commSize - 1) + ")");
    return false;
  }
  info.root = static_cast<uint32_t>(root);
  if (kind == CollectiveKind::Alltoallv) {
    if (vsizes.size() != commSize) {
      p.error(sizesLoc, "alltoallv gives " + llvm::Twine(vsizes.size()) +
                            " sizes, but communicator " + llvm::Twine(commId) + " has " +
                            llvm::Twine(commSize) + " ranks (one size per rank, in "
                                                    "communicator order)");
      return false;
    }
    info.vsizesBegin = p.builder().addVSizes(vsizes);
    info.vsizesCount = static_cast<uint32_t>(vsizes.size());
    for (uint64_t v : vsizes)
      info.bytes += v;
  }
  if (!p.endStatement(expected))
    return false;
  uint32_t index = p.builder().addCollective(info);
  p.addOp(st, OpKind::Collective, index, info.bytes, 0, static_cast<uint32_t>(cpu),
          static_cast<uint32_t>(nic));
  return true;
}

template <CollectiveKind K> bool parseKind(TextParser &p, const OpStatement &st) {
  return parseCollective(p, st, K);
}

} // namespace

const Dialect &Dialect::extended() {
  static const Dialect d = [] {
    Dialect e = Dialect::plain();
    using K = CollectiveKind;
    e.ops.push_back({"allreduce", parseKind<K::Allreduce>});
    e.ops.push_back({"allgather", parseKind<K::Allgather>});
    e.ops.push_back({"reducescatter", parseKind<K::Reducescatter>});
    e.ops.push_back({"bcast", parseKind<K::Bcast>});
    e.ops.push_back({"reduce", parseKind<K::Reduce>});
    e.ops.push_back({"alltoall", parseKind<K::Alltoall>});
    e.ops.push_back({"alltoallv", parseKind<K::Alltoallv>});
    e.ops.push_back({"barrier", parseKind<K::Barrier>});
    e.ops.push_back({"gather", parseKind<K::Gather>});
    e.ops.push_back({"scatter", parseKind<K::Scatter>});
    e.declarations.push_back({"comm", parseCommDecl});
    return e;
  }();
  return d;
}

} // namespace infracc::goal
