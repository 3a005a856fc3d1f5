// Every validation rule with its exact message. Positions are found in the test's own
// document text (the n-th occurrence of a marker), so line, column, source line and
// caret are derived here, independently of infracc.
#include "tests/infragraph/DiagTestUtil.h"
#include "tests/infragraph/InfraGraphTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

const std::string Base = R"(devices:
- name: server
  components:
  - {name: cpu, count: 1, choice: cpu}
  - {name: xpu, count: 2, choice: xpu}
  - {name: nic, count: 1, choice: nic}
  links: [{name: pcie}]
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
- name: switch
  components: [{name: port, count: 4, choice: port}]
links: [{name: eth}]
instances:
- {name: host, device: server, count: 2}
- {name: tor, device: switch, count: 1}
edges:
- {ep1: {instance: host, component: nic}, ep2: {instance: tor, component: "port[0:2]"}, scheme: one2one, link: eth}
)";

// Base with the first occurrence of `from` replaced by `to`.
std::string edit(const std::string &from, const std::string &to, std::string doc = Base) {
  size_t pos = doc.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    doc.replace(pos, from.size(), to);
  return doc;
}

// Only the log matters; a run with an error must produce no graph.
void expectLog(const std::string &doc, const std::string &expected) {
  Expanded r = expandText(doc);
  EXPECT_EQ(r.log, expected);
  if (expected.find(": error: ") != std::string::npos) {
    EXPECT_FALSE(r.graph);
  }
}

} // namespace

TEST(Validation, BaseDocumentOnlyWarns) {
  // 2 cpus and tor ports 2 and 3 have no edge; tor has no internal edges, so each
  // host with its tor port is a part of its own.
  expectLog(Base, "t.yaml: warning: 4 nodes have no edges, e.g. 'host.0.cpu.0'\n"
                  "t.yaml: warning: the fabric falls into 2 connected parts (not counting nodes "
                  "without edges), e.g. 'host.0.xpu.0' cannot reach 'host.1.xpu.0'\n");
}

TEST(Validation, UnknownComponentInInfrastructureEdge) {
  std::string doc = edit("component: nic}, ep2: {instance", "component: nicc}, ep2: {instance");
  expectLog(doc, errorAt(doc, "nicc", "component 'nicc' is not a component of device 'server' "
                                      "(it has: cpu, xpu, nic); did you mean 'nic'?"));
}

TEST(Validation, UnknownComponentInDeviceEdge) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: nics}");
  expectLog(doc, errorAt(doc, "nics", "component 'nics' is not a component of device 'server' "
                                      "(it has: cpu, xpu, nic); did you mean 'nic'?"));
}

TEST(Validation, UnknownInstance) {
  std::string doc = edit("instance: tor,", "instance: torr,");
  expectLog(doc, errorAt(doc, "torr", "instance 'torr' is not defined (instances: host, tor); "
                                      "did you mean 'tor'?"));
}

TEST(Validation, UnknownDevice) {
  std::string doc = edit("device: switch", "device: swtch");
  expectLog(doc, errorAt(doc, "swtch", "instance 'tor' uses device 'swtch', which is not defined "
                                       "(devices: server, switch); did you mean 'switch'?"));
}

TEST(Validation, UnknownInfrastructureLink) {
  std::string doc = edit("link: eth}", "link: ether}");
  expectLog(doc, errorAt(doc, "ether", "link 'ether' is not defined among the infrastructure "
                                       "links (eth); did you mean 'eth'?"));
}

TEST(Validation, UnknownDeviceLink) {
  std::string doc = edit("link: pcie}", "link: eth}");
  expectLog(doc, errorAt(doc, "eth}", "link 'eth' is not a link of device 'server' (it has: "
                                      "pcie); 'eth' is an infrastructure link, and a device edge "
                                      "uses the device's own links"));
}

TEST(Validation, IndexOutOfRange) {
  std::string doc = edit("\"port[0:2]\"", "\"port[4]\"");
  expectLog(doc, errorAt(doc, "port[4]", "index 4 in 'port[4]' is out of range: component 'port' "
                                         "of device 'switch' has count 4 (indices 0..3)"));
}

TEST(Validation, SliceOutOfRange) {
  std::string doc = edit("\"port[0:2]\"", "\"port[2:6]\"");
  expectLog(doc, errorAt(doc, "port[2:6]", "slice 'port[2:6]' selects index 5, out of range: "
                                           "component 'port' of device 'switch' has count 4 "
                                           "(indices 0..3)"));
}

