// Fabrics htsim's fat tree cannot express are refused with a message that names the
// property and the element, and nothing is written.
#include "tests/htsim/HtsimTestUtil.h"

#include <filesystem>

using namespace infracc::test;

namespace {

const char *Pair = "num_ranks 2\nrank 0 {\nl1: send 100b to 1 tag 0\n}\n"
                   "rank 1 {\nl1: recv 100b from 0 tag 0\n}\n";

// Runs -emit=htsim on the fabric (a YAML text or -fabric= option) and a 2-rank
// workload; expects exit status 1, no output directory, and returns stderr.
std::string refused(const std::string &fabric, std::vector<std::string> extra = {}) {
  std::string dir = makeTempDir("refused") + "/out";
  std::vector<std::string> args;
  if (fabric.rfind("-fabric=", 0) == 0)
    args.push_back(fabric);
  else
    args.push_back(tempFile("fabric.yaml", fabric));
  args.push_back(tempFile("w.goal", Pair));
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"-emit=htsim", "-o", dir});
  RunResult r = runInfracc(args);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a refused fabric left " << dir;
  // Drop the file name (a temporary path) in front of "error:".
  std::string err = r.err;
  size_t at = err.find("error: ");
  return at == std::string::npos ? err : err.substr(at);
}

const std::string Prefix = "error: htsim cannot express this fabric: ";

} // namespace

TEST(HtsimRefusal, Torus) {
  EXPECT_EQ(refused("-fabric=torus:dims=4x4"),
            Prefix + "hosts 'node.0' and 'node.1' are linked directly by 'node.0.xpu.0 -- "
                     "node.1.xpu.0' (link 'torus_link'); htsim hosts connect only to a ToR "
                     "switch (a torus, mesh or other direct network is not expressible); simulate such a "
                     "fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, TorusOfSwitches) {
  EXPECT_EQ(refused("-fabric=torus:dims=4x4,of=switch,host=simple_host,lat=1us"),
            Prefix + "switches 'switch.0' and 'switch.3' are both in tier 0 and linked by "
                     "'switch.0.port.1 -- switch.3.port.2' (link 'torus_link'); htsim's fat tree "
                     "has no links within a tier (a dragonfly, torus or other direct network is "
                     "not expressible); simulate such a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, Dragonfly) {
  EXPECT_EQ(refused("-fabric=dragonfly:a=4,p=2,h=2,host=simple_host"),
            Prefix + "switches 'router.0' and 'router.1' are both in tier 0 and linked by "
                     "'router.0.port.2 -- router.1.port.2' (link 'intra_switch_link'); htsim's "
                     "fat tree has no links within a tier (a dragonfly, torus or other direct "
                     "network is not expressible); simulate such a fabric with -emit=sim "
                     "-sim-model=topo\n");
}

TEST(HtsimRefusal, SingleSwitch) {
  EXPECT_EQ(refused("-fabric=single_tier:hosts=4,host=simple_host,lat=1us"),
            Prefix + "htsim's fat tree has 2 or 3 tiers of switches; this fabric has 1 (tier 0: "
                     "1 switch); simulate such a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, AttachPointOnTwoTors) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.oneNic = true;
  f.link("host", 0, "tor", 1, "h");   // host 0's one NIC: tor 0 and tor 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "'host.0.nic.0' is linked to two switches, 'tor.0' and 'tor.1' "
                     "('host.0.nic.0 -- tor.0.port.0' (link 'h') and 'host.0.nic.0 -- "
                     "tor.1.port.4' (link 'h')); each htsim node is an attach point with one link "
                     "to one ToR: give every link its own NIC or NIC port (e.g. "
                     "host=dgx_h100(nic_device=cx5(variant=100g_dual)) composes two-port NICs), "
                     "or simulate it with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, AttachPointWithTwoLinksToItsTor) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.oneNic = true;
  f.link("host", 0, "tor", 0, "h");   // host 0's one NIC: twice to tor 0
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "'host.0.nic.0' has several links to 'tor.0' ('host.0.nic.0 -- "
                     "tor.0.port.0' (link 'h') and 'host.0.nic.0 -- tor.0.port.4' (link 'h')); "
                     "each htsim node is an attach point with one link to one ToR: give every "
                     "link its own NIC or NIC port (e.g. "
                     "host=dgx_h100(nic_device=cx5(variant=100g_dual)) composes two-port NICs), "
                     "or simulate it with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnequalSpeedsInATier) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.links.push_back({"fast", 400});
  f.edges.back().link = "fast";   // tor 1 -- spine 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-1 links (tier-0 to tier-1 switches) differ in bandwidth: "
                     "'tor.0.port.2 -- spine.0.port.0' (link 's') has 100 Gb/s but "
                     "'tor.1.port.3 -- spine.1.port.1' (link 'fast') has 400 Gb/s; htsim has "
                     "one link speed per tier: give them one speed (the links' bandwidth in the "
                     "fabric file, or the blueprint's bw1 parameter), or simulate the fabric with "
                     "-emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnequalLatenciesInATier) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.links.push_back({"far", 100, 2000});
  f.edges[3].link = "far";   // host 3's link
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 links (attach points to tier-0 switches) differ in latency: "
                     "'host.0.nic.0 -- tor.0.port.0' (link 'h') has 500 ns but "
                     "'host.3.nic.0 -- tor.1.port.1' (link 'far') has 2000 ns; htsim has one "
                     "link latency per tier: give them one latency (the links' latency in the "
                     "fabric file, or the blueprint's lat0 parameter), or simulate the fabric "
                     "with -emit=sim -sim-model=topo\n");
}

// Not a refusal: links without a latency get htsim's own default hop latency (1 us,
// csg-htsim's fat_tree_topology.cpp), with a warning that names them and the options.
TEST(HtsimRefusal, MissingLatencyIsHtsimsDefaultWithAWarning) {
  Emitted e = emitHtsim({"-fabric=leaf_spine:host=simple_host,bw1=100G", tempFile("w.goal", Pair)});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(e.run.err, "-fabric=leaf_spine:host=simple_host,bw1=100G: warning: links "
                       "'leaf_link', 'spine_link' have no latency; fabric.topo gives them htsim's "
                       "default hop latency, 1000 ns (-htsim-link-latency=<ns> sets another; the "
                       "blueprints' lat0=, lat1=, lat2= give links one)\n");
  EXPECT_NE(e.topo.find("Downlink_Latency_ns 1000\n"), std::string::npos) << e.topo;
}

TEST(HtsimRefusal, FractionalGbps) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw0=12.5G,bw1=12.5G,lat0=1us,lat1=1us"),
            Prefix + "tier-0 links (attach points to tier-0 switches) run at 12.5 Gb/s "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim's "
                     "Downlink_speed_Gbps is a whole number of Gb/s\n");
}

