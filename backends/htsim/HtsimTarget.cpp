// -emit=htsim -o DIR: fabric.topo (the fat tree), workload.cm (flows and triggers for
// csg-htsim), workload.bin (binary GOAL for ATLAHS's GOAL-driven htsim), mapping.txt
// (htsim nodes, hosts, ranks, switches) and run.sh (the command lines).
#include "backends/goal/GoalWriter.h"
#include "backends/htsim/ConnectionMatrix.h"
#include "backends/htsim/FatTree.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/FabricCosts.h"
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
    cl::desc("-emit=htsim: latency in ns of fabric links that have none (default: such links "
             "are an error, since htsim needs a non-zero latency per tier)"),
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

// --- mapping.txt ----------------------------------------------------------------------

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

void writeMapping(const FatTree &ft, const std::vector<std::vector<uint32_t>> &ranksOfNode,
                  const std::string &fabric, const std::string &workload, uint32_t numRanks,
                  llvm::raw_ostream &os) {
  const TopoParams &p = ft.params;
  os << fmt::format("# htsim nodes of '{}' and the ranks of '{}' ({} ranks) on them\n", fabric,
                    workload, numRanks);
  os << "# htsim node n is host n of fabric.topo, flow endpoint n of workload.cm and rank n of\n"
        "# workload.bin (ranks sharing a host are one GOAL rank there, each on cpu streams of\n"
        "# its own: see docs/htsim.md)\n";
  os << "# node host tor ranks\n";
  uint64_t shared = 0;
  for (uint32_t n = 0; n < ft.hostOfNode.size(); ++n) {
    os << fmt::format("{} {} {} {}\n", n, copyName(ft, ft.hostOfNode[n]),
                      copyName(ft, ft.switchesOfTier[0][n / p.tier[0].radixDown]),
                      rankList(ranksOfNode[n]));
    shared += ranksOfNode[n].size() > 1;
  }
  if (shared) {
    os << fmt::format("# {} host{} run several ranks; messages between them need no flow:\n",
                      shared, shared == 1 ? "" : "s");
    for (uint32_t n = 0; n < ft.hostOfNode.size(); ++n)
      if (ranksOfNode[n].size() > 1)
        os << fmt::format("#   node {} ({}): ranks {}\n", n, copyName(ft, ft.hostOfNode[n]),
                          rankList(ranksOfNode[n]));
  }
  const char *kinds[] = {"Switch_LowerPod", "Switch_UpperPod", "Switch_Core"};
  os << "# htsim switch = fabric switch\n";
  for (uint64_t t = 0; t < p.tiers; ++t)
    for (size_t i = 0; i < ft.switchesOfTier[t].size(); ++i)
      os << fmt::format("# {}_{} = {}\n", kinds[t], i, copyName(ft, ft.switchesOfTier[t][i]));
}

// --- run.sh ---------------------------------------------------------------------------

// The script, with @NAME@ placeholders filled in by writeRunScript.
constexpr const char *RunScript = R"SH(#!/bin/sh
# Runs this folder's workload in htsim (written by infracc -emit=htsim).
#   fabric.topo   @NODES@ hosts, @TIERS@ tiers, from '@FABRIC@'
#   workload.cm   @FLOWS@ flows, @TRIGGERS@ triggers, from '@WORKLOAD@'
#   workload.bin  the same workload as binary GOAL, rank n on htsim node n
#
# usage: ./run.sh [eqds|ndp|atlahs] [HTSIM_DIR] [more htsim flags...]
#   eqds    (default) csg-htsim's htsim_eqds on workload.cm: dependencies become
#           triggers, compute time is left out. HTSIM_DIR: csg-htsim's sim/datacenter.
#   ndp     csg-htsim's htsim_ndp on workload.cm, likewise.
#   atlahs  ATLAHS's htsim_uec on workload.bin: GOAL semantics with compute time.
#           HTSIM_DIR: spcl/atlahs's sim/htsim-backend/sim/datacenter.
# HTSIM_DIR may also come from the environment. htsim's output goes to <mode>.out next
# to this script. END_US=<us> sets the simulated time limit of eqds and ndp; without
# it, a run that ends before every flow finished is repeated with 4 times the limit
# (at most 3 times).
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
  # -goal       the workload as binary GOAL: rank n runs on htsim node n
  # -topo       the fat tree
  # -nodes      htsim nodes (@NODES@ hosts)
  # -linkspeed  host link speed in Mb/s (tier 0: @GBPS@ Gb/s)
  # -strat      ECMP chosen by the host per packet, over -paths entropies
  # -mtu, -lgs_o  as ATLAHS's own validation runs (scripts/run_validation_exp.py)
  "$dir/$bin" -goal "$here/workload.bin" -topo "$here/fabric.topo" -nodes @NODES@ -linkspeed @MBPS@ -strat ecmp_host -paths @PATHS@ -mtu 4096 -lgs_o 0 "$@" > "$out"
  status=$?
  grep 'Maximum finishing time' "$out"
  exit $status
