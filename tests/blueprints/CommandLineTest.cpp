// The blueprint options through the real binary: -list-blueprints and -fabric= with the
// sizing report (golden files reviewed by hand against the closed forms in
// docs/blueprints.md).
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

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
  auto r = runInfracc({"-fabric=clos:radix=8,levels=2", "-emit=sizing"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("blueprints/clos-8-2.sizing.txt", r.out), "");
  r = runInfracc({"-fabric=clos:radix=8,levels=2", "-emit=sizing", "-format=json"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(compareGolden("blueprints/clos-8-2.sizing.json", r.out), "");
}

TEST(BlueprintCommandLine, SizingOfAnOversubscribedThreeLevelClos) {
  // radix 8, oversub0 3: tier-0 switches have 6 host ports and 2 uplinks; tier 1 splits
  // 4/4. 2 tier-1 switches per pod, 4 tier-0 switches per pod, 8 pods; 2 planes of 4 cores.
  // Hosts: 32 tier-0 switches x 6 ports / 2 NICs = 96. With 100G everywhere the tier-0
  // ratio is 3:1 and the bisection is 16 tier-0 switches x 2 uplinks x 100G.
  auto r = runInfracc({"-fabric=clos:radix=8,levels=3,oversub0=3,bw0=100G,bw1=100G,bw2=100G",
                       "-emit=sizing"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("blueprints/clos-8-3-oversub.sizing.txt", r.out), "");
}

TEST(BlueprintCommandLine, FabricNeedsNoFile) {
  auto r = runInfracc({"-fabric=torus:dims=3x3", "-emit=sizing"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.substr(0, 20), "fabric torus-fabric\n");
  EXPECT_NE(r.out.find("  diameter               2 hops (host to host)\n"), std::string::npos);
}

TEST(BlueprintCommandLine, SizingRejectsOtherFormats) {
  auto r = runInfracc({"-fabric=torus", "-emit=sizing", "-format=tsv"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=sizing writes text or json, not 'tsv'\n");
  EXPECT_EQ(r.out, "");
}
