// The frontend's schema checks (types, keys, units, slice syntax, YAML/JSON syntax),
// unit conversions, YAML and JSON giving the same graph, and the `blueprint:` form.
#include "blueprints/Blueprint.h"
#include "tests/infragraph/DiagTestUtil.h"
#include "tests/infragraph/InfraGraphTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

const std::string Base = R"(name: s
devices:
- name: server
  components:
  - {name: cpu, count: 1, choice: cpu}
  - {name: nic, count: 2, choice: nic}
  links:
  - name: pcie
    physical:
      bandwidth: {choice: gigabits_per_second, gigabits_per_second: 100}
      latency: {choice: ns, ns: 10}
  edges:
  - {ep1: {component: cpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
links: [{name: eth}]
instances:
- {name: host, device: server, count: 2}
edges:
- {ep1: {instance: host, component: "nic[0]"}, ep2: {instance: host, component: "nic[1]"}, scheme: many2many, link: eth}
)";

std::string edit(const std::string &from, const std::string &to, std::string doc = Base) {
  size_t pos = doc.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    doc.replace(pos, from.size(), to);
  return doc;
}

void expectLog(const std::string &doc, const std::string &expected,
               const std::string &file = "t.yaml") {
  Expanded r = expandText(doc, file);
  EXPECT_EQ(r.log, expected);
  EXPECT_FALSE(r.graph);
}

const char *EdgeWhat = "'ep2' of edge #1 of device 'server'";

} // namespace

TEST(Schema, BaseDocumentIsValid) {
  Expanded r = expandText(Base);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(r.log, "");
  EXPECT_EQ(r.graph->numNodes(), 6u);
  EXPECT_EQ(r.graph->numEdges(), 8u);   // 2 x 2 pcie + 2 x 2 eth
}

TEST(Schema, UnknownKey) {
  std::string doc = edit("count: 1, choice: cpu}", "cont: 1, choice: cpu}");
  expectLog(doc, errorAt(doc, "cont", "unknown key 'cont' in component 'cpu' of device 'server'; "
                                      "did you mean 'count'? (valid keys: name, description, "
                                      "count, choice, custom, device, cpu, xpu, nic, memory, port, "
                                      "switch)") +
                     errorAt(doc, "{name: cpu", "component 'cpu' of device 'server' has no "
                                               "'count', which is required"));
}

TEST(Schema, UnknownTopLevelKey) {
  std::string doc = Base + "annotations: {}\n";
  expectLog(doc, errorAt(doc, "annotations", "unknown key 'annotations' in the infrastructure; "
                                             "annotations go next to the infrastructure: "
                                             "{infrastructure: {...}, annotations: {...}} (valid "
                                             "keys: name, description, devices, links, instances, "
                                             "edges)"));
}

TEST(Schema, WrongType) {
  std::string doc = edit("count: 1, choice: cpu}", "count: [1], choice: cpu}");
  expectLog(doc, errorAt(doc, "[1]", "'count' of component 'cpu' of device 'server' must be a "
                                     "whole number, not a list"));
}

TEST(Schema, FractionalCount) {
  std::string doc = edit("count: 1, choice: cpu}", "count: 1.5, choice: cpu}");
  expectLog(doc, errorAt(doc, "1.5", "'count' of component 'cpu' of device 'server' must be a "
                                     "whole number, not the number 1.5"));
}

TEST(Schema, NegativeCount) {
  std::string doc = edit("count: 2}", "count: -2}");
  expectLog(doc, errorAt(doc, "-2", "'count' of instance 'host' is -2; a count must be 0 or more"));
}

TEST(Schema, CountBeyond32Bits) {
  std::string doc = edit("count: 1, choice: cpu}", "count: 3000000000, choice: cpu}");
  expectLog(doc, errorAt(doc, "3000000000", "'count' of component 'cpu' of device 'server' is "
                                            "3000000000, more than the 2147483647 InfraGraph "
                                            "allows (counts are 32-bit)"));
}

TEST(Schema, QuotedCount) {
  std::string doc = edit("count: 2, choice: nic}", "count: \"2\", choice: nic}");
  expectLog(doc, errorAt(doc, "\"2\"", "'count' of component 'nic' of device 'server' must be a "
                                       "whole number, not the string '2' (remove the quotes)"));
}

