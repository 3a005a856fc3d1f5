// HammingMesh (Hoefler et al., SC'22): boards of a x b xpus wired as a 2-D mesh on
// the board, boards laid out in an x x y grid, and every row and every column of
// xpus across the grid joined by its own network.
//
// Board (R, C) is board[R*y + C]; its xpu (i, j) is xpu[i*b + j]. Global row R*a + i
// joins, for every board C of board row R, the west xpu (i, 0) as endpoint 2C and the
// east xpu (i, b-1) as endpoint 2C+1: 2y endpoints. Global column C*b + j joins the north
// xpu (0, j) of board (R, C) as endpoint 2R and the south xpu (a-1, j) as 2R+1: 2x
// endpoints. A network of N endpoints is one switch of N ports when N <= radix, else a
// two-level fat tree of radix-port leaves (radix/2 endpoints and radix/2 uplinks each,
// ceil(N / (radix/2)) leaves) under radix/2 spines of one port per leaf; endpoint e is on
// leaf e / (radix/2), port e % (radix/2), and leaf l's uplink s on spine s, port l.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> HxMeshParams = {
    {"board", "2x2", "xpus on a board as <rows>x<columns> (each 1..64)"},
    {"grid", "4x4", "boards as <rows>x<columns> (each 1..4096)"},
    {"radix", "16", "port count of fat-tree switches, used when a row or column has more "
                    "endpoints than that (2..4096)"},
    {"board_bw", "400G", "bandwidth of the on-board mesh links (board_link)"},
    {"board_lat", "none", "latency of board_link"},
    {"bw", "400G", "bandwidth of the links to and inside row and column networks"},
    {"lat", "none", "latency of those links"},
};

