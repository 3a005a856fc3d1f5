#!/bin/sh
# Runs this folder's workload in htsim (written by infracc -emit=htsim).
#   fabric.topo   8 nodes (attach points), 2 tiers, from '-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,host=simple_host,bw0=100G,bw1=100G,lat0=500ns,lat1=500ns'
#   workload.cm   112 flows, 104 triggers, from 'ring8.goal'
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
  # -nodes      htsim nodes (8 attach points)
  # -linkspeed  attach-point link speed in Mb/s (tier 0: 100 Gb/s)
  # -strat      ECMP chosen by the host per packet, over -paths entropies
  # -mtu, -lgs_o  as ATLAHS's own validation runs (scripts/run_validation_exp.py)
  "$dir/$bin" -goal "$here/workload.bin" -topo "$here/fabric.topo" -nodes 8 -linkspeed 100000 -strat ecmp_host -paths 64 -mtu 4096 -lgs_o 0 "$@" > "$out"
  status=$?
  grep 'Maximum finishing time' "$out"
  exit $status
fi

# -topo       the fat tree
# -tm         flows and triggers (htsim_eqds takes the node count from it)
# -nodes      htsim_ndp's node count (8 attach points; htsim_eqds checks it against -tm)
# -linkspeed  attach-point link speed in Mb/s (tier 0: 100 Gb/s), which the transports'
#             pacers and NICs use (the .topo speeds shape only the switches)
# -end        simulated time limit in us: twice an estimate from the busiest links and
#             the longest chain of dependent flows, plus 200 us
# -strat      ECMP chosen by the host per packet, over -paths path entropies
#             (2 distinct paths between ToRs)
# -o          htsim's binary event log
end=${END_US:-900}
tries=0
while :; do
  "$dir/$bin" -topo "$here/fabric.topo" -tm "$here/workload.cm" -nodes 8 -linkspeed 100000 -end "$end" -strat ecmp_host -paths 64 -o "$here/$mode.log" "$@" > "$out"
  status=$?
  finished=$(grep -c ' finished at ' "$out")
  if [ $status -ne 0 ] || [ "$finished" -ge 112 ] || [ -n "${END_US:-}" ] || [ $tries -ge 3 ]; then
    break
  fi
  echo "run.sh: $finished of 112 flows finished by -end $end us; running again with -end $((end * 4))" >&2
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
