#include "compiler/frontends/storage/StorageLayout.h"

#include "compiler/frontends/infragraph/YamlTree.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <cmath>

namespace infracc {

const char *storageRoleName(StorageRole r) {
  static const char *const names[] = {"hosts", "slb", "gs", "mds", "ccs", "bss"};
  return names[size_t(r)];
}

namespace {

constexpr const char *Keys = "hosts, slb, gs, mds, ccs, bss, ranks, placement, sector_bytes, "
                             "slice_bytes, replicas, issue, mount, read_mb_per_s, "
                             "write_mb_per_s, lookup_ns, mount_ns, messages";
constexpr const char *MessageKeys = "lookup_request, lookup_reply, mount, ack, completion";

class Reader {
public:
  explicit Reader(DiagEngine &d) : diags_(d) {}

  bool read(const YamlNode &root, StorageLayout &l);

private:
  bool error(llvm::SMLoc at, const std::string &msg) {
    diags_.error(at, msg);
    return false;
  }
  bool whole(const YamlNode &n, const std::string &what, uint64_t lo, uint64_t hi, uint64_t &out) {
    if (n.kind != YamlNode::Scalar || n.quoted || n.value.empty() ||
        !llvm::all_of(n.value, llvm::isDigit) || llvm::StringRef(n.value).getAsInteger(10, out))
      return error(n.loc, fmt::format("{} must be a whole number, not {}", what, n.describe()));
    if (out < lo || out > hi)
      return error(n.loc, fmt::format("{} {} is out of range: it must be in [{}, {}]", what, out,
                                      lo, hi));
    return true;
  }
  bool real(const YamlNode &n, const std::string &what, double &out) {
    if (n.kind != YamlNode::Scalar || n.quoted || llvm::StringRef(n.value).getAsDouble(out) ||
        !std::isfinite(out))
      return error(n.loc, fmt::format("{} must be a number, not {}", what, n.describe()));
    if (out <= 0 || out > 1e9)
      return error(n.loc, fmt::format("{} {} is out of range: it must be above 0 and at most "
                                      "1e9",
                                      what, n.value));
    return true;
  }
  bool role(const YamlNode &n, StorageRole r, StorageLayout &l);
  /// One of `words` (in the order of E's values) into `out`; else "<expected>, not ...".
  template <class E>
  bool word(const YamlNode &n, std::initializer_list<llvm::StringRef> words,
            llvm::StringRef expected, E &out) {
    if (n.kind == YamlNode::Scalar)
      for (size_t i = 0; i < words.size(); ++i)
        if (n.value == words.begin()[i]) {
          out = E(i);
          return true;
        }
    return error(n.loc, fmt::format("{}, not {}", expected.str(), n.describe()));
  }

