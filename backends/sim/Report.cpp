#include "backends/sim/Report.h"

#include "ir/Schedule.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace infracc::sim {

static std::string perByteText(const PerByte &v) {
  if (v.isIntegral())
    return fmt::format("{}", static_cast<uint64_t>(v.value()));
  return fmt::format("{}", v.value());
}

/// LogGOPSim: `Time: %lu s` is a difference of whole seconds and `Speed` is
/// (float)events/(float)seconds with %.2f, so "inf" for a run under a second. We print
/// our own wall clock the same way: whole seconds (truncated), same speed formula.
static void printPerformance(llvm::raw_ostream &os, const SimResult &r) {
  unsigned long secs = static_cast<unsigned long>(r.wallSeconds);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "PERFORMANCE: Processes: %u \t Events: %lu \t Time: %lu s \t Speed: %.2f ev/s\n",
                r.numRanks, static_cast<unsigned long>(r.events), secs,
                static_cast<double>(static_cast<float>(r.events) / static_cast<float>(secs)));
  os << buf;
}

static void printTimes(llvm::raw_ostream &os, const SimResult &r, const TextOptions &opt) {
  if (r.numRanks <= 16 && !opt.batch) {
    os << "Times: \n";
    for (uint32_t i = 0; i < r.numRanks; ++i)
      os << "Host " << i << ": " << r.hostFinish[i] << "\n";
    return;
  }
  printMaximum(os, r);
}

void printMaximum(llvm::raw_ostream &os, const SimResult &r) {
  // std::cout << (double)max/1e9 uses the default float format: %g, 6 digits.
  char secs[64];
  std::snprintf(secs, sizeof secs, "%g", static_cast<double>(r.makespan) / 1e9);
  os << "Maximum finishing time at host " << r.makespanRank << ": " << r.makespan << " (" << secs
     << " s)\n";
}

void printLgsText(llvm::raw_ostream &os, const SimResult &r, const LogGPParams &p,
                  const TextOptions &opt) {
  os << "LogGP network backend; size: " << r.numRanks << " (" << r.numCpus << " CPUs, " << r.numNics
     << " NICs); L=" << p.L << ", o=" << p.o << " g=" << p.g << ", G=" << perByteText(p.G)
     << ", O=" << perByteText(p.O) << ", P=" << r.numRanks << ", S=" << p.S << "\n";
  printPerformance(os, r);
  printTimes(os, r, opt);
}

void printAtlahsText(llvm::raw_ostream &os, const SimResult &r, const LogGPParams &p,
                     const TextOptions &opt) {
  char g[64];
  std::snprintf(g, sizeof g, "%f", p.G.value());
  os << "size: " << r.numRanks << " (" << r.numCpus << " CPUs, " << r.numNics << " NICs); L=" << p.L
     << ", o=" << p.o << " g=" << p.g << ", G=" << g << ", O=" << perByteText(p.O)
     << ", P=" << r.numRanks << ", S=" << p.S << "\n";
  printPerformance(os, r);
  char fct[64];
  std::snprintf(fct, sizeof fct, "%f", r.atlahsAverageFct);
  os << "Average FCT is " << fct << "\n";
  printTimes(os, r, opt);
}

static std::string peerText(uint32_t v) { return v == AnySource ? "any" : std::to_string(v); }

std::string describeOp(const Schedule &s, uint32_t rank, uint32_t g) {
  std::string out;
  std::string label = s.label(g);
  uint32_t local = g - s.rankBegin(rank);
  if (!label.empty())
    out = fmt::format("{} (op {}): ", label, local);
  else
    out = fmt::format("op {}: ", local);
  switch (s.kind(g)) {
  case OpKind::Calc:
    out += fmt::format("calc {}", s.size(g));
    if (s.cpu(g))
      out += fmt::format(" cpu {}", s.cpu(g));
    return out;
  case OpKind::Send:
    out += fmt::format("send {}b to {} tag {}", s.size(g), s.peer(g), peerText(s.tag(g)));
    break;
  case OpKind::Recv:
    out += fmt::format("recv {}b from {} tag {}", s.size(g), peerText(s.peer(g)),
                       peerText(s.tag(g)));
    break;
  default:
    out += opKindName(s.kind(g)).str();
    return out;
  }
  if (s.cpu(g))
    out += fmt::format(" cpu {}", s.cpu(g));
  if (s.nic(g))
    out += fmt::format(" nic {}", s.nic(g));
  return out;
}

