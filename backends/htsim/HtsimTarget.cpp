// -emit=htsim -o DIR: fabric.topo (the fat tree), workload.cm (flows and triggers for
// csg-htsim), workload.bin (binary GOAL for ATLAHS's GOAL-driven htsim), mapping.txt
// (ranks, attach points, htsim nodes, switches), flows.tsv (what each flow carries)
// and run.sh (the command lines; it writes results.tsv).
#include "backends/goal/GoalWriter.h"
#include "backends/htsim/ConnectionMatrix.h"
#include "backends/htsim/FatTree.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/FabricCosts.h"
#include "passes/NicAssignment.h"
#include "passes/Pass.h"
#include "passes/RankGrouping.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace infracc::htsim {
namespace {
namespace cl = llvm::cl;

cl::opt<double> LinkLatency(
    "htsim-link-latency", cl::value_desc("ns"),
    cl::desc("-emit=htsim: latency in ns of fabric links that have none (default 1000, htsim's "
             "own hop latency, with a warning naming the links)"),
    cl::cat(opts::backendCategory()));

enum class RecvTrigger { SendDone, RecvDone };
cl::opt<RecvTrigger> RecvTriggerKind(
    "htsim-recv-trigger", cl::init(RecvTrigger::SendDone),
    cl::desc("-emit=htsim: which completion a dependency on a recv waits for (default "
             "send-done)"),
    cl::values(clEnumValN(RecvTrigger::SendDone, "send-done",
                          "the message's sender is done (send_done_trigger; what stock "
                          "csg-htsim fires)"),
               clEnumValN(RecvTrigger::RecvDone, "recv-done",
                          "its receiver is done (recv_done_trigger; stock csg-htsim never "
                          "fires it)")),
    cl::cat(opts::backendCategory()));

// The input's name for comments in the outputs: the file name (or the -fabric= text),
// with control characters and runs of spaces made harmless (run.sh is a shell script).
std::string baseName(llvm::StringRef source) {
  std::string name = source.starts_with("-fabric=") ? source.str()
                                                    : llvm::sys::path::filename(source).str();
  std::string out;
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\'')
      c = '?';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  return out;
}

std::string copyName(const FatTree &ft, uint32_t copy) { return ft.copyNames[copy]; }

// --- -end: a generous estimate of when the last flow finishes -------------------------

uint64_t estimateEndUs(const ConnectionMatrix &cm, const FatTree &ft) {
  const TopoParams &p = ft.params;
  const double s0 = double(p.tier[0].speedGbps) * 1e9, s1 = double(p.tier[1].speedGbps) * 1e9;
  const double s2 = p.tiers == 3 ? double(p.tier[2].speedGbps) * 1e9 : s1;
  const double slowest = std::min({s0, s1, s2});
  double oneWayNs = 0;
  for (uint64_t t = 0; t < p.tiers; ++t)
    oneWayNs += 2.0 * double(p.tier[t].latencyNs) + 2.0 * double(p.tier[t].switchLatencyNs);
  const double rttNs = 2 * oneWayNs;
  // Busiest host link, ToR uplink bundle and pod uplinks, each at full speed.
  std::vector<double> hostOut(p.nodes, 0), hostIn(p.nodes, 0);
  std::vector<double> torOut(ft.shape.tors(), 0), torIn(ft.shape.tors(), 0);
  std::vector<double> podOut(ft.shape.pods, 0), podIn(ft.shape.pods, 0);
  const uint64_t perTor = p.tier[0].radixDown;
  for (const CmFlow &f : cm.flows) {
    double bits = 8.0 * double(f.size);
    hostOut[f.src] += bits;
    hostIn[f.dst] += bits;
    if (f.src / perTor != f.dst / perTor) {
      torOut[f.src / perTor] += bits;
      torIn[f.dst / perTor] += bits;
    }
    if (f.src / p.podsize != f.dst / p.podsize) {
      podOut[f.src / p.podsize] += bits;
      podIn[f.dst / p.podsize] += bits;
    }
  }
  auto most = [](const std::vector<double> &a, const std::vector<double> &b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i)
      m = std::max({m, a[i], b[i]});
    return m;
  };
  double loadNs = most(hostOut, hostIn) / s0 * 1e9 +
                  most(torOut, torIn) / (double(p.tier[0].radixUp) * s1) * 1e9;
  if (p.tiers == 3)
    loadNs += most(podOut, podIn) / (double(ft.shape.aggsPerPod * p.tier[1].radixUp) * s2) * 1e9;
  // Longest chain of flows, each at the slowest link speed plus a round trip.
  std::vector<double> finish(cm.flows.size(), 0), fired(cm.triggers.size(), 0);
  std::vector<uint32_t> remaining(cm.triggers.size());
  std::vector<std::vector<uint32_t>> targets(cm.triggers.size());
  for (size_t t = 0; t < cm.triggers.size(); ++t)
    remaining[t] = cm.triggers[t].count;
  std::vector<uint32_t> queue;
  for (uint32_t i = 0; i < cm.flows.size(); ++i) {
    if (cm.flows[i].trigger)
      targets[cm.flows[i].trigger - 1].push_back(i);
    else
      queue.push_back(i);
  }
  double chainNs = 0;
  for (size_t q = 0; q < queue.size(); ++q) {
    const CmFlow &f = cm.flows[queue[q]];
    double start = f.trigger ? fired[f.trigger - 1] : double(f.startPs) / 1000.0;
    finish[queue[q]] = start + 8.0 * double(f.size) / slowest * 1e9 + rttNs;
    chainNs = std::max(chainNs, finish[queue[q]]);
    for (uint32_t t : {f.sendDoneTrigger, f.recvDoneTrigger}) {
      if (!t)
        continue;
      fired[t - 1] = std::max(fired[t - 1], finish[queue[q]]);
      if (--remaining[t - 1] == 0)
        queue.insert(queue.end(), targets[t - 1].begin(), targets[t - 1].end());
    }
  }
  double us = (2 * (chainNs + loadNs) + 200e3) / 1e3;
  return uint64_t(std::ceil(us / 100) * 100);
}

