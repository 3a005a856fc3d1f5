// InfraGraph's older document form (connections written as strings, components with
// `type:`, links with `bandwidth:`) and several fabric files given together
// (compiler/frontends/infragraph/OldForm.h).
#include "tests/infragraph/DiagTestUtil.h"
#include "tests/infragraph/InfraGraphTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace infracc;
using namespace infracc::test;

namespace {

const std::string Warning =
    "this is InfraGraph's older document form (connections written as strings, components with "
    "'type:', links with 'bandwidth:'), read by converting it to the current schema; write the "
    "upgraded document with 'infracc ";
const std::string DeviceShape = "component.index.link.component.index, e.g. xpu.0.pcie.nic.0";
const std::string InfraShape = "instance.index.component.index.link.instance.index.component."
                               "index, e.g. server.0.nic.0.eth1.leafsw.0.port.0";

std::vector<std::string> exampleFiles() {
  return {sourcePath("examples/older-form/host.yaml"), sourcePath("examples/older-form/switch.yaml"),
          sourcePath("examples/older-form/fabric.yaml")};
}

std::string upgradeCommand(const std::vector<std::string> &files) {
  std::string s;
  for (const std::string &f : files)
    s += f + " ";
  return s + "-emit=infragraph -o upgraded.yaml'";
}

std::vector<std::string> with(std::vector<std::string> args,
                              std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

// Reads a.yaml, a file with instances, together with b.yaml (`b`), both written to `dir`.
RunResult withInstancesFile(const std::string &dir, const std::string &b) {
  writeFile(dir + "/a.yaml", "instances: [{name: x, device: d, count: 1}]\n");
  writeFile(dir + "/b.yaml", b);
  return runInfracc({dir + "/a.yaml", dir + "/b.yaml"});
}

// A device and an infrastructure in one older-form document.
const std::string OneFile = R"(devices:
- name: box
  components:
  - {name: cpu, type: cpu}
  - {name: nic, type: nic, external: true}
  - {name: fpga, type: custom}
  - {name: dimm, type: memory, count: 4}
  links:
  - name: bus
    bandwidth: {choice: giga_bytes_per_second, giga_bytes_per_second: 16}
    latency: {choice: ns, ns: 250}
  connections:
  - cpu.0.bus.nic.0
  - cpu.0.bus.nic.1
  - cpu.1.bus.dimm.3
instances:
- {name: a, device: box}
- {name: b, device: box}
- {name: idle, device: box}
links:
- name: wire
  bandwidth: {choice: giga_transfers_per_second, giga_transfers_per_second: 8}
connections:
- a.0.nic.1.wire.b.2.nic.5
)";

} // namespace

TEST(OldForm, ExampleFilesReadTogetherWithOneWarning) {
  std::vector<std::string> files = exampleFiles();
  RunResult r = runInfracc(with(files, {"-emit=stats"}));
  EXPECT_EQ(r.status, 0);
  std::string host = readFile(files[0]);
  EXPECT_EQ(r.err, diagAt(host, "type: xpu", "warning", Warning + upgradeCommand(files), 1, 0,
                          files[0]));
  EXPECT_NE(r.out.find("  nodes:             25\n  edges:             26\n"), std::string::npos)
      << r.out;
}

TEST(OldForm, UpgradedDocumentIsGoldenAndReadsBackToTheSameDigest) {
  std::vector<std::string> files = exampleFiles();
  RunResult up = runInfracc(with(files, {"-emit=infragraph"}));
  ASSERT_EQ(up.status, 0);
  EXPECT_EQ(compareGolden("infragraph/older-form.infragraph.yaml", up.out), "");
  std::string dir = makeTempDir("oldform");
  writeFile(dir + "/upgraded.yaml", up.out);
  RunResult again = runInfracc({dir + "/upgraded.yaml", "-emit=digest"});
  RunResult old = runInfracc(with(files, {"-emit=digest"}));
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.err, "");
  EXPECT_EQ(old.status, 0);
  EXPECT_EQ(again.out, old.out);
  EXPECT_EQ(again.out.size(), 65u);
}

TEST(OldForm, WerrorRefusesIt) {
  RunResult r = runInfracc(with(exampleFiles(), {"-emit=digest", "-Werror"}));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
}