TEST(Validation, InstanceSliceOutOfRange) {
  std::string doc = edit("instance: host,", "instance: \"host[1:3]\",");
  expectLog(doc, errorAt(doc, "host[1:3]", "slice 'host[1:3]' selects index 2, out of range: "
                                           "instance 'host' has count 2 (indices 0..1)"));
}

TEST(Validation, NegativeIndex) {
  std::string doc = edit("instance: tor,", "instance: \"tor[-1]\",");
  expectLog(doc, errorAt(doc, "tor[-1]", "index -1 in 'tor[-1]' is negative; indices count from 0 "
                                         "(instance 'tor' has count 1: indices 0..0) and a "
                                         "negative index does not count from the end"));
}

TEST(Validation, NegativeSliceBound) {
  std::string doc = edit("\"port[0:2]\"", "\"port[-2:]\"");
  expectLog(doc, errorAt(doc, "port[-2:]", "slice 'port[-2:]' selects index -2: a negative number "
                                           "is a range bound, it does not count from the end "
                                           "(component 'port' of device 'switch' has count 4: "
                                           "indices 0..3)"));
}

TEST(Validation, SliceSelectingNothing) {
  std::string doc = edit("\"port[0:2]\"", "\"port[3:1]\"");
  expectLog(doc, errorAt(doc, "port[3:1]", "slice 'port[3:1]' selects nothing (component 'port' "
                                           "of device 'switch' has count 4); slices are "
                                           "range(start, stop, step)"));
}

TEST(Validation, ReversedSliceNeedsBothBounds) {
  std::string doc = edit("\"port[0:2]\"", "\"port[::-1]\"");
  expectLog(doc, errorAt(doc, "port[::-1]", "slice 'port[::-1]' selects nothing (component 'port' "
                                            "of device 'switch' has count 4); slices are "
                                            "range(start, stop, step); with a negative step give "
                                            "both bounds, start above stop, e.g. [7:3:-1]"));
}

TEST(Validation, ZeroStep) {
  std::string doc = edit("\"port[0:2]\"", "\"port[0:2:0]\"");
  expectLog(doc, errorAt(doc, "port[0:2:0]", "slice 'port[0:2:0]' has step 0; the step must not "
                                             "be 0"));
}

TEST(Validation, One2OneUnequalSidesPairUpToTheShorter) {
  std::string doc = edit("\"port[0:2]\"", "\"port[0:3]\"");
  Expanded r = expandText(doc);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(r.log, diagAt(doc, "{ep1: {instance", "warning",
                          "one2one edge joins 2 nodes to 3: made 2 pairs up to the shorter side, "
                          "as InfraGraph's reference does; 1 node of the longer side got no "
                          "partner: tor.0.port.2") +
                       "t.yaml: warning: 4 nodes have no edges, e.g. 'host.0.cpu.0'\n"
                       "t.yaml: warning: the fabric falls into 2 connected parts (not counting "
                       "nodes without edges), e.g. 'host.0.xpu.0' cannot reach 'host.1.xpu.0'\n");
  EXPECT_EQ(edgeList(*r.graph), edgeList(*expandText(Base).graph));
}

TEST(Validation, RingLengthMismatch) {
  std::string doc = edit("scheme: one2one", "scheme: ring", edit("\"port[0:2]\"", "port"));
  expectLog(doc, errorAt(doc, "{ep1: {instance", "ring edge joins 2 nodes to 4; both sides must "
                                                "name the same number of nodes"));
}

TEST(Validation, DottedInstanceName) {
  std::string doc = edit("name: tor,", "name: t.or,");
  expectLog(doc, errorAt(doc, "t.or", "instance name 't.or' contains '.', which separates the "
                                      "parts of fully qualified node names"));
}

TEST(Validation, DottedComponentName) {
  std::string doc = edit("name: nic,", "name: n.ic,");
  expectLog(doc, errorAt(doc, "n.ic", "component name 'n.ic' contains '.', which separates the "
                                      "parts of fully qualified node names"));
}

TEST(Validation, DottedDeviceName) {
  std::string doc = edit("- name: switch", "- name: sw.itch", edit("device: switch", "device: sw.itch"));
  expectLog(doc, errorAt(doc, "sw.itch", "device name 'sw.itch' contains '.', which separates the "
                                         "parts of fully qualified node names"));
}

