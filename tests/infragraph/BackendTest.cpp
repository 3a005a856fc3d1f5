// The backends on the examples: golden outputs, round trips through the canonical
// document, and what the digest depends on.
//
// The fqg goldens were checked against the reference: the reference InfraGraphService
// (Keysight/infragraph 2701fa5, run with a stand-in for its generated data classes)
// expands examples/clos-2tier.yaml and the document serialized by its own
// ClosFatTreeFabric(Switch(8), Server(), 2) to the same 236 node names, in the same
// order, and the same 288 edges, links and bandwidths as tests/golden/infragraph/
// clos-2tier.fqg.tsv; likewise single-switch (21 nodes, 20 edges) and
// composed-nic-host (93 nodes, 98 edges).
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

std::string run(const std::vector<std::string> &args) {
  RunResult r = runInfracc(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

std::string example(const std::string &name) { return sourcePath("examples/" + name); }

void golden(const std::string &name, const std::vector<std::string> &args) {
  std::string diff = compareGolden("infragraph/" + name, run(args));
  EXPECT_EQ(diff, "");
}

} // namespace

TEST(Golden, SingleSwitchCanonicalYaml) {
  golden("single-switch.infragraph.yaml", {example("single-switch.yaml"), "-emit=infragraph"});
}
TEST(Golden, SingleSwitchCanonicalJson) {
  golden("single-switch.infragraph.json",
         {example("single-switch.yaml"), "-emit=infragraph", "-format=json"});
}
TEST(Golden, SingleSwitchFqgJson) {
  golden("single-switch.fqg.json", {example("single-switch.yaml"), "-emit=fqg"});
}
TEST(Golden, SingleSwitchStats) {
  golden("single-switch.stats.txt", {example("single-switch.yaml"), "-emit=stats"});
}
TEST(Golden, Clos2TierCanonicalYaml) {
  golden("clos-2tier.infragraph.yaml", {example("clos-2tier.yaml"), "-emit=infragraph"});
}
TEST(Golden, Clos2TierFqgTsv) {
  golden("clos-2tier.fqg.tsv", {example("clos-2tier.yaml"), "-emit=fqg", "-format=tsv"});
}
TEST(Golden, Clos2TierStats) {
  golden("clos-2tier.stats.txt", {example("clos-2tier.yaml"), "-emit=stats"});
}
TEST(Golden, Clos2TierStatsJson) {
  golden("clos-2tier.stats.json", {example("clos-2tier.yaml"), "-emit=stats", "-format=json"});
}
TEST(Golden, ComposedCanonicalYaml) {
  golden("composed-nic-host.infragraph.yaml",
         {example("composed-nic-host.yaml"), "-emit=infragraph"});
}
TEST(Golden, ComposedFqgJson) {
  golden("composed-nic-host.fqg.json", {example("composed-nic-host.yaml"), "-emit=fqg"});
}
TEST(Golden, ComposedStats) {
  golden("composed-nic-host.stats.txt", {example("composed-nic-host.yaml"), "-emit=stats"});
}

// --- Round trip ---------------------------------------------------------------------

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, CanonicalDocumentExpandsToTheSameGraph) {
  std::string src = example(GetParam());
  std::string dir = makeTempDir("roundtrip");
  std::string yaml = dir + "/c.yaml", json = dir + "/c.json", again = dir + "/c2.yaml";
  run({src, "-emit=infragraph", "-o", yaml});
  run({src, "-emit=infragraph", "-o", json});
  run({yaml, "-emit=infragraph", "-o", again});
  // Emitting twice is byte-identical.
  EXPECT_EQ(readFile(yaml), readFile(again));
  EXPECT_EQ(readFile(yaml), run({src, "-emit=infragraph"}));
  // The whole graph, node order included, survives YAML and JSON.
  std::string fqg = run({src, "-emit=fqg", "-format=tsv"});
  EXPECT_EQ(run({yaml, "-emit=fqg", "-format=tsv"}), fqg);
  EXPECT_EQ(run({json, "-emit=fqg", "-format=tsv"}), fqg);
  std::string digest = run({src, "-emit=digest"});
  EXPECT_EQ(run({yaml, "-emit=digest"}), digest);
  EXPECT_EQ(run({json, "-emit=digest"}), digest);
}

