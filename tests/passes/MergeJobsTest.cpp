// merge-jobs: renumbering and peer rewriting for every strategy, multi-tenant slots,
// placement on a fabric, the jobs file and every error. Inputs: job_a.goal (2 ranks:
// 0 sends 10 B to 1, tag 1) and job_b.goal (3 ranks: 0 computes 5 ns then sends 20 B to
// 2, tag 0; 1 computes 7 ns on cpu 1).
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

std::string merged(const PassDir &d, std::vector<std::string> extra, int status = 0) {
  std::vector<std::string> args{"job_a.goal", "job_b.goal", "-emit=goal"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = d.run(args);
  EXPECT_EQ(r.status, status) << r.err;
  return status == 0 ? r.out : r.err;
}

// Packed, multi-job (also the default without -jobs): a on slots 0-1, b on 2-4.
const char *Packed = R"(num_ranks 5

rank 0 {
l1: send 10b to 1 tag 1
}

rank 1 {
l1: recv 10b from 0 tag 1
}

rank 2 {
l1: calc 5
l2: send 20b to 4 tag 0
l2 requires l1
}

rank 3 {
l1: calc 7 cpu 1
}

rank 4 {
l1: recv 20b from 2 tag 0
}
)";

} // namespace

TEST(MergeJobs, PackedByDefault) {
  PassDir d({"job_a.goal", "job_b.goal"});
  EXPECT_EQ(merged(d, {}), Packed);   // the default pipeline starts with merge-jobs
  EXPECT_EQ(merged(d, {"-passes=merge-jobs"}), Packed);
  d.write("jobs.yaml", "jobs:\n- {workload: job_a.goal, placement: packed}\n- placement: packed\n");
  EXPECT_EQ(merged(d, {"-jobs=jobs.yaml"}), Packed);
  RunResult r = d.run({"job_a.goal", "job_b.goal", "-emit=placement"});
  EXPECT_EQ(r.out, "# placement of 5 ranks of 'job_a.goal+job_b.goal': rank endpoint\n"
                   "0 -  # job 0\n1 -  # job 0\n2 -  # job 1\n3 -  # job 1\n4 -  # job 1\n");
  r = d.run({"job_a.goal", "job_b.goal", "-emit=goal", "-stats"});
  EXPECT_NE(r.err.find("2 merge-jobs - Jobs merged\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("5 merge-jobs - Ranks after merge-jobs\n"), std::string::npos) << r.err;
}

TEST(MergeJobs, InterleavedJobsTakeTurns) {
  // One slot per host: a0 b0 a1 b1 b2 in slot order.
  PassDir d({"job_a.goal", "job_b.goal"});
  d.write("jobs.json", R"({"jobs": [{"placement": "interleaved"}, {"placement": "interleaved"}]})");
  EXPECT_EQ(merged(d, {"-jobs=jobs.json"}), R"(num_ranks 5

rank 0 {
l1: send 10b to 2 tag 1
}

rank 1 {
l1: calc 5
l2: send 20b to 4 tag 0
l2 requires l1
}

rank 2 {
l1: recv 10b from 0 tag 1
}

rank 3 {
l1: calc 7 cpu 1
}

rank 4 {
l1: recv 20b from 1 tag 0
}
)");
}

TEST(MergeJobs, ListsFirstThenRandom) {
  // a: explicit slots 4 and 0. b: random over the free hosts 1, 2, 3 with seed 2, which
  // orders them 3, 2, 1 (tests/passes/tools/mt19937_64.py 3: seed 2 gives 2 1 0), so
  // b0, b1, b2 land on 3, 2, 1. In slot order: a1 b2 b1 b0 a0.
  PassDir d({"job_a.goal", "job_b.goal"});
  d.write("jobs.yaml", "mode: multi-job\njobs:\n- placement: [4, 0]\n- placement: random\n"
                       "  seed: 2\n");
  EXPECT_EQ(merged(d, {"-jobs=jobs.yaml"}), R"(num_ranks 5

rank 0 {
l1: recv 10b from 4 tag 1
}

rank 1 {
l1: recv 20b from 3 tag 0
}

rank 2 {
l1: calc 7 cpu 1
}

rank 3 {
l1: calc 5
l2: send 20b to 1 tag 0
l2 requires l1
}

rank 4 {
l1: send 10b to 0 tag 1
}
)");
  // The file's seed + the job's index is the default: 1 + 1 = 2 again.
  d.write("jobs2.yaml", "seed: 1\njobs:\n- placement: [4, 0]\n- placement: random\n");
  EXPECT_EQ(merged(d, {"-jobs=jobs2.yaml"}), merged(d, {"-jobs=jobs.yaml"}));
}

TEST(MergeJobs, MultiTenantJobsShareSlots) {
  // Packed tenants overlap: slot 0 holds a0 and b0, slot 1 a1 and b1, slot 2 b2. Two
  // members per slot at most (g = 2), C = 2 cpu streams per member, so b's ops on
  // shared slots move to cpus 2-3; tags: a0 -> a1 (members 0 -> 0) tag 1 -> (2+0)*2+0
  // = 4; b0 -> b2 (member 1 of slot 0 -> member 0 of slot 2) tag 0 -> (0+1)*2+0 = 2.
  PassDir d({"job_a.goal", "job_b.goal"});
  d.write("jobs.yaml", "mode: multi-tenant\njobs:\n- placement: packed\n- placement: packed\n");
  const char *Tenants = R"(num_ranks 3

rank 0 {
l1: send 10b to 1 tag 4
l2: calc 5 cpu 2
l3: send 20b to 2 tag 2 cpu 2
l3 requires l2
}

rank 1 {
l1: recv 10b from 0 tag 4
l2: calc 7 cpu 3
}

rank 2 {
l1: recv 20b from 0 tag 2
}
)";
  EXPECT_EQ(merged(d, {"-jobs=jobs.yaml"}), Tenants);
  // share-nic: false gives member k nic indices k*N.. (N = 1 here).
  d.write("own.yaml", "mode: multi-tenant\nshare-nic: false\njobs:\n- placement: packed\n"
                      "- placement: packed\n");
  std::string own = Tenants;
  own.replace(own.find("tag 2 cpu 2\n"), 12, "tag 2 cpu 2 nic 1\n");
  EXPECT_EQ(merged(d, {"-jobs=own.yaml"}), own);
  RunResult r = d.run({"job_a.goal", "job_b.goal", "-jobs=own.yaml", "-emit=placement",
                       "-stats"});
  EXPECT_EQ(r.out, "# placement of 3 ranks of 'job_a.goal+job_b.goal': rank endpoint\n"
                   "# rank 0 member 0: rank 0 of job 0 on -, cpus 0-1, nics 0-0\n"
                   "# rank 0 member 1: rank 2 of job 1 on -, cpus 2-3, nics 1-1\n"
                   "0 -  # job 0\n"
                   "# rank 1 member 0: rank 1 of job 0 on -, cpus 0-1, nics 0-0\n"
                   "# rank 1 member 1: rank 3 of job 1 on -, cpus 2-3, nics 1-1\n"
                   "1 -  # job 0\n"
                   "# rank 2 member 0: rank 4 of job 1 on -, cpus 0-1, nics 0-0\n"
                   "2 -  # job 1\n");
  EXPECT_NE(r.err.find("2 merge-jobs - Slots shared by several jobs\n"), std::string::npos);
  // The reverse: split-nodes gives the multi-job numbering (a's ranks, then b's).
  r = d.run({"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-passes=merge-jobs,split-nodes",
             "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Packed);
}

TEST(MergeJobs, PlacedOnTheFabric) {
  // small_cluster.yaml: 3 hosts of 2 GPUs. Multi-job packed: a gets host 0, b hosts 1
  // and 2 (a job fills the hosts it takes; hosts are not shared).
  PassDir d({"job_a.goal", "job_b.goal", "small_cluster.yaml"});
  RunResult r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-emit=placement"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "# placement of 5 ranks of 'job_a.goal+job_b.goal' on 'small_cluster.yaml': "
                   "rank endpoint\n0 host.0.xpu.0  # job 0\n1 host.0.xpu.1  # job 0\n"
                   "2 host.1.xpu.0  # job 1\n3 host.1.xpu.1  # job 1\n4 host.2.xpu.0  # job 1\n");
  // Endpoint names in a list; then remap-gpus groups by host as usual.
  d.write("jobs.yaml", "jobs:\n- placement: [host.2.xpu.1, host.2.xpu.0]\n- placement: packed\n");
  r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-jobs=jobs.yaml",
             "-emit=placement"});
  EXPECT_EQ(r.out, "# placement of 5 ranks of 'job_a.goal+job_b.goal' on 'small_cluster.yaml': "
                   "rank endpoint\n0 host.0.xpu.0  # job 1\n1 host.0.xpu.1  # job 1\n"
                   "2 host.1.xpu.0  # job 1\n3 host.2.xpu.0  # job 0\n4 host.2.xpu.1  # job 0\n");
  r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-jobs=jobs.yaml",
             "-passes=merge-jobs,remap-gpus,intranode-calc", "-emit=goal", "-verify-each"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 12), "num_ranks 3\n");
}

