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
                     "switch (a torus, mesh or other direct network is not expressible)\n");
}

TEST(HtsimRefusal, TorusOfSwitches) {
  EXPECT_EQ(refused("-fabric=torus:dims=4x4,of=switch,host=simple_host,lat=1us"),
            Prefix + "switches 'switch.0' and 'switch.3' are both in tier 0 and linked by "
                     "'switch.0.port.1 -- switch.3.port.2' (link 'torus_link'); htsim's fat tree "
                     "has no links within a tier (a dragonfly, torus or other direct network is "
                     "not expressible)\n");
}

TEST(HtsimRefusal, Dragonfly) {
  EXPECT_EQ(refused("-fabric=dragonfly:a=4,p=2,h=2,host=simple_host"),
            Prefix + "switches 'router.0' and 'router.1' are both in tier 0 and linked by "
                     "'router.0.port.2 -- router.1.port.2' (link 'intra_switch_link'); htsim's "
                     "fat tree has no links within a tier (a dragonfly, torus or other direct "
                     "network is not expressible)\n");
}

TEST(HtsimRefusal, SingleSwitch) {
  EXPECT_EQ(refused("-fabric=single_tier:hosts=4,host=simple_host,lat=1us"),
            Prefix + "htsim's fat tree has 2 or 3 tiers of switches; this fabric has 1 (tier 0: "
                     "1 switch)\n");
}

TEST(HtsimRefusal, HostOnTwoTors) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.nics = 2;
  f.link("host", 0, "tor", 1, "h");   // host 0: tor 0 and tor 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "host 'host.0' is attached to more than one switch ('tor.0' and 'tor.1'); "
                     "htsim attaches each host to one ToR by one link\n");
}

TEST(HtsimRefusal, HostWithTwoLinksToItsTor) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=2,spines=2,hosts_per_leaf=2,lat0=1us,lat1=1us"),
            Prefix + "host 'server.0' has 2 links to 'leaf.0' ('server.0.nic.0 -- leaf.0.port.0' "
                     "(link 'leaf_link') and 'server.0.nic.1 -- leaf.0.port.1' (link "
                     "'leaf_link')); htsim attaches each host by one link\n");
}

TEST(HtsimRefusal, UnequalSpeedsInATier) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.links.push_back({"fast", 400});
  f.edges.back().link = "fast";   // tor 1 -- spine 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-1 links (tier-0 to tier-1 switches) differ in bandwidth: "
                     "'tor.0.port.2 -- spine.0.port.0' (link 's') has 100 Gb/s but "
                     "'tor.1.port.3 -- spine.1.port.1' (link 'fast') has 400 Gb/s; htsim has "
                     "one link speed per tier\n");
}

TEST(HtsimRefusal, UnequalLatenciesInATier) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.links.push_back({"far", 100, 2000});
  f.edges[3].link = "far";   // host 3's link
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 links (hosts to tier-0 switches) differ in latency: "
                     "'host.0.nic.0 -- tor.0.port.0' (link 'h') has 500 ns but "
                     "'host.3.nic.0 -- tor.1.port.1' (link 'far') has 2000 ns; htsim has one "
                     "link latency per tier\n");
}

TEST(HtsimRefusal, MissingLatencyNamesTheOption) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host"),
            Prefix + "'simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link') has no latency; "
                     "htsim needs a non-zero link latency per tier (give the link one, or set "
                     "-htsim-link-latency=<ns>)\n");
}

TEST(HtsimRefusal, FractionalGbps) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw0=12.5G,bw1=12.5G,lat0=1us,lat1=1us"),
            Prefix + "tier-0 links (hosts to tier-0 switches) run at 12.5 Gb/s "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim's "
                     "Downlink_speed_Gbps is a whole number of Gb/s\n");
}

TEST(HtsimRefusal, FractionalNanoseconds) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw1=100G,lat0=1.5ns,lat1=1us"),
            Prefix + "tier-0 links (hosts to tier-0 switches) have latency 1.5 ns "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim's "
                     "Downlink_Latency_ns is a whole number of ns\n");
}