std::shared_ptr<Infrastructure> buildHxMesh(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, HxMeshParams, "fabric blueprint 'hammingmesh'", diags);
  std::vector<uint64_t> board = r.dims("board", 2, 2, 64, "<rows>x<columns>", "2x2");
  std::vector<uint64_t> grid = r.dims("grid", 2, 2, 4096, "<rows>x<columns>", "4x4");
  uint64_t k = r.uint("radix", 2, 4096);
  auto boardBw = r.bandwidth("board_bw"), bw = r.bandwidth("bw");
  auto boardLat = r.latency("board_lat"), lat = r.latency("lat");
  if (!r.ok())
    return nullptr;
  uint64_t a = board[0], b = board[1], x = grid[0], y = grid[1], half = k / 2;
  // Row networks have 2y endpoints, column networks 2x.
  struct Net {
    const char *kind;                   // "row" or "col"
    uint64_t count, endpoints, leaves;  // leaves == 0: a single switch
  };
  Net nets[2] = {{"row", x * a, 2 * y, 0}, {"col", y * b, 2 * x, 0}};
  for (Net &net : nets) {
    if (net.endpoints <= k)
      continue;
    if (half == 0 || ceilDiv(net.endpoints, half) > k) {
      r.error("radix", fmt::format("radix {} is too small: a {} network joins {} xpus, more than "
                                   "a two-level fat tree of radix {} holds ({}); raise the radix",
                                   k, net.kind, net.endpoints, k, k * half));
      return nullptr;
    }
    net.leaves = ceilDiv(net.endpoints, half);
  }

  FabricBuilder f(spec, "hammingmesh-fabric",
                  fmt::format("HammingMesh of {}x{} boards of {}x{} xpus", x, y, a, b));
  DeviceBuilder bd("board", fmt::format("A {}x{} mesh of xpus on one board", a, b));
  bd.component("xpu", ComponentKind::Xpu, a * b, "Generic GPU/XPU");
  bd.link("board_link", "On-board mesh link", boardBw, boardLat);
  if (b > 1)
    for (uint64_t i = 0; i < a; ++i)
      bd.edge(Scheme::One2One, {range("xpu", i * b, i * b + b - 1)},
              {range("xpu", i * b + 1, i * b + b)}, "board_link");
  if (a > 1)
    bd.edge(Scheme::One2One, {range("xpu", 0, (a - 1) * b)}, {range("xpu", b, a * b)},
            "board_link");
  if (!f.addDevice(bd.take(), r, "board"))
    return nullptr;
  for (const Net &net : nets) {
    std::string kind = net.kind;
    if (net.leaves == 0) {
      if (!f.addDevice(genericSwitch(net.endpoints, kind + "_switch"), r, "radix"))
        return nullptr;
    } else if (!f.addDevice(genericSwitch(k, kind + "_leaf"), r, "radix") ||
               !f.addDevice(genericSwitch(net.leaves, kind + "_spine"), r, "radix")) {
      return nullptr;
    }
  }
  f.instance("board", "board", x * y);
  for (const Net &net : nets) {
    std::string kind = net.kind;
    if (net.leaves == 0) {
      f.instance(kind + "_switch", kind + "_switch", net.count);
    } else {
      f.instance(kind + "_leaf", kind + "_leaf", net.count * net.leaves);
      f.instance(kind + "_spine", kind + "_spine", net.count * half);
    }
  }
  f.link("hm_link", "xpu to its row or column network", bw, lat);
  if (nets[0].leaves || nets[1].leaves)
    f.link("tree_link", "Fat-tree leaf to spine", bw, lat);
  if (!f.checkSize(r))
    return nullptr;

  // Endpoint e of network `netIndex` -> its switch port.
  auto attach = [&](const Net &net, uint64_t netIndex, uint64_t e, PathElem boardElem,
                    uint64_t xpu) {
    std::string kind = net.kind;
    if (net.leaves == 0)
      f.edge(std::move(boardElem), {at("xpu", xpu)}, at(kind + "_switch", netIndex),
             {at("port", e)}, "hm_link");
    else
      f.edge(std::move(boardElem), {at("xpu", xpu)}, at(kind + "_leaf", netIndex * net.leaves + e / half),
             {at("port", e % half)}, "hm_link");
  };
  const Net &rows = nets[0], &cols = nets[1];
  for (uint64_t R = 0; R < x; ++R)
    for (uint64_t i = 0; i < a; ++i) {
      uint64_t net = R * a + i;
      for (uint64_t side = 0; side < 2; ++side) {
        uint64_t xpu = i * b + (side ? b - 1 : 0);
        if (rows.leaves == 0)   // boards C = 0..y-1 on ports side, side+2, ...
          f.edge(range("board", R * y, R * y + y), {at("xpu", xpu)}, at("row_switch", net),
                 {range("port", side, 2 * y, 2)}, "hm_link");
        else
          for (uint64_t C = 0; C < y; ++C)
            attach(rows, net, 2 * C + side, at("board", R * y + C), xpu);
      }
    }
  for (uint64_t C = 0; C < y; ++C)
    for (uint64_t j = 0; j < b; ++j) {
      uint64_t net = C * b + j;
      for (uint64_t side = 0; side < 2; ++side) {
        uint64_t xpu = (side ? a - 1 : 0) * b + j;
        if (cols.leaves == 0)   // boards R = 0..x-1 (stride y) on ports side, side+2, ...
          f.edge(range("board", C, C + (x - 1) * y + 1, y), {at("xpu", xpu)},
                 at("col_switch", net), {range("port", side, 2 * x, 2)}, "hm_link");
        else
          for (uint64_t R = 0; R < x; ++R)
            attach(cols, net, 2 * R + side, at("board", R * y + C), xpu);
      }
    }
  for (const Net &net : nets) {
    if (net.leaves == 0)
      continue;
    std::string kind = net.kind;
    for (uint64_t l = 0; l < net.count * net.leaves; ++l) {
      uint64_t netIndex = l / net.leaves, local = l % net.leaves;
      f.edge(at(kind + "_leaf", l), {range("port", half, k)},
             range(kind + "_spine", netIndex * half, (netIndex + 1) * half), {at("port", local)},
             "tree_link");
    }
  }
  return f.take();
}

RegisterFabricBlueprint HxMesh({"hammingmesh",
                                "HammingMesh: 2-D meshes of xpus on boards, boards in a grid, "
                                "every row and column of xpus joined by a switch or fat tree",
                                HxMeshParams, buildHxMesh});

} // namespace
} // namespace infracc::blueprints
