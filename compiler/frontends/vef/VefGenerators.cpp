// The generators of extended VEF traces. What the VEF paper leaves open is decided here
// and documented in docs/workloads.md ("Extended VEF traces"): 1 KB = 1000 bytes (the
// paper's 50,000 ARED_KBYTES are "50 MB"); FLOWS is one arrival process for the whole
// trace, its sources uniform over the tasks; the destination distributions are offsets
// from the source (below); Horovod's averages are used as exact durations, its only
// randomness the GATV_PROB draws. Random numbers come from a 64-bit Mersenne twister
// seeded with -seed, turned into distributions here (not by the standard library's
// implementation-defined ones) so that a trace generates the same schedule everywhere.
#include "compiler/frontends/vef/VefGenerators.h"

#include "compiler/frontends/vef/DcnDistributions.h"

#include "support/Limits.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <cmath>
#include <algorithm>
#include <map>
#include <queue>
#include <random>

namespace infracc::vef {
namespace {

constexpr const char *Distributions = "UNIFORM, POISSON, GAUSS";

enum class Dest { Uniform, Poisson, Gauss };

std::optional<Dest> destOf(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<Dest>>(s)
      .Case("UNIFORM", Dest::Uniform)
      .Case("POISSON", Dest::Poisson)
      .Case("GAUSS", Dest::Gauss)
      .Default(std::nullopt);
}

class Random {
public:
  explicit Random(uint64_t seed) : g_(seed) {}
  double u01() { return double(g_() >> 11) * 0x1.0p-53; }   // [0, 1)
  uint64_t below(uint64_t n) { return uint64_t(u01() * double(n)); }
  double exponential(double mean) { return -std::log1p(-u01()) * mean; }
  double normal() {   // Box-Muller
    double u = 1 - u01(), v = u01();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
  }
  uint64_t poisson(double lambda) {
    if (lambda > 30)
      return uint64_t(std::max(0.0, std::round(lambda + std::sqrt(lambda) * normal())));
    double limit = std::exp(-lambda), p = 1;
    uint64_t k = 0;
    while ((p *= u01()) > limit)
      ++k;
    return k;
  }

private:
  std::mt19937_64 g_;
};

// A destination other than `src` among n tasks. UNIFORM: any other task alike. POISSON
// and GAUSS favour nearby tasks, as traffic inside a rack or pod does: the offset from
// the source is 1 + Poisson(n/8), or 1 + |N(0, n/8)| rounded, in either direction
// (taken modulo n, and moved on by one if it lands on the source).
uint32_t destination(Random &rnd, Dest d, uint32_t src, uint32_t n) {
  if (d == Dest::Uniform) {
    uint32_t k = uint32_t(rnd.below(n - 1));
    return k >= src ? k + 1 : k;
  }
  const double spread = std::max(1.0, double(n) / 8);
  uint64_t off = d == Dest::Poisson ? 1 + rnd.poisson(spread)
                                    : 1 + uint64_t(std::llround(std::fabs(rnd.normal()) * spread));
  off %= n;
  if (off == 0)
    off = 1;
  return rnd.u01() < 0.5 ? uint32_t((src + off) % n) : uint32_t((src + n - off) % n);
}

bool checkOps(VefText &in, llvm::StringRef at, uint64_t ops) {
  // About the bytes one op of a generated schedule holds (kind, peer, size, tag, cpu,
  // dependencies), as the schedule builder keeps them.
  if (auto msg = exceedsMemory(fmt::format("the generated schedule's {} ops", ops), ops, 48))
    return in.error(at, *msg);
  return true;
}

// Generated messages as a schedule: per task a clock of calcs on cpu 1 (the gaps between
// its messages' starts, each followed by a calc of 0 that ends with it), each message's
// send on cpu 0 after its marker, so a send starts at its time whatever the sends before
// it cost — in the engines that carry a predecessor's finish time to another cpu
// (atlahs) and in the flow model (no message leaves before the present). LogGOPSim v1
// (lgs, topo) does not: there a send starts when its cpu is free (docs/workloads.md).
// Receptions are posted from the start, tagged by message.
struct Flow {
  uint32_t src, dst;
  uint64_t bytes, startNs;
};

Schedule flowSchedule(uint32_t tasks, const std::vector<Flow> &all) {
  std::vector<std::vector<uint32_t>> sends(tasks), recvs(tasks);
  for (uint32_t k = 0; k < all.size(); ++k) {
    sends[all[k].src].push_back(k);
    recvs[all[k].dst].push_back(k);
  }
  ScheduleBuilder b(tasks);
  b.reserve(4 * all.size(), 4 * all.size());
  for (uint32_t r = 0; r < tasks; ++r) {
    b.beginRank(r);
    uint64_t now = 0;
    uint32_t prevCalc = ~0u;
    for (uint32_t k : sends[r]) {
      uint32_t gap = b.addCalc(all[k].startNs - now, /*cpu=*/1);
      uint32_t tick = b.addCalc(0, /*cpu=*/1);
      b.addDependency(tick, gap, DepKind::Requires);
      now = all[k].startNs;
      uint32_t send = b.addSend(all[k].bytes, all[k].dst, k);
      b.addDependency(send, tick, DepKind::Requires);
      if (prevCalc != ~0u)
        b.addDependency(gap, prevCalc, DepKind::Requires);
      prevCalc = tick;
    }
    for (uint32_t k : recvs[r])
      b.addRecv(all[k].bytes, all[k].src, k);
    b.endRank();
  }
  return b.finish();
}

// --- FLOWS ---------------------------------------------------------------------------

struct FlowClass {
  double maxKB = -1, minKB = -1, perc = -1;
  Dest dest = Dest::Uniform;
  bool ownDest = false;
  llvm::StringRef line;
};

std::optional<Schedule> flows(VefText &in, const ExtendedHeader &h, const Tokens &ext) {
  Tokens t;
  if (!in.next(t) || t[0] != "CLASSES") {
    in.error(t.empty() ? in.rest() : t[0],
             "FLOWS: expected 'CLASSES <c> TIME <t> [<destination distribution>]'");
    return std::nullopt;
  }
  uint64_t c = 0, time = 0;
  Dest dflt = Dest::Uniform;
  if (t.size() < 4 || t[2] != "TIME" || t.size() > 5) {
    in.error(t[0], "FLOWS: expected 'CLASSES <c> TIME <t> [<destination distribution>]'");
    return std::nullopt;
  }
  if (!in.number(t[1], "the class count", c, 1024) || !in.number(t[3], "the generation time in cycles", time))
    return std::nullopt;
  if (c == 0 || time == 0) {
    in.error(c == 0 ? t[1] : t[3], "must be at least 1");
    return std::nullopt;
  }
  if (t.size() == 5) {
    auto d = destOf(t[4]);
    if (!d) {
      in.error(t[4], fmt::format("unknown destination distribution '{}' (valid: {})", t[4].str(),
                                 Distributions));
      return std::nullopt;
    }
    dflt = *d;
  }
  const llvm::StringRef classesAt = t[0];
  std::vector<FlowClass> classes(c);
  for (uint64_t i = 0; i < c; ++i) {
    if (!in.next(t)) {
      in.error(in.rest(), fmt::format("FLOWS: {} class line(s) announced, {} given", c, i));
      return std::nullopt;
    }
    uint64_t id = 0;
    if (!in.number(t[0], "a class id", id))
      return std::nullopt;
    if (id >= c) {
      in.error(t[0], fmt::format("class id {} is out of range: the ids are 0..{}", id, c - 1));
      return std::nullopt;
    }
    FlowClass &fc = classes[id];
    if (fc.perc >= 0) {
      in.error(t[0], fmt::format("class {} is given twice", id));
      return std::nullopt;
    }
    fc.line = t[0];
    for (size_t k = 1; k < t.size(); ++k) {
      llvm::StringRef key = t[k];
      if (auto d = destOf(key)) {
        fc.dest = *d;
        fc.ownDest = true;
        continue;
      }
      double *slot = key == "MAX" ? &fc.maxKB : key == "MIN" ? &fc.minKB : key == "PERC" ? &fc.perc : nullptr;
      if (!slot) {
        in.error(key, fmt::format("unknown FLOWS class key '{}' (valid: MAX, MIN, PERC, or a "
                                  "destination distribution: {})",
                                  key.str(), Distributions));
        return std::nullopt;
      }
      if (k + 1 >= t.size()) {
        in.error(key, fmt::format("{} needs a value", key.str()));
        return std::nullopt;
      }
      if (!in.real(t[++k], key == "PERC" ? "PERC" : fmt::format("{} (KB)", key.str()), *slot, 0,
                   key == "PERC" ? 100 : 1e12))
        return std::nullopt;
    }
    for (auto [v, name] : {std::pair{fc.maxKB, "MAX"}, {fc.minKB, "MIN"}, {fc.perc, "PERC"}})
      if (v < 0) {
        in.error(t[0], fmt::format("class {} has no {}", id, name));
        return std::nullopt;
      }
    if (fc.minKB > fc.maxKB) {
      in.error(t[0], fmt::format("class {}: MIN {} is above MAX {}", id, fc.minKB, fc.maxKB));
      return std::nullopt;
    }
    if (!fc.ownDest)
      fc.dest = dflt;
  }
  double total = 0;
  for (const FlowClass &fc : classes)
    total += fc.perc;
  if (std::fabs(total - 100) > 1e-6) {
    in.error(classesAt, fmt::format("the classes' PERC add up to {}, not 100", total));
    return std::nullopt;
  }
  if (h.tasks < 2) {
    in.error(ext[0], "FLOWS needs at least 2 tasks (a flow goes to another task)");
    return std::nullopt;
  }
  if (!checkOps(in, h.msgsToken, 4 * h.msgs))
    return std::nullopt;
  // One arrival process: exponential gaps of mean t / #Msgs cycles.
  Random rnd(opts::seed());
  std::vector<Flow> all;
  all.reserve(h.msgs);
  const double meanGap = double(time) / double(h.msgs);
  double cycles = 0;
  for (uint64_t k = 0; k < h.msgs; ++k) {
    cycles += rnd.exponential(meanGap);
    const uint32_t src = uint32_t(rnd.below(h.tasks));
    double pick = rnd.u01() * 100, acc = 0;
    size_t cls = classes.size() - 1;
    for (size_t i = 0; i < classes.size(); ++i)
      if (pick < (acc += classes[i].perc)) {
        cls = i;
        break;
      }
    const FlowClass &fc = classes[cls];
    const double kb = fc.minKB + (fc.maxKB - fc.minKB) * rnd.u01();
    const uint32_t dst = destination(rnd, fc.dest, src, h.tasks);
    all.push_back({src, dst, uint64_t(std::llround(kb * 1000)),
                   uint64_t(std::llround(cycles * double(h.clockPs) / 1000))});
  }
  return flowSchedule(h.tasks, all);
}

// --- HOROVOD -------------------------------------------------------------------------

struct Layer {
  double computeMs = -1, loopMs = -1, gatvBytes = -1, gatvTotal = -1, prob = -1, bcastBytes = -1,
         aredKB = -1;
};

const char *const HorovodKeys = "COMPUTE_MS, NEGOTIATION_LOOP_MS, GATV_BYTES, GATV_TOTAL_BYTES, "
                                "GATV_PROB, BCAST_BYTES, ARED_KBYTES";

double *slotOf(Layer &l, llvm::StringRef key) {
  return llvm::StringSwitch<double *>(key)
      .Case("COMPUTE_MS", &l.computeMs)
      .Case("NEGOTIATION_LOOP_MS", &l.loopMs)
      .Case("GATV_BYTES", &l.gatvBytes)
      .Case("GATV_TOTAL_BYTES", &l.gatvTotal)
      .Case("GATV_PROB", &l.prob)
      .Case("BCAST_BYTES", &l.bcastBytes)
      .Case("ARED_KBYTES", &l.aredKB)
      .Default(nullptr);
}

// `KEY value` pairs from token `from` on into `l`.
bool layerKeys(VefText &in, const Tokens &t, size_t from, Layer &l) {
  for (size_t k = from; k < t.size(); k += 2) {
    double *slot = slotOf(l, t[k]);
    if (!slot)
      return in.error(t[k], fmt::format("unknown HOROVOD key '{}' (valid: {})", t[k].str(),
                                        HorovodKeys));
    if (k + 1 >= t.size())
      return in.error(t[k], fmt::format("{} needs a value", t[k].str()));
    const bool prob = t[k] == "GATV_PROB";
    if (!in.real(t[k + 1], t[k], *slot, 0, prob ? 1 : 1e15))
      return false;
  }
  return true;
}

std::optional<Schedule> horovod(VefText &in, const ExtendedHeader &h, const Tokens &) {
  Tokens t;
  uint64_t batches = 0, layers = 0;
  if (!in.next(t) || t.size() != 4 || t[0] != "BATCHES" || t[2] != "LAYERS") {
    in.error(t.empty() ? in.rest() : t[0], "HOROVOD: expected 'BATCHES <b> LAYERS <l>'");
    return std::nullopt;
  }
  if (!in.number(t[1], "the batch count", batches, 1u << 20) ||
      !in.number(t[3], "the layer count", layers, 1u << 20))
    return std::nullopt;
  if (batches == 0 || layers == 0) {
    in.error(batches == 0 ? t[1] : t[3], "must be at least 1");
    return std::nullopt;
  }
  // DEFAULT, possibly over several lines (a line not starting with a layer id continues it).
  Layer dflt;
  std::map<uint64_t, Layer> own;
  llvm::StringRef defaultAt;
  Layer *current = nullptr;
  while (in.next(t)) {
    size_t from = 1;
    if (t[0] == "DEFAULT") {
      current = &dflt;
      defaultAt = t[0];
    } else if (llvm::all_of(t[0], llvm::isDigit)) {
      uint64_t id = 0;
      if (!in.number(t[0], "a layer id", id))
        return std::nullopt;
      if (id >= layers) {
        in.error(t[0], fmt::format("layer {} is out of range: the layers are 0..{}", id, layers - 1));
        return std::nullopt;
      }
      current = &own[id];
    } else if (current) {
      from = 0;   // continuation
    } else {
      in.error(t[0], "HOROVOD: expected 'DEFAULT <KEY> <value> ...'");
      return std::nullopt;
    }
    if (!layerKeys(in, t, from, *current))
      return std::nullopt;
  }
  if (defaultAt.empty()) {
    in.error(in.rest(), "HOROVOD: the DEFAULT layer is missing");
    return std::nullopt;
  }
  for (llvm::StringRef key : llvm::split(llvm::StringRef(HorovodKeys), ", "))
    if (*slotOf(dflt, key) < 0) {
      in.error(defaultAt, fmt::format("DEFAULT has no {} (it needs all of: {})", key.str(), HorovodKeys));
      return std::nullopt;
    }
  auto layer = [&](uint64_t i) {
    Layer l = dflt;
    if (auto it = own.find(i); it != own.end()) {
      Layer given = it->second;
      for (llvm::StringRef key : llvm::split(llvm::StringRef(HorovodKeys), ", "))
        if (double v = *slotOf(given, key); v >= 0)
          *slotOf(l, key) = v;
    }
    return l;
  };
  for (uint64_t i = 0; i < layers; ++i) {
    Layer l = layer(i);
    if (l.prob <= 0 || l.gatvBytes <= 0) {
      in.error(defaultAt, fmt::format("layer {}: with GATV_PROB {} and GATV_BYTES {} the master "
                                      "never receives GATV_TOTAL_BYTES",
                                      i, l.prob, l.gatvBytes));
      return std::nullopt;
    }
  }
  // The negotiation rounds of every (batch, layer): each worker sends GATV_BYTES with
  // probability GATV_PROB in a round, else 25 bytes; a round that leaves every worker with
  // GATV_TOTAL_BYTES at the master ends the negotiation. Drawn first, so the size is known.
  Random rnd(opts::seed());
  const uint32_t P = h.tasks;
  std::vector<std::vector<std::vector<uint64_t>>> rounds;   // [batch*layers+layer][round][rank]
  uint64_t ops = 0;
  for (uint64_t bi = 0; bi < batches; ++bi)
    for (uint64_t li = 0; li < layers; ++li) {
      Layer l = layer(li);
      std::vector<double> held(P, 0);
      auto &rs = rounds.emplace_back();
      bool done = false;
      while (!done) {
        auto &sizes = rs.emplace_back(P, 25);
        done = true;
        for (uint32_t r = 0; r < P; ++r) {
          if (held[r] < l.gatvTotal && rnd.u01() < l.prob) {
            sizes[r] = uint64_t(std::llround(l.gatvBytes));
            held[r] += l.gatvBytes;
          }
          done = done && held[r] >= l.gatvTotal;
        }
        ops += uint64_t(P) * 6;
        if (!checkOps(in, defaultAt, ops))
          return std::nullopt;
      }
    }
  ScheduleBuilder b(P);
  Communicator world{0, {}, {}};
  for (uint32_t r = 0; r < P; ++r)
    world.ranks.push_back(r);
  const uint32_t comm = b.addCommunicator(world);
  // The same sequence on every rank: compute, then negotiation rounds (gather of 4
  // bytes, the gatherv as messages to the master, two bcasts, then the allreduce or the
  // loop's wait).
  struct Step {
    enum Kind { Calc, Coll, Gatherv } kind;
    uint64_t value;                 // Calc: ns; Coll: bytes; Gatherv: round
    CollectiveKind coll = CollectiveKind::Gather;
    uint32_t unit = 0;              // Gatherv: (batch, layer) index into rounds
  };
  std::vector<Step> steps;
  for (uint64_t bi = 0, u = 0; bi < batches; ++bi)
    for (uint64_t li = 0; li < layers; ++li, ++u) {
      Layer l = layer(li);
      steps.push_back({Step::Calc, uint64_t(std::llround(l.computeMs * 1e6))});
      for (size_t round = 0; round < rounds[u].size(); ++round) {
        const bool last = round + 1 == rounds[u].size();
        steps.push_back({Step::Coll, 4, CollectiveKind::Gather});
        steps.push_back({Step::Gatherv, round, CollectiveKind::Gather, uint32_t(u)});
        steps.push_back({Step::Coll, 4, CollectiveKind::Bcast});
        steps.push_back({Step::Coll, last ? uint64_t(std::llround(l.bcastBytes)) : 25,
                         CollectiveKind::Bcast});
        if (last)
          steps.push_back({Step::Coll, uint64_t(std::llround(l.aredKB * 1000)),
                           CollectiveKind::Allreduce});
        else
          steps.push_back({Step::Calc, uint64_t(std::llround(l.loopMs * 1e6))});
      }
    }
  // Collective infos are per op in the IR: each rank's statements get their own.
  for (uint32_t r = 0; r < P; ++r) {
    b.beginRank(r);
    std::vector<uint32_t> prev;
    auto chain = [&](uint32_t op) {
      for (uint32_t p : prev)
        b.addDependency(op, p, DepKind::Requires);
      prev = {op};
    };
    for (const Step &s : steps) {
      switch (s.kind) {
      case Step::Calc:
        chain(b.addCalc(s.value));
        break;
      case Step::Coll: {
        CollectiveInfo ci;
        ci.kind = s.coll;
        ci.communicator = comm;
        ci.bytes = s.value;
        chain(b.addOp(OpKind::Collective, b.addCollective(ci), ci.bytes));
        break;
      }
      case Step::Gatherv: {
        const auto &sizes = rounds[s.unit][s.value];
        if (r != 0) {
          chain(b.addSend(sizes[r], 0, uint32_t(s.value)));
        } else {
          std::vector<uint32_t> got;
          for (uint32_t w = 1; w < P; ++w) {
            uint32_t op = b.addRecv(sizes[w], w, uint32_t(s.value));
            for (uint32_t p : prev)
              b.addDependency(op, p, DepKind::Requires);
            got.push_back(op);
          }
          if (!got.empty())
            prev = got;
        }
        break;
      }
      }
    }
    b.endRank();
  }
  return b.finish();
}

// --- DCNW and CDCNW ------------------------------------------------------------------

// A message-size distribution: a step CDF (a draw u takes the first size whose cumulative
// probability is >= u, as the HOMA simulator's generator does), in units of `unit` bytes,
// and optionally a Pareto tail beyond the table's last probability.
struct SizeCdf {
  std::vector<SizePoint> points;
  uint64_t unit = 1;
  std::optional<ParetoTail> tail;