// --- Ranks on attach points -----------------------------------------------------------

/// What ran where: one entry per rank of the original workload (the members of the
/// per-host ranks after remap-gpus, else the schedule's ranks), with its attach point.
struct RankEnd {
  uint32_t rank;      // as the workload numbers it
  NodeId endpoint;    // where it runs
  NodeId nic;         // the attach point its traffic uses
};

struct Ends {
  std::vector<RankEnd> ranks;
  std::vector<uint32_t> hostOfRank;   // per schedule rank: its device copy
  std::vector<uint32_t> nodeOfOp;     // per op: htsim node of a send or recv
  std::vector<uint32_t> endOfOp;      // per op: index into ranks of its rank
};

// Every send and recv leaves or arrives at the attach point of the rank (member) it
// belongs to; the nic fields of the ops are remap-gpus's numbering of the same choice.
std::optional<Ends> placeEnds(const Module &m, const FatTree &ft, DiagEngine &diags,
                              const std::string &workloadWhere) {
  const FabricGraph &g = *m.fabric;
  const Schedule &s = *m.schedule;
  const Placement &pl = m.placement;
  const uint32_t P = s.numRanks();
  Ends e;
  std::vector<uint32_t> firstEnd(P + 1, 0);
  const bool byMember = pl.hasMembers() && !pl.members.empty() &&
                        std::all_of(pl.members.begin(), pl.members.end(),
                                    [](const Placement::Member &x) { return x.nic != InvalidNode; });
  std::vector<NodeId> endpointOfRank(P);
  for (uint32_t r = 0; r < P; ++r)
    endpointOfRank[r] = pl.empty() ? g.endpoints()[r] : pl.endpointOfRank[r];
  if (byMember) {
    for (uint32_t r = 0; r < P; ++r) {
      firstEnd[r] = uint32_t(e.ranks.size());
      for (const Placement::Member &x : pl.membersOf(r))
        e.ranks.push_back({x.rank, x.endpoint, x.nic});
    }
  } else {
    AttachPoints ap(g);
    auto nics = assignNics(ap, endpointOfRank, m.nicRequest ? &*m.nicRequest : nullptr, diags,
                           workloadWhere);
    if (!nics)
      return std::nullopt;
    for (uint32_t r = 0; r < P; ++r) {
      firstEnd[r] = r;
      e.ranks.push_back({r, endpointOfRank[r], (*nics)[r]});
    }
  }
  firstEnd[P] = uint32_t(e.ranks.size());
  for (const RankEnd &x : e.ranks) {
    if (x.nic == InvalidNode) {
      diags.error(workloadWhere,
                  fmt::format("rank {} runs on '{}', which reaches no attach point (NIC) inside "
                              "its host '{}'; link it to a NIC inside the host, or choose one "
                              "with -nic=round-robin or -nic=map:FILE",
                              x.rank, g.name(x.endpoint), copyNameOf(g, x.endpoint)));
      return std::nullopt;
    }
    if (!ft.nodeOfAttach.count(x.nic)) {
      diags.error(workloadWhere, fmt::format("rank {} uses '{}', which is not a node of the fat "
                                             "tree",
                                             x.rank, g.name(x.nic)));
      return std::nullopt;
    }
  }
  e.hostOfRank.resize(P);
  e.nodeOfOp.assign(s.numOps(), 0);
  e.endOfOp.assign(s.numOps(), 0);
  for (uint32_t r = 0; r < P; ++r) {
    e.hostOfRank[r] = g.deviceCopyOf(endpointOfRank[r]);
    for (uint32_t op = s.rankBegin(r); op < s.rankBegin(r) + s.numOps(r); ++op) {
      uint32_t k = 0;
      if (byMember && pl.cpusPerMember)
        k = std::min(s.cpu(op) / pl.cpusPerMember, firstEnd[r + 1] - firstEnd[r] - 1);
      e.endOfOp[op] = firstEnd[r] + k;
      e.nodeOfOp[op] = ft.nodeOfAttach.lookup(e.ranks[firstEnd[r] + k].nic);
    }
  }
  return e;
}

