// n-dimensional torus and mesh, of xpus (each position is a one-xpu device wired
// directly to its neighbours, as TPU-style ICI) or of switches (each position a switch
// with hosts on it).
//
// Position x = (x0, x1, ...) has index x0 + d0*(x1 + d1*(x2 + ...)): the first
// dimension varies fastest. Along dimension i, position x links to x + e_i; in a torus
// the last position also links back to the first. Dimensions of size 1 have no links;
// in a torus of xpus a dimension of size 2 has a single link per pair (the wrap-around
// link would join the same two xpus again). Switches use ports [0, hosts_per_switch*n)
// for hosts, then two ports per dimension of size > 1: 'minus' (towards x - e_i) and
// 'plus' (towards x + e_i), so a size-2 torus dimension has two parallel links.
#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {
namespace {

std::vector<ParamInfo> torusParams(bool torus) {
  std::string link = torus ? "torus_link" : "mesh_link";
  return {
      {"dims", "4x4", "sizes of the dimensions joined by 'x', e.g. 32x32x32 (1 to 8 of them)"},
      {"of", "xpu", "what sits at each position: xpu (direct xpu links) or switch (hosts on "
                    "switches)"},
      {"host", "server", "host device, of=switch only"},
      {"hosts_per_switch", "1", "hosts on each switch, of=switch only"},
      {"switch", "", "switch device, of=switch only; default: a generic switch with the ports "
                     "needed"},
      {"bw", "100G", "bandwidth of the " + link + " links"},
      {"lat", "none", "latency of the " + link + " links"},
      {"host_bw", "", "bandwidth of host_link, of=switch only (default: bw)"},
      {"host_lat", "", "latency of host_link, of=switch only (default: lat)"},
  };
}

const std::vector<ParamInfo> TorusParams = torusParams(true);
const std::vector<ParamInfo> MeshParams = torusParams(false);

std::shared_ptr<Infrastructure> buildGrid(bool torus, const BlueprintSpec &spec,
                                          DiagEngine &diags) {
  const char *kind = torus ? "torus" : "mesh";
  ParamReader r(spec, torus ? TorusParams : MeshParams, fmt::format("fabric blueprint '{}'", kind),
                diags);
  std::vector<uint64_t> dims = r.dims("dims", 1, 8, 0, "", "4x4x4");
  std::string of = r.choice("of", {"xpu", "switch"});
  auto bw = r.bandwidth("bw");
  auto lat = r.latency("lat");
  bool ofSwitch = of == "switch";
  if (r.ok() && !ofSwitch)
    for (const char *key : {"host", "hosts_per_switch", "switch", "host_bw", "host_lat"})
      if (r.given(key))
        r.error(key, fmt::format("{} applies to of=switch; a {} of xpus has no hosts or "
                                 "switches",
                                 key, kind));
  long double positions = 1;
  for (uint64_t d : dims)
    positions *= d;
  if (r.ok() && positions > 0xFFFFFFFEull)
    r.error("dims", fmt::format("dims '{}' give {:.4g} positions; at most 4294967294 are "
                                "supported",
                                r.text("dims"), static_cast<double>(positions)));
  if (!r.ok())
    return nullptr;
  uint64_t count = static_cast<uint64_t>(positions);
  std::string linkName = torus ? "torus_link" : "mesh_link";
  FabricBuilder f(spec, fmt::format("{}-fabric", kind),
                  fmt::format("{} {} of {}s", r.text("dims"), torus ? "Torus" : "Mesh", of));

  // Links of dimension i as runs of positions joined one to one: from, from + step, ...
  // to to, to + step, ... Either one run per block of stride*d positions (step 1) or one
  // run per position of a block (step stride*d), whichever needs fewer runs.
  struct Run {
    uint64_t from, to, len, step;
  };
  auto runs = [&](size_t i, bool wrap) {
    std::vector<Run> out;
    uint64_t stride = 1;
    for (size_t j = 0; j < i; ++j)
      stride *= dims[j];
    uint64_t d = dims[i], block = stride * d, blocks = count / block;
    if (blocks <= stride * d) {
      for (uint64_t b = 0; b < count; b += block) {
        out.push_back({b, b + stride, stride * (d - 1), 1});
        if (wrap)
          out.push_back({b + stride * (d - 1), b, stride, 1});
      }
    } else {
      for (uint64_t o = 0; o < stride; ++o) {
        for (uint64_t t = 0; t + 1 < d; ++t)
          out.push_back({o + stride * t, o + stride * (t + 1), blocks, block});
        if (wrap)
          out.push_back({o + stride * (d - 1), o, blocks, block});
      }
    }
    return out;
  };
  auto slice = [](llvm::StringRef inst, uint64_t from, const Run &run) {
    return range(inst, from, from + (run.len - 1) * run.step + 1, run.step);
  };

  if (!ofSwitch) {
    DeviceBuilder node("xpu_node", "One xpu of a " + std::string(kind));
    node.component("xpu", ComponentKind::Xpu, 1, "Generic GPU/XPU");
    if (!f.addDevice(node.take(), r, "of"))
      return nullptr;
    f.instance("node", "xpu_node", count);
    f.link(linkName, fmt::format("Link between neighbouring xpus of the {}", kind), bw, lat);
    if (!f.checkSize(r))
      return nullptr;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 2)
        continue;
      for (const Run &run : runs(i, torus && dims[i] > 2))
        f.edge(slice("node", run.from, run), {at("xpu", 0)}, slice("node", run.to, run),
               {at("xpu", 0)}, linkName);
    }
    return f.take();
  }

  uint64_t hps = r.uint("hosts_per_switch", 1, 65536);
  auto hostBw = r.given("host_bw") ? r.bandwidth("host_bw") : bw;
  auto hostLat = r.given("host_lat") ? r.latency("host_lat") : lat;
  auto host = readHost(r);
  if (!r.ok() || !host)
    return nullptr;
  uint64_t down = hps * host->nics.count, active = 0;
  for (uint64_t d : dims)
    active += d > 1;
  uint64_t need = down + 2 * active;
  auto sw = readSwitch(r, need,
                       fmt::format("a switch needs {} for hosts and 2 per dimension of size > 1:",
                                   down));
  if (!r.ok() || !sw)
    return nullptr;
  if (!f.addDevice(host->dev, r, "host") || !f.addDevice(sw->dev, r, "switch"))
    return nullptr;
  const std::string hostInst = host->dev.device.name;
  f.instance(hostInst, host->dev.device.name, count * hps);
  f.instance("switch", sw->dev.device.name, count);
  f.link("host_link", "Host to switch", hostBw, hostLat);
  f.link(linkName, fmt::format("Link between neighbouring switches of the {}", kind), bw, lat);
  if (!f.checkSize(r))
    return nullptr;
  const AttachPoints &ports = sw->ports;
  f.edge(all(hostInst), host->nics.all(), all("switch"), portRange(ports, 0, down), "host_link");
  uint64_t slot = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 2)
      continue;
    ComponentPath minus{at(ports.component, down + 2 * slot)};
    ComponentPath plus{at(ports.component, down + 2 * slot + 1)};
    ++slot;
    for (const Run &run : runs(i, torus))
      f.edge(slice("switch", run.from, run), plus, slice("switch", run.to, run), minus, linkName);
  }
  return f.take();
}

RegisterFabricBlueprint Torus({"torus",
                               "n-dimensional torus of xpus or of switches with hosts "
                               "(wrap-around links in every dimension)",
                               TorusParams,
                               [](const BlueprintSpec &s, DiagEngine &d) {
                                 return buildGrid(true, s, d);
                               }});
RegisterFabricBlueprint Mesh({"mesh", "n-dimensional mesh of xpus or of switches with hosts",
                              MeshParams, [](const BlueprintSpec &s, DiagEngine &d) {
                                return buildGrid(false, s, d);
                              }});

} // namespace
} // namespace infracc::blueprints
