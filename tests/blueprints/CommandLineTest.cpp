// The blueprint options through the real binary: -list-blueprints, -fabric= with the
// sizing section of -emit=stats (golden files reviewed by hand against the closed forms
// in docs/blueprints.md), and blueprint fabrics written out with -emit=infragraph and
// read back.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace infracc::test;

namespace {

// The "sizing:" section of a text stats report.
std::string sizingSection(const std::string &report) {
  size_t b = report.find("\nsizing:\n");
  if (b == std::string::npos)
    return "<no sizing section>\n" + report;
  size_t e = report.find("\n\n", b + 1);
  return report.substr(b + 1, e == std::string::npos ? std::string::npos : e - b);
}

} // namespace

TEST(BlueprintCommandLine, ListBlueprints) {
  auto r = runInfracc({"-list-blueprints"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("blueprints/list-blueprints.txt", r.out), "");
}

TEST(BlueprintCommandLine, SizingOfATwoLevelClos) {
  // radix 8: 8 tier-0 and 4 tier-1 switches, 16 servers with 2 NICs (100G to tier 0,
  // 200G up): tier 0 carries 4 x 100G down per 4 x 200G up; the first 8 servers' 16 NIC
  // links (1600 Gb/s) are the narrowest cut between the halves; host, tier 0, tier 1,
  // tier 0, host is 4 hops.
  auto r = runInfracc({"-fabric=clos:radix=8,levels=2", "-emit=stats"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("blueprints/clos-8-2.sizing.txt", sizingSection(r.out)), "");
  r = runInfracc({"-fabric=clos:radix=8,levels=2", "-emit=stats", "-format=json"});
  EXPECT_EQ(r.status, 0);
  auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(compareGolden("blueprints/clos-8-2.sizing.json", j["sizing"].dump(2) + "\n"), "");
}

TEST(BlueprintCommandLine, SizingOfAnOversubscribedThreeLevelClos) {
  // radix 8, oversub0 3: tier-0 switches have 6 host ports and 2 uplinks; tier 1 splits
  // 4/4. 2 tier-1 switches per pod, 4 tier-0 switches per pod, 8 pods; 2 planes of 4 cores.
  // Hosts: 32 tier-0 switches x 6 ports / 2 NICs = 96. With 100G everywhere the tier-0
  // ratio is 3:1 and the bisection is 16 tier-0 switches x 2 uplinks x 100G.
  auto r = runInfracc({"-fabric=clos:radix=8,levels=3,oversub0=3,bw0=100G,bw1=100G,bw2=100G",
                       "-emit=stats"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("blueprints/clos-8-3-oversub.sizing.txt", sizingSection(r.out)), "");
}

TEST(BlueprintCommandLine, HostPortsCountComposedNics) {
  // dgx_h100 with composed ConnectX-5 cards: 8 cards of 2 ports (docs/blueprints.md), no
  // `nic` component (the card's ASIC is a cpu, as in the reference). radix 32, 2 levels:
  // 32 tier-0 switches with 16 host ports each = 512 host ports = 32 hosts of 16 ports.
  auto r = runInfracc({"-fabric=clos:radix=32,levels=2,host=dgx_h100(nic_device=cx5)",
                       "-emit=stats", "-format=json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::ordered_json::parse(r.out)["sizing"];
  EXPECT_EQ(j["hosts"], 32);
  EXPECT_EQ(j["nics"], 0);
  EXPECT_EQ(j["host ports on the fabric"], 512);
}

TEST(BlueprintCommandLine, FabricNeedsNoFileAndStatsIsTheDefault) {
  auto r = runInfracc({"-fabric=torus:dims=3x3"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(sizingSection(r.out).find("  diameter hops:              2\n"), std::string::npos)
      << r.out;
}

TEST(BlueprintCommandLine, FabricAndAFabricFileConflict) {
  std::string dir = makeTempDir("bp");
  writeFile(dir + "/f.yaml", "blueprint: {name: torus}\n");
  auto r = runInfracc({"-fabric=torus", dir + "/f.yaml", "-emit=stats"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: two fabrics given ('-fabric=torus' and '" + dir +
                       "/f.yaml'); give one fabric per run\n");
  EXPECT_EQ(r.out, "");
}

namespace {

// A blueprint fabric written with -emit=infragraph is a plain document that reads back to
// the same graph (-emit=fqg lists every node and edge) and the same digest.
void expectRoundTrip(const std::string &spec, const std::string &format) {
  std::string dir = makeTempDir("rt");
  std::string file = dir + "/fabric." + format;
  auto w = runInfracc({"-fabric=" + spec, "-emit=infragraph", "-o", file});
  ASSERT_EQ(w.status, 0) << spec << "\n" << w.err;
  std::string doc = readFile(file);
  EXPECT_EQ(doc.find("blueprint"), std::string::npos) << spec;
  for (const char *target : {"fqg", "digest"}) {
    auto a = runInfracc({"-fabric=" + spec, std::string("-emit=") + target});
    auto b = runInfracc({file, std::string("-emit=") + target});
    ASSERT_EQ(a.status, 0) << spec << a.err;
    ASSERT_EQ(b.status, 0) << spec << b.err;
    EXPECT_EQ(a.out, b.out) << spec << " " << target;
    EXPECT_FALSE(a.out.empty());
  }
}

} // namespace

TEST(BlueprintCommandLine, RoundTripClos) {
  expectRoundTrip("clos:radix=8,levels=2", "yaml");
  expectRoundTrip("clos:radix=8,levels=2", "json");
  expectRoundTrip("clos:radix=8,levels=3,oversub0=3,bundle2=2,lat1=500ns", "yaml");
}

TEST(BlueprintCommandLine, RoundTripComposedHosts) {
  expectRoundTrip("clos:radix=32,levels=2,host=dgx_h100(nic_device=cx5(variant=100g_dual))",
                  "yaml");
  expectRoundTrip("single_tier:hosts=2,host=dgx2(nic=cx6_200g)", "json");
  expectRoundTrip("single_tier:hosts=2,host=gpu_noc(mesh=3x2)", "yaml");
}

TEST(BlueprintCommandLine, RoundTripOtherFabrics) {
  for (const char *spec :
       {"leaf_spine:leaves=3,spines=2,bundle=2", "dragonfly:a=3,p=1,h=2,groups=5,host=simple_host",
        "torus:dims=3x4x5", "torus:dims=64x2", "mesh:dims=2x6,of=switch,hosts_per_switch=2",
        "rail:radix=8,host=simple_host(nics=2)", "hammingmesh:grid=3x20,radix=16"})
    expectRoundTrip(spec, "yaml");
}

TEST(BlueprintCommandLine, DigestsOfTheReferenceDocuments) {
  // Measured: the reference package generated these fabrics (its blueprint code run with
  // a stand-in for its generated model classes, serialised field by field to YAML), and
  // `infracc <document> -emit=digest` gave these digests. The blueprints must expand to
  // the very same graph, link attributes included, when their devices leave out the
  // vendor figures the reference does not have (specs=none).
  const std::pair<const char *, const char *> cases[] = {
      // ClosFatTreeFabric(Switch(8), Server(), 2, [])
      {"clos:radix=8,levels=2,host=server(specs=none)",
       "607e8182cdb5d5d61865cc37678dfddd2ca1a4bc2312fbd7a873fab761a48df0"},
      // ClosFatTreeFabric(Switch(16), NvidiaDGX(), 2, [])
      {"clos:radix=16,levels=2,host=dgx_h100(specs=none)",
       "38324feaadc1ee2e9b44901c7ad8972c51cd59675771ebf48dc16f147caee0f3"},
      // SingleTierFabric(Server(), 3)
      {"single_tier:hosts=3,host=server(specs=none)",
       "2aef8dd5a9a5d530f24806806277add0b871b957bbe52eebdf6e629e09d894eb"},
      // DragonflyFabric(Switch(7), Server(), 4, 2, 2)
      {"dragonfly:a=4,p=2,h=2,host=server(specs=none)",
       "11c3f05bb200f14557dc2c4732f75909d695e5183a080a49741df8926a886e22"},
  };
  for (auto [spec, digest] : cases) {
    auto r = runInfracc({std::string("-fabric=") + spec, "-emit=digest"});
    EXPECT_EQ(r.status, 0) << spec << r.err;
    EXPECT_EQ(r.out, std::string(digest) + "\n") << spec;
  }
}