// --- mapping.txt and flows.tsv --------------------------------------------------------

std::string rankList(llvm::ArrayRef<uint32_t> ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (!s.empty())
      s += ",";
    s += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return s.empty() ? "-" : s;
}

void writeMapping(const FatTree &ft, const FabricGraph &g, const Ends &e, const ConnectionMatrix &cm,
                  const std::string &fabric, const std::string &workload, const NicRequest *nic,
                  uint64_t binHostNodes, llvm::raw_ostream &os) {
  const TopoParams &p = ft.params;
  os << fmt::format("# htsim nodes of '{}' and the {} ranks of '{}' on them\n", fabric,
                    e.ranks.size(), workload);
  os << "# htsim node n is node n of fabric.topo and workload.cm: an attach point of the fabric\n"
        "# (a NIC, a NIC port, or the host port a link ends on), numbered ToR by ToR, pods in\n"
        "# order, so that htsim's wiring (node n on ToR n / Radix_Down) is the fabric's.\n";
  os << fmt::format("# A rank's traffic uses the attach point -nic={} gives it.\n",
                    nicPolicyName(nic));
  os << "# Messages between ranks of one host are no htsim flow: the default pipeline (place,\n"
        "# lower-collectives when there are collectives, remap-gpus, intranode-calc) makes them\n"
        "# compute priced by the host's internal path, which workload.cm leaves out and\n"
        "# workload.bin keeps.\n";
  if (cm.localMessages)
    os << (cm.localMessages == 1
               ? std::string("# 1 message between ranks of one host is left as it was: no flow, "
                             "no cost.\n")
               : fmt::format("# {} messages between ranks of one host are left as they were: no "
                             "flow, no cost.\n",
                             cm.localMessages));
  if (binHostNodes == 1)
    os << "# workload.bin: GOAL rank h is the host of node h.\n";
  else if (binHostNodes)
    os << fmt::format("# workload.bin: GOAL rank h is the h-th host in node order, on nodes "
                      "{}h to {}h+{}.\n",
                      binHostNodes, binHostNodes, binHostNodes - 1);
  os << "# rank endpoint nic node\n";
  std::vector<std::vector<uint32_t>> ranksOfNode(ft.attachOfNode.size());
  std::vector<const RankEnd *> byRank;
  for (const RankEnd &x : e.ranks)
    byRank.push_back(&x);
  std::stable_sort(byRank.begin(), byRank.end(),
                   [](const RankEnd *a, const RankEnd *b) { return a->rank < b->rank; });
  for (const RankEnd *x : byRank) {
    uint32_t node = ft.nodeOfAttach.lookup(x->nic);
    os << fmt::format("{} {} {} {}\n", x->rank, g.name(x->endpoint), g.name(x->nic), node);
    ranksOfNode[node].push_back(x->rank);
  }
  os << "# node nic host tor ranks\n";
  for (uint32_t n = 0; n < ft.attachOfNode.size(); ++n)
    os << fmt::format("{} {} {} {} {}\n", n, g.name(ft.attachOfNode[n]),
                      copyNameOf(g, ft.attachOfNode[n]),
                      copyName(ft, ft.switchesOfTier[0][n / p.tier[0].radixDown]),
                      rankList(ranksOfNode[n]));
  const char *kinds[] = {"Switch_LowerPod", "Switch_UpperPod", "Switch_Core"};
  os << "# htsim-switch fabric-switch\n";
  for (uint64_t t = 0; t < p.tiers; ++t)
    for (size_t i = 0; i < ft.switchesOfTier[t].size(); ++i)
      os << fmt::format("{}_{} {}\n", kinds[t], i, copyName(ft, ft.switchesOfTier[t][i]));
}

