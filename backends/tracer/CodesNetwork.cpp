#include "backends/tracer/CodesNetwork.h"

#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace infracc::tracer {
namespace {

constexpr double GiB = 1073741824.0;
const std::string XpuRouterNote = "xpus wired to each other: each xpu is a router with its own "
                                  "terminal (cn_bandwidth = all its torus links together)";

// The neighbour offsets router x must have in a torus of `dims` (positions in router
// order, first dimension fastest), as a sorted set of router indices.
std::set<uint32_t> torusNeighbours(uint32_t x, const std::vector<uint32_t> &dims) {
  std::set<uint32_t> out;
  uint64_t stride = 1;
  for (uint32_t d : dims) {
    uint32_t c = uint32_t((x / stride) % d);
    if (d > 1) {
      out.insert(uint32_t(x - c * stride + ((c + 1) % d) * stride));
      out.insert(uint32_t(x - c * stride + ((c + d - 1) % d) * stride));
    }
    stride *= d;
  }
  out.erase(x);
  return out;
}

} // namespace

llvm::Expected<CodesNetwork> codesNetwork(const FabricGraph &g,
                                          const std::vector<int64_t> &switchPs,
                                          DiagEngine &diags, llvm::StringRef where) {
  auto fail = [&](const std::string &msg) -> llvm::Error {
    diags.error(where, msg + "; CODES's models here: torus (fat tree and dragonfly are not "
                             "written yet, docs/scale-out.md)");
    return reportedError();
  };
  CodesNetwork n;
  n.model = "torus";
  // Routers: switch boxes if there are any, else the boxes themselves (xpus wired to
  // each other).
  std::vector<uint32_t> routerOfCopy(g.numDeviceCopies(), ~0u);
  std::vector<uint32_t> routerCopies;
  bool switches = false;
  for (NodeId v = 0; v < g.numNodes(); ++v)
    if (g.instances()[g.instanceOf(v)].role == InstanceRole::Switch) {
      switches = true;
      break;
    }
  {
    std::vector<uint8_t> seen(g.numDeviceCopies(), 0);
    for (NodeId v = 0; v < g.numNodes(); ++v) {
      uint32_t c = g.deviceCopyOf(v);
      bool isRouter = switches ? g.instances()[g.instanceOf(v)].role == InstanceRole::Switch
                               : g.instances()[g.instanceOf(v)].role == InstanceRole::Host;
      if (isRouter && !seen[c]) {
        seen[c] = 1;
        routerOfCopy[c] = uint32_t(routerCopies.size());
        routerCopies.push_back(c);
      }
    }
  }
  const uint32_t R = uint32_t(routerCopies.size());
  n.routers = R;
  if (R < 2)
    return fail("a torus needs at least two routers");
  // Router-to-router links, and endpoints per router.
  std::vector<std::map<uint32_t, uint32_t>> links(R);   // neighbour -> parallel links
  std::set<double> bps;
  std::set<int64_t> ps;
  const auto eps = g.endpoints();
  std::vector<std::vector<uint32_t>> endpointsOf(R);
  for (const auto &e : g.edges()) {
    uint32_t cu = g.deviceCopyOf(e.u), cv = g.deviceCopyOf(e.v);
    if (cu == cv)
      continue;
    uint32_t ru = routerOfCopy[cu], rv = routerOfCopy[cv];
    if (ru != ~0u && rv != ~0u) {
      ++links[ru][rv];
      ++links[rv][ru];
      const auto &l = g.link(e.link);
      if (!l.bandwidth)
        return fail(fmt::format("link '{}' has no bandwidth: CODES needs link_bandwidth", l.name));
      bps.insert(l.bandwidth->bitsPerSecond);
      ps.insert(l.latency ? int64_t(std::llround(l.latency->ns * 1000)) : 0);
    }
  }
  if (bps.size() != 1 || ps.size() != 1)
    return fail("the links between routers differ in bandwidth or latency: CODES's torus has "
                "one link_bandwidth and one router_delay");
  // Endpoints: on their own router (xpu boxes) or on the router their box is wired to.
  n.serverOfEndpoint.assign(eps.size(), 0);
  std::vector<uint32_t> routerOfEndpoint(eps.size());
  std::optional<double> cnBps;
  for (uint32_t i = 0; i < eps.size(); ++i) {
    uint32_t c = g.deviceCopyOf(eps[i]);
    uint32_t r = routerOfCopy[c];
    if (r == ~0u) {
      std::set<uint32_t> attached;
      for (NodeId v = 0; v < g.numNodes(); ++v) {
        if (g.deviceCopyOf(v) != c)
          continue;
        for (auto adj : g.neighbours(v)) {
          uint32_t rr = routerOfCopy[g.deviceCopyOf(adj.node)];
          if (rr != ~0u) {
            attached.insert(rr);
            if (const auto &b = g.link(g.edge(adj.edge).link).bandwidth)
              cnBps = cnBps ? std::min(*cnBps, b->bitsPerSecond) : b->bitsPerSecond;
          }
        }
      }
      if (attached.size() != 1)
        return fail(fmt::format("{} is on {} routers; a CODES terminal hangs off one",
                                g.name(eps[i]), attached.size()));
      r = *attached.begin();
    }
    routerOfEndpoint[i] = r;
    endpointsOf[r].push_back(i);
  }
  for (uint32_t r = 0; r < R; ++r)
    if (endpointsOf[r].size() != 1)
      return fail(fmt::format("router {} has {} endpoints: CODES's torus has one terminal per "
                              "router",
                              r, endpointsOf[r].size()));
  for (uint32_t i = 0; i < eps.size(); ++i)
    n.serverOfEndpoint[i] = routerOfEndpoint[i];
  // Dimensions from router 0's neighbours: the +1 step of each dimension is its stride,
  // and the next stride is the first d * stride that is a neighbour (or R).
  std::set<uint32_t> nb0;
  for (auto &[r, k] : links[0])
    nb0.insert(r);
  std::vector<uint32_t> dims;
  uint64_t stride = 1;
  while (stride < R) {
    if (!nb0.count(uint32_t(stride)))
      return fail(fmt::format("router 0 is not linked to router {}: not a torus in router order",
                              stride));
    uint64_t d = 2;
    while (d * stride < R && !(nb0.count(uint32_t(d * stride)) && R % (d * stride) == 0))
      ++d;
    if (d * stride > R || R % (d * stride) != 0)
      return fail("the routers do not form a torus in router order");
    dims.push_back(uint32_t(d));
    stride *= d;
  }
  for (uint32_t r = 0; r < R; ++r) {
    std::set<uint32_t> have;
    for (auto &[x, k] : links[r])
      have.insert(x);
    if (have != torusNeighbours(r, dims)) {
      std::string shape;
      for (uint32_t d : dims)
        shape += (shape.empty() ? "" : "x") + std::to_string(d);
      return fail(fmt::format("router {} is not wired as position {} of a {} torus (a mesh "
                              "without wrap-around links is not a CODES torus)",
                              r, r, shape));
    }
  }
  n.dims = dims;
  n.linkBytesPerSecond = *bps.begin() / 8;
  n.cnBytesPerSecond = cnBps ? *cnBps / 8 : n.linkBytesPerSecond * 2 * dims.size();
  int64_t swPs = 0;
  if (switches && !switchPs.empty())
    for (NodeId v = 0; v < g.numNodes(); ++v)
      if (routerOfCopy[g.deviceCopyOf(v)] != ~0u && g.kind(v) == ComponentKind::Switch) {
        swPs = switchPs[v];
        break;
      }
  n.routerDelayNs = double(*ps.begin() + swPs) / 1000;
  if (!switches)
    n.notes.assign(1, XpuRouterNote);
  return n;
}