TEST(OldForm, CountsAreTheHighestIndexUsedPlusOne) {
  Expanded r = expandText(OneFile);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(r.log, diagAt(OneFile, "type: cpu", "warning",
                          Warning + "t.yaml -emit=infragraph -o upgraded.yaml'") +
                       "t.yaml: warning: 39 nodes have no edges, e.g. 'a.0.nic.2'\n"
                       "t.yaml: warning: the fabric falls into 10 connected parts (not counting "
                       "nodes without edges), e.g. 'a.0.cpu.0' cannot reach 'a.0.cpu.1'\n");
  const DeviceDef &box = r.defs->devices[0];
  ASSERT_EQ(box.components.size(), 4u);
  // cpu: cpu.1 in the device; nic: nic.5 at the infrastructure level; fpga: unused;
  // dimm: given.
  EXPECT_EQ(box.components[0].count, 2u);
  EXPECT_EQ(box.components[1].count, 6u);
  EXPECT_EQ(box.components[2].count, 1u);
  EXPECT_EQ(box.components[3].count, 4u);
  EXPECT_EQ(box.components[1].kind, ComponentKind::Nic);
  EXPECT_EQ(box.components[2].kind, ComponentKind::Custom);
  EXPECT_EQ(box.components[2].customType, "fpga");   // the component's name
  ASSERT_EQ(r.defs->instances.size(), 3u);
  EXPECT_EQ(r.defs->instances[0].count, 1u);
  EXPECT_EQ(r.defs->instances[1].count, 3u);
  EXPECT_EQ(r.defs->instances[2].count, 1u);
  // 16 GB/s = 128 Gbit/s; 8 GT/s counted as 8 Gbit/s like the current form's unit.
  EXPECT_DOUBLE_EQ(box.links[0].bandwidth->bitsPerSecond, 128e9);
  EXPECT_DOUBLE_EQ(box.links[0].latency->ns, 250);
  EXPECT_DOUBLE_EQ(r.defs->links[0].bandwidth->bitsPerSecond,
                   Bandwidth::gigatransfersPerSec(8).bitsPerSecond);
  std::vector<std::string> edges = edgeList(*r.graph);
  EXPECT_NE(std::find(edges.begin(), edges.end(), "a.0.nic.1 -- b.2.nic.5 wire"),
            edges.end())
      << ::testing::PrintToString(edges);
}

TEST(OldForm, MalformedConnectionsSayTheExpectedShape) {
  std::string doc = R"(devices:
- name: d
  components: [{name: xpu, type: xpu}, {name: nic, type: nic}]
  links: [{name: pcie}]
  connections:
  - xpu.0.pcie.nic
  - xpu.first.pcie.nic.0
  - {xpu: 0}
instances: [{name: h, device: d}]
links: [{name: l}]
connections:
- h.0.xpu.0.l..0.nic.0
- h.0.xpu.0.l.h.-1.nic.0
- h.0.xpu.0.l.h.0.nic.99999999999
)";
  Expanded r = expandText(doc);
  EXPECT_FALSE(r.defs);
  EXPECT_EQ(r.log,
            errorAt(doc, "xpu.0.pcie.nic\n",
                    "connection 'xpu.0.pcie.nic' of device 'd' has 4 parts; write " +
                        DeviceShape) +
                errorAt(doc, "first",
                        "'first' in connection 'xpu.first.pcie.nic.0' of device 'd' is not an "
                        "index (a whole number); write " +
                            DeviceShape) +
                errorAt(doc, "{xpu: 0}",
                        "a connection of device 'd' must be a string written " + DeviceShape +
                            ", not a mapping") +
                errorAt(doc, "l..0", "connection 'h.0.xpu.0.l..0.nic.0' of the infrastructure "
                                     "has an empty part; write " + InfraShape, 1, 2) +
                errorAt(doc, "-1", "'-1' in connection 'h.0.xpu.0.l.h.-1.nic.0' of the "
                                   "infrastructure is not an index (a whole number); write " +
                                       InfraShape) +
                errorAt(doc, "99999999999", "index 99999999999 in connection "
                                            "'h.0.xpu.0.l.h.0.nic.99999999999' of the "
                                            "infrastructure is more than the 2147483646 "
                                            "InfraGraph allows"));
}

TEST(OldForm, AnUnknownTypeIsNamedAsWritten) {
  std::string doc = "devices:\n- name: d\n  components: [{name: x, type: gpu}]\n";
  Expanded r = expandText(doc);
  EXPECT_EQ(r.log, errorAt(doc, "gpu", "'type' of component 'x' of device 'd' is 'gpu'; valid "
                                       "values are custom, device, cpu, xpu, nic, memory, port, "
                                       "switch; did you mean 'cpu'?"));
}

TEST(OldForm, ConnectionsMustBeAList) {
  std::string doc = "devices:\n- name: d\n  components: [{name: x, type: xpu}]\n"
                    "  connections: x.0.l.x.1\n";
  Expanded r = expandText(doc);
  EXPECT_EQ(r.log, errorAt(doc, "x.0.l.x.1",
                           "'connections' of device 'd' must be a list of strings written " +
                               DeviceShape + ", not the string 'x.0.l.x.1'"));
}