void reportStuck(DiagEngine &diags, const std::string &where, const SimResult &r,
                 const Schedule &s, unsigned maxItems) {
  if (r.stoppedAtEvents) {
    diags.error(where, fmt::format("the simulation was stopped after {} events at simulated "
                                   "time {} ns, as -sim-max-events asks; {} of {} operations "
                                   "were done",
                                   r.stoppedAtEvents, r.stoppedAtTime, r.opsDone, s.numOps()));
    return;
  }
  if (r.aborted) {
    const CausalityAbort &a = r.abort;
    diags.error(where, fmt::format("the atlahs model cannot continue: rank {}: {} was posted at {} "
                                   "ns and matched a message from rank {} ({}) that arrives only "
                                   "at {} ns",
                                   a.rank, describeOp(s, a.rank, a.recvOp), a.posted, a.srcRank,
                                   describeOp(s, a.srcRank, a.sendOp), a.arrived));
    diags.note(where, "ATLAHS's LogGOPSim aborts here (assertion 'elem.time >= "
                      "matched_elem.starttime'); a recv freed by irequires is posted at time 0 in "
                      "this model. The lgs model simulates this schedule");
    return;
  }
  uint64_t ops = 0, msgs = 0;
  uint32_t ranks = 0, lastRank = ~0u;
  for (const StuckItem &it : r.stuck) {
    (it.why == StuckItem::MessageUnreceived ? msgs : ops) += 1;
    if (it.rank != lastRank) {
      ++ranks;
      lastRank = it.rank;
    }
  }
  std::string what;
  if (ops)
    what = fmt::format("{} operation{} never completed", ops, ops == 1 ? "" : "s");
  if (msgs)
    what += fmt::format("{}{} message{} never received", what.empty() ? "" : " and ", msgs,
                        msgs == 1 ? " was" : "s were");
  diags.error(where, fmt::format("the schedule cannot finish: {} ({} rank{} affected; simulated "
                                 "time reached {} ns)",
                                 what, ranks, ranks == 1 ? "" : "s", r.makespan));
  const bool atlahs = r.engine == Engine::Atlahs;
  // By rank; within a rank its operations in program order, then the messages that
  // arrived there unreceived (in arrival order).
  std::vector<const StuckItem *> order;
  for (const StuckItem &it : r.stuck)
    order.push_back(&it);
  std::stable_sort(order.begin(), order.end(), [](const StuckItem *a, const StuckItem *b) {
    bool am = a->why == StuckItem::MessageUnreceived, bm = b->why == StuckItem::MessageUnreceived;
    if (a->rank != b->rank)
      return a->rank < b->rank;
    if (am != bm)
      return bm;
    return !am && a->op < b->op;
  });
  unsigned shown = 0;
  for (const StuckItem *item : order) {
    const StuckItem &it = *item;
    if (maxItems && shown == maxItems)
      break;
    ++shown;
    std::string line;
    switch (it.why) {
    case StuckItem::WaitsForDependencies:
      line = it.total == 1
                 ? fmt::format("rank {}: {}: never started: its dependency was never satisfied",
                               it.rank, describeOp(s, it.rank, it.op))
                 : fmt::format("rank {}: {}: never started: {} of its {} dependencies were never "
                               "satisfied",
                               it.rank, describeOp(s, it.rank, it.op), it.pending, it.total);
      break;
    case StuckItem::RecvUnmatched:
      line = fmt::format("rank {}: {}: posted at {} ns, no matching message arrived", it.rank,
                         describeOp(s, it.rank, it.op), it.time);
      if (atlahs && (s.peer(it.op) == AnySource || s.tag(it.op) == AnyTag))
        line += " (the atlahs model matches source and tag exactly; -1 is no wildcard)";
      break;
    case StuckItem::RendezvousUnmatched: {
      bool waiting = false;
      for (const StuckItem &o : r.stuck)
        if (o.why == StuckItem::MessageUnreceived && o.op == it.op)
          waiting = true;
      line = fmt::format("rank {}: {}: rendezvous send ({} bytes > S) never completed: ", it.rank,
                         describeOp(s, it.rank, it.op), s.size(it.op));
      line += waiting ? "rank " + std::to_string(s.peer(it.op)) + " never posted a matching recv"
                      : "its message was taken by a recv of at most S bytes, which does not "
                        "complete a rendezvous send (the recv's size decides)";
      break;
    }
    case StuckItem::MessageUnreceived: {
      uint32_t src = s.rankOf(it.op);
      line = fmt::format("rank {}: message from rank {} ({}) arrived at {} ns, no recv matched it",
                         it.rank, src, describeOp(s, src, it.op), it.time);
      break;
    }
    }
    diags.note(where, line);
  }
  if (shown < r.stuck.size())
    diags.note(where, fmt::format("... and {} more (list them all with -sim-max-stuck=0)",
                                  r.stuck.size() - shown));
}