std::string codesConf(const CodesNetwork &n, llvm::StringRef source) {
  std::string dimLength;
  for (uint32_t d : n.dims)
    dimLength += (dimLength.empty() ? "" : ",") + std::to_string(d);
  std::string c = fmt::format(
      "# CODES model-net network for TraceR, written by infracc from '{}'.\n"
      "# {} routers in a {}-dimensional torus ({}), one terminal each; server i is fabric\n"
      "# endpoint i of servers.txt. Bandwidths in GiB/s (CODES divides bytes by 1024^3), delays in ns.\n",
      source.str(), n.routers, n.dims.size(), dimLength);
  for (const std::string &note : n.notes)
    c += "# " + note + "\n";
  c += fmt::format("LPGROUPS\n{{\n   MODELNET_GRP\n   {{\n      repetitions=\"{}\";\n"
                   "      server=\"{}\";\n      modelnet_torus=\"1\";\n   }}\n}}\n",
                   n.routers, n.serversPerRouter);
  c += "PARAMS\n{\n";
  c += "   # ROSS event size: at least 592 bytes for CODES master's model-net events with TraceR\n"
       "   message_size=\"592\";\n"
       "   packet_size=\"4096\";\n"
       "   chunk_size=\"4096\";\n"
       "   modelnet_scheduler=\"fcfs\";\n"
       "   modelnet_order=( \"torus\" );\n";
  c += fmt::format("   n_dims=\"{}\";\n   dim_length=\"{}\";\n", n.dims.size(), dimLength);
  c += "   routing=\"adaptive\";\n";
  c += fmt::format("   link_bandwidth=\"{}\";\n", n.linkBytesPerSecond / GiB);
  // Measured with CODES a5958cf (docs/scale-out.md): its torus.c reads only n_dims,
  // dim_length, link_bandwidth, buffer_size and chunk_size; it sets router_delay to 50 ns
  // and charges every packet 10 ns per byte at the terminal (cn_delay), whatever the
  // .conf says. Both are written for the models and versions that read them.
  c += fmt::format("   # terminal link; CODES a5958cf's torus ignores it (10 ns/byte, fixed)\n"
                   "   cn_bandwidth=\"{}\";\n",
                   n.cnBytesPerSecond / GiB);
  c += "   buffer_size=\"65536\";\n";
  c += fmt::format("   # link latency + switch latency; CODES a5958cf's torus uses 50 ns, fixed\n"
                   "   router_delay=\"{}\";\n",
                   n.routerDelayNs);
  c += "   # TraceR: ns per MPI call, NIC and RDMA setup in ns, ns per byte copied, bytes\n"
       "   soft_delay=\"0\";\n"
       "   nic_delay=\"0\";\n"
       "   rdma_delay=\"0\";\n"
       "   copy_per_byte=\"0\";\n"
       "   eager_limit=\"65536\";\n"
       "   node_eager_limit=\"65536\";\n"
       "}\n";
  return c;
}

} // namespace infracc::tracer
