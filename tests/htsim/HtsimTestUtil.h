// Helpers for the htsim backend tests: fabrics written as InfraGraph YAML link by link,
// GOAL text, and a run of -emit=htsim whose files all go through the format checker.
#pragma once

#include "tests/htsim/HtsimFormatCheck.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <filesystem>
#include <string>
#include <vector>

namespace infracc::test {

/// A fabric of hosts (one xpu and `nics` NICs each) and switch instances (an ASIC and
/// enough ports), wired by explicit links: one InfraGraph edge per link, ports taken
/// in order. Host instance `host`; link types by name.
struct YamlFabric {
  struct LinkType {
    std::string name;
    double gbps = 100;
    std::optional<double> ns = 500;
  };
  struct Edge {
    std::string a;   // instance ("host" or a switch instance)
    int ai;
    std::string b;
    int bi;
    std::string link;
  };
  int hosts = 0, nics = 1;
  bool oneNic = false;   // every host link ends on nic 0 (a NIC with several links)
  std::vector<LinkType> links;
  std::vector<std::pair<std::string, int>> switches;   // instance, count
  std::vector<Edge> edges;
  std::vector<std::string> nodeAnnotations;            // "{name: ..., attributes: [...]}"

  void link(const std::string &a, int ai, const std::string &b, int bi,
            const std::string &type, int times = 1) {
    for (int i = 0; i < times; ++i)
      edges.push_back({a, ai, b, bi, type});
  }

  std::string yaml() const {
    std::map<std::pair<std::string, int>, int> used;   // next nic/port per copy
    int ports = 1;
    for (const Edge &e : edges)
      for (auto side : {std::pair(e.a, e.ai), std::pair(e.b, e.bi)})
        if (side.first != "host")
          ports = std::max(ports, ++used[side]);
    used.clear();
    std::string y = "infrastructure:\n  name: test-fabric\n  devices:\n";
    y += fmt::format("  - name: host\n    components:\n    - {{name: xpu, count: 1, choice: xpu}}\n"
                     "    - {{name: nic, count: {}, choice: nic}}\n    links:\n    - {{name: pcie}}\n"
                     "    edges:\n    - {{ep1: {{component: xpu}}, ep2: {{component: nic}}, "
                     "scheme: many2many, link: pcie}}\n",
                     nics);
    y += fmt::format("  - name: sw\n    components:\n    - {{name: asic, count: 1, choice: switch}}\n"
                     "    - {{name: port, count: {}, choice: port}}\n    links:\n    - {{name: ic}}\n"
                     "    edges:\n    - {{ep1: {{component: asic}}, ep2: {{component: port}}, "
                     "scheme: many2many, link: ic}}\n",
                     ports);
    y += "  links:\n";
    for (const LinkType &l : links) {
      y += fmt::format("  - name: {}\n    physical:\n      bandwidth: {{choice: gigabits_per_second, "
                       "gigabits_per_second: {}}}\n",
                       l.name, l.gbps);
      if (l.ns)
        y += fmt::format("      latency: {{choice: ns, ns: {}}}\n", *l.ns);
    }
    y += fmt::format("  instances:\n  - {{name: host, device: host, count: {}}}\n", hosts);
    for (const auto &[name, count] : switches)
      y += fmt::format("  - {{name: {}, device: sw, count: {}}}\n", name, count);
    y += "  edges:\n";
    for (const Edge &e : edges) {
      auto end = [&](const std::string &inst, int i) {
        int k = used[{inst, i}]++;
        if (inst == "host" && oneNic)
          k = 0;
        return fmt::format("{{instance: \"{}[{}]\", component: \"{}[{}]\"}}", inst, i,
                           inst == "host" ? "nic" : "port", k);
      };
      std::string ep1 = end(e.a, e.ai), ep2 = end(e.b, e.bi);
      y += fmt::format("  - {{ep1: {}, ep2: {}, scheme: one2one, link: {}}}\n", ep1, ep2,
                       e.link);
    }
    if (!nodeAnnotations.empty()) {
      y += "annotations:\n  nodes:\n";
      for (const std::string &a : nodeAnnotations)
        y += "  - " + a + "\n";
    }
    return y;
  }
};

/// 2 tiers: `tors` ToRs with `perTor` hosts each, every ToR linked to every one of
/// `spines` spines by `bundle` links. Link types h (hosts) and s (spines).
inline YamlFabric leafSpine(int tors, int spines, int perTor, int bundle = 1) {
  YamlFabric f;
  f.hosts = tors * perTor;
  f.links = {{"h"}, {"s"}};
  f.switches = {{"tor", tors}, {"spine", spines}};
  for (int h = 0; h < f.hosts; ++h)
    f.link("host", h, "tor", h / perTor, "h");
  for (int t = 0; t < tors; ++t)
    for (int s = 0; s < spines; ++s)
      f.link("tor", t, "spine", s, "s", bundle);
  return f;
}

/// The files of one -emit=htsim run.
struct Emitted {
  RunResult run;
  std::string topo, cm, bin, mapping, script;
};

/// Runs infracc with `args` plus -emit=htsim -o <fresh dir>, reads the files, and puts
/// every emitted .topo and .cm through the format checker (a violation fails the test).
inline Emitted emitHtsim(std::vector<std::string> args, bool allowRecvDone = false) {
  std::string dir = makeTempDir("htsim") + "/out";
  args.push_back("-emit=htsim");
  args.push_back("-o");
  args.push_back(dir);
  Emitted e;
  e.run = runInfracc(args);
  if (e.run.status != 0)
    return e;
  e.topo = readFile(dir + "/fabric.topo");
  e.cm = readFile(dir + "/workload.cm");
  if (std::filesystem::exists(dir + "/workload.bin"))   // skipped with a warning at times
    e.bin = readFile(dir + "/workload.bin");
  e.mapping = readFile(dir + "/mapping.txt");
  e.script = readFile(dir + "/run.sh");
  htsimcheck::TopoShape shape;
  EXPECT_EQ(htsimcheck::joined(htsimcheck::checkTopo(e.topo, &shape)), "") << e.topo;
  htsimcheck::CmOptions co;
  co.nodes = int64_t(shape.nodes);
  co.allowRecvDone = allowRecvDone;
  EXPECT_EQ(htsimcheck::joined(htsimcheck::checkConnectionMatrix(e.cm, co)), "") << e.cm;
  return e;
}

/// The body of a .cm file: everything after the `#` comment lines.
inline std::string cmBody(const std::string &cm) {
  size_t at = 0;
  while (at < cm.size() && cm[at] == '#')
    at = cm.find('\n', at) + 1;
  return cm.substr(at);
}

/// Writes `text` to a fresh file named `name` and returns its path.
inline std::string tempFile(const std::string &name, const std::string &text) {
  std::string path = makeTempDir("in") + "/" + name;
  writeFile(path, text);
  return path;
}

} // namespace infracc::test