TEST(HtsimRefusal, FractionalNanoseconds) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw1=100G,lat0=1.5ns,lat1=1us"),
            Prefix + "tier-0 links (attach points to tier-0 switches) have latency 1.5 ns "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim's "
                     "Downlink_Latency_ns is a whole number of ns\n");
}

TEST(HtsimRefusal, ZeroLatency) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw1=100G,lat0=0ns,lat1=1us"),
            Prefix + "tier-0 links (attach points to tier-0 switches) have latency 0 "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim needs a "
                     "non-zero link latency (Downlink_Latency_ns)\n");
}

// Not a refusal: the clos blueprint's default speeds (100G hosts, 200G uplinks, as many
// uplinks as host ports) give a ToR more uplink than downlink bandwidth, which htsim
// cannot build (it derives the uplink count from the speeds); fabric.topo caps the
// uplinks at what the ToR's attach points can send, with a warning saying how to avoid it.
TEST(HtsimRefusal, FasterUplinksThanHtsimDerivesAreCappedWithAWarning) {
  const std::string fabric = "-fabric=clos:radix=8,host=simple_host,lat0=1us,lat1=1us";
  Emitted e = emitHtsim({fabric, tempFile("w.goal", Pair)});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(e.run.err, fabric + ": warning: htsim gives no switch more uplink than downlink "
                                "bandwidth: the tier-0 switches have 4 attach points at 100 Gb/s "
                                "(400 Gb/s) and 4 uplinks at 200 Gb/s (800 Gb/s); fabric.topo "
                                "gives them 4 uplinks at 100 Gb/s (400 Gb/s), so the uplinks are "
                                "busier than in the fabric (tier-1 links of 100 Gb/s, e.g. the "
                                "blueprints' bw1=100G, avoid this)\n");
  EXPECT_NE(e.topo.find("Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 8\n"), std::string::npos)
      << e.topo;
}

TEST(HtsimRefusal, MoreThan96ToRPorts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=2,spines=2,hosts_per_leaf=96,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "a ToR would get 98 ports (96 attach points and 2 uplinks); htsim allows at "
                     "most 96: use fewer attach points per ToR (a smaller radix, fewer "
                     "hosts_per_leaf or hosts_per_group), or simulate the fabric with -emit=sim "
                     "-sim-model=topo\n");
}

