// Structure of a fabric as the rest of the program sizes it: the fabric seen box by
// box (one node per device copy), hosts at the bottom, switch tiers above them by
// distance from the hosts, links and oversubscription per tier, bisection bandwidth and
// diameter. Used by the stats and sizing reports, the htsim backend (which needs tiers)
// and the visualiser (which lays tiers out in rows).
//
// Definitions:
//  * A device copy is a host (FabricGraph::InstanceRole::Host: it has an xpu or a nic),
//    a switch (it has ports or switches and neither xpu nor nic) or other.
//  * The copy graph joins two copies when at least one fabric edge joins nodes of both;
//    edges inside one copy are not part of it.
//  * A switch copy's tier is (hops to the nearest host in the copy graph) - 1, counting
//    only paths through switches: switches next to hosts are tier 0. Switches no host
//    reaches have no tier.
//  * Oversubscription of tier t is the bandwidth of its links down (to tier t-1, hosts
//    for t = 0) over the bandwidth of its links up (to tier t+1); by link counts when
//    some of those links have no bandwidth. Links within a tier count as neither.
//  * Bisection: the maximum flow (= minimum cut) between the first half of the hosts and
//    the second half, in host order (instances in order, copies in order), with every
//    link carrying its bandwidth in each direction. For the regular fabrics blueprints
//    build, host order follows locality, so this is their usual bisection figure; for
//    arbitrary fabrics it is an upper bound on the minimum bisection.
//  * Diameter: the largest number of copy-graph hops between two hosts. Exact (one
//    breadth-first search per class of hosts with the same neighbours, 256 at a time),
//    unless that work exceeds StructureOptions::diameterWorkLimit: then a lower bound
//    from 256 hosts spread over the host order, flagged as such.
#pragma once

#include "ir/FabricGraph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

/// Tier of a device copy: a switch tier (0, 1, ...) or one of these.
inline constexpr int32_t HostTier = -1;
inline constexpr int32_t NoTier = -2;   // a switch no host reaches, or an "other" copy

struct FabricStructure {
  struct Tier {
    uint32_t level = 0;
    uint64_t switches = 0;             // device copies in this tier
    std::vector<uint32_t> instances;   // instances with copies in this tier, in order
    uint64_t downLinks = 0, upLinks = 0, peerLinks = 0;
    double downBps = 0, upBps = 0;     // summed bandwidth; meaningful when bandwidthKnown
    bool bandwidthKnown = true;        // every down and up link has a bandwidth
    /// down / up (bandwidth, else link counts); none for the top tier.
    std::optional<double> oversubscription;
  };
  /// Fabric links between two kinds of copies: lower <= upper, HostTier for hosts,
  /// NoTier for copies without a tier.
  struct LinkClass {
    int32_t lower = 0, upper = 0;
    uint64_t links = 0;
    double bps = 0;                    // summed; meaningful when bandwidthKnown
    bool bandwidthKnown = true;
    std::optional<double> uniformBps;  // when every link of the class has the same bandwidth
    std::vector<std::string> linkNames;
  };

  uint64_t hosts = 0, xpus = 0, nics = 0, switches = 0, otherCopies = 0;
  /// Host nodes with a fabric edge leaving their device copy: the host's network
  /// attach points, whether they are nic components or ports of composed NIC devices.
  uint64_t hostPorts = 0;
  uint64_t unattachedSwitches = 0;
  std::vector<uint32_t> hostInstances;   // instances holding hosts, in order
  std::vector<Tier> tiers;
  std::vector<LinkClass> linkClasses;    // sorted by (lower, upper)

  /// Per device copy (FabricGraph::deviceCopyOf numbering): HostTier, a tier, or NoTier.
  std::vector<int32_t> copyTier;

  struct Bisection {
    uint64_t firstHalfHosts = 0, secondHalfHosts = 0;
    uint64_t links = 0;                // fabric links crossing the minimum cut
    std::optional<double> bps;         // its bandwidth, when every link has one
  };
  std::optional<Bisection> bisection;  // none with fewer than two hosts

  /// None with fewer than two hosts, or when some host cannot reach another.
  std::optional<uint32_t> diameterHops;
  bool diameterIsLowerBound = false;
  bool hostsConnected = true;   // every host reaches every other host
};

struct StructureOptions {
  bool bisection = true;
  bool diameter = true;
  /// Largest (hosts searched from) x (copy-graph arcs) for the exact diameter. The
  /// default takes a few CPU seconds: a 32x32x32 torus of xpus is just inside it.
  double diameterWorkLimit = 1e10;
};

FabricStructure analyzeFabricStructure(const FabricGraph &g, const StructureOptions &opts = {});

/// The copy graph in CSR form, for queries that work box by box.
struct CopyGraph {
  struct Arc {
    uint32_t to;
    uint32_t links;         // fabric edges between the two copies
    double bps;             // their summed bandwidth (0 for links without one)
    bool bandwidthKnown;    // every one of them has a bandwidth
  };
  std::vector<uint32_t> begin;   // numCopies + 1
  std::vector<Arc> arcs;
  uint32_t numCopies() const { return static_cast<uint32_t>(begin.size() - 1); }
};
CopyGraph buildCopyGraph(const FabricGraph &g);

} // namespace infracc