TEST(Schema, NumberWhereANameBelongs) {
  std::string doc = edit("{name: host,", "{name: 42,");
  expectLog(doc, errorAt(doc, "42", "'name' of instance #1 must be a string, not the number 42 "
                                    "(write it in quotes, \"42\", to use it as a name)"));
}

TEST(Schema, MissingRequiredKey) {
  std::string doc = edit("device: server, count: 2}", "device: server}");
  expectLog(doc, errorAt(doc, "{name: host", "instance 'host' has no 'count', which is required"));
}

TEST(Schema, UnknownComponentChoice) {
  std::string doc = edit("choice: nic}", "choice: nics}");
  expectLog(doc, errorAt(doc, "nics", "'choice' of component 'nic' of device 'server' is 'nics'; "
                                      "valid values are custom, device, cpu, xpu, nic, memory, "
                                      "port, switch; did you mean 'nic'?"));
}

TEST(Schema, CustomWithoutType) {
  std::string doc = edit("choice: cpu}", "choice: custom}");
  expectLog(doc, errorAt(doc, "custom}", "component 'cpu' of device 'server' has choice 'custom' "
                                         "but no 'custom: {type: ...}' giving its type"));
}

TEST(Schema, ChoiceWithAnotherKindsMember) {
  std::string doc = edit("choice: cpu}", "choice: cpu, xpu: {}}");
  expectLog(doc, errorAt(doc, "xpu:", "component 'cpu' of device 'server' has choice 'cpu' but a "
                                      "'xpu' member; remove one of them"));
}

TEST(Schema, CustomMemberImpliesTheChoice) {
  Expanded r = expandText(edit("choice: cpu}", "custom: {type: mgmt}}"));
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(r.graph->typeName(*r.graph->lookup("host.1.cpu.0")), "mgmt");
}

TEST(Schema, UnknownBandwidthUnit) {
  std::string doc = edit("{choice: gigabits_per_second,", "{choice: gbps,");
  expectLog(doc, errorAt(doc, "gbps", "bandwidth unit 'gbps' of link 'pcie' of device 'server' is "
                                      "not known; valid units are gigabits_per_second, "
                                      "gigabytes_per_second, gigatransfers_per_second"));
}

TEST(Schema, UnknownLatencyUnit) {
  std::string doc = edit("{choice: ns, ns: 10}", "{choice: s, ns: 10}");
  expectLog(doc, errorAt(doc, "s, ns", "latency unit 's' of link 'pcie' of device 'server' is not "
                                       "known; valid units are ms, us, ns; did you mean 'ms'?"));
}

TEST(Schema, UnknownUnitKey) {
  std::string doc = edit("{choice: ns, ns: 10}", "{sec: 10}");
  expectLog(doc, errorAt(doc, "sec:", "unknown key 'sec' in 'latency' of link 'pcie' of device "
                                      "'server' (valid keys: choice, ms, us, ns)") +
                     errorAt(doc, "{sec:", "'latency' of link 'pcie' of device 'server' has no "
                                         "value; write e.g. {choice: ms, ms: 500}"));
}

TEST(Schema, UnitChoiceAndValueDisagree) {
  std::string doc = edit("{choice: ns, ns: 10}", "{choice: us, ns: 10}");
  expectLog(doc, errorAt(doc, "ns: 10", "'latency' of link 'pcie' of device 'server' has choice "
                                        "'us' but its value is given as 'ns'"));
}

TEST(Schema, BandwidthMustBePositive) {
  std::string doc = edit("gigabits_per_second: 100", "gigabits_per_second: 0");
  expectLog(doc, errorAt(doc, "0}", "bandwidth of link 'pcie' of device 'server' is 0; it must be "
                                    "more than 0"));
}

TEST(Schema, LatencyMustNotBeNegative) {
  std::string doc = edit("ns: 10", "ns: -10");
  expectLog(doc, errorAt(doc, "-10", "latency of link 'pcie' of device 'server' is -10; it must "
                                     "be 0 or more"));
}

TEST(Schema, NumberMustBeFinite) {
  std::string doc = edit("ns: 10", "ns: .inf");
  expectLog(doc, errorAt(doc, ".inf", "'ns' of 'latency' of link 'pcie' of device 'server' is "
                                      ".inf, which is not a finite number"));
}

