#include "passes/collectives/Selection.h"

#include "passes/collectives/Algorithms.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>

namespace infracc::coll {

namespace {

using K = CollectiveKind;
using A = CollAlgorithm;
constexpr uint64_t Any = UINT64_MAX;

SelectionRule rule(K k, uint64_t maxBytes, A a, uint32_t minRanks = 0, uint32_t maxRanks = UINT32_MAX,
                   bool pow2 = false) {
  SelectionRule r{k, 0, maxBytes, minRanks, maxRanks, pow2, a, {}};
  return r;
}

bool isPow2(uint32_t x) { return x && !(x & (x - 1)); }

std::string bytesText(uint64_t lo, uint64_t hi) {
  if (lo == 0 && hi == Any)
    return "*";
  std::string s = lo ? std::to_string(lo) : "";
  s += "..";
  if (hi != Any)
    s += std::to_string(hi);
  return s;
}

} // namespace

const SelectionPolicy &SelectionPolicy::defaults() {
  static const SelectionPolicy p = [] {
    SelectionPolicy d;
    d.rules_ = {
        rule(K::Allreduce, 2048, A::RecDoub),
        rule(K::Allreduce, 1 << 20, A::Rabenseifner),
        rule(K::Allreduce, Any, A::Ring),
        rule(K::Allgather, 81920, A::RecDoub, 0, UINT32_MAX, /*pow2=*/true),
        rule(K::Allgather, 81920, A::Bruck),
        rule(K::Allgather, Any, A::Ring),
        rule(K::Reducescatter, 16384, A::Rabenseifner),
        rule(K::Reducescatter, Any, A::Ring),
        rule(K::Bcast, 12287, A::Binomial),
        rule(K::Bcast, Any, A::Binomial, 0, 7),
        rule(K::Bcast, Any, A::Ring),
        rule(K::Reduce, Any, A::Binomial),
        rule(K::Alltoall, 256, A::Bruck, 8),
        rule(K::Alltoall, 32768, A::Linear),
        rule(K::Alltoall, Any, A::Pairwise),
        rule(K::Alltoallv, Any, A::Linear),
        rule(K::Barrier, Any, A::Dissemination),
        rule(K::Gather, Any, A::Binomial),
        rule(K::Scatter, Any, A::Binomial),
    };
    return d;
  }();
  return p;
}

Choice SelectionPolicy::choice(CollectiveKind k, uint64_t bytes, uint32_t ranks,
                              bool haveHosts) const {
  Choice c;
  for (const auto *table : {&rules_, &defaults().rules_})
    for (const SelectionRule &r : *table) {
      if (r.kind != k || bytes < r.minBytes || bytes > r.maxBytes || ranks < r.minRanks ||
          ranks > r.maxRanks || (r.pow2Only && !isPow2(ranks)))
        continue;
      std::string why = whyNot(r.algorithm, k, ranks, haveHosts);
      if (why.empty()) {
        c.algorithm = r.algorithm;
        return c;
      }
      if (!c.unusable && table == &rules_) {
        c.unusable = &r;
        c.why = why;
      }
    }
  c.algorithm = algorithmsFor(k).front();   // unreachable with the defaults
  return c;
}

std::string SelectionPolicy::describe() const {
  std::string s = fmt::format("{:<15}{:<15}{:<8}{}\n", "# collective", "size", "ranks", "algorithm");
  for (const SelectionRule &r : rules_) {
    std::string ranks =
        r.pow2Only ? "pow2" : bytesText(r.minRanks, r.maxRanks == UINT32_MAX ? Any : r.maxRanks);
    s += fmt::format("{:<15}{:<15}{:<8}{}\n", collectiveKindName(r.kind).str(),
                     bytesText(r.minBytes, r.maxBytes), ranks,
                     collAlgorithmName(r.algorithm).str());
  }
  return s;
}

std::optional<SelectionPolicy> SelectionPolicy::load(DiagEngine &diags, const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    diags.error(path, "cannot read the selection table: " + buf.getError().message());
    return std::nullopt;
  }
  return parse(diags, (*buf)->getBuffer().str(), path);
}

