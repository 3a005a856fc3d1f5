// -emit=astra-analytical: the dimensions found in each fabric, the units written, what
// is refused and what -astra-approx folds (docs/astra-sim.md). Every golden network.yml
// here ran in ASTRA-sim 518bd51's congestion-unaware backend: one 1 MiB message took
// exactly the path's cost on the ring (21,471 ns = 500 + 1 MiB / 50 GB/s), the DGX H100
// (2,330 = 1 MiB / 450 GB/s), the DGX-1 (52,428 = 1 MiB / 20 GB/s) and the rail fabric
// (22,201 = 2 x 615 + 1 MiB / 50 GB/s, NPU 0 to 8); the Clos of DGX hosts ran a 512-rank
// all-reduce of 1 MiB (96,618 cycles); the folded oversubscribed network is an
// approximation by design.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace infracc::test;

namespace {

struct Emitted {
  RunResult run;
  std::string dir;
  std::string file(const std::string &name) const { return readFile(dir + "/" + name); }
};

Emitted emit(std::vector<std::string> args) {
  Emitted e;
  e.dir = makeTempDir("astra") + "/out";
  args.insert(args.end(), {"-emit=astra-analytical", "-o", e.dir});
  e.run = runInfracc(args, sourcePath(""));
  return e;
}

const std::string DgxH100 = "-fabric=single_tier:hosts=1,host=dgx_h100";
const std::string ClosOfDgx = "-fabric=clos:radix=32,levels=2,host=dgx_h100,lat0=500ns,"
                              "lat1=500ns,bw0=400G,bw1=400G";
const std::string Rail = "-fabric=rail:radix=8,host=dgx_h100,lat0=500ns,lat1=500ns";
const std::string Oversubscribed = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=8,"
                                   "host=simple_host,bw0=100G,bw1=100G,lat0=1us,lat1=1us";

} // namespace

// One DGX H100: 8 xpus on 4 NVSwitches, 900 Gb/s to each: one Switch of 8 at
// 3600 Gb/s per NPU = 450e9 B/s = 419.095... in the backend's 2^30-byte GB/s.
TEST(AstraAnalytical, DgxH100IsOneSwitch) {
  Emitted e = emit({DgxH100});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(compareGolden("astra/dgx-h100/network.yml", e.file("network.yml")), "");
  EXPECT_EQ(compareGolden("astra/dgx-h100/npus.txt", e.file("npus.txt")), "");
  EXPECT_EQ(compareGolden("astra/dgx-h100/system.json", e.file("system.json")), "");
  EXPECT_EQ(compareGolden("astra/dgx-h100/remote_memory.json", e.file("remote_memory.json")),
            "");
  EXPECT_EQ(compareGolden("astra/dgx-h100/run-astra.sh", e.file("run-astra.sh")), "");
  // The NVLinks have no latency in the blueprint: said, not hidden.
  EXPECT_EQ(e.run.err, "-fabric=single_tier:hosts=1,host=dgx_h100: warning: dimension 0 (the "
                       "8 xpus inside each host (dgx_h100)): latency 0 ns, as no link or "
                       "switch on its paths has one (give the links a latency, or "
                       "-switch-latency)\n");
}

TEST(AstraAnalytical, RingOfEightXpus) {
  Emitted e = emit({"tests/astra/inputs/ring8.yaml"});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(e.run.err, "");
  EXPECT_EQ(compareGolden("astra/ring8/network.yml", e.file("network.yml")), "");
}

// 64 DGX hosts, two per leaf: xpus, hosts under a leaf, leaves under the spines.
TEST(AstraAnalytical, ClosOfDgxHostsHasThreeDimensions) {
  Emitted e = emit({ClosOfDgx});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(compareGolden("astra/clos-dgx/network.yml", e.file("network.yml")), "");
}

// Rail-optimised: xpu j of every host meets on rail switch j, which is exactly a
// Switch dimension of the analytical model.
TEST(AstraAnalytical, RailsAreASwitchDimension) {
  Emitted e = emit({Rail});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(compareGolden("astra/rail/network.yml", e.file("network.yml")), "");
}

TEST(AstraAnalytical, OversubscriptionIsRefusedThenFolded) {
  Emitted refused = emit({Oversubscribed});
  EXPECT_EQ(refused.run.status, 1);
  EXPECT_EQ(refused.run.err,
            Oversubscribed + ": error: tier 0: 4:1 oversubscription (down 3200 Gb/s, up 800 "
                             "Gb/s): the analytical backend gives every NPU its own link in "
                             "each dimension; -astra-approx folds the ratio into the bandwidth "
                             "of dimension 1 and above\n");
  EXPECT_FALSE(std::filesystem::exists(refused.dir));

  Emitted folded = emit({Oversubscribed, "-astra-approx"});
  ASSERT_EQ(folded.run.status, 0) << folded.run.err;
  EXPECT_EQ(folded.run.err, Oversubscribed + ": warning: approximated for ASTRA-sim: tier 0: "
                                             "4:1 oversubscription folded into dimension 1 "
                                             "bandwidth 100 Gb/s -> 25 Gb/s\n");
  EXPECT_EQ(compareGolden("astra/oversubscribed/network.yml", folded.file("network.yml")), "");
}