TEST(MergeJobsErrors, CommandLine) {
  PassDir d({"job_a.goal", "job_b.goal"});
  RunResult r = d.run({"job_a.goal", "job_b.goal", "-passes=verify", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: 2 workloads given; combine them with -passes=merge-jobs,... "
                   "and -jobs=<file>, or give one workload\n");
  r = d.run({"job_a.goal", "job_b.goal", "-jobs=none.yaml", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "infracc: error: cannot read the jobs file 'none.yaml': No such file or "
                   "directory\n");
}

TEST(MergeJobsErrors, JobsFile) {
  PassDir d({"job_a.goal", "job_b.goal", "small_cluster.yaml"});
  auto err = [&](const std::string &text, std::vector<std::string> extra = {}) {
    d.write("jobs.yaml", text);
    std::vector<std::string> args{"job_a.goal", "job_b.goal", "-jobs=jobs.yaml", "-emit=goal"};
    args.insert(args.begin(), extra.begin(), extra.end());
    RunResult r = d.run(args);
    EXPECT_EQ(r.status, 1) << text;
    return r.err;
  };
  EXPECT_EQ(err("jobs:\n- placement: packed\n"),
            "jobs.yaml:1:1: error: the jobs file describes 1 job but 2 workloads were given "
            "(job_a.goal, job_b.goal); give one entry per workload, in command-line order\n"
            "jobs:\n^\n");
  EXPECT_EQ(err("jobs:\n- workload: job_b.goal\n- workload: other.goal\n"),
            "jobs.yaml:2:13: error: job 0 names the workload 'job_b.goal', but the 1st workload "
            "on the command line is 'job_a.goal'\n"
            "- workload: job_b.goal\n            ^\n"
            "jobs.yaml:3:13: error: job 1 names the workload 'other.goal', but the 2nd workload "
            "on the command line is 'job_b.goal'\n"
            "- workload: other.goal\n            ^\n");
  EXPECT_EQ(err("mode: shared\nshare-nic: maybe\nslots: 0\nslot: 3\njobs:\n- placement: tight\n"
                "  seeds: 3\n- {placement: []}\n"),
            "jobs.yaml:4:1: error: unknown key 'slot' in the jobs file; the keys are mode, "
            "share-nic, slots, slots-per-host, seed, jobs\n"
            "slot: 3\n^\n"
            "jobs.yaml:1:7: error: mode must be multi-job or multi-tenant, not the string "
            "'shared'\n"
            "mode: shared\n      ^\n"
            "jobs.yaml:2:12: error: share-nic must be true or false, not the string 'maybe'\n"
            "share-nic: maybe\n           ^\n"
            "jobs.yaml:3:8: error: slots must be at least 1\n"
            "slots: 0\n       ^\n"
            "jobs.yaml:7:3: error: unknown key 'seeds' in job 0; the keys are workload, "
            "placement, seed\n"
            "  seeds: 3\n  ^\n"
            "jobs.yaml:6:14: error: the placement of job 0 must be packed, random, interleaved or "
            "a list of endpoints, not the string 'tight'\n"
            "- placement: tight\n             ^\n"
            "jobs.yaml:8:15: error: the placement list of job 1 is empty; it needs one slot per "
            "rank\n"
            "- {placement: []}\n              ^\n");
  EXPECT_EQ(err("- 1\n"), "jobs.yaml: error: a jobs file is a mapping with keys mode, share-nic, "
                          "slots, slots-per-host, seed and jobs, not a list\n");
  EXPECT_EQ(err("mode: multi-job\n"),
            "jobs.yaml: error: the jobs file has no 'jobs' list (one entry per workload)\n");
  EXPECT_EQ(err("jobs:\n- placement: [1, 2, 3]\n- placement: [0, x, 9]\n"),
            "jobs.yaml:2:14: error: the placement list of job 0 ('job_a.goal', 2 ranks) has 3 "
            "entries; it needs one per rank (2)\n"
            "- placement: [1, 2, 3]\n             ^\n"
            "jobs.yaml:3:18: error: 'x' is a name, but without a fabric slots are numbers (0 to "
            "4)\n"
            "- placement: [0, x, 9]\n                 ^\n"
            "jobs.yaml:3:21: error: slot 9 does not exist: there are 5 slots (0 to 4)\n"
            "- placement: [0, x, 9]\n                    ^\n");
  EXPECT_EQ(err("jobs:\n- placement: [1, 1]\n- placement: packed\n"),
            "jobs.yaml:2:18: error: ranks 0 and 1 of job 0 are both placed on slot 1; a slot "
            "holds one rank of each job\n"
            "- placement: [1, 1]\n                 ^\n");
  EXPECT_EQ(err("jobs:\n- placement: [0, 1]\n- placement: [1, 2, 3]\n"),
            "jobs.yaml:3:15: error: slot 1 is already taken by job 0; in multi-job mode a slot "
            "holds one rank\n"
            "- placement: [1, 2, 3]\n              ^\n");
  // Multi-job on the fabric: hosts are not shared, and must suffice.
  EXPECT_EQ(err("jobs:\n- placement: [host.0.xpu.0, host.1.xpu.0]\n"
                "- placement: [host.0.xpu.1, host.2.xpu.0, host.2.xpu.1]\n",
                {"small_cluster.yaml"}),
            "jobs.yaml:3:15: error: job 0 and job 1 would share a host (slot 1 is on the host of "
            "slot 0); in multi-job mode a host belongs to one job (mode: multi-tenant lets jobs "
            "share hosts)\n"
            "- placement: [host.0.xpu.1, host.2.xpu.0, host.2.xpu.1]\n              ^\n");
  EXPECT_EQ(err("jobs:\n- placement: [host.1.xpu.0, host.2.xpu.0]\n- placement: packed\n",
                {"small_cluster.yaml"}),
            "jobs.yaml:3:14: error: job 1 ('job_b.goal', 3 ranks) does not fit: 1 of its ranks "
            "have no slot and every host is taken (multi-job mode gives each job hosts of its "
            "own; mode: multi-tenant lets jobs share them)\n"
            "- placement: packed\n             ^\n");
  EXPECT_EQ(err("jobs:\n- placement: [host.0.xpu.0, host.0.nic.0]\n- placement: packed\n",
                {"small_cluster.yaml"}),
            "jobs.yaml:2:29: error: 'host.0.nic.0' is a nic, not an endpoint; ranks go on xpus "
            "(e.g. 'host.0.xpu.0')\n"
            "- placement: [host.0.xpu.0, host.0.nic.0]\n                            ^\n");
  EXPECT_EQ(err("slots: 4\njobs:\n- placement: packed\n- placement: packed\n",
                {"small_cluster.yaml"}),
            "jobs.yaml:1:8: error: slots and slots-per-host describe the slots when there is no "
            "fabric; with the fabric 'small_cluster.yaml' the slots are its endpoints\n"
            "slots: 4\n       ^\n");
  EXPECT_EQ(err("mode: multi-tenant\nslots: 2\njobs:\n- placement: packed\n- placement: random\n"),
            "jobs.yaml:5:14: error: job 1 ('job_b.goal', 3 ranks) has more ranks than there are "
            "slots (2); a slot holds one rank of each job\n"
            "- placement: random\n             ^\n");
  EXPECT_EQ(err("jobs: [\n"), "jobs.yaml:1:8: error: YAML syntax: could not find closing ]!\n"
                              "jobs: [\n       ^\n");
}

TEST(MergeJobsErrors, DefaultPlacementThatDoesNotFit) {
  // Without a jobs file the errors name the workload. The fabric has 6 GPUs on 3 hosts:
  // a (2 ranks) takes host 0, b (3 ranks) hosts 1 and 2, c (2 ranks) finds none free.
  PassDir d({"job_a.goal", "job_b.goal", "small_cluster.yaml"});
  writeFile(d.path() + "/job_c.goal", readFile(d.path() + "/job_a.goal"));
  RunResult r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "job_c.goal",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "job_c.goal: error: job 2 ('job_c.goal', 2 ranks) does not fit: 2 of its "
                   "ranks have no slot and every host is taken (multi-job mode gives each job "
                   "hosts of its own; mode: multi-tenant lets jobs share them)\n");
}

TEST(MergeJobs, TenantsOnTheFabricThenRemapAndIntranode) {
  // Multi-tenant packed on small_cluster.yaml: a on host.0.xpu.0-1, b on host.0.xpu.0-1
  // and host.1.xpu.0. remap-gpus takes the shared slots apart (ranks a0 a1 b0 b1 b2) and
  // groups by host: host 0 holds a0 a1 b0 b1 (g = 4, C = 2; nic = the GPU's NIC), host 1
  // b2. Tags: a0 -> a1 (members 0 -> 1): (1*4 + 0)*4 + 1 = 17; b0 -> b2 (member 2 -> 0):
  // (0*4 + 2)*4 + 0 = 8. intranode-calc: 10 B over the NVSwitch, 250 + 0.1 -> 250 ns.
  PassDir d({"job_a.goal", "job_b.goal", "small_cluster.yaml"});
  d.write("jobs.yaml", "mode: multi-tenant\njobs:\n- placement: packed\n- placement: packed\n");
  RunResult r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-jobs=jobs.yaml",
                       "-passes=merge-jobs,remap-gpus", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, R"(num_ranks 2

rank 0 {
l1: send 10b to 0 tag 17
l2: recv 10b from 0 tag 17 cpu 2 nic 1
l3: calc 5 cpu 4
l4: send 20b to 1 tag 8 cpu 4
l5: calc 7 cpu 7
l4 requires l3
}

rank 1 {
l1: recv 20b from 0 tag 8
}
)");
  r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-jobs=jobs.yaml",
             "-passes=merge-jobs,remap-gpus,intranode-calc", "-emit=goal", "-verify-each"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("l3:")), "num_ranks 2\n\nrank 0 {\nl1: calc 250\n"
                                                 "l2: calc 0 cpu 2\n");
  EXPECT_NE(r.out.find("l2 requires l1\n"), std::string::npos);
}