TEST(Validation, DottedLinkName) {
  std::string doc = edit("links: [{name: eth}]", "links: [{name: e.th}]");
  expectLog(doc, errorAt(doc, "e.th", "link name 'e.th' contains '.', which separates the parts "
                                      "of fully qualified node names"));
}

TEST(Validation, NameWithInvalidCharacter) {
  std::string doc = edit("name: nic,", "name: \"nic/0\",");
  expectLog(doc, errorAt(doc, "\"nic/0\"", "component name 'nic/0' contains '/'; names may use "
                                           "letters, digits, spaces and - _ ( ) < > [ ]"));
}

TEST(Validation, BracketsInAComponentName) {
  std::string doc = edit("name: nic,", "name: \"nic[x]\",");
  expectLog(doc, errorAt(doc, "\"nic[x]\"", "component name 'nic[x]' contains '['; in edges brackets "
                                        "select copies, so such a component could not be named "
                                        "in an edge"));
}

TEST(Validation, DuplicateDevice) {
  std::string doc = edit("- name: switch", "- name: server");
  expectLog(doc, errorAt(doc, "server", "device 'server' is defined more than once", 2) +
                     noteAt(doc, "server", "first definition is here") +
                     errorAt(doc, "switch", "instance 'tor' uses device 'switch', which is not "
                                            "defined (devices: server, server)"));
}

TEST(Validation, DuplicateComponent) {
  std::string doc = edit("name: nic,", "name: xpu,");
  expectLog(doc, errorAt(doc, "name: xpu", "component 'xpu' appears more than once in device "
                                           "'server'",
                         2, 6) +
                     diagAt(doc, "name: xpu", "note", "first definition is here", 1, 6));
}

TEST(Validation, DuplicateInstance) {
  std::string doc = edit("name: tor,", "name: host,");
  expectLog(doc, errorAt(doc, "host", "instance 'host' is defined more than once", 2) +
                     noteAt(doc, "host", "first definition is here"));
}

TEST(Validation, DuplicateLink) {
  std::string doc = edit("links: [{name: eth}]", "links: [{name: eth}, {name: eth}]");
  expectLog(doc, errorAt(doc, "eth", "link 'eth' is defined more than once in the "
                                     "infrastructure",
                         2) +
                     noteAt(doc, "eth", "first definition is here"));
}

TEST(Validation, DeviceEdgeLeavingItsInstance) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: \"tor[0].port[0]\"}");
  expectLog(doc, errorAt(doc, "tor[0].port", "component 'tor' is not a component of device "
                                             "'server' (it has: cpu, xpu, nic); 'tor' is an "
                                             "instance, and a device edge stays inside one copy "
                                             "of its device: join instances with an "
                                             "infrastructure edge"));
}

TEST(Validation, SelfLoop) {
  std::string doc = edit("{ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many",
                         "{ep1: {component: cpu}, ep2: {component: cpu}, scheme: one2one");
  expectLog(doc, errorAt(doc, "{ep1: {component: cpu}",
                         "one2one edge joins 'cpu.0' to itself; a node cannot have an edge to "
                         "itself (many2many skips such pairs, one2one and ring do not)"));
}

TEST(Validation, RingOfOneIsASelfLoop) {
  std::string doc = edit("{ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many",
                         "{ep1: {component: cpu}, ep2: {component: cpu}, scheme: ring");
  expectLog(doc, errorAt(doc, "{ep1: {component: cpu}",
                         "ring edge joins 'cpu.0' to itself; a node cannot have an edge to itself "
                         "(many2many skips such pairs, one2one and ring do not)"));
}

TEST(Validation, ComposedDeviceThatDoesNotExist) {
  std::string doc = edit("  - {name: nic, count: 1, choice: nic}",
                         "  - {name: nic, count: 1, choice: nic}\n"
                         "  - {name: nicdev, count: 1, choice: device}");
  expectLog(doc, errorAt(doc, "nicdev", "component 'nicdev' of device 'server' is a composed "
                                        "device, but no device named 'nicdev' is defined "
                                        "(devices: server, switch)"));
}