static nlohmann::ordered_json perByteJson(const PerByte &v) {
  if (v.isIntegral())
    return static_cast<uint64_t>(v.value());
  return v.value();
}

static const char *stepKindName(StepKind k) {
  switch (k) {
  case StepKind::Calc: return "calc";
  case StepKind::Send: return "send";
  case StepKind::Message: return "message";
  case StepKind::Recv: return "recv";
  }
  return "?";
}

nlohmann::ordered_json jsonReport(const SimResult &r, const Schedule &s, const LogGPParams &p,
                                  const std::string &model) {
  using json = nlohmann::ordered_json;
  json j;
  j["model"] = model;
  j["parameters"] = {{"L_ns", p.L},
                     {"o_ns", p.o},
                     {"g_ns", p.g},
                     {"G_ns_per_byte", perByteJson(p.G)},
                     {"O_ns_per_byte", perByteJson(p.O)},
                     {"S_bytes", p.S}};
  j["ranks"] = r.numRanks;
  j["cpus_per_rank"] = r.numCpus;
  j["nics_per_rank"] = r.numNics;
  j["makespan_ns"] = r.makespan;
  j["makespan_rank"] = r.makespanRank;
  json hosts = json::array();
  for (uint32_t i = 0; i < r.numRanks; ++i) {
    json cpus = json::array();
    for (uint32_t c = 0; c < r.numCpus; ++c)
      cpus.push_back(r.cpuFinish[size_t(i) * r.numCpus + c]);
    hosts.push_back(
        {{"rank", i}, {"finish_ns", r.hostFinish[i]}, {"cpu_finish_ns", std::move(cpus)}});
  }
  j["hosts"] = std::move(hosts);
  j["counts"] = {{"ops", s.numOps()},
                 {"events", r.events},
                 {"reinsertions", r.reinsertions},
                 {"messages", r.messages},
                 {"bytes", r.bytes},
                 {"eager", r.eager},
                 {"rendezvous", r.rendezvous}};
  if (r.criticalPath.valid) {
    const CriticalPath &cp = r.criticalPath;
    json cats = json::object();
    for (unsigned c = 0; c < NumCategories; ++c)
      cats[categoryName(Category(c))] = cp.total[c];
    json steps = json::array();
    for (const PathStep &st : cp.steps) {
      json js;
      js["kind"] = stepKindName(st.kind);
      js["rank"] = st.rank;
      if (st.kind == StepKind::Message) {
        // A message being received at `rank`; it is named by its send op.
        js["from_rank"] = st.peer;
        js["send_op"] = st.op - s.rankBegin(st.peer);
        if (std::string label = s.label(st.op); !label.empty())
          js["send_label"] = label;
      } else {
        js["op"] = st.op - s.rankBegin(st.rank);
        if (std::string label = s.label(st.op); !label.empty())
          js["label"] = label;
        if (st.kind == StepKind::Send)
          js["to_rank"] = st.peer;
      }
      js["via"] = viaName(st.via);
      js["start_ns"] = st.start;
      js["end_ns"] = st.end;
      json b = json::object();
      for (unsigned c = 0; c < NumCategories; ++c)
        if (st.amount[c])
          b[categoryName(Category(c))] = st.amount[c];
      js["breakdown_ns"] = std::move(b);
      steps.push_back(std::move(js));
    }
    j["critical_path"] = {{"length_ns", r.makespan}, {"breakdown_ns", std::move(cats)},
                          {"steps", std::move(steps)}};
  }
  j["performance"] = {{"wall_seconds", r.wallSeconds},
                      {"events_per_second",
                       r.wallSeconds > 0 ? static_cast<double>(r.events) / r.wallSeconds : 0.0}};
  return j;
}

} // namespace infracc::sim
