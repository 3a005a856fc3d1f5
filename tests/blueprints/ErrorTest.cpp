// Every parameter error of the blueprints, exactly as the user sees it: through the real
// binary with -fabric=, message, source line and caret under the offending value, exit
// status 1; and the same messages without a text location (a fabric file's blueprint
// without locations, or definitions clashing), reported against the spec's origin.
#include "blueprints/Blueprint.h"
#include "support/Diagnostics.h"
#include "support/Units.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <cctype>

using namespace infracc;

namespace {

struct ErrorCase {
  const char *spec;     // the -fabric= value
  const char *caret;    // the caret sits on the first occurrence of this text in spec
  const char *message;
};

// Suggested values ("try A or B") are worked out by hand from the rule in the message.
const ErrorCase Cases[] = {
    // Spec syntax.
    {"", "", "expected a fabric blueprint name, e.g. -fabric=clos:radix=8,levels=2 (see infracc "
             "-list-blueprints)"},
    {"cl*s:radix=8", "*s", "unexpected '*' in blueprint name 'cl*s' (names are letters, digits, "
                           "'_' and '-')"},
    {"clos:radix", "radix", "parameter 'radix' has no value; write key=value (e.g. radix=16)"},
    {"clos:radix=", "", "parameter 'radix' has an empty value"},
    {"clos:rad!x=8", "!x", "unexpected '!' in parameter name 'rad!x' (names are letters, digits, "
                           "'_' and '-')"},
    {"clos:radix=8,,levels=2", ",levels", "empty parameter; write key=value pairs separated by ','"},
    {"clos:host=server)", ")", "unmatched ')'"},
    {"clos:host=server(npu_factor=2", "", "missing ')'"},
    {"clos:host=server(npu_factor=2)x", "x", "unexpected text after ')' in device spec "
                                             "'server(npu_factor=2)x'"},
    // Names.
    {"klos:radix=8", "klos", "unknown fabric blueprint 'klos'; did you mean 'clos'? (fabric "
                             "blueprints: clos, dragonfly, hammingmesh, leaf_spine, mesh, rail, "
                             "single_tier, torus; see infracc -list-blueprints)"},
    {"clos:radx=8", "radx", "unknown parameter 'radx' for fabric blueprint 'clos'; did you mean "
                            "'radix'? (its parameters: radix, levels, host, switch, oversub0, "
                            "oversub1, bundle1, bundle2, bw0, bw1, bw2, lat0, lat1, lat2)"},
    {"clos:host=server(npu_factr=2)", "npu_factr", "unknown parameter 'npu_factr' for device "
                                                   "blueprint 'server'; did you mean "
                                                   "'npu_factor'? (its parameters: npu_factor, specs)"},
    {"clos:radix=8,radix=16", "radix=16", "parameter 'radix' is given twice"},
    {"clos:host=dgx_h10", "dgx_h10", "unknown device 'dgx_h10' for host; did you mean "
                                     "'dgx_h100'? (device blueprints: cx5, dgx1, dgx2, dgx_a100, "
                                     "dgx_gb200, dgx_h100, gpu_noc, mi300x, server, simple_host, "
                                     "switch)"},
    {"clos:host=mybox", "mybox", "unknown device 'mybox' for host (device blueprints: cx5, dgx1, "
                                 "dgx2, dgx_a100, dgx_gb200, dgx_h100, gpu_noc, mi300x, server, "
                                 "simple_host, switch)"},
    // Values.
    {"clos:radix=abc", "abc", "radix 'abc' is not a whole number"},
    {"clos:radix=1", "1", "radix 1 is out of range; it must be between 2 and 4096"},
    {"clos:host=server(npu_factor=0)", "0)", "npu_factor 0 is out of range; it must be between 1 "
                                             "and 1024"},
    {"rail:groups=0", "0", "groups 0 is too small; it must be at least 1"},
    {"torus:dims=4x0", "4x0", "dims '4x0' is not valid; write 1 to 8 sizes joined by 'x', each a "
                              "whole number of at least 1, e.g. 4x4x4"},
    {"torus:dims=2x2x2x2x2x2x2x2x2", "2x2", "dims '2x2x2x2x2x2x2x2x2' is not valid; write 1 to 8 "
                                            "sizes joined by 'x', each a whole number of at least "
                                            "1, e.g. 4x4x4"},
    {"clos:bw0=0G", "0G", "bw0 '0G' must be positive"},
    {"torus:of=cpu", "cpu", "of 'cpu' is not valid; choose xpu or switch (did you mean 'xpu'?)"},
    // Devices.
    {"clos:host=switch", "switch", "device 'switch' cannot be a host: it has no nic component, no "
                                   "composed NIC device with ports and no xpu with ports to attach "
                                   "to the fabric (its components: asic (cpu x1), port (port "
                                   "x16))"},
    {"single_tier:switch=server", "server", "device 'server' cannot be a switch: it has no port "
                                            "component (its components: cpu (cpu x1), xpu (xpu "
                                            "x2), nvlsw (switch x1), pciesw (switch x1), nic (nic "
                                            "x2), mgmt (mgmt-nic x1))"},
    {"single_tier:hosts=4,switch=switch(ports=4)", "switch(", "switch 'switch' has 4 ports; 4 "
                                                              "hosts with 2 NICs per host need 8"},
    {"clos:host=simple_host(xpus=0,nics=0)", "0)", "a simple_host needs at least one xpu or NIC"},
    {"clos:host=dgx_h100(nic=cx7,nic_device=cx5)", "cx7", "give either nic (plain NIC "
                                                          "components) or nic_device (composed "
                                                          "NIC devices), not both"},
    {"clos:host=dgx_h100(nic=cx.7)", "cx.7", "nic 'cx.7' is not a valid component name (letters, "
                                             "digits, '_' and '-')"},
    {"clos:host=dgx_h100(nic_device=switch)", "switch", "nic_device 'switch' has no "
                                                        "'pcie_endpoint' component to plug into a "
                                                        "PCIe slot"},
    {"clos:host=dgx_h100(nic_device=cx5(variant=200g))", "200g", "variant '200g' is not valid; "
                                                                 "choose 25g_dual, 50g_dual, "
                                                                 "100g_dual or 100g_single"},
    {"clos:host=dgx_h100(nic_device=cx5(transceiver=port))", "port", "transceiver 'port' is not a "
                                                                     "valid component name "
                                                                     "(letters, digits, '_' and "
                                                                     "'-', and not port, asic or "
                                                                     "pcie_endpoint)"},
    {"single_tier:host=gpu_noc(mesh=8x4x2)", "8x4x2", "mesh '8x4x2' is not valid; write "
                                                      "<columns>x<rows>, each between 1 and 256, "
                                                      "e.g. 8x4"},
    {"single_tier:host=gpu_noc(mesh=300x4)", "300x4", "mesh '300x4' is not valid; write "
                                                      "<columns>x<rows>, each between 1 and 256, "
                                                      "e.g. 8x4"},
    // Clos.
    {"clos:levels=1", "1", "levels 1: a Clos fat tree has 2 or 3 levels"},
    {"clos:radix=7", "7", "radix 7: the radix must be even, half the ports of a tier-0 switch "
                          "facing hosts and half facing tier 1; try 6 or 8"},
    {"clos:radix=10,oversub0=3", "10", "radix 10 with oversub0 3: the radix must be a multiple of "
                                       "oversub0+1 = 4 (3 host ports per uplink on a tier-0 "
                                       "switch); try 8 or 12"},
    // The example of the issue: radix/2 a multiple of 8 means radix 16, 32, ...
    {"clos:radix=12,host=dgx_h100", "12", "radix 12 with 8 NICs per host: radix/2 must be a "
                                          "multiple of the NIC count; try 16 or 32"},
    // 2k/3 a multiple of 3 and k a multiple of 3: k a multiple of 9.
    {"clos:radix=12,oversub0=2,host=simple_host(nics=3)", "12", "radix 12 with oversub0 2 and 3 "
                                                                "NICs per host: the 8 host ports "
                                                                "of a tier-0 switch "
                                                                "(radix*oversub0/(oversub0+1)) "
                                                                "must be a multiple of the NIC "
                                                                "count; try 9 or 18"},
    {"clos:switch=switch(ports=12),host=dgx_h100", "switch(", "radix 12 with 8 NICs per host: "
                                                              "radix/2 must be a multiple of the "
                                                              "NIC count; try 16 or 32"},
    // 10 = (o+1) * m for o = 1, 4, 9.
    {"clos:radix=10,levels=3,oversub1=3,host=simple_host", "3,host", "oversub1 3 with radix 10: the "
                                                                 "radix must be a multiple of "
                                                                 "oversub1+1 = 4; try 1 or 4"},
    {"clos:radix=12,bundle1=4", "4", "bundle1 4 does not divide the 6 uplinks of a tier-0 switch "
                                     "into equal bundles; try 3 or 6"},
    // Tier-0 uplinks 4, tier-1 downlinks 6: bundles dividing both are 1 and 2.
    {"clos:radix=12,oversub0=2,levels=3,bundle1=4", "4", "bundle1 4 does not divide the 6 "
                                                         "downlinks of a tier-1 switch into equal "
                                                         "bundles; try 1 or 2"},
    {"clos:radix=12,levels=3,bundle2=4", "4", "bundle2 4 does not divide the 6 uplinks of a "
                                              "tier-1 switch into equal bundles; try 3 or 6"},
    {"clos:radix=16,switch=switch(ports=8)", "switch(", "switch 'switch' has 8 ports; radix 16 "
                                                        "needs 16"},
    {"clos:radix=4096,levels=3", "clos", "the fabric would have 8589934592 x server, 8388608 x "
                                         "tier_0, 8388608 x tier_1, 4194304 x tier_2, i.e. "
                                         "1.546e+11 nodes; at most 4294967294 are supported"},
    // Leaf-spine.
    {"leaf_spine:radix=8,switch=switch", "8", "give either radix or switch, not both"},
    {"leaf_spine:radix=4", "4", "radix 4 is too small: a leaf uses 6 ports (4 for hosts, 2 for "
                                "spines) and a spine 4"},
    {"leaf_spine:planes=3,host=dgx_h100", "3", "planes 3 must divide the host's NIC count (8 "
                                               "NICs per host): NIC i is on plane i % planes and "
                                               "every plane takes the same share"},
    // Dragonfly.
    {"dragonfly:groups=10", "10", "groups 10 is out of range: with a=4 and h=2 each group has 8 "
                                  "global ports, so 2..9 groups can be joined"},
    {"dragonfly:p=3", "3", "p 3 with 2 NICs per host: the host ports per router must be a "
                           "multiple of the NIC count; try 2 or 4"},
    {"dragonfly:switch=switch(ports=6)", "switch(", "switch 'switch' has 6 ports; a router needs "
                                                    "p + (a-1) + h = 2 + 3 + 2 = 7"},
    // Torus and mesh.
    {"torus:host=server", "server", "host applies to of=switch; a torus of xpus has no hosts or "
                                    "switches"},
    {"mesh:hosts_per_switch=2", "2", "hosts_per_switch applies to of=switch; a mesh of xpus has "
                                     "no hosts or switches"},
    {"torus:dims=65536x65536x2", "65536", "dims '65536x65536x2' give 8.59e+09 positions; at most "
                                          "4294967294 are supported"},
    {"torus:of=switch,switch=switch(ports=5)", "switch(", "switch 'switch' has 5 ports; a switch "
                                                          "needs 2 for hosts and 2 per dimension "
                                                          "of size > 1: 6"},
    // Rail.
    {"rail:hosts_per_group=16", "16", "hosts_per_group 16 leaves no uplink on a rail switch of "
                                      "radix 16; it must be below 16"},
    // 8 uplinks: 1, 2, 4 or 8 spines.
    {"rail:spines=3", "3", "spines 3: the 8 uplinks of a rail switch must split evenly over the "
                           "spines; try 2 or 4"},
    {"rail:radix=8,spines=1", "1", "radix 8 with 8 NICs per host and 1 spine: a spine joins at "
                                   "most radix/4 = 2 rail switches, fewer than the 8 rails of one "
                                   "group"},
    {"rail:groups=3", "3", "groups 3 is too many: a spine has 16 ports and takes 1 from each of "
                           "the 8 rail switches of a group, so at most 2 groups fit"},
    // HammingMesh.
    {"hammingmesh:board=2x2x2", "2x2x2", "board '2x2x2' is not valid; write <rows>x<columns>, "
                                         "each between 1 and 64, e.g. 2x2"},
    {"hammingmesh:grid=5000x2", "5000x2", "grid '5000x2' is not valid; write <rows>x<columns>, "
                                          "each between 1 and 4096, e.g. 4x4"},
    // 80 xpus per row; a radix-8 two-level tree holds 8 leaves x 4 = 32.
    {"hammingmesh:grid=4x40,radix=8", "8", "radix 8 is too small: a row network joins 80 xpus, "
                                           "more than a two-level fat tree of radix 8 holds (32); "
                                           "raise the radix"},
};

std::string expectedOutput(const ErrorCase &c) {
  std::string spec = c.spec;
  // The caret: on the anchor's first occurrence (an empty anchor: the end of the spec).
  size_t pos = *c.caret ? spec.find(c.caret) : spec.size();
  EXPECT_NE(pos, std::string::npos) << c.spec;
  size_t col = 8 + pos;   // after "-fabric="
  return "<command line>:1:" + std::to_string(col + 1) + ": error: " + c.message + "\n-fabric=" +
         spec + "\n" + std::string(col, ' ') + "^\n";
}

void PrintTo(const ErrorCase &c, std::ostream *os) { *os << "-fabric=" << c.spec; }

class BlueprintError : public ::testing::TestWithParam<ErrorCase> {};

} // namespace