TEST(Validation, RecursiveComposition) {
  std::string doc = "devices:\n"
                    "- name: a\n"
                    "  components: [{name: b, count: 1, choice: device}]\n"
                    "- name: b\n"
                    "  components: [{name: a, count: 2, choice: device}]\n"
                    "instances: [{name: x, device: a, count: 1}]\n";
  expectLog(doc, errorAt(doc, "a\n", "device 'a' contains itself through composition (a -> b -> "
                                     "a)"));
}

TEST(Validation, PairJoinedByTwoLinks) {
  std::string doc = edit("  links: [{name: pcie}]\n",
                         "  links: [{name: pcie}, {name: nvlink}]\n",
                         edit("scheme: many2many, link: pcie}",
                              "scheme: many2many, link: pcie}\n"
                              "  - {ep1: {component: \"xpu[1]\"}, ep2: {component: nic}, scheme: "
                              "one2one, link: nvlink}"));
  expectLog(doc, errorAt(doc, "{ep1: {component: \"xpu[1]\"}",
                         "components 'xpu.1' and 'nic.0' of device 'server' are joined with link "
                         "'nvlink' here and with link 'pcie' by another edge; two nodes have at "
                         "most one edge, so one link") +
                     noteAt(doc, "{ep1: {component: xpu}", "the other edge is here"));
}

TEST(Validation, InfrastructurePairJoinedByTwoLinks) {
  std::string doc = edit("links: [{name: eth}]", "links: [{name: eth}, {name: mgmt}]",
                         Base + "- {ep1: {instance: \"host[1]\", component: nic}, ep2: "
                                "{instance: tor, component: \"port[1]\"}, scheme: one2one, "
                                "link: mgmt}\n");
  expectLog(doc, errorAt(doc, "{ep1: {instance: \"host[1]\"",
                         "nodes 'host.1.nic.0' and 'tor.0.port.1' are joined with link 'mgmt' "
                         "here and with link 'eth' by another edge; two nodes have at most one "
                         "edge, so one link") +
                     noteAt(doc, "{ep1: {instance: host", "the other edge is here"));
}

TEST(Validation, ComposedDeviceNamedWithoutComponent) {
  std::string doc = "devices:\n"
                    "- name: nicdev\n"
                    "  components: [{name: port, count: 1, choice: port}, {name: pe, count: 1, "
                    "choice: nic}]\n"
                    "- name: host\n"
                    "  components: [{name: nicdev, count: 2, choice: device}, {name: slot, "
                    "count: 2, choice: port}]\n"
                    "  links: [{name: pcie}]\n"
                    "  edges:\n"
                    "  - {ep1: {component: nicdev}, ep2: {component: slot}, scheme: one2one, "
                    "link: pcie}\n"
                    "instances: [{name: h, device: host, count: 1}]\n";
  expectLog(doc, errorAt(doc, "nicdev}", "'nicdev' is a composed device; an edge must name one of "
                                         "its components (nicdev.port, nicdev.pe)"));
}

TEST(Validation, PathThroughALeafComponent) {
  std::string doc = edit("ep2: {component: nic}", "ep2: {component: nic.x}");
  expectLog(doc, errorAt(doc, "x}", "component 'nic' of device 'server' is a nic, not a composed "
                                    "device, so it has no component 'x'"));
}

TEST(Validation, SeveralErrorsInOneRun) {
  std::string doc = edit("instance: tor,", "instance: torr,",
                         edit("ep2: {component: nic}", "ep2: {component: nics}"));
  expectLog(doc, errorAt(doc, "nics", "component 'nics' is not a component of device 'server' "
                                      "(it has: cpu, xpu, nic); did you mean 'nic'?") +
                     errorAt(doc, "torr", "instance 'torr' is not defined (instances: host, tor); "
                                          "did you mean 'tor'?"));
}

TEST(Validation, ErrorsAreCapped) {
  // 30 edges naming unknown instances; the limit of 5 reports 5 and says it stopped.
  std::string doc = Base;
  for (int i = 0; i < 30; ++i)
    doc += "- {ep1: {instance: nope" + std::to_string(i) +
           ", component: nic}, ep2: {instance: tor, component: port}, scheme: one2one, link: "
           "eth}\n";
  Expanded r = expandText(doc, "t.yaml", 5);
  EXPECT_FALSE(r.graph);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), '^'), 5);
  EXPECT_NE(r.log.find("infracc: note: too many errors (limit 5, see -error-limit); stopping "
                       "here\n"),
            std::string::npos)
      << r.log;
}