TEST(Schema, QuotedNumber) {
  std::string doc = edit("ns: 10", "ns: \"10\"");
  expectLog(doc, errorAt(doc, "\"10\"", "'ns' of 'latency' of link 'pcie' of device 'server' must "
                                        "be a number, not the string '10' (remove the quotes)"));
}

TEST(Schema, UnknownScheme) {
  std::string doc = edit("scheme: many2many", "scheme: all2all");
  expectLog(doc, errorAt(doc, "all2all", "'scheme' of edge #1 of device 'server' is 'all2all'; "
                                         "valid values are one2one, many2many, ring"));
}

TEST(Schema, MissingScheme) {
  // The reference has no default scheme either (it raises NotImplementedError).
  std::string doc = edit("scheme: many2many, ", "");
  expectLog(doc, errorAt(doc, "{ep1: {component: cpu}", "edge #1 of device 'server' has no "
                                                       "'scheme', which is required"));
}

TEST(Schema, SliceWithoutClosingBracket) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"nic[0\"}");
  expectLog(doc, errorAt(doc, "[0\"", std::string("slice in 'nic[0' (") + EdgeWhat +
                                          ") has no closing ']'"));
}

TEST(Schema, TextAfterSlice) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"nic[0]x\"}");
  expectLog(doc, errorAt(doc, "x\"}", std::string("unexpected text 'x' after the slice in "
                                                  "'nic[0]x' (") +
                                          EdgeWhat +
                                          "); separate the parts of a composed path with '.'"));
}

TEST(Schema, EmptySlice) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"nic[]\"}");
  expectLog(doc, errorAt(doc, "[]", std::string("empty slice '[]' in 'nic[]' (") + EdgeWhat +
                                        "); write an index [i] or a range [start:stop]"));
}

TEST(Schema, SliceWithThreeColons) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"nic[0:1:1:1]\"}");
  expectLog(doc, errorAt(doc, "[0:1", std::string("slice '[0:1:1:1]' in 'nic[0:1:1:1]' (") +
                                          EdgeWhat +
                                          ") has more than two ':'; write [start:stop:step]"));
}

TEST(Schema, SliceBoundNotANumber) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"nic[a:2]\"}");
  expectLog(doc, errorAt(doc, "a:2", std::string("'a' in slice '[a:2]' of 'nic[a:2]' (") +
                                         EdgeWhat + ") is not a whole number"));
}

TEST(Schema, EndpointWithoutName) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"[0]\"}");
  expectLog(doc, errorAt(doc, "[0]", std::string("missing name in '[0]' (") + EdgeWhat +
                                         "); an endpoint is written name or name[slice], e.g. "
                                         "xpu[0:4]"));
}

TEST(Schema, DottedInstanceInAnEndpoint) {
  // The reference reads `host.0` as `host` (every copy).
  std::string doc = edit("{instance: host, component: \"nic[0]\"}",
                         "{instance: \"host.0\", component: \"nic[0]\"}");
  expectLog(doc, errorAt(doc, ".0\"", "instance 'host.0' in 'ep1' of infrastructure edge #1 "
                                      "contains '.'; name one instance and select copies with a "
                                      "slice, e.g. 'host[0]'; components go in 'component'"));
}

TEST(Schema, DuplicateKey) {
  std::string doc = edit("{name: cpu, count: 1,", "{name: cpu, name: cpu2, count: 1,");
  expectLog(doc, errorAt(doc, "name: cpu2", "key 'name' appears twice in this mapping") +
                     noteAt(doc, "name: cpu", "first occurrence is here"));
}

TEST(Schema, ListExpected) {
  std::string doc = edit("instances:\n- {name: host, device: server, count: 2}", "instances: 5");
  expectLog(doc, errorAt(doc, "5\n", "'instances' must be a list, not the number 5"));
}

TEST(Schema, MappingExpected) {
  std::string doc = edit("- {name: host, device: server, count: 2}", "- host");
  expectLog(doc, errorAt(doc, "host\n", "instance #1 must be a mapping (key: value ...), not the "
                                        "string 'host'"));
}

