#include "passes/collectives/Lowering.h"

#include "passes/Pass.h"
#include "passes/collectives/Algorithms.h"
#include "passes/collectives/Splice.h"
#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>

#include <set>

namespace infracc::coll {

namespace {

struct Instance {
  CollAlgorithm algorithm = CollAlgorithm::Auto;
  CollAlgorithm acrossHosts = CollAlgorithm::Auto;
  std::vector<uint64_t> pairOffset;   // alltoallv only
  uint32_t firstRank = 0, firstOp = ~0u;  // the member that issued it first, and its op
};

// Memory of one op of the lowered schedule, for the -max-memory check: kind, peer, size,
// tag, cpu, nic (20 bytes), about two dependencies and their index (12), source offset (4),
// rounded up.
constexpr uint64_t BytesPerLoweredOp = 40;

bool isRooted(CollectiveKind k) {
  return k == CollectiveKind::Bcast || k == CollectiveKind::Reduce ||
         k == CollectiveKind::Gather || k == CollectiveKind::Scatter;
}

class Lowerer {
public:
  Lowerer(const Schedule &s, const LoweringOptions &opts, llvm::ArrayRef<uint32_t> hostOfRank,
          DiagEngine &diags, llvm::StringRef where, Recording *rec)
      : s_(s), opts_(opts), hosts_(hostOfRank), diags_(diags), where_(where.str()), rec_(rec),
        policy_(opts.policy ? *opts.policy : SelectionPolicy::defaults()) {
    emitOpts_.reduceNsPerByte = opts.reduceNsPerByte;
    emitOpts_.record = rec != nullptr;
  }

  bool prepare();
  /// The collective's own protocol, else -coll-protocol's.
  CollProtocol protocolOf(const CollectiveInfo &c) const {
    return c.protocol ? static_cast<CollProtocol>(c.protocol) : opts_.protocol;
  }
  /// False (after an error) when the lowered schedule would not fit in -max-memory.
  bool fitsInMemory();
  std::optional<Schedule> run(Statistics *stats);

private:
  void report(const CollectiveInfo &c, uint32_t rank, const llvm::Twine &msg) {
    if (c.loc.isValid())
      diags_.error(c.loc, msg);
    else
      diags_.error(where_, "rank " + llvm::Twine(rank) + ": " + msg);
  }
  void lowerRank(uint32_t r, ScheduleBuilder &b, uint64_t limitOps);
  /// Collective op `g` of rank `r`, instance `inst`, generated into frag_.
  void emitCollective(Emitter &e, uint32_t r, uint32_t g, uint64_t inst);

  const Schedule &s_;
  const LoweringOptions &opts_;
  llvm::ArrayRef<uint32_t> hosts_;
  DiagEngine &diags_;
  std::string where_;
  Recording *rec_;
  const SelectionPolicy &policy_;
  EmitOptions emitOpts_;

  std::vector<uint64_t> instanceBase_;   // per communicator: its first instance id
  std::vector<Instance> instances_;
  std::vector<llvm::DenseMap<uint32_t, uint32_t>> position_;   // per comm: rank -> member
  std::vector<std::vector<uint32_t>> hostOfMember_;            // per comm, when known
  // Per comm with a given tree: member m's children are
  // treeChildren_[c][treeChildStart_[c][m] .. treeChildStart_[c][m + 1]), ascending.
  std::vector<std::vector<uint32_t>> treeChildStart_, treeChildren_;
  std::set<const SelectionRule *> reportedRules_;

