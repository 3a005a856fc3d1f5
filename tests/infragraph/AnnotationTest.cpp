// The Annotation form: attributes on nodes (by name, prefix or the reference's slice
// form), edges, links and the graph. The expected attributes follow the reference's
// annotate_graph semantics; the document below was also run through the reference
// InfraGraphService (2701fa5, with a stand-in for its generated classes) and gave the
// same attributes on every node and edge.
#include "tests/infragraph/DiagTestUtil.h"
#include "tests/infragraph/InfraGraphTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

const std::string Doc = R"(infrastructure:
  name: annot
  devices:
  - name: server
    components:
    - {name: xpu, count: 2, choice: xpu}
    - {name: nic, count: 1, choice: nic}
    links: [{name: pcie}]
    edges:
    - {ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
  - name: switch
    components: [{name: port, count: 4, choice: port}]
  links: [{name: eth}]
  instances:
  - {name: host, device: server, count: 4}
  - {name: tor, device: switch, count: 1}
  edges:
  - {ep1: {instance: host, component: nic}, ep2: {instance: tor, component: port}, scheme: one2one, link: eth}
annotations:
  nodes:
  - {name: host, attributes: [{attribute: device_type, value: host}]}
  - {name: "host[0:2]xpu[0:2]", attributes: [{attribute: rank, value: "0"}, {attribute: role, value: a}]}
  - {name: "host.1.xpu.1", attributes: [{attribute: rank, value: "7"}]}
  - {name: "tor[0]", attributes: [{attribute: device_type, value: switch}]}
  - {name: "host.2.xpu", attributes: [{attribute: type, value: zzz}]}
  edges:
  - {ep1: "host[0:2]nic[0]", ep2: "tor[0]port[0:4]", attributes: [{attribute: cable, value: dac}]}
  links:
  - {name: eth, attributes: [{attribute: speed, value: "100"}]}
  - {name: pcie, attributes: [{attribute: cable, value: trace}]}
  graph:
  - {attribute: site, value: lab}
)";

std::string attrs(const std::vector<Attribute> *a) {
  std::string out;
  if (a)
    for (const Attribute &x : *a)
      out += (out.empty() ? "" : " ") + x.key + "=" + x.value;
  return out;
}

} // namespace

TEST(Annotations, NodesByPrefixAndSlice) {
  Expanded r = expandText(Doc);
  ASSERT_TRUE(r.graph) << r.log;
  const FabricGraph &g = *r.graph;
  auto node = [&](const char *n) { return attrs(g.nodeAttributes(*g.lookup(n))); };
  // Later annotations override a key's value but keep its place.
  EXPECT_EQ(node("host.0.xpu.0"), "device_type=host rank=0 role=a");
  EXPECT_EQ(node("host.1.xpu.1"), "device_type=host rank=7 role=a");
  EXPECT_EQ(node("host.1.nic.0"), "device_type=host");
  EXPECT_EQ(node("host.2.xpu.0"), "device_type=host");
  EXPECT_EQ(node("tor.0.port.3"), "device_type=switch");
}

TEST(Annotations, EdgesLinksAndGraph) {
  Expanded r = expandText(Doc);
  ASSERT_TRUE(r.graph) << r.log;
  const FabricGraph &g = *r.graph;
  auto edge = [&](const char *a, const char *b) {
    for (const auto &adj : g.neighbours(*g.lookup(a)))
      if (adj.node == *g.lookup(b))
        return attrs(g.edgeAttributes(adj.edge));
    return std::string("no edge");
  };
  EXPECT_EQ(edge("host.0.nic.0", "tor.0.port.0"), "cable=dac speed=100");
  EXPECT_EQ(edge("host.3.nic.0", "tor.0.port.3"), "speed=100");
  // Link annotations come after edge annotations and override them.
  EXPECT_EQ(edge("host.0.xpu.1", "host.0.nic.0"), "cable=trace");
  std::vector<Attribute> graph(g.graphAttributes().begin(), g.graphAttributes().end());
  EXPECT_EQ(attrs(&graph), "site=lab");
}

TEST(Annotations, AttributesTheExpansionSetsAreIgnoredWithOneWarning) {
  Expanded r = expandText(Doc);
  EXPECT_EQ(r.log, diagAt(Doc, "attribute: type", "warning",
                          "1 annotation attribute ('type') sets what the expansion itself sets "
                          "(type, instance, instance_idx, device, composed_device, link) and is "
                          "ignored",
                          1, 11) +
                       "t.yaml: warning: the fabric falls into 4 connected parts (not counting "
                       "nodes without edges), e.g. 'host.0.xpu.0' cannot reach 'host.1.xpu.0'\n");
}

namespace {

// The document with `from` replaced by `to` fails to expand and says `message` (an
// error located at `to` when `located`, else a line of the log as it is).
void expectRefused(const std::string &from, const std::string &to, const std::string &message,
                   bool located = true) {
  std::string doc = Doc;
  doc.replace(doc.find(from), from.size(), to);
  Expanded r = expandText(doc);
  EXPECT_FALSE(r.graph) << to;
  std::string want = located ? errorAt(doc, to, message) : message;
  EXPECT_NE(r.log.find(want), std::string::npos) << r.log;
}

} // namespace

TEST(Annotations, NodeNameMatchingNothing) {
  expectRefused("\"tor[0]\"", "\"tor[1]\"",
                "node annotation 'tor[1]' names 'tor.1', which is no node and no prefix of node "
                "names (such as 'host', 'host.0', 'host.0.xpu' or 'host.0.xpu.1')");
}

TEST(Annotations, EdgeAnnotationMatchingNoEdge) {
  expectRefused("\"tor[0]port[0:4]\"", "\"host[2:4]nic[0]\"",
                "error: edge annotation 'host[0:2]nic[0]' -- 'host[2:4]nic[0]' matches no edge: "
                "no node of the first is joined to one of the second\n",
                false);
}

TEST(Annotations, UnknownLink) {
  expectRefused("{name: eth, attributes", "{name: ethh, attributes",
                "error: link annotation names 'ethh', which is not a link (links: eth, pcie); did "
                "you mean 'eth'?\n",
                false);
}

// A slice's names are made one at a time and the first that names no node ends it:
// [0:99999999] used to be expanded to a hundred million strings first (about 2 GB and
// more than 10 s; found by the infragraph-yaml fuzz target).
TEST(Annotations, HugeSliceStopsAtTheFirstMissingNode) {
  expectRefused("\"tor[0]\"", "\"host[0:99999999]nic\"",
                "node annotation 'host[0:99999999]nic' names 'host.4.nic', which is no node and "
                "no prefix of node names (such as 'host', 'host.0', 'host.0.xpu' or "
                "'host.0.xpu.1')");
  expectRefused("\"tor[0]port[0:4]\"", "\"tor[0]port[0:18446744073709551615]\"",
                "error: edge annotation endpoint 'tor.0.port.4' is not a node (edge annotations "
                "name nodes exactly, e.g. 'host.0.nic.0' or 'host[0:2]nic[0]')\n",
                false);
}

TEST(Annotations, EmptySliceIsAnEmptyName) {
  expectRefused("\"tor[0]\"", "\"host[3:3]\"", "node annotation has an empty name");
}