TEST(Schema, EmptyFile) {
  expectLog("", "t.yaml:1:1: error: the file holds no document; an InfraGraph document is a "
                "mapping with name, devices, links, instances and edges\n\n^\n");
}

TEST(Schema, RootMustBeAMapping) {
  std::string doc = "- a\n- b\n";
  expectLog(doc, errorAt(doc, "- a", "an InfraGraph document must be a mapping (key: value ...), "
                                     "not a list"));
}

TEST(Schema, OneDocumentPerFile) {
  std::string doc = Base + "---\nname: t\n";
  expectLog(doc, errorAt(doc, "name: t\n", "a second YAML document in one file; an InfraGraph "
                                           "file holds one document"));
}

TEST(Schema, YamlSyntaxError) {
  std::string doc = "name: x\ndevices: [\n";
  // llvm::yaml notices at the end of the line, just after the '['.
  expectLog(doc, errorAt(doc, "[", "YAML syntax: could not find closing ]!", 1, 1));
}

TEST(Schema, JsonSyntaxError) {
  // A .json file is checked by a JSON parser first: a trailing comma is an error
  // (YAML would accept it).
  std::string doc = "{\"name\": \"x\",\n \"devices\": [],\n}\n";
  expectLog(doc,
            errorAt(doc, "}", "JSON syntax: syntax error while parsing object key - unexpected "
                              "'}'; expected string literal",
                    1, 0, "t.json"),
            "t.json");
}

TEST(Schema, JsonTypeErrorsAreTheSame) {
  std::string doc = "{\"devices\": [{\"name\": 5, \"components\": []}]}\n";
  expectLog(doc,
            errorAt(doc, "5", "'name' of device #1 must be a string, not the number 5 (write it "
                              "in quotes, \"5\", to use it as a name)",
                    1, 0, "t.json"),
            "t.json");
}

// --- Units: one test per unit ----------------------------------------------------------

namespace {
LinkDef linkWith(const std::string &physical) {
  Expanded r = expandText("links:\n- name: l\n  physical: " + physical + "\n");
  EXPECT_TRUE(r.defs) << r.log;
  EXPECT_EQ(r.log, "t.yaml: warning: the fabric has no nodes\n");
  return r.defs ? r.defs->links.at(0) : LinkDef{};
}
} // namespace

TEST(Units, GigabitsPerSecond) {
  LinkDef l = linkWith("{bandwidth: {choice: gigabits_per_second, gigabits_per_second: 100}}");
  ASSERT_TRUE(l.bandwidth);
  EXPECT_EQ(l.bandwidth->bitsPerSecond, 100e9);
}

TEST(Units, GigabytesPerSecond) {
  LinkDef l = linkWith("{bandwidth: {choice: gigabytes_per_second, gigabytes_per_second: 12.5}}");
  ASSERT_TRUE(l.bandwidth);
  EXPECT_EQ(l.bandwidth->bitsPerSecond, 100e9);   // 12.5 GB/s x 8 bits
}

TEST(Units, GigatransfersPerSecond) {
  // One transfer is one bit per lane: 16 GT/s is 16 Gb/s (no line-code overhead).
  LinkDef l = linkWith(
      "{bandwidth: {choice: gigatransfers_per_second, gigatransfers_per_second: 16}}");
  ASSERT_TRUE(l.bandwidth);
  EXPECT_EQ(l.bandwidth->bitsPerSecond, 16e9);
}

TEST(Units, Milliseconds) {
  LinkDef l = linkWith("{latency: {choice: ms, ms: 0.002}}");
  ASSERT_TRUE(l.latency);
  EXPECT_DOUBLE_EQ(l.latency->ns, 2000);
}

TEST(Units, Microseconds) {
  LinkDef l = linkWith("{latency: {choice: us, us: 1.5}}");
  ASSERT_TRUE(l.latency);
  EXPECT_EQ(l.latency->ns, 1500);
}

TEST(Units, Nanoseconds) {
  LinkDef l = linkWith("{latency: {choice: ns, ns: 250}}");
  ASSERT_TRUE(l.latency);
  EXPECT_EQ(l.latency->ns, 250);
}