  DiagEngine &diags_;
};

// A role: a count, or the list of the ranks its instances run on.
bool Reader::role(const YamlNode &n, StorageRole r, StorageLayout &l) {
  const std::string what = storageRoleName(r);
  const uint64_t lo = r == StorageRole::Ccs || r == StorageRole::Bss ? 1 : 0;
  uint64_t v = 0;
  if (n.kind == YamlNode::Seq) {
    if (n.items.size() < lo)
      return error(n.loc, fmt::format("{} needs at least one rank", what));
    for (const YamlNode *item : n.items) {
      if (!whole(*item, "a rank of " + what, 0, UINT32_MAX - 1, v))
        return false;
      l.at[size_t(r)].push_back(uint32_t(v));
      l.atLoc[size_t(r)].push_back(item->loc);
    }
    l.count[size_t(r)] = uint32_t(n.items.size());
    return true;
  }
  if (n.kind != YamlNode::Scalar)
    return error(n.loc, fmt::format("{} must be a count or a list of ranks, not {}", what,
                                    n.describe()));
  if (!whole(n, what, r == StorageRole::Host ? 1 : lo, 1u << 24, v))
    return false;
  l.count[size_t(r)] = uint32_t(v);
  return true;
}

bool Reader::read(const YamlNode &root, StorageLayout &l) {
  if (root.kind != YamlNode::Map)
    return error(root.loc, fmt::format("a storage layout is a mapping (keys {}), not {}", Keys,
                                       root.describe()));
  bool ok = true;
  uint64_t v = 0;
  for (const YamlNode::Entry &e : root.entries) {
    const YamlNode &n = *e.value;
    const llvm::StringRef key = e.key;
    bool roleKey = false;
    for (size_t r = 0; r < NumStorageRoles; ++r)
      if (key == storageRoleName(StorageRole(r))) {
        ok &= role(n, StorageRole(r), l);
        roleKey = true;
      }
    if (roleKey)
      continue;
    if (key == "ranks") {
      ok &= whole(n, "ranks", 1, 1u << 24, v);
      l.ranks = uint32_t(v);
      l.ranksLoc = n.loc;
    } else if (key == "placement") {
      ok &= word(n, {"grouped", "spread"}, "placement must be grouped or spread", l.placement);
    } else if (key == "sector_bytes") {
      ok &= whole(n, "sector_bytes", 1, 1u << 20, l.sectorBytes);
    } else if (key == "slice_bytes") {
      ok &= whole(n, "slice_bytes", 1, uint64_t(1) << 40, l.sliceBytes);
    } else if (key == "replicas") {
      ok &= whole(n, "replicas", 1, 1u << 16, v);
      l.replicas = uint32_t(v);
    } else if (key == "issue") {
      ok &= word(n, {"trace", "closed"},
                 "issue must be trace (each request at its timestamp) or closed (each after the "
                 "host's previous one)",
                 l.issue);
    } else if (key == "mount") {
      if (n.kind == YamlNode::Scalar && !n.quoted && (n.value == "true" || n.value == "false"))
        l.mount = n.value == "true";
      else
        ok = error(n.loc, fmt::format("mount must be true or false, not {}", n.describe()));
    } else if (key == "read_mb_per_s" || key == "write_mb_per_s") {
      double mbs = 0;
      if (real(n, key.str(), mbs))
        (key == "read_mb_per_s" ? l.readBytesPerNs : l.writeBytesPerNs) = mbs / 1000;
      else
        ok = false;
    } else if (key == "lookup_ns") {
      ok &= whole(n, "lookup_ns", 0, uint64_t(1) << 50, l.lookupNs);
    } else if (key == "mount_ns") {
      ok &= whole(n, "mount_ns", 0, uint64_t(1) << 50, l.mountNs);
    } else if (key == "messages") {
      if (n.kind != YamlNode::Map) {
        ok = error(n.loc, fmt::format("messages must be a mapping (keys {}), not {}",
                                      MessageKeys, n.describe()));
        continue;
      }
      for (const YamlNode::Entry &m : n.entries) {
        const llvm::StringRef k = m.key;
        uint64_t *slot = k == "lookup_request" ? &l.lookupRequestBytes
                         : k == "lookup_reply" ? &l.lookupReplyBytes
                         : k == "mount"        ? &l.mountBytes
                         : k == "ack"          ? &l.ackBytes
                         : k == "completion"   ? &l.completionBytes
                                               : nullptr;
        if (!slot)
          ok = error(m.keyLoc, fmt::format("unknown message '{}' (the messages are {})", m.key,
                                           MessageKeys));
        else
          ok &= whole(*m.value, "the " + m.key + " message's size", 1, uint64_t(1) << 40, *slot);
      }
    } else {
      ok = error(e.keyLoc, fmt::format("unknown key '{}' in the storage layout; the keys are {}",
                                       e.key, Keys));
    }
  }
  if (ok && l.replicas > 0 && l.replicas > l.count[size_t(StorageRole::Bss)])
    ok = error(root.get("replicas")->loc,
               fmt::format("replicas {} is more than the {} BSS", l.replicas,
                           l.count[size_t(StorageRole::Bss)]));
  if (ok && l.mount)
    for (StorageRole r : {StorageRole::Slb, StorageRole::Gs, StorageRole::Mds})
      if (l.count[size_t(r)] == 0)
        ok = error(root.loc, fmt::format("a mount needs at least one of each of slb, gs and mds "
                                         "({} is 0); set mount: false to leave mounts out",
                                         storageRoleName(r)));
  return ok;
}

} // namespace

std::optional<StorageLayout> readStorageLayout(llvm::StringRef path, DiagEngine &diags) {
  StorageLayout l;
  if (path.empty())
    return l;
  YamlTree tree;
  if (!tree.parseFile(path, "storage layout", diags))
    return std::nullopt;
  if (!tree.root())
    return l;   // an empty file: the defaults
  if (!Reader(diags).read(*tree.root(), l))
    return std::nullopt;
  return l;
}

// The role instances, each on a rank of its own.
static uint64_t roleInstances(const StorageLayout &l) {
  uint64_t needed = 0;
  for (uint32_t c : l.count)
    needed += c;
  return needed;
}

uint64_t storageRankCount(const StorageLayout &l) {
  return l.ranks ? l.ranks : roleInstances(l);
}

std::optional<std::array<std::vector<uint32_t>, NumStorageRoles>>
placeStorageRoles(const StorageLayout &l, uint32_t &numRanks, DiagEngine &diags,
                  llvm::StringRef what) {
  const uint64_t needed = roleInstances(l);
  if (l.ranks != 0 && l.ranks < needed) {
    diags.error(l.ranksLoc, fmt::format("the storage service's roles need {} ranks (hosts {}, "
                                        "slb {}, gs {}, mds {}, ccs {}, bss {}), more than "
                                        "ranks: {}",
                                        needed, l.count[0], l.count[1], l.count[2], l.count[3],
                                        l.count[4], l.count[5], l.ranks));
    return std::nullopt;
  }
  if (needed > (1u << 24)) {
    diags.error(what, fmt::format("the storage service's roles need {} ranks (at most {})",
                                  needed, 1u << 24));
    return std::nullopt;
  }
  numRanks = uint32_t(storageRankCount(l));
  std::vector<int8_t> owner(numRanks, -1);
  std::array<std::vector<uint32_t>, NumStorageRoles> out;
  for (size_t r = 0; r < NumStorageRoles; ++r)
    for (size_t k = 0; k < l.at[r].size(); ++k) {
      const uint32_t rank = l.at[r][k];
      if (rank >= numRanks) {
        diags.error(l.atLoc[r][k], fmt::format("{} is placed on rank {}, but there are {} ranks (set "
                                      "ranks:)",
                                      storageRoleName(StorageRole(r)), rank, numRanks));
        return std::nullopt;
      }
      if (owner[rank] >= 0) {
        diags.error(l.atLoc[r][k], fmt::format("rank {} is given to both {} and {}", rank,
                                      storageRoleName(StorageRole(owner[rank])),
                                      storageRoleName(StorageRole(r))));
        return std::nullopt;
      }
      owner[rank] = int8_t(r);
      out[r].push_back(rank);
    }
  // Spread placement takes the free rank nearest each target. Walking outward from the
  // target is quadratic when explicit at: lists fill a long block; these two "next free
  // rank" forests (path-halving union-find, index + 1 on the left so that 0 means none)
  // answer each query in amortised constant time.
  std::vector<uint32_t> freeRight, freeLeft;
  auto find = [](std::vector<uint32_t> &next, uint32_t i) {
    while (next[i] != i) {
      next[i] = next[next[i]];
      i = next[i];
    }
    return i;
  };
  if (l.placement == StorageLayout::Placement::Spread) {
    freeRight.resize(size_t(numRanks) + 1);
    freeLeft.resize(size_t(numRanks) + 1);
    freeRight[numRanks] = numRanks;
    freeLeft[0] = 0;
    for (uint32_t i = 0; i < numRanks; ++i) {
      freeRight[i] = owner[i] < 0 ? i : i + 1;
      freeLeft[i + 1] = owner[i] < 0 ? i + 1 : i;
    }
  }
  uint32_t next = 0;
  for (size_t r = 0; r < NumStorageRoles; ++r) {
    if (!l.at[r].empty())
      continue;
    const uint32_t n = l.count[r];
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t rank = 0;
      if (l.placement == StorageLayout::Placement::Grouped) {
        while (owner[next] >= 0)
          ++next;
        rank = next;
      } else {
        const uint32_t target = uint32_t(
            std::min<int64_t>(numRanks - 1, std::llround(double(i + 1) * numRanks / (n + 1))));
        // The nearer of the free ranks on either side, the lower one on a tie (a free
        // rank exists: the roles fit).
        const uint32_t right = find(freeRight, target), leftPlus1 = find(freeLeft, target + 1);
        if (leftPlus1 != 0 && (right == numRanks || target - (leftPlus1 - 1) <= right - target))
          rank = leftPlus1 - 1;
        else
          rank = right;
        freeRight[rank] = rank + 1;
        freeLeft[rank + 1] = rank;
      }
      owner[rank] = int8_t(r);
      out[r].push_back(rank);
    }
  }
  return out;
}

} // namespace infracc