TEST(AstraAnalytical, DragonflyIsRefusedThenOneSwitch) {
  const std::string fly = "-fabric=dragonfly:host=simple_host,host_lat=100ns";
  Emitted refused = emit({fly});
  EXPECT_EQ(refused.run.status, 1);
  EXPECT_EQ(refused.run.err,
            fly + ": error: the hosts do not form nested switch groups or a ring (as a "
                  "dragonfly or a mesh does not): from simple_host.0.xpu.0, "
                  "simple_host.2.xpu.0 and simple_host.17.xpu.0 are 9 link(s) away but "
                  "simple_host.10.xpu.0, numbered between them, is 12; -astra-approx models "
                  "them as one Switch with the largest latency and the smallest bandwidth\n");
  Emitted approx = emit({fly, "-astra-approx"});
  ASSERT_EQ(approx.run.status, 0) << approx.run.err;
  EXPECT_NE(approx.file("network.yml").find("topology: [ Switch ]\nnpus_count: [ 72 ]\n"
                                            "bandwidth: [ 11.641532182693481 ]\n"
                                            "latency: [ 100 ]\n"),
            std::string::npos)
      << approx.file("network.yml");
}

TEST(AstraAnalytical, SharedNicsAndHybridCubeMeshAreNamed) {
  const std::string shared = "-fabric=single_tier:hosts=2,host=simple_host(xpus=2)";
  Emitted e = emit({shared});
  EXPECT_EQ(e.run.status, 1);
  EXPECT_EQ(e.run.err, shared + ": error: the 2 xpus of each host share 1 NIC(s): the "
                                "analytical backend gives every NPU its own link in each "
                                "dimension between hosts; -astra-approx divides their "
                                "bandwidth by 2\n");
  Emitted line = emit({"tests/astra/inputs/line3.yaml"});
  EXPECT_EQ(line.run.status, 1);
  EXPECT_EQ(line.run.err,
            "tests/astra/inputs/line3.yaml: error: the xpus inside box.0 are neither fully "
            "connected, nor a ring in index order, nor behind switches they all reach alike, "
            "nor a product of two such groups (box.0.xpu.0 to box.0.xpu.1 is 1 link(s), 500 ns, "
            "400 Gb/s; box.0.xpu.0 to box.0.xpu.2 is 2 link(s), 1000 ns, 400 Gb/s); "
            "-astra-approx models them as one Switch with the largest latency and the smallest "
            "bandwidth\n");
}

// A DGX-1's hybrid cube-mesh: two fully connected quads, xpu i joined to xpu i+4 — two
// dimensions, as ASTRA-sim's own translator finds ([FullyConnected 4, Ring 2]; a Ring of
// two is a FullyConnected pair).
TEST(AstraAnalytical, Dgx1IsTwoDimensions) {
  Emitted e = emit({"-fabric=single_tier:hosts=1,host=dgx1"});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  EXPECT_EQ(compareGolden("astra/dgx1/network.yml", e.file("network.yml")), "");
}

TEST(AstraAnalytical, HostsOfDifferentSizesAndTooFewNpus) {
  Emitted one = emit({"-fabric=single_tier:hosts=1,host=simple_host"});
  EXPECT_EQ(one.run.status, 1);
  EXPECT_EQ(one.run.err, "-fabric=single_tier:hosts=1,host=simple_host: error: ASTRA-sim "
                         "needs at least 2 NPUs; the fabric has 1 endpoint(s)\n");
}

// With a workload the folder is complete: traces for every NPU (an idle one for NPUs
// without a rank), the group file, and run-astra.sh pointing at both.
TEST(AstraAnalytical, WorkloadGoesInTheFolder) {
  std::string dir = makeTempDir("astra-wl");
  writeFile(dir + "/w.goal", "num_ranks 4\ncomm 3 ranks 0,1\nrank 0 {\nl1: allreduce 64b comm 3\n}\n"
                             "rank 1 {\nl1: allreduce 64b comm 3\n}\nrank 2 {\n}\nrank 3 {\n}\n");
  Emitted e = emit({DgxH100, dir + "/w.goal"});
  ASSERT_EQ(e.run.status, 0) << e.run.err;
  for (int npu = 0; npu < 8; ++npu)
    EXPECT_TRUE(std::filesystem::exists(e.dir + "/workload." + std::to_string(npu) + ".et"));
  EXPECT_EQ(e.file("workload.comm_groups.json"), "{\n  \"3\": [\n    0,\n    1\n  ]\n}\n");
  EXPECT_EQ(compareGolden("astra/dgx-h100-workload/run-astra.sh", e.file("run-astra.sh")), "");
  // The traces read back as the workload, on 8 NPUs.
  RunResult back = runInfracc({e.dir, "-chakra-comm-groups=" + e.dir +
                                          "/workload.comm_groups.json", "-emit=goal-extended"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out.substr(0, 12), "num_ranks 8\n");

  writeFile(dir + "/big.goal", "num_ranks 9\n");
  for (int r = 0; r < 9; ++r)
    writeFile(dir + "/big.goal", readFile(dir + "/big.goal") + "rank " + std::to_string(r) +
                                     " {\n}\n");
  Emitted big = emit({DgxH100, dir + "/big.goal"});
  EXPECT_EQ(big.run.status, 1);
  EXPECT_NE(big.run.err.find(dir + "/big.goal: error: the workload has 9 ranks but the fabric "
                                   "has 8 NPUs\n"),
            std::string::npos)
      << big.run.err;
}