INSTANTIATE_TEST_SUITE_P(Examples, RoundTrip,
                         ::testing::Values("single-switch.yaml", "single-switch.json",
                                           "clos-2tier.yaml", "composed-nic-host.yaml"),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

// --- Digest --------------------------------------------------------------------------

namespace {

const std::string Fabric = R"(name: digest-test
devices:
- name: server
  components:
  - {name: xpu, count: 2, choice: xpu}
  - {name: nic, count: 1, choice: nic}
  links: [{name: pcie, physical: {bandwidth: {choice: gigabytes_per_second, gigabytes_per_second: 32}}}]
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
- name: switch
  components: [{name: port, count: 4, choice: port}, {name: asic, count: 1, choice: switch}]
  links: [{name: ic}]
  edges:
  - {ep1: {component: asic}, ep2: {component: port}, scheme: many2many, link: ic}
links:
- {name: eth, physical: {bandwidth: {choice: gigabits_per_second, gigabits_per_second: 100}, latency: {choice: us, us: 0.5}}}
instances:
- {name: host, device: server, count: 4}
- {name: tor, device: switch, count: 1}
edges:
- {ep1: {instance: host, component: nic}, ep2: {instance: "tor[0]", component: "port[0:4]"}, scheme: one2one, link: eth}
)";

// The same fabric: definitions in another order, other slice spellings, other units.
const std::string Reordered = R"(edges:
- {ep1: {instance: "host[0:4:1]", component: "nic[0]"}, ep2: {instance: tor, component: "port[:]"}, scheme: one2one, link: eth}
instances:
- {name: tor, device: switch, count: 1}
- {name: host, device: server, count: 4}
links:
- {name: eth, physical: {latency: {choice: ns, ns: 500}, bandwidth: {choice: gigabytes_per_second, gigabytes_per_second: 12.5}}}
devices:
- name: switch
  components: [{name: asic, count: 1, choice: switch}, {name: port, count: 4, choice: port}]
  links: [{name: ic}]
  edges:
  - {ep1: {component: "port[3:-1:-1]"}, ep2: {component: "asic[0]"}, scheme: many2many, link: ic}
- name: server
  components:
  - {name: nic, count: 1, choice: nic}
  - {name: xpu, count: 2, choice: xpu}
  links: [{name: pcie, physical: {bandwidth: {choice: gigabits_per_second, gigabits_per_second: 256}}}]
  edges:
  - {ep1: {component: nic}, ep2: {component: "xpu[0:2]"}, scheme: many2many, link: pcie}
name: another-name
)";

std::string digestOf(const std::string &doc, const std::string &name = "f.yaml") {
  std::string dir = makeTempDir("digest");
  writeFile(dir + "/" + name, doc);
  return run({dir + "/" + name, "-emit=digest", "-w"});
}

std::string replaced(std::string doc, const std::string &from, const std::string &to) {
  size_t pos = doc.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    doc.replace(pos, from.size(), to);
  return doc;
}

} // namespace

TEST(Digest, IsAHexSha256) {
  std::string d = digestOf(Fabric);
  ASSERT_EQ(d.size(), 65u);
  EXPECT_EQ(d.back(), '\n');
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef\n"), std::string::npos);
}

TEST(Digest, IsTheSha256OfTheDocumentedText) {
  // Checked with coreutils' sha256sum, an implementation independent of infracc's.
  std::string dir = makeTempDir("digest");
  writeFile(dir + "/f.yaml", Fabric);
  std::string text = run({dir + "/f.yaml", "-emit=digest", "-format=canonical", "-w"});
  EXPECT_EQ(text.substr(0, text.find('\n')), "infracc-fabric-digest 1");
  EXPECT_NE(text.find("node\thost.0.nic.0\tnic\tnic\n"), std::string::npos) << text;
  EXPECT_NE(text.find("edge\thost.0.nic.0\ttor.0.port.0\teth\t100000000000\t500\n"),
            std::string::npos)
      << text;
  writeFile(dir + "/text", text);
  std::string cmd = "sha256sum '" + dir + "/text' > '" + dir + "/sum'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string expected = readFile(dir + "/sum").substr(0, 64) + "\n";
  EXPECT_EQ(digestOf(Fabric), expected);
}

TEST(Digest, IndependentOfOrderSlicesUnitsAndNames) {
  EXPECT_EQ(digestOf(Fabric), digestOf(Reordered));
}

TEST(Digest, IndependentOfYamlOrJson) {
  std::string yaml = readFile(example("single-switch.yaml"));
  std::string json = readFile(example("single-switch.json"));
  EXPECT_EQ(digestOf(yaml), digestOf(json, "f.json"));
}

TEST(Digest, ChangesWithOneLatency) {
  EXPECT_NE(digestOf(Fabric), digestOf(replaced(Fabric, "us: 0.5", "us: 0.6")));
}

TEST(Digest, ChangesWithOneBandwidth) {
  EXPECT_NE(digestOf(Fabric),
            digestOf(replaced(Fabric, "gigabytes_per_second: 32", "gigabytes_per_second: 33")));
}

TEST(Digest, ChangesWhenALinkGainsALatency) {
  EXPECT_NE(digestOf(Fabric), digestOf(replaced(Fabric, "links: [{name: ic}]",
                                                "links: [{name: ic, physical: {latency: "
                                                "{choice: ns, ns: 0}}}]")));
}

TEST(Digest, ChangesWithOneEdge) {
  EXPECT_NE(digestOf(Fabric), digestOf(replaced(Fabric, "\"port[0:4]\"}, scheme: one2one",
                                                "\"port[0:4]\"}, scheme: ring")));
}

TEST(Digest, ChangesWithANodeName) {
  std::string renamed = replaced(replaced(Fabric, "{name: nic, count", "{name: nic0, count"),
                                 "ep2: {component: nic}", "ep2: {component: nic0}");
  renamed = replaced(renamed, "{instance: host, component: nic}",
                     "{instance: host, component: nic0}");
  EXPECT_NE(digestOf(Fabric), digestOf(renamed));
}

TEST(Digest, ChangesWithANodeKind) {
  EXPECT_NE(digestOf(Fabric),
            digestOf(replaced(Fabric, "{name: xpu, count: 2, choice: xpu}",
                              "{name: xpu, count: 2, choice: cpu}")));
}

TEST(Digest, ChangesWithALinkName) {
  std::string renamed = replaced(replaced(Fabric, "- {name: eth,", "- {name: ether,"),
                                 "link: eth}", "link: ether}");
  EXPECT_NE(digestOf(Fabric), digestOf(renamed));
}