std::optional<SelectionPolicy> SelectionPolicy::parse(DiagEngine &diags, const std::string &text,
                                                      const std::string &name) {
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name));
  llvm::StringRef all = diags.sourceMgr().getMemoryBuffer(id)->getBuffer();
  SelectionPolicy p;
  bool ok = true;
  auto error = [&](llvm::StringRef at, const llvm::Twine &msg) {
    diags.error(llvm::SMLoc::getFromPointer(at.data()), msg);
    ok = false;
  };
  // A size: digits with an optional KiB/MiB/GiB suffix.
  auto number = [&](llvm::StringRef tok, uint64_t &out, bool ranks) {
    llvm::StringRef digits = tok.take_while([](char c) { return c >= '0' && c <= '9'; });
    llvm::StringRef suffix = tok.drop_front(digits.size());
    uint64_t mult = 1;
    if (!ranks && suffix == "KiB")
      mult = 1ull << 10;
    else if (!ranks && suffix == "MiB")
      mult = 1ull << 20;
    else if (!ranks && suffix == "GiB")
      mult = 1ull << 30;
    else if (!suffix.empty())
      digits = "";
    if (digits.empty() || digits.getAsInteger(10, out) || (ranks && out > UINT32_MAX) ||
        (mult > 1 && out > UINT64_MAX / mult)) {
      error(tok, "'" + tok + "' is not a " +
                     (ranks ? "rank count (a whole number)"
                            : "size in bytes (a whole number, optionally with KiB, MiB or GiB)"));
      return false;
    }
    out *= mult;
    return true;
  };
  auto range = [&](llvm::StringRef tok, uint64_t &lo, uint64_t &hi, bool ranks) {
    lo = 0;
    hi = Any;
    if (tok == "*")
      return true;
    size_t dots = tok.find("..");
    if (dots == llvm::StringRef::npos) {
      if (!number(tok, lo, ranks))
        return false;
      hi = lo;
      return true;
    }
    llvm::StringRef a = tok.take_front(dots), b = tok.drop_front(dots + 2);
    if (!a.empty() && !number(a, lo, ranks))
      return false;
    if (!b.empty() && !number(b, hi, ranks))
      return false;
    if (lo > hi) {
      error(tok, "the range '" + tok + "' is empty; write low..high");
      return false;
    }
    return true;
  };
  llvm::SmallVector<llvm::StringRef, 0> lines;
  all.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    size_t hash = line.find('#');
    if (hash != llvm::StringRef::npos)
      line = line.take_front(hash);
    llvm::SmallVector<llvm::StringRef, 4> tok;
    line.split(tok, ' ', -1, false);
    // Tabs separate as well.
    llvm::SmallVector<llvm::StringRef, 4> fields;
    for (llvm::StringRef t : tok) {
      llvm::SmallVector<llvm::StringRef, 2> parts;
      t.split(parts, '\t', -1, false);
      for (llvm::StringRef q : parts) {
        q = q.rtrim("\r");
        if (!q.empty())
          fields.push_back(q);
      }
    }
    if (fields.empty())
      continue;
    if (fields.size() != 4) {
      error(fields.size() > 4 ? fields[4] : fields.back(),
            fields.size() > 4 ? "unexpected '" + fields[4] +
                                    "': a rule is <collective> <size> <ranks> <algorithm>"
                              : "a rule is <collective> <size> <ranks> <algorithm>; this line "
                                "has " + llvm::Twine(fields.size()) + " field" +
                                    (fields.size() == 1 ? "" : "s"));
      continue;
    }
    SelectionRule r{};
    std::optional<CollectiveKind> k = parseCollectiveKind(fields[0]);
    if (!k) {
      std::string kinds;
      for (CollectiveKind c : allCollectiveKinds())
        kinds += (kinds.empty() ? "" : ", ") + collectiveKindName(c).str();
      error(fields[0], "unknown collective '" + fields[0] + "' (collectives are " + kinds + ")");
      continue;
    }
    r.kind = *k;
    if (!range(fields[1], r.minBytes, r.maxBytes, false))
      continue;
    if (fields[2] == "pow2") {
      r.pow2Only = true;
    } else {
      uint64_t lo, hi;
      if (!range(fields[2], lo, hi, true))
        continue;
      r.minRanks = uint32_t(lo);
      r.maxRanks = hi == Any ? UINT32_MAX : uint32_t(hi);
    }
    std::optional<CollAlgorithm> a = parseCollAlgorithm(fields[3]);
    if (!a || *a == CollAlgorithm::Auto) {
      error(fields[3], "unknown algorithm '" + fields[3] + "' (algorithms are " +
                           collAlgorithmList() + ")");
      continue;
    }
    if (!applies(*a, r.kind)) {
      error(fields[3], whyNot(*a, r.kind, 2, true));
      continue;
    }
    r.algorithm = *a;
    r.loc = llvm::SMLoc::getFromPointer(fields[0].data());
    p.rules_.push_back(r);
  }
  if (!ok)
    return std::nullopt;
  return p;
}

} // namespace infracc::coll