// One row per flow, what run.sh joins with htsim's output into results.tsv.
void writeFlows(const ConnectionMatrix &cm, const FabricGraph &g, const Ends &e,
                llvm::raw_ostream &os) {
  os << "flow\tsrc_rank\tdst_rank\tsrc_nic\tdst_nic\tsrc_node\tdst_node\tbytes\tstart_us\n";
  for (size_t i = 0; i < cm.flows.size(); ++i) {
    const CmFlow &f = cm.flows[i];
    const CmMessage &msg = cm.messages[f.message];
    const RankEnd &a = e.ranks[e.endOfOp[msg.send]], &b = e.ranks[e.endOfOp[msg.recv]];
    std::string start = f.trigger ? "-" : fmt::format("{}", double(f.startPs) / 1e6);
    os << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", i + 1, a.rank, b.rank,
                      g.name(a.nic), g.name(b.nic), f.src, f.dst, f.size, start);
  }
}

// --- run.sh ---------------------------------------------------------------------------

// The script, with @NAME@ placeholders filled in by writeRunScript.
constexpr const char *RunScript = R"SH(#!/bin/sh
# Runs this folder's workload in htsim (written by infracc -emit=htsim).
#   fabric.topo   @NODES@ nodes (attach points), @TIERS@ tiers, from '@FABRIC@'
#   workload.cm   @FLOWS@ flows, @TRIGGERS@ triggers, from '@WORKLOAD@'
#   workload.bin  the same workload as binary GOAL for ATLAHS (when written)
#
# usage: ./run.sh [eqds|ndp|atlahs] [HTSIM_DIR] [more htsim flags...]
#   eqds    (default) csg-htsim's htsim_eqds on workload.cm: dependencies become
#           triggers, compute time is left out. HTSIM_DIR: csg-htsim's sim/datacenter.
#   ndp     csg-htsim's htsim_ndp on workload.cm, likewise.
#   atlahs  ATLAHS's htsim_uec on workload.bin: GOAL semantics with compute time.
#           HTSIM_DIR: spcl/atlahs's sim/htsim-backend/sim/datacenter.
# HTSIM_DIR may also come from the environment. htsim's output goes to <mode>.out next
# to this script; eqds and ndp also write results.tsv there (one row per flow: ranks,
# NICs, bytes, start and finish in us). END_US=<us> sets the simulated time limit of
# eqds and ndp; without it, a run that ends before every flow finished is repeated with
# 4 times the limit (at most 3 times).
set -u
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
mode=eqds
case "${1:-}" in eqds|ndp|atlahs) mode=$1; shift ;; esac
dir=${HTSIM_DIR:-}
case "${1:-}" in ''|-*) ;; *) dir=$1; shift ;; esac
if [ -z "$dir" ]; then
  echo "run.sh: error: give the htsim binary directory as an argument or in HTSIM_DIR" >&2
  exit 2
fi
case $mode in eqds) bin=htsim_eqds ;; ndp) bin=htsim_ndp ;; *) bin=htsim_uec ;; esac
if [ ! -x "$dir/$bin" ]; then
  echo "run.sh: error: no executable $bin in '$dir' (build csg-htsim with 'make' in sim/, then in sim/datacenter/; ATLAHS: the same in sim/htsim-backend/)" >&2
  exit 2
fi
out=$here/$mode.out

if [ "$mode" = atlahs ]; then
  if [ ! -f "$here/workload.bin" ]; then
    echo "run.sh: error: no workload.bin here (infracc said why when it wrote this folder)" >&2
    exit 2
  fi
  # -goal       the workload as binary GOAL: rank h runs on host h of fabric.topo
  # -topo       the fat tree
  # -nodes      htsim nodes (@NODES@ attach points)
  # -linkspeed  attach-point link speed in Mb/s (tier 0: @GBPS@ Gb/s)
  # -strat      ECMP chosen by the host per packet, over -paths entropies
  # -mtu, -lgs_o  as ATLAHS's own validation runs (scripts/run_validation_exp.py)
  "$dir/$bin" -goal "$here/workload.bin" -topo "$here/fabric.topo" -nodes @NODES@ -linkspeed @MBPS@ -strat ecmp_host -paths @PATHS@ -mtu 4096 -lgs_o 0 "$@" > "$out"
  status=$?
  grep 'Maximum finishing time' "$out"
  exit $status
fi

# -topo       the fat tree
# -tm         flows and triggers (htsim_eqds takes the node count from it)
# -nodes      htsim_ndp's node count (@NODES@ attach points; htsim_eqds checks it against -tm)
# -linkspeed  attach-point link speed in Mb/s (tier 0: @GBPS@ Gb/s), which the transports'
#             pacers and NICs use (the .topo speeds shape only the switches)
# -end        simulated time limit in us: twice an estimate from the busiest links and
#             the longest chain of dependent flows, plus 200 us
# -strat      ECMP chosen by the host per packet, over -paths path entropies
#             (@UPPATHS@ distinct paths between @BETWEEN@)
# -o          htsim's binary event log
end=${END_US:-@END@}
tries=0
while :; do
  "$dir/$bin" -topo "$here/fabric.topo" -tm "$here/workload.cm" -nodes @NODES@ -linkspeed @MBPS@ -end "$end" -strat ecmp_host -paths @PATHS@ -o "$here/$mode.log" "$@" > "$out"
  status=$?
  finished=$(grep -c ' finished at ' "$out")
  if [ $status -ne 0 ] || [ "$finished" -ge @FLOWS@ ] || [ -n "${END_US:-}" ] || [ $tries -ge 3 ]; then
    break
  fi
  echo "run.sh: $finished of @FLOWS@ flows finished by -end $end us; running again with -end $((end * 4))" >&2
  end=$((end * 4))
  tries=$((tries + 1))
