// A checker for htsim input files, written from csg-htsim's parsers
// (ConnectionMatrix::load, FatTreeTopology::load and set_custom_params, 841d9e7) and
// independent of the backend's writers: every file the tests emit goes through it.
//
// It enforces what htsim rejects, asserts on or silently misreads, plus the stricter
// rules we hold ourselves to (docs/htsim.md, reference/htsim.md §12):
//  .cm   LF only, single spaces, no tab; header first (Nodes, Connections, Triggers,
//        each once; `#` comments only there; no Failures); connection lines
//        `src->dst` with src != dst < Nodes and the keys id (first, non-zero, unique),
//        start (integer ps) or trigger (not both, one of them), size (1..2^31-1),
//        send_done_trigger, recv_done_trigger (only if allowed: csg-htsim never fires
//        it), each at most once; trigger lines `trigger id K oneshot|barrier count N`,
//        each id declared once; counts that match; every trigger used has targets, a
//        oneshot exactly one activation, a barrier exactly `count`; and every flow
//        eventually starts.
//  .topo LF only, single spaces; Nodes, Tiers (2|3), Podsize once each before the tiers;
//        one block per tier in order with Downlink_speed_Gbps, Radix_Down,
//        Downlink_Latency_ns (non-zero), Radix_Up below the top tier only,
//        Switch_Latency_ns, Oversubscribed (below the top), Bundle (1 at tier 0), no
//        Queue_* and no unknown key; integers within int; and htsim's shape arithmetic
//        with its assertions and port limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infracc::test::htsimcheck {

struct CmOptions {
  int64_t nodes = -1;            // expected Nodes, -1: any
  bool allowRecvDone = false;
};
/// Violations found, each "line N: what" (or "file: what"); empty when the file is fine.
std::vector<std::string> checkConnectionMatrix(const std::string &text,
                                               const CmOptions &opts = {});

struct TopoShape {
  uint64_t nodes = 0, tiers = 0, pods = 0, torsPerPod = 0, aggsPerPod = 0, cores = 0;
};
std::vector<std::string> checkTopo(const std::string &text, TopoShape *shape = nullptr);

/// Both joined into one message for EXPECT_EQ(..., "").
std::string joined(const std::vector<std::string> &violations);

} // namespace infracc::test::htsimcheck
