// The example of docs/passes.md: examples/llama_like.goal (32 GPUs = 4 nodes x 8, TP
// inside nodes, DP across) on examples/dgx_cluster.yaml.
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(PassesExample, DgxClusterLlamaLike) {
  std::string fabric = sourcePath("examples/dgx_cluster.yaml");
  std::string workload = sourcePath("examples/llama_like.goal");
  PassDir d;
  RunResult r = runInfracc({fabric, workload, "-passes=place,remap-gpus,intranode-calc",
                            "-emit=goal", "-o", d.path() + "/node.goal", "-stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Every TP allreduce is a ring of 8 GPUs inside a node: 8 x 14 messages of 2 MiB; 8 of
  // them (4 layers forward, 4 backward) on each of the 4 nodes: 3584 messages, 7 GiB.
  EXPECT_NE(r.err.find("7516192768 intranode-calc - Bytes moved inside nodes\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("      3584 intranode-calc - Messages inside a node replaced by calcs\n"),
            std::string::npos);
  std::string node = d.read("node.goal");
  EXPECT_EQ(node.substr(0, 13), "num_ranks 4\n\n");
  // 2 MiB between two GPUs over an NVSwitch: 150 + 100 + 150 ns + 2097152 B / 200 B/ns
  // = 10885.76 -> 10886 ns.
  EXPECT_NE(node.find("l2: calc 10886\n"), std::string::npos);
  // LogGOPSim (76451de) on this file, after txt2bin, reports Host 0: 1887571650 (the
  // largest); the built-in simulator must agree.
  r = d.run({"node.goal", "-sim-batch"});
  EXPECT_EQ(makespan(r.out), "1887571650") << r.err;
  // The topology-aware model runs on the same pipeline.
  r = runInfracc({fabric, workload, "-passes=place,remap-gpus,intranode-calc", "-emit=sim",
                  "-sim-model=topo", "-sim-batch"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Maximum finishing time at host "), std::string::npos) << r.out;
}