done
# Every flow finished, and every triggered flow after each flow its trigger waits for.
# htsim prints "Flow <name> flowId|flow_id <id> ... finished at <us> ..." when a flow is
# done, after any progress dots ('.' and '|' every 50 ms of simulated time) on the line.
# A triggered flow starts when the last flow its trigger waits for is done.
awk -v status=$status -v limit="$end" -v bin=$bin -v out="$mode.out" -v results="$here/results.tsv" '
  FNR == 1 { file++ }
  file == 1 {
    if (FNR > 1) { row[$1] = $0; start[$1] = $9 }
    next
  }
  file == 2 {
    if ($1 == "Connections") flows = $2
    if ($1 ~ /->/) for (i = 2; i < NF; i += 2) {
      if ($i == "id") id = $(i + 1)
      if ($i == "trigger") waits[id] = $(i + 1)
      if ($i == "send_done_trigger" || $i == "recv_done_trigger") by[$(i + 1)] = by[$(i + 1)] " " id
    }
    next
  }
  {
    at = index($0, "Flow ")
    if (at == 0) next
    k = split(substr($0, at), w, " ")
    if (w[3] != "flowId" && w[3] != "flow_id") next
    for (i = 5; i < k; i++) if (w[i] == "finished" && w[i + 1] == "at") { done[w[4]] = w[i + 2] + 0; text[w[4]] = w[i + 2]; n++; break }
  }
  END {
    last = 0; late = 0
    for (f in done) if (done[f] > last) { last = done[f]; lastText = text[f] }
    for (f in waits) if (f in done) {
      k = split(by[waits[f]], pre, " ")
      for (j = 1; j <= k; j++) if (!(pre[j] in done) || done[pre[j]] >= done[f]) late++
    }
    print "flow\tsrc_rank\tdst_rank\tsrc_nic\tdst_nic\tbytes\tstart_us\tfinish_us" > results
    for (f = 1; f <= flows; f++) {
      split(row[f], c, "\t")
      s = start[f]
      if (f in waits) {
        s = "-"; k = split(by[waits[f]], pre, " "); m = -1
        for (j = 1; j <= k; j++) if (pre[j] in done && done[pre[j]] > m) { m = done[pre[j]]; s = text[pre[j]] }
        if (k == 0 || m < 0) s = "-"
        for (j = 1; j <= k; j++) if (!(pre[j] in done)) s = "-"
      }
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f, c[2], c[3], c[4], c[5], c[8], s, ((f "") in done) ? text[f] : "-" > results
    }
    printf "%s: %d of %d flows finished, the last at %s us; %d triggered flows finished before a flow they wait for (output in %s, flows in results.tsv)\n", bin, n, flows, n ? lastText : "0", late, out
    if (status != 0) { print "run.sh: error: " bin " failed (exit status " status ")" > "/dev/stderr"; exit 1 }
    if (n < flows) { print "run.sh: error: not every flow finished by -end " limit " us; run again with a larger END_US" > "/dev/stderr"; exit 1 }
    if (late) exit 1
  }' "$here/flows.tsv" "$here/workload.cm" "$out"
)SH";

void writeRunScript(const FatTree &ft, const ConnectionMatrix &cm, uint64_t endUs,
                    const std::string &fabric, const std::string &workload,
                    llvm::raw_ostream &os) {
  const TopoParams &p = ft.params;
  const uint64_t paths = std::min<uint64_t>(10000, std::max<uint64_t>(64, 2 * ft.upPaths));
  const std::pair<const char *, std::string> values[] = {
      {"@NODES@", std::to_string(p.nodes)},
      {"@TIERS@", std::to_string(p.tiers)},
      {"@FABRIC@", fabric},
      {"@WORKLOAD@", workload},
      {"@FLOWS@", std::to_string(cm.flows.size())},
      {"@TRIGGERS@", std::to_string(cm.triggers.size())},
      {"@GBPS@", std::to_string(p.tier[0].speedGbps)},
      {"@MBPS@", std::to_string(p.tier[0].speedGbps * 1000)},
      {"@PATHS@", std::to_string(paths)},
      {"@UPPATHS@", std::to_string(ft.upPaths)},
      {"@BETWEEN@", p.tiers == 3 ? "pods" : "ToRs"},
      {"@END@", std::to_string(endUs)},
  };
  std::string text = RunScript;
  for (const auto &[key, value] : values)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, strlen(key), value);
  os << text;
}

