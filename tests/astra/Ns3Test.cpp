// -emit=astra-ns3: the files ASTRA-sim's ns-3 backend reads. Golden files for a DGX H100
// and a leaf-spine of DGX hosts (both run with ASTRA-sim 518bd51's ns-3 backend,
// docs/astra-sim.md), and the topology file checked against the rules of the backend's
// reader (scratch/common.h SetupNetwork / ReadConf) on every fabric shape.
#include "tests/astra/AstraReaders.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <sstream>

using namespace infracc::test;

namespace {

struct Out {
  RunResult run;
  std::string dir;
  std::string file(const std::string &n) const { return readFile(dir + "/" + n); }
};

Out emitNs3(std::vector<std::string> args) {
  Out o;
  o.dir = makeTempDir("ns3") + "/out";
  args.insert(args.end(), {"-emit=astra-ns3", "-o", o.dir});
  o.run = runInfracc(args, sourcePath(""));
  return o;
}

// What SetupNetwork and ReadConf accept, and what the maps must cover. Returns "" or
// the first violation.
std::string checkNs3(const Out &o) {
  std::istringstream topo(o.file("topology.txt"));
  uint64_t nodes = 0, switches = 0, links = 0;
  if (!(topo >> nodes >> switches >> links))
    return "no counts line";
  std::set<uint64_t> sw;
  for (uint64_t i = 0; i < switches; ++i) {
    uint64_t id;
    if (!(topo >> id) || id >= nodes || !sw.insert(id).second)
      return fmt::format("bad switch id {}", i);
  }
  const uint64_t npus = nodes - switches;
  for (uint64_t i = 0; i < npus; ++i)
    if (sw.count(i))
      return fmt::format("NPU {} listed as a switch", i);
  std::set<uint64_t> rates;
  std::set<std::pair<uint64_t, uint64_t>> pairs;
  for (uint64_t i = 0; i < links; ++i) {
    uint64_t a, b;
    std::string rate, delay;
    double err;
    if (!(topo >> a >> b >> rate >> delay >> err))
      return fmt::format("link line {} incomplete", i);
    if (a >= nodes || b >= nodes || a == b)
      return fmt::format("link {}: bad ends {} {}", i, a, b);
    if (!pairs.insert({std::min(a, b), std::max(a, b)}).second)
      return fmt::format("link {}: second link between {} and {}", i, a, b);
    auto r = parseNs3DataRate(rate);
    auto d = parseNs3Time(delay);
    if (!r || !d)
      return fmt::format("link {}: '{}' '{}' are not ns-3 values", i, rate, delay);
    rates.insert(uint64_t(*r));
    if (err != 0)
      return "error rate";
  }
  std::string rest;
  if (topo >> rest)
    return "trailing text: " + rest;
  // Every rate in KMAX_MAP, KMIN_MAP and PMAX_MAP.
  std::istringstream conf(o.file("config.txt"));
  std::string key;
  std::map<std::string, std::set<uint64_t>> maps;
  while (conf >> key) {
    if (key == "KMAX_MAP" || key == "KMIN_MAP" || key == "PMAX_MAP") {
      int n;
      conf >> n;
      for (int i = 0; i < n; ++i) {
        uint64_t rate;
        std::string v;
        conf >> rate >> v;
        maps[key].insert(rate);
      }
    } else if (key == "LINK_DOWN") {
      std::string a, b, c;
      conf >> a >> b >> c;
    } else {
      std::string v;
      conf >> v;
    }
  }
  for (const char *m : {"KMAX_MAP", "KMIN_MAP", "PMAX_MAP"})
    if (maps[m] != rates)
      return std::string(m) + " does not list exactly the link rates";
  return "";
}

} // namespace

TEST(AstraNs3, DgxH100) {
  Out o = emitNs3({"-fabric=single_tier:hosts=1,host=dgx_h100"});
  ASSERT_EQ(o.run.status, 0) << o.run.err;
  EXPECT_EQ(checkNs3(o), "");
  for (const char *f : {"topology.txt", "config.txt", "logical_topology.json", "nodes.txt",
                        "system.json", "run-astra-ns3.sh", "flow.txt", "trace.txt"})
    EXPECT_EQ(compareGolden(std::string("astra/ns3-dgx-h100/") + f, o.file(f)), "") << f;
  EXPECT_EQ(o.run.err, "-fabric=single_tier:hosts=1,host=dgx_h100: warning: links without a "
                       "latency are written with delay 0ns: cpu_fabric, switch-link, "
                       "xpu_fabric\n");
}