TEST(Units, ChoiceMayBeLeftOut) {
  LinkDef l = linkWith("{bandwidth: {gigabits_per_second: 25}, latency: {us: 2}}");
  ASSERT_TRUE(l.bandwidth && l.latency);
  EXPECT_EQ(l.bandwidth->bitsPerSecond, 25e9);
  EXPECT_EQ(l.latency->ns, 2000);
}

TEST(Units, EmptyObjectsMeanNotGiven) {
  // The reference writes `physical: {bandwidth: {}, latency: {}}` for links without values.
  LinkDef l = linkWith("{bandwidth: {}, latency: {}}");
  EXPECT_FALSE(l.bandwidth);
  EXPECT_FALSE(l.latency);
}

// --- YAML and JSON -----------------------------------------------------------------------

TEST(YamlJson, TheSameDocumentGivesTheSameGraph) {
  std::string yaml = readFile(sourcePath("examples/single-switch.yaml"));
  std::string json = readFile(sourcePath("examples/single-switch.json"));
  Expanded a = expandText(yaml, "single-switch.yaml"), b = expandText(json, "single-switch.json");
  ASSERT_TRUE(a.graph && b.graph) << a.log << b.log;
  EXPECT_EQ(nodeNames(*a.graph), nodeNames(*b.graph));
  EXPECT_EQ(edgeList(*a.graph), edgeList(*b.graph));
  ASSERT_EQ(a.graph->numLinks(), b.graph->numLinks());
  for (LinkId l = 0; l < a.graph->numLinks(); ++l) {
    EXPECT_EQ(a.graph->link(l).bandwidth, b.graph->link(l).bandwidth);
    EXPECT_EQ(a.graph->link(l).latency, b.graph->link(l).latency);
  }
  EXPECT_EQ(a.graph->numNodes(), 21u);
}

TEST(YamlJson, AnchorsAliasesAndMergeKeys) {
  std::string doc = "devices:\n"
                    "- name: d\n"
                    "  components:\n"
                    "  - &c {name: a, count: 2, choice: cpu}\n"
                    "  - {<<: *c, name: b}\n"
                    "instances: [{name: x, device: d, count: 1}]\n";
  Expanded r = expandText(doc);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(nodeNames(*r.graph), (std::vector<std::string>{"x.0.a.0", "x.0.a.1", "x.0.b.0",
                                                            "x.0.b.1"}));
}

// The tree is built recursively: nesting is limited before it can exhaust the stack (a
// 50 KB document 25,000 levels deep ended in a segmentation fault), in YAML and JSON.
TEST(YamlJson, NestingPastTheLimitIsAnError) {
  // The first line of the log only: the source line is as long as the nesting.
  auto firstLine = [](const std::string &log) { return log.substr(0, log.find('\n')); };
  const std::string msg =
      "lists and mappings nested more than 256 levels deep (infracc's inputs need a few)";
  for (int depth : {257, 100000}) {
    // The root mapping is the first level; llvm::yaml starts a flow list whose first
    // entry is a list at that entry, so the message points at the 257th bracket.
    std::string yaml = "name: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
    Expanded r = expandText(yaml);
    EXPECT_EQ(firstLine(r.log), "t.yaml:1:263: error: " + msg);
    EXPECT_EQ(r.log.find("error", 30), std::string::npos) << "one error only";
    EXPECT_FALSE(r.graph);
    std::string json = "{\"name\": " + std::string(depth, '[') + std::string(depth, ']') + "}\n";
    r = expandText(json, "t.json");
    EXPECT_EQ(firstLine(r.log), "t.json:1:266: error: " + msg);
    EXPECT_FALSE(r.graph);
  }
  // 255 lists in the root mapping are read: the schema then finds a list where the
  // name belongs.
  std::string ok = "name: " + std::string(255, '[') + std::string(255, ']') + "\n";
  Expanded r = expandText(ok);
  EXPECT_EQ(firstLine(r.log),
            "t.yaml:1:8: error: 'name' of the infrastructure must be a string, not a list");
}