// --- workload.bin ---------------------------------------------------------------------

// ATLAHS's htsim_uec runs GOAL rank h's op with nic k on htsim node h x K + k (K = the
// .bin's largest nic + 1) and sends it to node peer x K + k: the sender's NIC index on
// both ends. workload.bin is the schedule with one GOAL rank per host, in node order,
// when that numbering is the fat tree's: every host K consecutive nodes, its attach
// points in order, and every message between attach points of equal index. Otherwise
// why not, for a warning.
struct BinPlan {
  std::optional<Schedule> schedule;
  uint64_t nodesPerHost = 0;
  std::string skip;
};

BinPlan planBinary(const Schedule &s, const FatTree &ft, const FabricGraph &g, const Ends &e,
                   const ConnectionMatrix &cm, const std::string &workloadWhere) {
  BinPlan b;
  AttachPoints ap(g);
  // Hosts in node order, and K.
  std::vector<uint32_t> hosts;   // device copies
  llvm::DenseMap<uint32_t, uint32_t> indexOfHost;
  for (NodeId n : ft.attachOfNode) {
    uint32_t c = g.deviceCopyOf(n);
    if (indexOfHost.try_emplace(c, uint32_t(hosts.size())).second)
      hosts.push_back(c);
  }
  const uint64_t K = ft.attachOfNode.size() / hosts.size();
  for (uint32_t h = 0; h < hosts.size(); ++h) {
    auto own = ap.ofCopy(hosts[h]);
    for (uint64_t k = 0; k < K; ++k) {
      uint64_t node = h * K + k;
      if (own.size() != K || node >= ft.attachOfNode.size() || ft.attachOfNode[node] != own[k]) {
        NodeId first = own.empty() ? InvalidNode : own[std::min<uint64_t>(k, own.size() - 1)];
        b.skip = fmt::format("ATLAHS's htsim_uec puts a GOAL rank's NIC k on htsim node rank x "
                             "NICs + k, but here host '{}''s attach point '{}' is node {} (nodes "
                             "go ToR by ToR; a host's attach points are not consecutive)",
                             copyNameOf(g, own.empty() ? ft.attachOfNode[node] : own[0]),
                             first == InvalidNode ? "-" : g.name(first),
                             first == InvalidNode ? 0u : ft.nodeOfAttach.lookup(first));
        return b;
      }
    }
  }
  for (const CmMessage &msg : cm.messages) {
    uint32_t a = e.nodeOfOp[msg.send], z = e.nodeOfOp[msg.recv];
    if (a % K != z % K) {
      b.skip = fmt::format("ATLAHS's htsim_uec delivers a message to the receiver's NIC of the "
                           "sender's index, but rank {} sends from '{}' to '{}' of rank {}",
                           e.ranks[e.endOfOp[msg.send]].rank, g.name(ft.attachOfNode[a]),
                           g.name(ft.attachOfNode[z]), e.ranks[e.endOfOp[msg.recv]].rank);
      return b;
    }
  }
  // One GOAL rank per host: the schedule's ranks on it, each op on its attach point's
  // index (a single host rank after remap-gpus; several when the pipeline left them).
  GroupingPlan plan;
  plan.sources = {&s};
  plan.sourceNames = {workloadWhere};
  plan.pass = "-emit=htsim";
  std::vector<std::vector<uint32_t>> ranksOfHost(hosts.size());
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    ranksOfHost[indexOfHost.lookup(e.hostOfRank[r])].push_back(r);
  std::vector<uint32_t> nicOfMember;   // per plan member: K-index of its first op's node
  plan.begin.push_back(0);
  for (const auto &ranks : ranksOfHost) {
    for (uint32_t r : ranks) {
      plan.members.push_back({0, r});
      nicOfMember.push_back(s.numOps(r) ? uint32_t(e.nodeOfOp[s.rankBegin(r)] % K) : 0);
    }
    plan.begin.push_back(uint32_t(plan.members.size()));
  }
  // Ops carry remap-gpus's nic numbering (the attach point's index in its host, here
  // its K-index) when ranks are hosts; otherwise every op of a rank uses its NIC.
  const bool opNics = std::all_of(e.ranks.begin(), e.ranks.end(), [&](const RankEnd &x) {
    return ap.indexInCopy(x.nic) >= 0;
  }) && e.ranks.size() != s.numRanks();
  plan.nicOf = [&](uint32_t member, uint32_t nic) { return opNics ? nic : nicOfMember[member]; };
  std::string log;
  {
    llvm::raw_string_ostream os(log);
    DiagEngine local(os);
    local.setErrorLimit(1);
    b.schedule = regroup(plan, local);
  }
  if (!b.schedule) {
    size_t at = log.find("error: ");
    b.skip = at == std::string::npos ? log : log.substr(at + 7);
    if (size_t nl = b.skip.find('\n'); nl != std::string::npos)
      b.skip.resize(nl);
  } else if (b.schedule->maxCpu() > 255) {
    b.skip = fmt::format("grouping the ranks of a host uses cpu streams up to {}; binary GOAL "
                         "holds 0-255",
                         b.schedule->maxCpu());
  } else if (b.schedule->maxNic() > 255) {
    b.skip = fmt::format("a calc uses nic {}; binary GOAL holds 0-255", b.schedule->maxNic());
  } else if (K > 1 && b.schedule->maxNic() + 1 != K) {
    b.skip = fmt::format("the workload uses NICs 0-{} of hosts with {}, and ATLAHS's htsim_uec "
                         "takes the NIC count from the largest nic it finds",
                         b.schedule->maxNic(), K);
  }
  if (!b.skip.empty())
    b.schedule.reset();
  b.nodesPerHost = K;
  return b;
}