  uint64_t sample(Random &rnd) const {
    const double u = rnd.u01();
    const SizePoint &last = points.back();
    if (tail && u > last.cumulative) {
      double extra = std::round((std::pow((1 - last.cumulative) / (1 - u), tail->k) - 1) *
                                tail->sigma / tail->k);
      return uint64_t(std::min(double(tail->cap), double(last.size * unit) + extra));
    }
    auto it = std::lower_bound(points.begin(), points.end(), u,
                               [](const SizePoint &p, double v) { return p.cumulative < v; });
    return (it == points.end() ? last.size : it->size) * unit;
  }

  // In bytes: the steps' and, with a tail, offset + the generalized Pareto's sigma/(1-k)
  // over the probability the table leaves (the cap and the rounding are ignored).
  double mean() const {
    double m = 0, prev = 0;
    for (const SizePoint &p : points) {
      m += double(p.size * unit) * (p.cumulative - prev);
      prev = p.cumulative;
    }
    if (tail)
      m += (1 - prev) * (double(points.back().size * unit) + tail->sigma / (1 - tail->k));
    return m;
  }
};


// A distribution file in the HOMA simulator's format (homatransport/sizeDistributions):
// a first line with the mean size (kept as information), then "<size in bytes>
// <cumulative probability>" lines, sizes increasing, probabilities not decreasing and
// ending at 1.
std::optional<SizeCdf> readCdf(VefText &in, llvm::StringRef fileToken, const std::string &trace) {
  llvm::SmallString<256> path(fileToken);
  if (!llvm::sys::path::is_absolute(path)) {
    path = llvm::sys::path::parent_path(trace);
    llvm::sys::path::append(path, fileToken);
  }
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    in.error(fileToken, fmt::format("cannot read the size distribution '{}': {}", path.str().str(),
                                    buf.getError().message()));
    return std::nullopt;
  }
  unsigned id = in.diags.addBuffer(std::move(*buf));
  VefText f(in.diags, in.diags.sourceMgr().getMemoryBuffer(id)->getBuffer());
  Tokens t;
  double declared = 0;
  if (!f.next(t) || t.size() != 1 || !f.real(t[0], "the mean size", declared, 0, 1e18)) {
    if (t.size() != 1 && !t.empty())
      f.error(t[0], "a size distribution starts with its mean size alone on the first line");
    else if (t.empty())
      in.error(fileToken, fmt::format("the size distribution '{}' is empty", path.str().str()));
    return std::nullopt;
  }
  SizeCdf cdf;
  double prev = 0;
  while (f.next(t)) {
    uint64_t size = 0;
    double p = 0;
    if (t.size() != 2) {
      f.error(t[0], fmt::format("expected '<size in bytes> <cumulative probability>', found {} "
                                "field(s)",
                                t.size()));
      return std::nullopt;
    }
    if (!f.number(t[0], "a size in bytes", size) || !f.real(t[1], "a cumulative probability", p, 0, 1))
      return std::nullopt;
    if (!cdf.points.empty() && size <= cdf.points.back().size) {
      f.error(t[0], fmt::format("sizes must increase: {} follows {}", size, cdf.points.back().size));
      return std::nullopt;
    }
    if (p < prev) {
      f.error(t[1], fmt::format("cumulative probabilities must not decrease: {} follows {}", t[1].str(), prev));
      return std::nullopt;
    }
    prev = p;
    cdf.points.push_back({size, p});
  }
  if (cdf.points.empty() || std::fabs(prev - 1) > 1e-6) {
    in.error(fileToken, fmt::format("the size distribution '{}' must end at cumulative probability "
                                    "1 (it ends at {})",
                                    path.str().str(), prev));
    return std::nullopt;
  }
  return cdf;
}

std::string modelNames() {
  std::string names;
  for (const DcnModel &m : dcnModels())
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", m.name, m.description);
  return names;
}

// DCNW and CDCNW: every task sends messages of sizes drawn from the distribution, with
// exponential gaps whose mean makes LOAD Gb/s per task (mean size x 8 / LOAD ns, as the
// HOMA simulator's generator does), until the trace's #Msgs messages in all. The record
// is '<model or file> [<destination distribution>] [LOAD <Gb/s per task>]'.
std::optional<Schedule> dcnTraffic(VefText &in, const ExtendedHeader &h, const Tokens &ext) {
  const bool custom = ext[1] == "CDCNW";
  Tokens t;
  if (!in.next(t)) {
    in.error(in.rest(), fmt::format("{}: expected '{} [<destination distribution>] [LOAD <Gb/s "
                                    "per task>]'",
                                    ext[1].str(),
                                    custom ? "<size distribution file>" : "<model>"));
    return std::nullopt;
  }
  Dest dest = Dest::Uniform;
  double load = 1;
  for (size_t k = 1; k < t.size(); ++k) {
    if (auto d = destOf(t[k])) {
      dest = *d;
    } else if (t[k] == "LOAD" && k + 1 < t.size()) {
      if (!in.real(t[++k], "LOAD (Gb/s per task)", load, 1e-9, 1e6))
        return std::nullopt;
    } else {
      in.error(t[k], fmt::format("unexpected '{}' (after the {}: a destination distribution, {}, "
                                 "and LOAD <Gb/s per task>)",
                                 t[k].str(), custom ? "file" : "model", Distributions));
      return std::nullopt;
    }
  }
  std::optional<SizeCdf> cdf;
  if (custom) {
    cdf = readCdf(in, t[0], h.path);
  } else if (const DcnModel *m = findDcnModel(t[0])) {
    cdf = SizeCdf{{m->table.begin(), m->table.end()}, m->bytesPerUnit, m->tail};
  } else {
    in.error(t[0], fmt::format("unknown DCNW model '{}' (models: {}; or EXT CDCNW with a "
                               "distribution file)",
                               t[0].str(), modelNames()));
  }
  if (!cdf)
    return std::nullopt;
  if (h.tasks < 2) {
    in.error(ext[0], fmt::format("{} needs at least 2 tasks (a message goes to another task)",
                                 ext[1].str()));
    return std::nullopt;
  }
  if (!checkOps(in, h.msgsToken, 4 * h.msgs))
    return std::nullopt;
  Random rnd(opts::seed());
  const double meanGapNs = cdf->mean() * 8 / load;
  // The tasks' arrival processes merged in time order.
  using Next = std::pair<double, uint32_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (uint32_t r = 0; r < h.tasks; ++r)
    next.push({rnd.exponential(meanGapNs), r});
  std::vector<Flow> all;
  all.reserve(h.msgs);
  while (all.size() < h.msgs) {
    auto [at, src] = next.top();
    next.pop();
    all.push_back({src, destination(rnd, dest, src, h.tasks), cdf->sample(rnd),
                   uint64_t(std::llround(at))});
    next.push({at + rnd.exponential(meanGapNs), src});
  }
  return flowSchedule(h.tasks, all);
}

} // namespace

std::optional<Schedule> generateExtended(VefText &in, const ExtendedHeader &h, const Tokens &ext,
                                         bool &timed) {
  // flowSchedule's clocks: FLOWS, DCNW, CDCNW.
  timed = ext.size() == 2 && (ext[1] == "FLOWS" || ext[1] == "DCNW" || ext[1] == "CDCNW");
  if (ext.size() != 2) {
    in.error(ext[0], "expected 'EXT <model>' (models: DCNW, CDCNW, FLOWS, HOROVOD)");
    return std::nullopt;
  }
  if (ext[1] == "FLOWS")
    return flows(in, h, ext);
  if (ext[1] == "HOROVOD")
    return horovod(in, h, ext);
  if (ext[1] == "CDCNW" || ext[1] == "DCNW")
    return dcnTraffic(in, h, ext);
  in.error(ext[1], fmt::format("unknown extended VEF model '{}' (models: DCNW, CDCNW, FLOWS, "
                               "HOROVOD)",
                               ext[1].str()));
  return std::nullopt;
}

} // namespace infracc::vef