// Readers walk an alias's node once per use, so an alias bomb is refused on its size:
// 2000 components shared by 600 devices are 8.4 million nodes from 17,014 written (a
// 267 KB document of this shape took 19 s and 2 GB before).
TEST(YamlJson, AliasBombIsRefused) {
  auto shared = [](int components, int devices) {
    std::string s = "name: x\ndevices:\n- name: d0\n  components: &c\n";
    for (int i = 0; i < components; ++i)
      s += "  - {name: c" + std::to_string(i) + ", count: 1, choice: cpu}\n";
    for (int i = 1; i < devices; ++i)
      s += "- {name: d" + std::to_string(i) + ", components: *c}\n";
    return s + "instances:\n- {name: h, device: d0, count: 1}\n";
  };
  // Derived: each component is 7 nodes (a mapping, 3 keys, 3 values), so the shared list
  // is 14,000 written once; the other 3,014 written nodes are outside it. Expanded, the
  // 600 devices hold 600 x 14,000 = 8,400,000, plus those 3,014.
  std::string bomb = shared(2000, 600);
  expectLog(bomb, errorAt(bomb, "name: x",
                          "with its aliases expanded the document has 8403014 nodes, 493 times "
                          "the 17014 written; more than 100 times (and 1000000) is refused as an "
                          "alias bomb"));
  // Below that ratio the expanded size is still held against -max-memory: 50 devices
  // sharing 100 components expand to 35,264 nodes (32 bytes each) from 964.
  std::string dir = makeTempDir("alias-memory");
  writeFile(dir + "/a.yaml", shared(100, 50));
  RunResult run = runInfracc({dir + "/a.yaml", "-emit=stats", "-max-memory=1M"});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, dir + "/a.yaml:1:1: error: the document's 35264 nodes with its aliases "
                           "expanded (964 written) would need about 1.1 MiB (35264 x 32 "
                           "bytes), more than -max-memory (1.0 MiB); raise it with "
                           "-max-memory=\nname: x\n^\n");
  run = runInfracc({dir + "/a.yaml", "-emit=stats", "-max-memory=2M"});
  EXPECT_EQ(run.status, 0) << run.err;
}

// Duplicate keys are found through an index of the mapping's keys (a linear search per
// key took 40 s for 160,000 keys); the first occurrence is still the one named.
TEST(YamlJson, DuplicateKeysAmongManyAreFound) {
  std::string doc = "name: x\nextra:\n";
  for (int i = 0; i < 100000; ++i)
    doc += "  k" + std::to_string(i) + ": 0\n";
  doc += "  k7: 1\n  <<: {k8: 2, new: 3}\n";
  Expanded r = expandText(doc);
  EXPECT_EQ(r.log.substr(0, r.log.find("t.yaml", 1)),
            errorAt(doc, "k7: 1", "key 'k7' appears twice in this mapping"));
  EXPECT_NE(r.log.find(noteAt(doc, "k7: 0", "first occurrence is here")), std::string::npos)
      << r.log;
}

TEST(YamlJson, ReferenceGetGraphForm) {
  // {infrastructure, annotations}: what the reference's get_graph(infragraph) returns.
  std::string doc = "{\"infrastructure\": {\"devices\": [{\"name\": \"d\", \"components\": "
                    "[{\"name\": \"a\", \"count\": 2, \"choice\": \"cpu\"}], \"links\": [], "
                    "\"edges\": []}], \"instances\": [{\"name\": \"x\", \"device\": \"d\", "
                    "\"count\": 1}]},\n \"annotations\": {\"nodes\": [{\"name\": \"x\", "
                    "\"attributes\": [{\"attribute\": \"rank\", \"value\": \"3\"}]}]}}\n";
  Expanded r = expandText(doc, "t.json");
  ASSERT_TRUE(r.graph) << r.log;
  const auto *attrs = r.graph->nodeAttributes(1);
  ASSERT_TRUE(attrs);
  ASSERT_EQ(attrs->size(), 1u);
  EXPECT_EQ((*attrs)[0].key, "rank");
  EXPECT_EQ((*attrs)[0].value, "3");
}

// --- blueprint: documents ------------------------------------------------------------