fi

# -topo       the fat tree
# -tm         flows and triggers (htsim_eqds takes the node count from it)
# -nodes      htsim_ndp's node count (@NODES@ hosts; htsim_eqds checks it against -tm)
# -linkspeed  host link speed in Mb/s (tier 0: @GBPS@ Gb/s), which the transports'
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
# Every flow finished, and every triggered flow after each flow its trigger waits for
# (htsim prints flows in the order they finish, with the time in us).
awk -v status=$status -v limit="$end" -v bin=$bin -v out="$mode.out" '
  FNR == NR {
    if ($1 == "Connections") flows = $2
    if ($1 ~ /->/) for (i = 2; i < NF; i += 2) {
      if ($i == "id") id = $(i + 1)
      if ($i == "trigger") waits[id] = $(i + 1)
      if ($i == "send_done_trigger" || $i == "recv_done_trigger") by[$(i + 1)] = by[$(i + 1)] " " id
    }
    next
  }
  $1 == "Flow" && ($3 == "flowId" || $3 == "flow_id") {
    for (i = 5; i < NF; i++) if ($i == "finished" && $(i + 1) == "at") { done[$4] = $(i + 2) + 0; n++ }
  }
  END {
    last = 0; late = 0
    for (f in done) if (done[f] > last) last = done[f]
    for (f in waits) if (f in done) {
      k = split(by[waits[f]], pre, " ")
      for (j = 1; j <= k; j++) if (!(pre[j] in done) || done[pre[j]] >= done[f]) late++
    }
    printf "%s: %d of %d flows finished, the last at %s us; %d triggered flows finished before a flow they wait for (output in %s)\n", bin, n, flows, last, late, out
    if (status != 0) { print "run.sh: error: " bin " failed (exit status " status ")" > "/dev/stderr"; exit 1 }
    if (n < flows) { print "run.sh: error: not every flow finished by -end " limit " us; run again with a larger END_US" > "/dev/stderr"; exit 1 }
    if (late) exit 1
  }' "$here/workload.cm" "$out"
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
  if (LinkLatency.getNumOccurrences())
    fo.defaultLinkLatencyNs = double(LinkLatency);
  fo.switchLatencyPs = &*switchPs;
  auto ft = recogniseFatTree(g, ctx.diags, fabricWhere, fo);
  if (!ft)
    return reportedError();

  // Ranks on hosts: the placement, else rank r on the fabric's r-th endpoint.
  const uint32_t P = s.numRanks();
  std::vector<uint32_t> nodeOfRank(P);
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
  std::vector<std::vector<uint32_t>> ranksOfNode(ft->hostOfNode.size());
  for (uint32_t r = 0; r < P; ++r) {
    NodeId ep = pl.empty() ? g.endpoints()[r] : pl.endpointOfRank[r];
    uint32_t node = ft->nodeOfCopy[g.deviceCopyOf(ep)];
    if (node == FatTree::NoNode) {
      ctx.diags.error(workloadWhere, fmt::format("rank {} runs on '{}', which is not on a host of "
                                                 "the fat tree",
                                                 r, g.name(ep)));
      return reportedError();
    }
    nodeOfRank[r] = node;
    ranksOfNode[node].push_back(r);
  }

  CmOptions co;
  co.recvDoneTriggers = RecvTriggerKind == RecvTrigger::RecvDone;
  auto cm = buildConnectionMatrix(s, nodeOfRank, uint32_t(ft->params.nodes), ctx.diags,
                                  workloadWhere, co);
  if (!cm)
    return reportedError();

  // workload.bin: GOAL rank n = htsim node n; ranks sharing a host grouped into one.
  GroupingPlan plan;
  plan.sources = {&s};
  plan.sourceNames = {workloadWhere};
  plan.pass = "-emit=htsim";
  plan.nicOf = [](uint32_t, uint32_t) { return 0u; };   // htsim hosts have one link
  plan.begin.push_back(0);
  for (const auto &ranks : ranksOfNode) {
    for (uint32_t r : ranks)
      plan.members.push_back({0, r});
    plan.begin.push_back(uint32_t(plan.members.size()));
  }
  // A problem with workload.bin alone (tags or cpu streams beyond what grouping ranks
  // or binary GOAL allow) skips that file, with a warning, rather than the whole run.
  std::string groupLog;
  std::optional<Schedule> perNode;
  {
    llvm::raw_string_ostream os(groupLog);
    DiagEngine local(os);
    local.setErrorLimit(1);
    perNode = regroup(plan, local);
  }
  std::string skipBin;
  if (!perNode) {
    size_t at = groupLog.find("error: ");
    skipBin = at == std::string::npos ? groupLog : groupLog.substr(at + 7);
    if (size_t nl = skipBin.find('\n'); nl != std::string::npos)
      skipBin.resize(nl);
  } else if (perNode->maxCpu() > 255) {
    skipBin = fmt::format("grouping the ranks of a host uses cpu streams up to {}; binary GOAL "
                          "holds 0-255",
                          perNode->maxCpu());
  } else if (perNode->maxNic() > 255) {
    skipBin = fmt::format("a calc uses nic {}; binary GOAL holds 0-255", perNode->maxNic());
  }
  if (!skipBin.empty())
    ctx.diags.warning(workloadWhere, "workload.bin is not written: " + skipBin);

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
                    skipBin.empty() ? " (workload.bin keeps all of it)" : ""));
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
      fmt::format("{} for {} between hosts ({} between ranks of one host need none), {}",
                  count(cm->flows.size(), "flow", "flows"),
                  count(cm->messages.size(), "message", "messages"),
                  count(cm->localMessages, "message", "messages"),
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
  if (skipBin.empty()) {
    auto bin = ctx.output.file("workload.bin");
    if (!bin)
      return bin.takeError();
    goal::writeBinary(*perNode, *bin);
  }
  auto map = ctx.output.file("mapping.txt");
  if (!map)
    return map.takeError();
  writeMapping(*ft, ranksOfNode, fabric, workload, P, *map);
  auto run = ctx.output.file("run.sh", /*executable=*/true);
  if (!run)
    return run.takeError();
  writeRunScript(*ft, *cm, estimateEndUs(*cm, *ft), fabric, workload, *run);
  return llvm::Error::success();
}

RegisterTarget HtsimTarget({
    .name = "htsim",
    .description = "htsim inputs in a folder (-o DIR): fat-tree fabric.topo, connection matrix "
                   "workload.cm, GOAL workload.bin for ATLAHS, mapping.txt, run.sh",
    .needs = TargetNeeds::FabricAndWorkload,
    .writesDirectory = true,
    .pointToPoint = true,
    .defaultPipeline =
        [](const Module &m) {
          return m.hasFabric() && m.placement.empty() && PassRegistry::find("place")
                     ? std::vector<std::string>{"place"}
                     : std::vector<std::string>{};
        },
    .run = emitHtsim,
});

} // namespace
} // namespace infracc::htsim