// Collectives name their ranks, so each job is lowered before merge-jobs regroups them:
// two jobs of examples/allreduce-collective.goal run exactly as two of its lowered form,
// examples/ring-allreduce-16.goal (the default pipeline, and -passes naming the order).
TEST(MergeJobs, JobsWithCollectivesAreLoweredFirst) {
  std::string dir = makeTempDir("mj-coll");
  writeFile(dir + "/jobs.yaml", "slots: 32\njobs:\n- placement: packed\n- placement: packed\n");
  std::string coll = sourcePath("examples/allreduce-collective.goal");
  std::string ring = sourcePath("examples/ring-allreduce-16.goal");
  RunResult lowered = runInfracc({ring, ring, "-jobs=" + dir + "/jobs.yaml", "-emit=sim",
                                  "-reduce-ns-per-byte=0.125"});
  ASSERT_EQ(lowered.status, 0) << lowered.err;
  // Without a fabric the two jobs do not meet: together they end when one alone does.
  RunResult alone = runInfracc({ring, "-emit=sim"});
  ASSERT_EQ(alone.status, 0) << alone.err;
  size_t at = alone.out.find("Host 0: ");
  ASSERT_NE(at, std::string::npos) << alone.out;
  EXPECT_EQ(maximumFinishingTime(lowered.out), std::stoll(alone.out.substr(at + 8)));
  RunResult r = runInfracc({coll, coll, "-jobs=" + dir + "/jobs.yaml", "-emit=sim",
                            "-reduce-ns-per-byte=0.125"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, lowered.out);
  r = runInfracc({coll, coll, "-jobs=" + dir + "/jobs.yaml", "-passes=lower-collectives,merge-jobs",
                  "-emit=sim", "-reduce-ns-per-byte=0.125"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, lowered.out);
  // Merging first is refused: the ranks the collectives name would be gone.
  r = runInfracc({coll, coll, "-jobs=" + dir + "/jobs.yaml", "-passes=merge-jobs,lower-collectives",
                  "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, coll + ": error: merge-jobs regroups ranks of sends, recvs and calcs, but this "
                          "workload still has 16 collective operations: lower them first "
                          "(-passes=lower-collectives,merge-jobs,...)\n");
}