namespace {

// A test-only fabric blueprint: `hosts` copies of the device named by `host` (from the
// document's devices) on one switch, each host's first nic to one port.
std::shared_ptr<Infrastructure> buildPair(const blueprints::BlueprintSpec &spec,
                                          DiagEngine &diags) {
  uint64_t hosts = 2;
  std::string hostDevice;
  for (const blueprints::Param &p : spec.params) {
    if (p.key == "hosts") {
      if (llvm::StringRef(p.value).getAsInteger(10, hosts)) {
        diags.error(p.loc, "hosts must be a whole number, not '" + p.value + "'");
        return nullptr;
      }
    } else if (p.key == "host") {
      hostDevice = p.value;
    } else {
      diags.error(p.loc, "test-pair has no parameter '" + p.key + "'");
      return nullptr;
    }
  }
  auto in = std::make_shared<Infrastructure>();
  in->name = "pair";
  in->origin = spec.origin;
  for (const DeviceDef &d : spec.devices)
    if (d.name == hostDevice)
      in->devices.push_back(d);
  if (in->devices.empty()) {
    diags.error(spec.loc, "test-pair needs host=<one of the document's devices>");
    return nullptr;
  }
  DeviceDef sw;
  sw.name = "sw";
  sw.components.push_back({"port", "", ComponentKind::Port, "", hosts, {}, {}});
  in->devices.push_back(sw);
  in->links.push_back({"eth", "", Bandwidth::gigabitsPerSec(100), std::nullopt, {}});
  in->instances.push_back({"h", hostDevice, "", hosts, {}, {}, {}});
  in->instances.push_back({"s", "sw", "", 1, {}, {}, {}});
  InfraEdge e;
  e.ep1.instance.name = "h";
  Slice first;
  first.isIndex = true;
  first.start = 0;
  e.ep1.component.push_back({"nic", first, {}});
  e.ep2.instance.name = "s";
  e.ep2.component.push_back({"port", std::nullopt, {}});
  e.link = "eth";
  in->edges.push_back(e);
  return in;
}

struct RegisterTestBlueprint {
  RegisterTestBlueprint() {
    blueprints::Registry::addFabric({"test-pair", "test only: hosts on one switch",
                                     {{"hosts", "2", "number of hosts"},
                                      {"host", "", "host device"}},
                                     buildPair});
  }
} registerTestBlueprint;

const std::string BlueprintDoc = R"(blueprint: {name: test-pair, hosts: 3, host: srv}
devices:
- name: srv
  components: [{name: nic, count: 1, choice: nic}]
)";

} // namespace

TEST(BlueprintForm, InstantiatesWithParametersAndInlineDevices) {
  Expanded r = expandText(BlueprintDoc);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph), (std::vector<std::string>{"h.0.nic.0 -- s.0.port.0 eth",
                                                          "h.1.nic.0 -- s.0.port.1 eth",
                                                          "h.2.nic.0 -- s.0.port.2 eth"}));
}

TEST(BlueprintForm, ParameterValuesKeepTheirLocation) {
  std::string doc = edit("hosts: 3", "hosts: three", BlueprintDoc);
  expectLog(doc, errorAt(doc, "three", "hosts must be a whole number, not 'three'"));
}

TEST(BlueprintForm, ParameterMustBeASingleValue) {
  std::string doc = edit("hosts: 3", "hosts: [1, 2]", BlueprintDoc);
  expectLog(doc, errorAt(doc, "[1, 2]", "blueprint parameter 'hosts' must be a single value (a "
                                        "number or a word), not a list"));
}

TEST(BlueprintForm, UnknownBlueprintListsTheKnownOnes) {
  std::string doc = edit("name: test-pair", "name: nosuch", BlueprintDoc);
  Expanded r = expandText(doc);
  EXPECT_FALSE(r.graph);
  std::string prefix = "t.yaml:1:19: error: unknown fabric blueprint 'nosuch' (fabric blueprints: ";
  EXPECT_EQ(r.log.substr(0, prefix.size()), prefix) << r.log;
  EXPECT_NE(r.log.find("test-pair"), std::string::npos) << r.log;
}

TEST(BlueprintForm, OnlyBlueprintAndDevicesAtTheTop) {
  std::string doc = BlueprintDoc + "instances: []\n";
  expectLog(doc, errorAt(doc, "instances", "unknown key 'instances' in a blueprint document "
                                           "(valid keys: blueprint, devices)"));
}

TEST(BlueprintForm, NameAloneAsAScalar) {
  std::string doc = "blueprint: test-pair\n";
  expectLog(doc, errorAt(doc, "test-pair", "test-pair needs host=<one of the document's "
                                           "devices>"));
}