  // Per-rank scratch.
  Fragment frag_;
  Splicer splicer_;
  llvm::DenseMap<uint32_t, uint32_t> seq_;
  uint64_t opsBefore_ = 0;
  uint64_t messages_ = 0, lowered_ = 0;
  std::vector<uint64_t> perAlgorithm_ = std::vector<uint64_t>(NumCollAlgorithms, 0);
};

bool Lowerer::prepare() {
  unsigned errors = diags_.errorCount();
  // The program's own messages must stay clear of the tags collectives use.
  bool anyTagRecv = false;
  for (uint64_t g = 0; g < s_.numOps() && !diags_.shouldStop(); ++g) {
    OpKind k = s_.kind(uint32_t(g));
    if (k != OpKind::Send && k != OpKind::Recv)
      continue;
    uint32_t tag = s_.tag(uint32_t(g));
    if (tag == AnyTag) {
      anyTagRecv |= k == OpKind::Recv;
      continue;
    }
    if (tag & TagBase)
      diags_.error(where_, "rank " + llvm::Twine(s_.rankOf(uint32_t(g))) + ": " +
                               opKindName(k) + " " + s_.opName(uint32_t(g)) + " uses tag " +
                               llvm::Twine(tag) +
                               ", but tags from 2147483648 up are reserved for lowered "
                               "collectives; renumber the program's tags below 2^31");
  }
  if (diags_.errorCount() != errors)
    return false;
  if (anyTagRecv)
    diags_.warning(where_, "the program has recvs with any tag (-1); they can take messages of "
                           "lowered collectives");

  llvm::ArrayRef<Communicator> comms = s_.communicators();
  position_.resize(comms.size());
  for (size_t c = 0; c < comms.size(); ++c)
    for (uint32_t i = 0; i < comms[c].ranks.size(); ++i)
      position_[c].try_emplace(comms[c].ranks[i], i);
  treeChildStart_.resize(comms.size());
  treeChildren_.resize(comms.size());
  for (size_t c = 0; c < comms.size(); ++c) {
    llvm::ArrayRef<int32_t> up = comms[c].treeUp;
    if (up.empty())
      continue;
    std::vector<uint32_t> &start = treeChildStart_[c], &list = treeChildren_[c];
    start.assign(up.size() + 1, 0);
    auto inside = [&](int32_t parent) { return parent >= 0 && size_t(parent) < up.size(); };
    for (int32_t parent : up)   // the readers have checked every parent (treeProblem)
      if (inside(parent))
        ++start[size_t(parent) + 1];
    for (size_t m = 0; m < up.size(); ++m)
      start[m + 1] += start[m];
    list.resize(start.back());
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t m = 0; m < up.size(); ++m)   // ascending member order within each parent
      if (inside(up[m]))
        list[fill[size_t(up[m])]++] = uint32_t(m);
  }
  if (!hosts_.empty()) {
    hostOfMember_.resize(comms.size());
    for (size_t c = 0; c < comms.size(); ++c)
      for (uint32_t r : comms[c].ranks)
        hostOfMember_[c].push_back(hosts_[r]);
  }

  instanceBase_ = instanceBases(s_);
  instances_.resize(instanceBase_.back());
  llvm::DenseMap<uint32_t, uint32_t> perRank;
  if (rec_)
    rec_->instances.resize(instances_.size());

