// A fabric as a CODES model-net network (the `.conf` TraceR and model-net-mpi-replay
// read), docs/scale-out.md. What CODES can express is recognised from the fully
// qualified graph itself, not from how it was made:
//
//  * Torus (`modelnet_torus`): routers (switch boxes, or single-xpu boxes wired to each
//    other directly) in a grid with wrap-around links in every dimension, found from the
//    offsets of router 0's neighbours in router order and then checked router by router;
//    one endpoint per router (CODES's torus has one terminal per router).
//
// Units as CODES reads them: bandwidths in GiB/s (model-net's bytes_to_ns divides by
// 1024^3), delays in ns. A link latency becomes part of `router_delay` (CODES's torus has
// no link latency): router_delay = link latency + switch latency.
//  * Dragonfly (`modelnet_dragonfly_custom`, whose binary connection files say exactly
//    which routers a link joins, so any wiring is kept): routers joined inside their
//    groups by one link name that makes equal full meshes, between groups by another;
//    the same number of endpoints on every router.
//  * Fat tree (`modelnet_fattree`, ft_type 0, two or three levels): CODES builds its
//    switches' wiring from the radix, the tapering and the leaf count (fattree.c); the
//    fabric's switch links, tier by tier in copy order, must be exactly those, else it
//    is refused naming its shape. Several disjoint copies of such a tree (planes, e.g.
//    `leaf_spine:planes=2`) are CODES's multi-rail fat tree (ft_type 2, num_rails): the
//    host NICs on a leaf are its terminals, one rail per plane, and every endpoint sends
//    through its nearest NIC.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::tracer {

struct CodesNetwork {
  std::string model;                 // "torus", "dragonfly_custom", "fattree"
  std::vector<uint32_t> dims;        // torus: dim_length, first dimension fastest
  uint32_t routers = 0, serversPerRouter = 1;
  double linkBytesPerSecond = 0, cnBytesPerSecond = 0;   // dragonfly: link = local
  // Dragonfly: groups of routersPerGroup routers; the binary connection files' records
  // (int32 triples (src, dest, 0) within a group, pairs (src, dest) of global router ids),
  // both directions of every link.
  uint32_t groups = 0, routersPerGroup = 0, globalChannels = 0;
  double globalBytesPerSecond = 0;
  uint32_t switchRadix = 0, tapering = 1, levels = 2;   // fat tree
  // Fat tree of several planes (ft_type 2, num_rails): NIC LPs per repetition (terminals
  // per leaf x rails); 0 when every server is its own terminal.
  uint32_t rails = 1, nicsPerRouter = 0;
  std::string shape;                 // fat tree: its tiers, for the header
  std::vector<std::pair<uint32_t, uint32_t>> intraLinks, interLinks;
  double routerDelayNs = 0;
  /// Per fabric endpoint (FabricGraph::endpoints order): its CODES server index
  /// (router-major: the servers of router 0 first).
  std::vector<uint32_t> serverOfEndpoint;
  std::vector<std::string> notes;    // what was assumed, for the .conf's comments
  std::vector<std::string> approximations;   // what CODES cannot say, also warned about
};

llvm::Expected<CodesNetwork> codesNetwork(const FabricGraph &g,
                                          const std::vector<int64_t> &switchPs,
                                          DiagEngine &diags, llvm::StringRef where);

/// The `.conf` text, with TraceR's PARAMS.
std::string codesConf(const CodesNetwork &n, llvm::StringRef source);

} // namespace infracc::tracer