TEST(HtsimRefusal, ZeroLatency) {
  EXPECT_EQ(refused("-fabric=leaf_spine:host=simple_host,bw1=100G,lat0=0ns,lat1=1us"),
            Prefix + "tier-0 links (hosts to tier-0 switches) have latency 0 "
                     "('simple_host.0.nic.0 -- leaf.0.port.0' (link 'leaf_link')); htsim needs a "
                     "non-zero link latency (Downlink_Latency_ns)\n");
}

// The clos blueprint's default speeds (100G hosts, 200G uplinks, as many uplinks as host
// ports): htsim derives the uplink count from speeds and Radix_Down/Radix_Up and gets half.
TEST(HtsimRefusal, FasterUplinksThanHtsimDerives) {
  EXPECT_EQ(refused("-fabric=clos:radix=8,host=simple_host,lat0=1us,lat1=1us"),
            Prefix + "htsim counts the ToR uplinks as Nodes x s0 / (s1 x Oversubscribed), with "
                     "Oversubscribed = Radix_Down / Radix_Up = 4 / 4 = 1 (integer division): 32 x "
                     "100 / (200 x 1) = 16, but the fabric has 32 (8 ToRs x 4); this mix of link "
                     "speeds and port counts is not expressible\n");
}

TEST(HtsimRefusal, MoreThan96ToRPorts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=2,spines=2,hosts_per_leaf=96,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "htsim would not build it from a .topo file: a ToR gets 98 ports (96 hosts "
                     "and 2 uplinks); htsim allows at most 96\n");
}

TEST(HtsimRefusal, MoreThan64SpinePorts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=65,spines=1,hosts_per_leaf=1,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "htsim would not build it from a .topo file: a tier-1 switch gets 65 ports "
                     "(65 down); htsim allows at most 64\n");
}

TEST(HtsimRefusal, MoreUplinksThanHosts) {
  EXPECT_EQ(refused("-fabric=leaf_spine:leaves=2,spines=4,hosts_per_leaf=2,host=simple_host,"
                    "bw1=100G,lat0=1us,lat1=1us"),
            Prefix + "the ToRs have more uplinks (4) than hosts (2); htsim's tier-0 "
                     "Oversubscribed = Radix_Down / Radix_Up must be at least 1\n");
}

TEST(HtsimRefusal, UnequalHostsPerTor) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.hosts = 5;
  f.link("host", 4, "tor", 1, "h");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 switch 'tor.1' has 3 hosts but 'tor.0' has 2; htsim gives every "
                     "switch of a tier the same number of host ports (Radix_Down)\n");
}

TEST(HtsimRefusal, ToRMissingASpine) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.edges.pop_back();   // tor 1 -- spine 1
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-0 switch 'tor.1' reaches 1 of the 2 tier-1 switches (not 'spine.1'); "
                     "in a 2-tier htsim fabric every ToR connects to every tier-1 switch\n");
}

TEST(HtsimRefusal, UnequalBundles) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.link("tor", 1, "spine", 1, "s");   // a second link for one pair
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "'tor.1' and 'spine.1' are joined by 2 links but 'tor.0' and 'spine.0' by "
                     "1; htsim has one bundle size per tier (Bundle)\n");
}

TEST(HtsimRefusal, UnequalSwitchLatencies) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.nodeAnnotations = {"{name: spine.1, attributes: [{attribute: switch_latency, value: 300ns}]}"};
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "tier-1 switches differ in switch latency: 'spine.0' has 0 ns but "
                     "'spine.1' 300 ns; htsim has one switch latency per tier\n");
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
                     "alike\n");
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
                     "core switches\n");
}

TEST(HtsimRefusal, UnattachedSwitch) {
  YamlFabric f = leafSpine(2, 2, 2);
  f.switches.push_back({"spare", 2});
  f.link("spare", 0, "spare", 1, "s");
  EXPECT_EQ(refused(f.yaml()),
            Prefix + "switch 'spare.0' is not connected to any host (it is linked by "
                     "'spare.0.port.0 -- spare.1.port.0' (link 's')); every switch of htsim's "
                     "fat tree is\n");
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
            Prefix + "htsim would not build it from a .topo file: a core switch gets 65 ports (65 "
                     "pods x Bundle 1); htsim allows at most 64\n");
}