TEST_P(BlueprintError, ExactMessage) {
  const ErrorCase &c = GetParam();
  auto r = test::runInfracc({std::string("-fabric=") + c.spec, "-emit=stats"});
  EXPECT_EQ(r.status, 1) << c.spec;
  EXPECT_EQ(r.err, expectedOutput(c));
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(Params, BlueprintError, ::testing::ValuesIn(Cases),
                         [](const ::testing::TestParamInfo<ErrorCase> &info) {
                           // e.g. "07_clos_radix_8_radix_16"
                           std::string name = (info.index < 10 ? "0" : "") +
                                              std::to_string(info.index) + "_";
                           for (const char *p = info.param.spec; *p && name.size() < 48; ++p)
                             name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
                           return name;
                         });

TEST(BlueprintErrors, SeveralAtOnce) {
  auto r = test::runInfracc({"-fabric=clos:bw0=10x,lat1=3 sec", "-emit=stats"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "<command line>:1:18: error: bw0 '10x' is not a bandwidth or none; " +
                std::string(BandwidthSpellings) + "\n"
            "-fabric=clos:bw0=10x,lat1=3 sec\n"
            "                 ^\n"
            "<command line>:1:27: error: lat1 '3 sec' is not a latency or none; " +
                DurationSpellings + "\n"
            "-fabric=clos:bw0=10x,lat1=3 sec\n"
            "                          ^\n");
  r = test::runInfracc({"-fabric=clos:oversub1=2,bundle2=2", "-emit=stats"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "<command line>:1:23: error: oversub1 applies to the tier-1 to tier-2 links of a "
            "3-level Clos; this one has levels=2\n"
            "-fabric=clos:oversub1=2,bundle2=2\n"
            "                      ^\n"
            "<command line>:1:33: error: bundle2 applies to the tier-1 to tier-2 links of a "
            "3-level Clos; this one has levels=2\n"
            "-fabric=clos:oversub1=2,bundle2=2\n"
            "                                ^\n");
}

TEST(BlueprintErrors, WithoutLocationsGoToTheOrigin) {
  // As the InfraGraph frontend hands over a blueprint when it has no positions.
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  blueprints::BlueprintSpec spec;
  spec.name = "clos";
  spec.origin = "fabric.yaml";
  spec.params = {{"radix", "12", {}}, {"host", "dgx_h100", {}}};
  EXPECT_FALSE(blueprints::instantiateFabric(spec, diags));
  EXPECT_EQ(log, "fabric.yaml: error: radix 12 with 8 NICs per host: radix/2 must be a multiple "
                 "of the NIC count; try 16 or 32\n");
  log.clear();
  spec.name = "closs";
  EXPECT_FALSE(blueprints::instantiateFabric(spec, diags));
  // Other tests of this binary register test-only blueprints, which join the list: the
  // list as the user sees it is checked through the binary above.
  EXPECT_EQ(log.substr(0, 162),
            "fabric.yaml: error: unknown fabric blueprint 'closs'; did you mean 'clos'? (fabric "
            "blueprints: clos, dragonfly, hammingmesh, leaf_spine, mesh, rail, single_tier, ");
  EXPECT_TRUE(llvm::StringRef(log).ends_with("torus; see infracc -list-blueprints)\n")) << log;
}

namespace {

DeviceDef fileDevice(const std::string &name, ComponentKind kind, uint64_t count) {
  DeviceDef d;
  d.name = name;
  Component c;
  c.name = kind == ComponentKind::Nic ? "nic" : "port";
  c.kind = kind;
  c.count = count;
  d.components.push_back(c);
  return d;
}

} // namespace

TEST(BlueprintErrors, FileDevices) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  blueprints::BlueprintSpec spec;
  spec.name = "single_tier";
  spec.origin = "fabric.yaml";
  spec.devices = {fileDevice("mybox", ComponentKind::Nic, 2)};
  // A device of the file works like a device blueprint...
  spec.params = {{"host", "mybox", {}}, {"hosts", "3", {}}};
  auto in = blueprints::instantiateFabric(spec, diags);
  ASSERT_TRUE(in) << log;
  EXPECT_EQ(in->instances.front().name, "mybox");
  EXPECT_EQ(in->instances.front().count, 3u);
  // ...but takes no parameters,
  spec.params = {{"host", "mybox(nics=4)", {}}};
  EXPECT_FALSE(blueprints::instantiateFabric(spec, diags));
  EXPECT_EQ(log, "fabric.yaml: error: device 'mybox' is defined in the fabric file and takes no "
                 "parameters\n");
  // ...is offered when a name is misspelt,
  log.clear();
  spec.params = {{"host", "mybx", {}}};
  EXPECT_FALSE(blueprints::instantiateFabric(spec, diags));
  EXPECT_EQ(log, "fabric.yaml: error: unknown device 'mybx' for host; did you mean 'mybox'? "
                 "(device blueprints: cx5, dgx1, dgx2, dgx_a100, dgx_gb200, dgx_h100, gpu_noc, "
                 "mi300x, server, simple_host, switch; devices in the fabric file: mybox)\n");
  // ...and may not clash with a generated device of the same name.
  log.clear();
  spec.devices = {fileDevice("switch", ComponentKind::Nic, 1)};
  spec.params = {{"host", "switch", {}}};
  EXPECT_FALSE(blueprints::instantiateFabric(spec, diags));
  EXPECT_EQ(log, "fabric.yaml: error: device 'switch' given for switch differs from another "
                 "device of the same name in this fabric; give one of them another name\n");
}