  // Algorithms (and alltoallv sizes) per instance, from the first member that issues it.
  std::vector<uint8_t> seen(instances_.size(), 0);
  for (uint32_t r = 0; r < s_.numRanks() && !diags_.shouldStop(); ++r) {
    perRank.clear();
    for (uint32_t g = s_.rankBegin(r), e = g + s_.numOps(r); g < e; ++g) {
      if (s_.kind(g) != OpKind::Collective)
        continue;
      const CollectiveInfo &c = s_.collectives()[s_.peer(g)];
      uint64_t inst = instanceBase_[c.communicator] + perRank[c.communicator]++;
      auto pos = position_[c.communicator].find(r);
      if (pos == position_[c.communicator].end()) {
        report(c, r, "rank " + llvm::Twine(r) + " is not a member of communicator " +
                         llvm::Twine(comms[c.communicator].id));
        continue;
      }
      uint32_t P = uint32_t(comms[c.communicator].ranks.size());
      Instance &in = instances_[inst];
      if (c.kind == CollectiveKind::Alltoallv) {
        if (in.pairOffset.empty())
          in.pairOffset.assign(size_t(P) * P + 1, 0);
        // Row `pos` of the matrix: this member's sizes; prefix sums come later.
        for (uint32_t d = 0; d < c.vsizesCount && d < P; ++d)
          in.pairOffset[size_t(pos->second) * P + d + 1] = s_.vsizes()[c.vsizesBegin + d];
      }
      if (seen[inst])
        continue;
      seen[inst] = 1;
      instances_[inst].firstRank = r;
      instances_[inst].firstOp = g;
      bool haveHosts = !hosts_.empty();
      CollAlgorithm a = static_cast<CollAlgorithm>(c.algorithm);
      if (a == CollAlgorithm::Auto) {
        Choice choice = policy_.choice(c.kind, c.bytes, P, haveHosts);
        a = choice.algorithm;
        if (choice.unusable) {
          if (reportedRules_.insert(choice.unusable).second) {
            diags_.error(choice.unusable->loc, "this rule matches the " +
                                                   collectiveKindName(c.kind) + " of " +
                                                   llvm::Twine(c.bytes) + " bytes on " +
                                                   llvm::Twine(P) + " ranks, but " + choice.why);
            if (c.loc.isValid())
              diags_.note(c.loc, "the collective is here");
          }
          continue;
        }
      } else if (std::string why = whyNot(a, c.kind, P, haveHosts); !why.empty()) {
        report(c, r, why);
        continue;
      } else if (a == CollAlgorithm::Tree &&
                 s_.communicators()[c.communicator].treeUp.size() != P) {
        report(c, r, "algorithm 'tree' runs on the tree its communicator declares, and "
                     "communicator " + std::to_string(s_.communicators()[c.communicator].id) +
                     " declares none (comm <id> ranks <list> tree <parents>)");
        continue;
      }
      in.algorithm = a;
      if (a == CollAlgorithm::Hierarchical) {
        llvm::DenseMap<uint32_t, bool> distinct;
        for (uint32_t h : hostOfMember_[c.communicator])
          distinct[h] = true;
        in.acrossHosts = policy_.choose(c.kind, c.bytes, uint32_t(distinct.size()), false);
      }
      if (rec_) {
        InstanceInfo &ii = rec_->instances[inst];
        ii.kind = c.kind;
        ii.bytes = c.bytes;
        ii.root = c.root;
        ii.communicator = c.communicator;
        ii.algorithm = a;
        ii.protocol = protocolOf(c);
        ii.loc = c.loc;
      }
    }
  }
  for (Instance &in : instances_)
    for (size_t i = 1; i < in.pairOffset.size(); ++i)
      in.pairOffset[i] += in.pairOffset[i - 1];
  if (rec_) {
    for (size_t i = 0; i < instances_.size(); ++i)
      rec_->instances[i].pairOffset = instances_[i].pairOffset;
  }
  if (opts_.channels > 1)
    for (uint32_t g = 0; g < s_.numOps(); ++g)
      if (s_.kind(g) == OpKind::Collective &&
          s_.cpu(g) + opts_.channels - 1 > ScheduleBuilder::MaxCpu) {
        report(s_.collectives()[s_.peer(g)], s_.rankOf(g),
               "with " + llvm::Twine(opts_.channels) + " channels this collective would use cpu " +
                   llvm::Twine(s_.cpu(g) + opts_.channels - 1) + " (at most " +
                   llvm::Twine(ScheduleBuilder::MaxCpu) + ")");
        break;
      }
  return diags_.errorCount() == errors;
}

void Lowerer::emitCollective(Emitter &e, uint32_t r, uint32_t g, uint64_t inst) {
  const CollectiveInfo &c = s_.collectives()[s_.peer(g)];
  const Communicator &comm = s_.communicators()[c.communicator];
  const Instance &in = instances_[inst];
  Group grp{comm.ranks, position_[c.communicator].lookup(r)};
  Layout L;
  L.kind = c.kind;
  L.bytes = c.bytes;
  L.members = grp.size();
  L.pairOffset = in.pairOffset;
  AlgoParams p;
  p.root = c.root;
  p.chunkBytes = c.chunkBytes ? c.chunkBytes : opts_.chunkBytes;
  p.slicing = {c.slices, std::max<uint64_t>(c.sliceAlign, 1), c.sliceMin};
  p.schedgenDeps = opts_.schedgenDeps;
  p.acrossHosts = in.acrossHosts;
  if (!hostOfMember_.empty())
    p.hostOf = hostOfMember_[c.communicator];
  p.treeUp = comm.treeUp;
  if (!comm.treeUp.empty()) {
    const std::vector<uint32_t> &start = treeChildStart_[c.communicator];
    p.treeDown = llvm::ArrayRef<uint32_t>(treeChildren_[c.communicator])
                     .slice(start[grp.me], start[grp.me + 1] - start[grp.me]);
  }
  bool barrier = c.kind == CollectiveKind::Barrier;
  e.begin(inst, s_.cpu(g), s_.nic(g), barrier, protocolOf(c));
  uint32_t channels = barrier ? 1 : opts_.channels;
  L.channels = channels;
  for (uint32_t ch = 0; ch < channels; ++ch) {
    e.setChannel(ch);
    L.channel = ch;
    generate(e, in.algorithm, grp, L, p);
  }
}

bool Lowerer::fitsInMemory() {
  // Each instance's size from the member that issued it first, times its members: exact
  // for the symmetric algorithms, an upper bound for rooted ones when the first member is
  // the root, so those are left to the check while lowering (run).
  Emitter e(frag_, emitOpts_);
  const uint64_t limitOps = maxMemoryBytes() / BytesPerLoweredOp;
  uint64_t total = s_.numOps(), largest = 0;
  const Instance *big = nullptr;
  for (const Instance &in : instances_) {
    if (in.firstOp == ~0u)
      continue;
    const CollectiveInfo &c = s_.collectives()[s_.peer(in.firstOp)];
    if (isRooted(c.kind))
      continue;
    frag_.clear();   // one instance at a time: its own ops, not a running total
    const uint64_t members = s_.communicators()[c.communicator].ranks.size();
    // A member whose ops alone would not fit is refused before they are all made.
    e.setBudget(limitOps + 1);
    try {
      emitCollective(e, in.firstRank, in.firstOp, uint64_t(&in - instances_.data()));
    } catch (const Emitter::OutOfBudget &) {
      frag_ = Fragment();
      report(c, in.firstRank,
             fmt::format("lowering the collectives ({} of {} bytes on {} ranks, {}: more "
                         "than {} operations for one rank) would need more than "
                         "-max-memory ({}); raise it with -max-memory=",
                         collectiveKindName(c.kind).str(), c.bytes, members,
                         collAlgorithmName(in.algorithm).str(), limitOps,
                         formatBytes(maxMemoryBytes())));
      return false;
    }
    uint64_t ops = frag_.ops.size() * members;
    total += ops;
    if (ops > largest) {
      largest = ops;
      big = &in;
    }
  }
  frag_ = Fragment();
  if (!big)
    return true;
  const CollectiveInfo &c = s_.collectives()[s_.peer(big->firstOp)];
  uint64_t members = s_.communicators()[c.communicator].ranks.size();
  std::string what = fmt::format("lowering the collectives (the largest: {} of {} bytes on {} "
                                 "ranks, {}, {} operations per rank)",
                                 collectiveKindName(c.kind).str(), c.bytes, members,
                                 collAlgorithmName(big->algorithm).str(), largest / members);
  if (std::optional<std::string> msg = exceedsMemory(what, total, BytesPerLoweredOp)) {
    report(c, big->firstRank, *msg);
    return false;
  }
  return true;
}

void Lowerer::lowerRank(uint32_t r, ScheduleBuilder &b, uint64_t limitOps) {
  seq_.clear();
  Emitter e(frag_, emitOpts_);
  auto record = [&](OpRecord rec) {
    if (rec_)
      rec_->records.push_back(rec);
  };
  splicer_.rank(s_, r, b, frag_, [&](uint32_t g, uint32_t base) {
    if (s_.kind(g) != OpKind::Collective) {
      record(OpRecord{});
      return false;
    }
    const CollectiveInfo &c = s_.collectives()[s_.peer(g)];
    uint64_t inst = instanceBase_[c.communicator] + seq_[c.communicator]++;
    const Instance &in = instances_[inst];
    // A collective that alone makes more ops than the limit holds stops here; the rest
    // is checked after each rank (run).
    e.setBudget(limitOps + 1);
    emitCollective(e, r, g, inst);
    ++lowered_;
    ++perAlgorithm_[uint32_t(in.algorithm)];
    if (frag_.ops.empty()) {
      // A group of one: the splicer keeps a calc 0 in its place.
      record(OpRecord{uint32_t(inst), DataMode::None, ~0u, 0, 0, 0});
      return true;
    }
    for (const Fragment::Op &op : frag_.ops)
      messages_ += op.kind == OpKind::Send;
    if (rec_) {
      uint64_t globalBase = opsBefore_ + base;
      uint32_t ivBase = uint32_t(rec_->intervals.size());
      rec_->intervals.insert(rec_->intervals.end(), frag_.intervals.begin(), frag_.intervals.end());
      for (OpRecord rec : frag_.records) {
        rec.intervalsBegin += ivBase;
        if (rec.applyAt != ~0u)
          rec.applyAt = uint32_t(globalBase + rec.applyAt);
        rec_->records.push_back(rec);
      }
    }
    return true;
  });
  opsBefore_ += b.opsInRank();   // still this rank's count after endRank
}

std::optional<Schedule> Lowerer::run(Statistics *stats) {
  ScheduleBuilder b(s_.numRanks());
  b.reserve(s_.numOps(), s_.numDependencies());
  const uint64_t limitOps = maxMemoryBytes() / BytesPerLoweredOp;
  for (uint32_t r = 0; r < s_.numRanks(); ++r) {
    try {
      lowerRank(r, b, limitOps);
    } catch (const Emitter::OutOfBudget &) {
      diags_.error(where_, fmt::format("lowering the collectives (one collective of rank {} "
                                       "alone makes more than {} operations) would need more "
                                       "than -max-memory ({}); raise it with -max-memory=",
                                       r, limitOps, formatBytes(maxMemoryBytes())));
      return std::nullopt;
    }
    // Rooted collectives (and estimates that were low) are caught here, rank by rank.
    if (std::optional<std::string> msg =
            exceedsMemory("lowering the collectives (" + std::to_string(opsBefore_) +
                              " operations after " + std::to_string(r + 1) + " of " +
                              std::to_string(s_.numRanks()) + " ranks)",
                          opsBefore_, BytesPerLoweredOp)) {
      diags_.error(where_, *msg);
      return std::nullopt;
    }
  }
  Schedule out = b.finish();
  if (stats) {
    stats->add("lower-collectives", "collectives", "Collective operations lowered", lowered_);
    stats->add("lower-collectives", "ops", "Operations after lowering", out.numOps());
    stats->add("lower-collectives", "messages", "Sends created by lowering", messages_);
    for (uint32_t a = 1; a < NumCollAlgorithms; ++a)
      if (perAlgorithm_[a])
        stats->add("lower-collectives", ("algo-" + collAlgorithmName(CollAlgorithm(a))).str(),
                   ("Collectives lowered with " + collAlgorithmName(CollAlgorithm(a))).str(),
                   perAlgorithm_[a]);
  }
  return out;
}

} // namespace

std::vector<uint64_t> instanceBases(const Schedule &s) {
  size_t comms = s.communicators().size();
  std::vector<uint64_t> count(comms, 0);
  llvm::DenseMap<uint32_t, uint32_t> perRank;
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    perRank.clear();
    for (uint32_t g = s.rankBegin(r), e = g + s.numOps(r); g < e; ++g)
      if (s.kind(g) == OpKind::Collective) {
        uint32_t c = s.collectives()[s.peer(g)].communicator;
        count[c] = std::max<uint64_t>(count[c], ++perRank[c]);
      }
  }
  std::vector<uint64_t> base(comms + 1, 0);
  for (size_t c = 0; c < comms; ++c)
    base[c + 1] = base[c] + count[c];
  return base;
}

std::optional<Schedule> lowerCollectives(const Schedule &s, const LoweringOptions &opts,
                                         llvm::ArrayRef<uint32_t> hostOfRank, DiagEngine &diags,
                                         llvm::StringRef where, Recording *rec, Statistics *stats) {
  Lowerer l(s, opts, hostOfRank, diags, where, rec);
  if (!l.prepare() || !l.fitsInMemory())
    return std::nullopt;
  return l.run(stats);
}

} // namespace infracc::coll
