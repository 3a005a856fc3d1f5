// A GPU at the level a load-store model needs: compute units hanging off a 2-D mesh of
// network-on-chip routers, HBM channels on the top and bottom router rows, I/O ports
// on the left and right router columns.
//
// Layout: router (row, col) is router[row * cols + col], row 0 at the top. Compute
// units cu[i * cus .. (i+1) * cus) sit on router i. HBM channel c of a row goes to
// column floor(c * cols / hbm) (top row: hbm[c], bottom row: hbm[hbm + c]); I/O port i
// of a side goes to row floor(i * rows / io) (left: io[i], right: io[io + i]).
#include "blueprints/Build.h"
#include "blueprints/Params.h"

namespace infracc::blueprints {
namespace {

const std::vector<ParamInfo> GpuNocParams = {
    {"mesh", "8x4", "router mesh as <columns>x<rows> (each 1..256)"},
    {"cus", "4", "compute units (xpu) per router (0..64)"},
    {"hbm", "16", "HBM channels (memory) on each of the top and bottom router rows (0..1024)"},
    {"io", "4", "I/O ports (port) on each of the left and right router columns (0..1024)"},
    {"bw", "1TiB/s", "bandwidth of the on-chip links (router-router, cu-router)"},
    {"lat", "none", "latency of the on-chip links"},
    {"hbm_bw", "128GiB/s", "bandwidth of each HBM channel's link (32 x 128 GiB/s = the paper's "
                           "4 TiB/s)"},
    {"hbm_lat", "none", "latency of each HBM channel's link (the memory's access time)"},
    {"io_bw", "128GiB/s", "bandwidth of each I/O port's link (8 x 128 GiB/s = the paper's 1 TiB/s "
                          "scale-up)"},
    {"io_lat", "1us", "latency of the I/O port links"},
};

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

std::optional<DeviceBuild> buildGpuNoc(const BlueprintSpec &spec, DiagEngine &diags) {
  ParamReader r(spec, GpuNocParams, "device blueprint 'gpu_noc'", diags);
  std::vector<uint64_t> mesh = r.dims("mesh", 2, 2, 256, "<columns>x<rows>", "8x4");
  uint64_t cus = r.uint("cus", 0, 64);
  uint64_t hbm = r.uint("hbm", 0, 1024);
  uint64_t io = r.uint("io", 0, 1024);
  auto bw = r.bandwidth("bw");
  auto lat = r.latency("lat");
  auto hbmBw = r.bandwidth("hbm_bw");
  auto hbmLat = r.latency("hbm_lat");
  auto ioBw = r.bandwidth("io_bw");
  auto ioLat = r.latency("io_lat");
  if (!r.ok())
    return std::nullopt;
  uint64_t cols = mesh[0], rows = mesh[1], routers = cols * rows;

  DeviceBuilder d("gpu_noc", "A GPU as compute units, HBM channels and I/O ports on a mesh of "
                             "NoC routers");
  d.component("router", ComponentKind::Switch, routers, "NoC router");
  if (cus)
    d.component("cu", ComponentKind::Xpu, routers * cus, "Compute unit");
  if (hbm)
    d.component("hbm", ComponentKind::Memory, 2 * hbm, "HBM channel");
  if (io)
    d.component("io", ComponentKind::Port, 2 * io, "I/O port");
  d.link("noc", "Router to router", bw, lat);
  d.link("cu_link", "Compute unit to router", bw, lat);
  d.link("hbm_link", "HBM channel to router", hbmBw, hbmLat);
  d.link("io_link", "I/O port to router", ioBw, ioLat);

  if (cols > 1)
    for (uint64_t row = 0; row < rows; ++row)
      d.edge(Scheme::One2One, {range("router", row * cols, row * cols + cols - 1)},
             {range("router", row * cols + 1, row * cols + cols)}, "noc");
  if (rows > 1)
    d.edge(Scheme::One2One, {range("router", 0, (rows - 1) * cols)},
           {range("router", cols, rows * cols)}, "noc");
  if (cus == 1)
    d.edge(Scheme::One2One, {all("cu")}, {all("router")}, "cu_link");
  else if (cus > 1)
    for (uint64_t i = 0; i < routers; ++i)
      d.edge(Scheme::Many2Many, {range("cu", i * cus, (i + 1) * cus)}, {at("router", i)},
             "cu_link");
  // Channels [ceil(col*hbm/cols), ceil((col+1)*hbm/cols)) of a row sit on column col.
  for (uint64_t side = 0; side < 2 && hbm; ++side)
    for (uint64_t col = 0; col < cols; ++col) {
      uint64_t a = ceilDiv(col * hbm, cols), b = ceilDiv((col + 1) * hbm, cols);
      if (a == b)
        continue;
      uint64_t router = side == 0 ? col : (rows - 1) * cols + col;
      d.edge(Scheme::Many2Many, {range("hbm", side * hbm + a, side * hbm + b)},
             {at("router", router)}, "hbm_link");
    }
  for (uint64_t side = 0; side < 2 && io; ++side)
    for (uint64_t row = 0; row < rows; ++row) {
      uint64_t a = ceilDiv(row * io, rows), b = ceilDiv((row + 1) * io, rows);
      if (a == b)
        continue;
      uint64_t router = row * cols + (side == 0 ? 0 : cols - 1);
      d.edge(Scheme::Many2Many, {range("io", side * io + a, side * io + b)},
             {at("router", router)}, "io_link");
    }
  return d.take();
}

RegisterDeviceBlueprint GpuNoc({"gpu_noc",
                                "GPU for load-store models: compute units on a 2-D mesh of NoC "
                                "routers, HBM channels on the top and bottom rows, I/O ports on "
                                "the left and right columns",
                                GpuNocParams, nullptr, buildGpuNoc});

} // namespace
} // namespace infracc::blueprints