TEST(HtsimRefusal, MoreThan64SpinePorts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=65,spines=1,hosts_per_leaf=1,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "a tier-1 switch would get 65 ports or more; htsim allows at most 64: use "
                     "fewer attach points per ToR (a smaller radix, fewer hosts_per_leaf or "
                     "hosts_per_group), or simulate the fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, MoreUplinksThanHosts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=2,spines=4,hosts_per_leaf=2,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "the tier-0 switches have 2 attach points but reach 4 tier-1 switches; an "
                     "htsim ToR has at most as many uplinks as attach points (Oversubscribed = "
                     "Radix_Down / Radix_Up >= 1): use fewer tier-1 switches or more attach "
                     "points per ToR, or simulate the fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnequalHostsPerTor) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.hosts = 5;
  f.link("host", 4, "tor", 1, "h");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 switch 'tor.1' has 3 attach points but 'tor.0' has 2; htsim gives "
                     "every switch of a tier the same number of attach points (Radix_Down); "
                     "simulate such a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, ToRMissingASpine) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.edges.pop_back();   // tor 1 -- spine 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 switch 'tor.1' reaches 1 of the 2 tier-1 switches (not 'spine.1'); "
                     "in a 2-tier htsim fabric every ToR connects to every tier-1 switch; simulate such "
                     "a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnequalBundles) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.link("tor", 1, "spine", 1, "s");   // a second link for one pair
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "'tor.1' and 'spine.1' are joined by 2 links but 'tor.0' and 'spine.0' by "
                     "1; htsim has one bundle size per tier (Bundle); simulate such a fabric with "
                     "-emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnequalSwitchLatencies) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.nodeAnnotations = {"{name: spine.1, attributes: [{attribute: switch_latency, value: 300ns}]}"};
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-1 switches differ in switch latency: 'spine.0' has 0 ns but "
                     "'spine.1' 300 ns; htsim has one switch latency per tier: give them one "
                     "(annotation switch_latency), or simulate the fabric with -emit=sim "
                     "-sim-model=topo\n");
}

TEST(HtsimRefusal, FractionalSwitchLatency) {
  EXPECT_EQ(refused(leafSpine(2, 2, 2).yaml(), {"-switch-latency=0.5"}),
            Prefix + "tier-0 switches have a switch latency of 0.5 ns; htsim's "
                     "Switch_Latency_ns is a whole number of ns\n");
}

TEST(HtsimRefusal, UnequalPods) {
  // Pod 0: tors 0-1 with aggs 0-1; pod 1: tors 2-4 with aggs 2-3; cores 0-1.
  YamlFabric f;
  f.hosts = 10;
  f.links = {{"h"}, {"a"}, {"c"}};
  f.switches = {{"tor", 5}, {"agg", 4}, {"core", 2}};
  for (int h = 0; h < 10; ++h)
    f.link("host", h, "tor", h / 2, "h");
  for (int t = 0; t < 5; ++t)
    for (int a = t < 2 ? 0 : 2, e = a + 2; a < e; ++a)
      f.link("tor", t, "agg", a, "a");
  for (int a = 0; a < 4; ++a)
    f.link("agg", a, "core", a % 2, "c");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "pods differ in size: the pod of 'tor.0' has 2 ToRs and 2 tier-1 switches, "
                     "the pod of 'tor.2' 3 ToRs and 2 tier-1 switches; htsim's pods are all "
                     "alike; simulate such a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, CoresNotStripedOverPods) {
  // Two pods of 1 ToR and 2 aggs; agg 0 and agg 1 of pod 0 share core 0.
  YamlFabric f;
  f.hosts = 4;
  f.links = {{"h"}, {"a"}, {"c"}};
  f.switches = {{"tor", 2}, {"agg", 4}, {"core", 2}};
  for (int h = 0; h < 4; ++h)
    f.link("host", h, "tor", h / 2, "h");
  for (int t = 0; t < 2; ++t)
    for (int a = 2 * t; a < 2 * t + 2; ++a)
      f.link("tor", t, "agg", a, "a");
  for (int a = 0; a < 4; ++a)
    f.link("agg", a, "core", 0, "c");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-1 switches 'agg.0' and 'agg.1' are in the same pod and reach the same "
                     "tier-2 switches; htsim connects the tier-1 switches of a pod to different "
                     "core switches; simulate such a fabric with -emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, UnattachedSwitch) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.switches.push_back({"spare", 2});
  f.link("spare", 0, "spare", 1, "s");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "switch 'spare.0' is not connected to any host (it is linked by "
                     "'spare.0.port.0 -- spare.1.port.0' (link 's')); every switch of htsim's "
                     "fat tree is: remove it from the fabric, or simulate the fabric with "
                     "-emit=sim -sim-model=topo\n");
}

TEST(HtsimRefusal, BadLinkLatencyOption) {
  std::string dir = makeTempDir("refused") + "/out";
  RunResult r = runInfracc({"-fabric=leaf_spine:host=simple_host,bw1=100G",
                            tempFile("w.goal", Pair), "-htsim-link-latency=0", "-emit=htsim",
                            "-o", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -htsim-link-latency=0: must be a positive number of ns\n");
}

// 65 pods of one ToR, one tier-1 switch and one host, and one core switch: the core
// switch gets a port per pod.
TEST(HtsimRefusal, MoreThan64CorePorts) {
  YamlFabric f;
  f.hosts = 65;
  f.links = {{"h"}, {"a"}, {"c"}};
  f.switches = {{"tor", 65}, {"agg", 65}, {"core", 1}};
  for (int p = 0; p < 65; ++p) {
    f.link("host", p, "tor", p, "h");
    f.link("tor", p, "agg", p, "a");
    f.link("agg", p, "core", 0, "c");
  }
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "a core switch would get 65 ports (one per pod); htsim allows at most 64: use "
                     "at most 64 pods (fewer ToRs, or more per pod), or simulate the fabric with "
                     "-emit=sim -sim-model=topo\n");
}