// --- The target -----------------------------------------------------------------------

llvm::Error emitHtsim(TargetContext &ctx) {
  Module &m = ctx.module;
  const FabricGraph &g = *m.fabric;
  const Schedule &s = *m.schedule;
  const std::string fabric = baseName(m.fabricSource), workload = baseName(m.workloadSource);
  const std::string fabricWhere = m.fabricSource.empty() ? "fabric" : m.fabricSource;
  const std::string workloadWhere = m.workloadSource.empty() ? "workload" : m.workloadSource;

  if (LinkLatency.getNumOccurrences() && !(LinkLatency > 0 && std::isfinite(LinkLatency)))
    return usageError(fmt::format("-htsim-link-latency={}: must be a positive number of ns",
                                  double(LinkLatency)));
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  auto switchPs = switchLatencies(g, ctx.diags, fabricWhere);
  if (!switchPs)
    return reportedError();
  FatTreeOptions fo;
  if (LinkLatency.getNumOccurrences()) {
    fo.defaultLinkLatencyNs = double(LinkLatency);
    fo.linkLatencyGiven = true;
  }
  fo.switchLatencyPs = &*switchPs;
  auto ft = recogniseFatTree(g, ctx.diags, fabricWhere, fo);
  if (!ft)
    return reportedError();

  const uint32_t P = s.numRanks();
  const Placement &pl = m.placement;
  if (!pl.empty() && pl.numRanks() != P)
    return llvm::createStringError(
        fmt::format("the placement covers {} ranks but the workload has {}", pl.numRanks(), P));
  if (pl.empty() && P > g.endpoints().size()) {
    ctx.diags.error(workloadWhere,
                    fmt::format("the workload has {} ranks but '{}' has {} endpoints; place "
                                "several ranks per endpoint with -passes=place -oversubscribe",
                                P, fabric, g.endpoints().size()));
    return reportedError();
  }
  auto ends = placeEnds(m, *ft, ctx.diags, workloadWhere);
  if (!ends)
    return reportedError();

  CmOptions co;
  co.recvDoneTriggers = RecvTriggerKind == RecvTrigger::RecvDone;
  auto cm = buildConnectionMatrix(s, FlowEnds{ends->hostOfRank, ends->nodeOfOp},
                                  uint32_t(ft->params.nodes), ctx.diags, workloadWhere, co);
  if (!cm)
    return reportedError();

  // workload.bin when ATLAHS's node numbering is the fat tree's; a problem with it
  // alone skips that file, with a warning, rather than the whole run.
  BinPlan bin = planBinary(s, *ft, g, *ends, *cm, workloadWhere);
  if (!bin.skip.empty())
    ctx.diags.warning(workloadWhere, "workload.bin is not written: " + bin.skip);

  // Warnings: what the connection matrix leaves out or changes.
  auto count = [](uint64_t n, const char *one, const char *many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  if (cm->calcs)
    ctx.diags.warning(
        workloadWhere,
        fmt::format("a connection matrix cannot express compute time: {} ({} ns in all) {} "
                    "left out of workload.cm{}{}",
                    count(cm->calcs, "calc", "calcs"), cm->computeNs,
                    cm->calcs == 1 ? "is" : "are",
                    cm->delayedRoots ? ", except that compute ahead of a rank's first message "
                                       "delays the start of " +
                                           count(cm->delayedRoots, "flow", "flows")
                                     : std::string(),
                    bin.schedule ? " (workload.bin keeps all of it)" : ""));
  if (cm->widenedFlows)
    ctx.diags.warning(workloadWhere,
                      fmt::format("{} wait for more than their sends depend on: an htsim flow "
                                  "can activate only one trigger, so triggers that wait for the "
                                  "same flow were merged ({} merged into others)",
                                  count(cm->widenedFlows, "flow", "flows"),
                                  count(cm->mergedTriggers, "trigger", "triggers")));
  if (cm->splitMessages)
    ctx.diags.warning(workloadWhere,
                      fmt::format("{} larger than {} bytes {} sent as chains of flows of at most "
                                  "that size (htsim reads flow sizes as 32-bit integers)",
                                  count(cm->splitMessages, "message", "messages"), MaxFlowBytes,
                                  cm->splitMessages == 1 ? "is" : "are"));
  if (cm->zeroByteMessages)
    ctx.diags.warning(workloadWhere,
                      fmt::format("{} sent as 1-byte flows (an htsim flow needs a size)",
                                  count(cm->zeroByteMessages, "zero-byte message is",
                                        "zero-byte messages are")));
  if (cm->flows.empty())
    ctx.diags.warning(workloadWhere, "no message goes between two hosts: workload.cm has no "
                                     "flows");

  std::vector<std::string> topoComments = {
      fmt::format("htsim fat tree of '{}', written by infracc -emit=htsim", fabric)};
  std::vector<std::string> cmComments = {
      fmt::format("htsim connection matrix of '{}' on '{}', written by infracc -emit=htsim",
                  workload, fabric),
      fmt::format("{} for {} between hosts{}, {}", count(cm->flows.size(), "flow", "flows"),
                  count(cm->messages.size(), "message", "messages"),
                  cm->localMessages ? fmt::format(" ({} between ranks of one host need none)",
                                                  count(cm->localMessages, "message", "messages"))
                                    : std::string(),
                  count(cm->triggers.size(), "trigger", "triggers")),
      cm->recvDoneTriggers
          ? "a flow starts when the messages its send depends on are sent (send_done_trigger) "
            "or received (recv_done_trigger)"
          : "a flow starts when the messages its send depends on are acknowledged "
            "(send_done_trigger)",
      fmt::format("compute time cannot be expressed here: {} ({} ns) left out{}",
                  count(cm->calcs, "calc", "calcs"), cm->computeNs,
                  cm->delayedRoots
                      ? ", except as start times of " + count(cm->delayedRoots, "flow", "flows")
                      : std::string())};

  auto topo = ctx.output.file("fabric.topo");
  if (!topo)
    return topo.takeError();
  writeTopo(*ft, topoComments, *topo);
  auto cmOut = ctx.output.file("workload.cm");
  if (!cmOut)
    return cmOut.takeError();
  writeConnectionMatrix(*cm, cmComments, *cmOut);
  if (bin.schedule) {
    auto binOut = ctx.output.file("workload.bin");
    if (!binOut)
      return binOut.takeError();
    goal::writeBinary(*bin.schedule, *binOut);
  }
  auto map = ctx.output.file("mapping.txt");
  if (!map)
    return map.takeError();
  writeMapping(*ft, g, *ends, *cm, fabric, workload, m.nicRequest ? &*m.nicRequest : nullptr,
               bin.schedule ? bin.nodesPerHost : 0, *map);
  auto flows = ctx.output.file("flows.tsv");
  if (!flows)
    return flows.takeError();
  writeFlows(*cm, g, *ends, *flows);
  auto run = ctx.output.file("run.sh", /*executable=*/true);
  if (!run)
    return run.takeError();
  writeRunScript(*ft, *cm, estimateEndUs(*cm, *ft), fabric, workload, *run);
  return llvm::Error::success();
}

// Default pipeline: ranks placed (the driver lowers collectives after it), the GPUs
// of a host grouped into one rank and the messages between them made compute: what
// stays is traffic between hosts, which is what htsim flows are.
std::vector<std::string> htsimPipeline(const Module &m) {
  std::vector<std::string> names;
  if (!m.hasFabric())
    return names;
  if (m.placement.empty() && PassRegistry::find("place"))
    names.push_back("place");
  for (const char *p : {"remap-gpus", "intranode-calc"})
    names.push_back(p);
  return names;
}

RegisterTarget HtsimTarget({
    .name = "htsim",
    .description = "htsim inputs in a folder (-o DIR): fat-tree fabric.topo, connection matrix "
                   "workload.cm, GOAL workload.bin for ATLAHS, mapping.txt, flows.tsv, run.sh",
    .needs = TargetNeeds::FabricAndWorkload,
    .writesDirectory = true,
    .pointToPoint = true,
    .defaultPipeline = htsimPipeline,
    .run = emitHtsim,
});

} // namespace
} // namespace infracc::htsim
