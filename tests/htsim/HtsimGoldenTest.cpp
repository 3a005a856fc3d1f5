// Golden outputs of -emit=htsim for the validation cases (docs/htsim.md, "Validation"):
// each was run with its run.sh in csg-htsim 841d9e7's htsim_eqds and every flow
// finished, every triggered flow after the flows it waits for. The finish time of the
// last flow is noted per case. Every emitted .topo and .cm also passes the checker
// (HtsimTestUtil.h).
#include "tests/htsim/HtsimTestUtil.h"

using namespace infracc::test;

namespace {

const std::string LeafSpine8 = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,"
                               "host=simple_host,bw0=100G,bw1=100G,lat0=500ns,lat1=500ns";
const std::string LeafSpine8x2 = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,"
                                 "host=simple_host(xpus=2),bw0=100G,bw1=100G,lat0=500ns,"
                                 "lat1=500ns";
const std::string FatTree16 = "-fabric=clos:radix=4,levels=3,host=simple_host,bw0=100G,"
                              "bw1=100G,bw2=100G";
const std::string Oversubscribed32 = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=8,"
                                     "host=simple_host,bw0=100G,bw1=100G,lat0=1us,lat1=1us";

std::string input(const std::string &name) { return sourcePath("tests/htsim/inputs/" + name); }

void golden(const std::string &dir, const Emitted &e, bool withScript, bool withMapping) {
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(compareGolden("htsim/" + dir + "/fabric.topo", e.topo), "");
  EXPECT_EQ(compareGolden("htsim/" + dir + "/workload.cm", e.cm), "");
  if (withMapping) {
    EXPECT_EQ(compareGolden("htsim/" + dir + "/mapping.txt", e.mapping), "");
  }
  if (withScript) {
    EXPECT_EQ(compareGolden("htsim/" + dir + "/run.sh", e.script), "");
  }
}

} // namespace

// htsim_eqds: 112 flows, all 104 triggers fired, the last flow finished at 581.9 us.
TEST(HtsimGolden, LeafSpineRing) {
  golden("leaf-spine-ring", emitHtsim({LeafSpine8, input("ring8.goal")}), true, true);
}

// Links without a latency take -htsim-link-latency; switches -switch-latency.
// htsim_eqds: 16 flows, the last at 209.6 us.
TEST(HtsimGolden, FatTreePermutation) {
  golden("fat-tree-permutation",
         emitHtsim({FatTree16, input("permutation16.goal"), "-htsim-link-latency=800",
                    "-switch-latency=150"}),
         false, true);
}

// 4:1 at the ToRs. htsim_eqds: 31 flows, the last at 2552.4 us.
TEST(HtsimGolden, OversubscribedIncast) {
  golden("oversubscribed-incast", emitHtsim({Oversubscribed32, input("incast32.goal")}), false,
         false);
}

// Fan-in barriers, a trigger shared by two flows, compute dropped.
// htsim_eqds: 40 flows, all 16 triggers fired, the last flow at 338.8 us.
TEST(HtsimGolden, LeafSpineMultistep) {
  golden("leaf-spine-multistep", emitHtsim({LeafSpine8, input("multistep8.goal")}), false,
         false);
}

// 16 ranks on 8 hosts (2 xpus each): messages inside a host need no flow.
// htsim_eqds: 64 flows, all 24 triggers fired, the last flow at 297.7 us.
TEST(HtsimGolden, SharedHostsMultistep) {
  golden("shared-hosts-multistep", emitHtsim({LeafSpine8x2, input("multistep16.goal")}), false,
         true);
}

// Hosts with two NICs on one ToR (the clos blueprint's server, as InfraGraph's
// ClosFatTreeFabric(Switch(8), Server(), 2)): 32 htsim nodes for 16 servers, rank i on
// xpu i%2 of server i/2 and its NIC i%2. htsim_eqds: 16 flows, the last at 201.6 us.
TEST(HtsimGolden, TwoNicServersPermutation) {
  golden("two-nic-servers-permutation",
         emitHtsim({"-fabric=clos:radix=8,host=server", input("permutation16.goal")}), false,
         true);
}

// Rail-optimised DGX H100 hosts: NIC k of every host under rail switch k, one htsim node
// per NIC. The ring allreduce lowered from the collective of examples/ (16 ranks on 2
// hosts): 420 of its 480 messages stay inside a host. htsim_eqds: 60 flows, all 44
// triggers fired, the last flow at 66.3 us.
TEST(HtsimGolden, RailRingAllreduce) {
  golden("rail-ring-allreduce",
         emitHtsim({"-fabric=rail:radix=16", sourcePath("examples/allreduce-collective.goal")}),
         false, true);
}
