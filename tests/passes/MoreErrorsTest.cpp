// The remaining messages of the passes: stream limits, GPUs without a NIC or without
// an internal path, and pipeline-order mistakes.
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(RemapGpusErrors, StreamLimits) {
  PassDir d;
  // cpu 100 on 4 GPUs per node: GPU 3 gets streams 303..403, beyond LogGOPSim's 8 bits.
  d.write("cpu100.goal", "num_ranks 4\n\nrank 0 {\nl1: calc 1 cpu 100\n}\n\nrank 1 {\n}\n\n"
                         "rank 2 {\n}\n\nrank 3 {\nl1: calc 1 cpu 100\n}\n");
  RunResult r = d.run({"cpu100.goal", "-passes=remap-gpus", "-gpus-per-node=4", "-emit=goal"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "cpu100.goal: warning: remap-gpus uses cpu streams up to 403; binary GOAL "
                   "and LogGOPSim's txt2bin keep only 8 bits (0-255) of a cpu index\n");
  EXPECT_NE(r.out.find("l2: calc 1 cpu 403\n"), std::string::npos) << r.out;
  d.write("cpu40k.goal", "num_ranks 2\n\nrank 0 {\n}\n\nrank 1 {\nl1: calc 1 cpu 40000\n}\n");
  r = d.run({"cpu40k.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cpu40k.goal: error: rank 1 operation 'l1': remap-gpus puts it on cpu stream "
                   "80001 (40001 streams per member, member 1), beyond the 65536 streams a rank "
                   "can have\n");
}

TEST(RemapGpusErrors, GpuWithoutNic) {
  // Host 2 of this fabric has no link to the outside: its GPUs fall back to nic = their
  // index on the node.
  PassDir d({"pairs4.goal", "islands.yaml"});
  d.write("map.txt", "0 h.0.xpu.0\n1 h.0.xpu.1\n2 h.2.xpu.0\n3 h.2.xpu.1\n");
  RunResult r = d.run({"islands.yaml", "pairs4.goal", "-place-map=map.txt",
                       "-passes=place,remap-gpus", "-emit=goal", "-w"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = d.run({"islands.yaml", "pairs4.goal", "-place-map=map.txt", "-passes=place,remap-gpus",
             "-emit=goal"});
  EXPECT_NE(r.err.find("islands.yaml: warning: remap-gpus: several GPUs do reach no NIC inside "
                       "their host (e.g. 'h.2.xpu.0'); their traffic uses nic = their index on "
                       "the node\n"),
            std::string::npos)
      << r.err;
  // Both GPUs of host 0 share its one NIC (nic 0); host 2's GPU 1 falls back to nic 1.
  EXPECT_NE(r.out.find("l7: send 2000b to 1 tag 31 cpu 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("l4: send 500b to 1 tag 2 cpu 3 nic 1\n"), std::string::npos) << r.out;
}

TEST(IntranodeCalcErrors, GpusWithoutAPathInsideTheHost) {
  // Each GPU has its own NIC and nothing joins the two inside the host: the fallback
  // costs apply (1000 B at 300 GB/s -> 3 ns), with a warning.
  PassDir d({"pairs4.goal"});
  d.write("split.yaml", R"(name: split
devices:
- name: h
  components:
  - {name: xpu, count: 2, choice: xpu}
  - {name: nic, count: 2, choice: nic}
  links: [{name: pcie}]
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: one2one, link: pcie}
- name: s
  components:
  - {name: asic, count: 1, choice: switch}
  - {name: port, count: 4, choice: port}
  links: [{name: ic}]
  edges:
  - {ep1: {component: asic}, ep2: {component: port}, scheme: many2many, link: ic}
links: [{name: w}]
instances:
- {name: h, device: h, count: 2}
- {name: s, device: s, count: 1}
edges:
- {ep1: {instance: h, component: nic}, ep2: {instance: "s[0]", component: port}, scheme: one2one, link: w}
)");
  RunResult r = d.run({"split.yaml", "pairs4.goal", "-passes=place,remap-gpus,intranode-calc",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "split.yaml: warning: intranode-calc: 'h.0.xpu.0' and 'h.0.xpu.1' are not "
                   "connected inside their host; messages between them cost -intranode-latency "
                   "and -intranode-bandwidth\n");
  EXPECT_NE(r.out.find("l2: calc 3\n"), std::string::npos) << r.out;
}

TEST(MergeJobsErrors, PipelineOrder) {
  PassDir d({"pairs4.goal", "small_cluster.yaml", "job_a.goal", "job_b.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,merge-jobs",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: merge-jobs places the jobs itself; run it before place and "
                   "remap-gpus\n");
  r = d.run({"small_cluster.yaml", "-passes=merge-jobs", "-emit=stats"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: merge-jobs needs workloads (one or more .goal files)\n");
  // A single workload goes through merge-jobs unchanged.
  r = d.run({"pairs4.goal", "-passes=merge-jobs", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, readFile(sourcePath("tests/golden/passes/pairs4.goal")));
  // Interleaved tenants coming round to a slot they already hold.
  d.write("jobs.yaml", "mode: multi-tenant\nslots: 3\njobs:\n- placement: interleaved\n"
                       "- placement: interleaved\n");
  r = d.run({"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "jobs.yaml:5:14: error: interleaving puts two ranks of job 1 ('job_b.goal', 3 "
                   "ranks) on one slot: taking the 3 slots in turns with the other interleaved "
                   "jobs, it comes round to a slot it already has; use packed or random for some "
                   "jobs\n"
                   "- placement: interleaved\n             ^\n");
}

TEST(PlaceErrors, FabricWithoutEndpoints) {
  PassDir d({"pairs4.goal"});
  d.write("switches.yaml", "name: s\ndevices:\n- name: sw\n  components: [{name: port, count: 2, "
                           "choice: port}]\ninstances:\n- {name: sw, device: sw, count: 1}\n");
  RunResult r = d.run({"switches.yaml", "pairs4.goal", "-emit=placement", "-w"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "infracc: error: the fabric 'switches.yaml' has no endpoints to place ranks on "
                   "(no xpu, and no host with a NIC)\n");
  r = d.run({"pairs4.goal", "-emit=placement"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=placement: the ranks are not placed; run place (or "
                   "merge-jobs) with a fabric, e.g. -passes=place\n");
}

TEST(SplitNodesErrors, Wildcards) {
  PassDir d;
  d.write("wild.goal", "num_ranks 2\n\nrank 0 {\nl1: recv 8b from -1 tag 5\n}\n\nrank 1 {\n"
                       "l1: send 8b to 0 tag 4 cpu 1\n}\n");
  RunResult r = d.run({"wild.goal", "-passes=split-nodes", "-gpus-per-node=2", "-emit=goal",
                       "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "wild.goal: error: split-nodes: rank 0 operation 'l1' has a wildcard source "
                   "or tag, which does not say which GPU it talks to\n");
}

TEST(IntranodeCalcErrors, ManyUnmatched) {
  PassDir d;
  std::string ops;
  for (int i = 1; i <= 12; ++i)
    ops += "l" + std::to_string(i) + ": send 8b to 0 tag " + std::to_string(i) + "\n";
  d.write("many.goal", "num_ranks 1\n\nrank 0 {\n" + ops + "}\n");
  RunResult r = d.run({"many.goal", "-passes=intranode-calc", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("many.goal: error: intranode-calc: rank 0 operation 'l10' (send of 8 bytes "
                       "to its own rank, tag 10) has no matching recv\n"
                       "many.goal: error: intranode-calc: 2 more local messages have no partner\n"),
            std::string::npos)
      << r.err;
}

TEST(MergeJobsErrors, JobsFileTypes) {
  PassDir d({"job_a.goal", "job_b.goal"});
  d.write("jobs.yaml", "seed: -1\njobs:\n- workload: [a]\n  seed: x\n- placement: [[1], 2, 99999999999999999999]\n");
  RunResult r = d.run({"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "jobs.yaml:1:7: error: seed must be a whole number (0, 1, 2, ...), not the number "
            "-1\n"
            "seed: -1\n      ^\n"
            "jobs.yaml:3:13: error: the workload of job 0 must be a file name, not a list\n"
            "- workload: [a]\n            ^\n"
            "jobs.yaml:4:9: error: the seed of job 0 must be a whole number (0, 1, 2, ...), not "
            "the string 'x'\n"
            "  seed: x\n        ^\n"
            "jobs.yaml:5:15: error: the placement list of job 1 holds endpoint names or slot "
            "numbers, not a list\n"
            "- placement: [[1], 2, 99999999999999999999]\n              ^\n"
            "jobs.yaml:5:23: error: slot number 99999999999999999999 is too large\n"
            "- placement: [[1], 2, 99999999999999999999]\n                      ^\n");
  d.write("jobs.yaml", "jobs: {a: 1}\n");
  r = d.run({"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-emit=goal"});
  EXPECT_EQ(r.err, "jobs.yaml:1:7: error: jobs must be a list with one entry per workload, not a "
                   "mapping\njobs: {a: 1}\n      ^\n");
  d.write("jobs.yaml", "jobs:\n- packed\n- placement: packed\n");
  r = d.run({"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-emit=goal"});
  EXPECT_EQ(r.err, "jobs.yaml:2:3: error: job 0 must be a mapping with keys workload, placement "
                   "and seed, not the string 'packed'\n- packed\n  ^\n");
}