// Hosts, NICs (switch nodes: ns-3 hosts are NPUs), leaves and spines; sub-microsecond
// delays exact (500ns, 57500ps), never 0ms.
TEST(AstraNs3, LeafSpineOfDgxHosts) {
  Out o = emitNs3({"-fabric=leaf_spine:leaves=2,spines=8,hosts_per_leaf=2,bundle=2,"
                   "host=dgx_h100,bw0=400G,bw1=400G,lat0=500ns,lat1=500ns"});
  ASSERT_EQ(o.run.status, 0) << o.run.err;
  EXPECT_EQ(checkNs3(o), "");
  EXPECT_EQ(compareGolden("astra/ns3-leaf-spine/topology.txt", o.file("topology.txt")), "");
  EXPECT_EQ(o.file("logical_topology.json"), "{\"logical-dims\":[\"8\",\"2\",\"2\"]}\n");
  const std::string topo = o.file("topology.txt");
  EXPECT_NE(topo.find(" 400Gbps 500ns 0\n"), std::string::npos);
  EXPECT_NE(topo.find(" 512Gbps 57500ps 0\n"), std::string::npos);
  EXPECT_EQ(topo.find("0ms"), std::string::npos);
}

TEST(AstraNs3, EveryShapeFollowsTheReaderRules) {
  for (const std::string &f :
       {std::string("-fabric=clos:radix=4,levels=3,host=simple_host,lat0=1us"),
        std::string("-fabric=dragonfly:host=simple_host,host_lat=100ns,local_lat=250ns"),
        std::string("-fabric=rail:radix=8,host=dgx_h100,lat0=500ns,lat1=500ns"),
        std::string("-fabric=single_tier:hosts=4,host=server"),
        std::string("-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=8,"
                    "host=simple_host(xpus=2,nics=1),bw0=25G,bw1=40G")}) {
    Out o = emitNs3({f});
    ASSERT_EQ(o.run.status, 0) << f << "\n" << o.run.err;
    EXPECT_EQ(checkNs3(o), "") << f;
  }
}

TEST(AstraNs3, SwitchlessAndUnpricedFabrics) {
  Out ring = emitNs3({"tests/astra/inputs/ring8.yaml"});
  ASSERT_EQ(ring.run.status, 0) << ring.run.err;
  EXPECT_EQ(ring.file("topology.txt").substr(0, 7), "8 0 8\n\n");
  EXPECT_EQ(ring.run.err, "tests/astra/inputs/ring8.yaml: warning: 8 link(s) join NPUs "
                          "directly, without a switch: some versions of ASTRA-sim's ns-3 "
                          "backend abort on such fabrics (\"We assume at least one NIC is "
                          "alive\", astra-sim#299)\n");
  Out bare = emitNs3({"-fabric=single_tier:hosts=2,host=simple_host(bw=none)"});
  EXPECT_EQ(bare.run.status, 1);
  EXPECT_NE(bare.run.err.find("has no bandwidth: ns-3 needs a rate for every link"),
            std::string::npos)
      << bare.run.err;
}

// Two xpus wired to both NICs of their host: each keeps only the link to the NIC of its
// affinity (xpu k -> NIC k, as -emit=htsim chooses), so ns-3 routes its traffic there.
TEST(AstraNs3, NicAffinity) {
  Out o = emitNs3({"-fabric=single_tier:hosts=2,host=simple_host(xpus=2,nics=2)"});
  ASSERT_EQ(o.run.status, 0) << o.run.err;
  EXPECT_EQ(checkNs3(o), "");
  EXPECT_EQ(o.file("topology.txt"), "9 5 8\n4 5 6 7 8\n"
                                    "0 4 256Gbps 0ns 0\n1 5 256Gbps 0ns 0\n"
                                    "2 6 256Gbps 0ns 0\n3 7 256Gbps 0ns 0\n"
                                    "4 8 100Gbps 0ns 0\n5 8 100Gbps 0ns 0\n"
                                    "6 8 100Gbps 0ns 0\n7 8 100Gbps 0ns 0\n");
}