TEST(OldForm, DevicesDefinedElsewhereAreOneError) {
  std::string doc = R"(instances:
- {name: leaf, device: switch}
- {name: spine, device: switch}
- {name: host, device: server}
links: [{name: eth, bandwidth: {choice: gigabits_per_second, gigabits_per_second: 100}}]
connections:
- host.0.nic.0.eth.leaf.0.port.0
)";
  Expanded r = expandText(doc);
  EXPECT_FALSE(r.defs);
  EXPECT_EQ(r.log,
            diagAt(doc, "bandwidth", "warning",
                   Warning + "t.yaml -emit=infragraph -o upgraded.yaml'") +
                errorAt(doc, "switch",
                        "devices 'switch' (instances 'leaf' and 'spine') and 'server' (instance "
                        "'host') are defined elsewhere: t.yaml does not define them; give the "
                        "files that define them together with this one, e.g. 'infracc "
                        "DEVICES.yaml t.yaml' (files given together combine their devices)"));
}

TEST(OldForm, DeviceMissingFromEveryFileGiven) {
  std::vector<std::string> files = exampleFiles();
  files.erase(files.begin() + 1);   // no switch.yaml
  RunResult r = runInfracc(with(files, {"-emit=stats"}));
  EXPECT_EQ(r.status, 1);
  std::string fabric = readFile(files[1]);
  EXPECT_EQ(r.err,
            diagAt(readFile(files[0]), "type: xpu", "warning", Warning + upgradeCommand(files),
                   1, 0, files[0]) +
                errorAt(fabric, "eth-switch",
                        "device 'eth-switch' (instances 'leaf' and 'spine') is defined "
                        "elsewhere: none of the files given defines it; give the file that "
                        "defines it together with these, e.g. 'infracc DEVICES.yaml " +
                            files[0] + " " + files[1] +
                            "' (files given together combine their devices)",
                        1, 0, files[1]));
  EXPECT_EQ(r.out, "");
}

TEST(OldForm, CurrentFormFilesCombineTheirDevicesToo) {
  std::string dir = makeTempDir("combine");
  std::string devices = "devices:\n- name: sw\n  components: [{name: port, count: 1, choice: "
                        "port}]\n  links: []\n  edges: []\n";
  std::string infra = "name: pair\nlinks: [{name: l}]\ninstances: [{name: s, device: sw, count: "
                      "2}]\nedges:\n- {ep1: {instance: 's[0]', component: 'port[0]'}, ep2: "
                      "{instance: 's[1]', component: 'port[0]'}, scheme: one2one, link: l}\n";
  writeFile(dir + "/devices.yaml", devices);
  writeFile(dir + "/infra.yaml", infra);
  writeFile(dir + "/whole.yaml", infra + devices);
  RunResult together = runInfracc({dir + "/infra.yaml", dir + "/devices.yaml", "-emit=digest"});
  RunResult whole = runInfracc({dir + "/whole.yaml", "-emit=digest"});
  EXPECT_EQ(together.status, 0);
  EXPECT_EQ(together.err, "");
  EXPECT_EQ(together.out, whole.out);
}

TEST(OldForm, OneFileHoldsTheInfrastructure) {
  std::string dir = makeTempDir("combine");
  std::string b = "devices: []\nlinks: [{name: l}]\n";
  RunResult r = withInstancesFile(dir, b);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, errorAt(b, "links", "'" + dir + "/b.yaml' describes an infrastructure "
                                       "('links'), and so does '" + dir + "/a.yaml'; of the "
                                       "files given together, one holds the infrastructure and "
                                       "the others only devices",
                           1, 0, dir + "/b.yaml"));
}

TEST(OldForm, ADevicesFileHoldsOnlyDevices) {
  std::string dir = makeTempDir("combine");
  std::string b = "infrastructure:\n  devices: [{name: d, components: [{name: p, type: port}]}]\n"
                  "  nmae: x\nannotations: {}\n";
  RunResult r = withInstancesFile(dir, b);
  EXPECT_EQ(r.status, 1);
  auto unknown = [&](const std::string &key) {
    return errorAt(b, key, "unknown key '" + key + "' in '" + dir + "/b.yaml', a file of devices "
                           "given together with '" + dir + "/a.yaml' (valid keys: name, "
                           "description, devices)", 1, 0, dir + "/b.yaml");
  };
  EXPECT_EQ(r.err, unknown("nmae") + unknown("annotations"));
}

TEST(OldForm, ABlueprintIsGivenAlone) {
  std::string dir = makeTempDir("combine");
  std::string bp = "blueprint: {name: clos, radix: 4}\n";
  writeFile(dir + "/bp.yaml", bp);
  RunResult r = runInfracc({exampleFiles()[0], dir + "/bp.yaml"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, errorAt(bp, "blueprint", "a blueprint document cannot be combined with other "
                                            "files; give it alone",
                           1, 0, dir + "/bp.yaml"));
}
