// -sim-model=gpu end to end: kernel files written for these tests, machines small enough
// that every expected time below is computed by hand from the rules in
// docs/gpu-model.md.
//
// The machine of the exact cases: one router; 128 GB/s links (1.024e12 bit/s: a 128-byte
// line takes 1000 ps on a link, a 16-byte control packet 125 ps); compute-unit and NoC
// links 10 ns, HBM links 20 ns; a 1 GHz clock (one request per 1000 ps). A packet's head
// crosses a link in its latency, its end the serialisation later (cut-through), so a
// request reaches local HBM after 10 + 20 ns plus its serialisation once, and the answer
// comes back after 20 + 10 ns plus its own: a load or a store takes 60 ns + 1000 ps +
// 125 ps = 61125 ps from issue to completion when nothing waits.
#include "tests/support/TestUtil.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

const std::string OneGpu =
    "-fabric=single_tier:hosts=1,host=gpu_noc(mesh=1x1,cus=2,hbm=1,io=1,bw=128GB/s,lat=10ns,"
    "hbm_bw=128GB/s,hbm_lat=20ns)";
// Two such GPUs with one CU each; I/O port links 100 ns, their switch links 50 ns.
const std::string TwoGpus =
    "-fabric=single_tier:hosts=2,host=gpu_noc(mesh=1x1,cus=1,hbm=1,io=1,bw=128GB/s,lat=10ns,"
    "hbm_bw=128GB/s,hbm_lat=20ns,io_bw=128GB/s,io_lat=100ns),bw=128GB/s,lat=50ns";

std::string input(const std::string &name) { return sourcePath("tests/gpu/inputs/" + name); }

// The "Maximum finishing time" line's value.
std::string maximum(const RunResult &r) {
  auto at = r.out.find("Maximum finishing time: ");
  if (at == std::string::npos)
    return "(none) " + r.out + r.err;
  return r.out.substr(at + 24, r.out.find(" ns", at + 24) - at - 24);
}

// MSCCL++ test plans run to their end on the generic GPUs (a stuck kernel is an error).
void expectPlansRun(std::initializer_list<const char *> plans, const std::string &msgSize) {
  for (const char *plan : plans) {
    RunResult r = runInfracc({sourcePath("tests/msccl/inputs/" + std::string(plan) + ".json"),
                              msgSize, "-sim-model=gpu"});
    EXPECT_EQ(r.status, 0) << plan << ": " << r.err;
    EXPECT_NE(r.out.find("Maximum finishing time: "), std::string::npos) << plan << r.out;
  }
}

nlohmann::json json(const RunResult &r) {
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST(GpuModel, CopyFourLinesUnrollOneAgainstFour) {
  // copy4.kernels: one wavefront copies 4 lines. Lines alternate between the GPU's two
  // HBM channels (one on top, one at the bottom of the 1x1 mesh), so no two requests
  // ever meet on a link here.
  // Unroll 1: Load, Waitcnt, Store per line. Load i is issued at i x (61125 + 1000): the
  // store takes the cycle after the load completes, the next load the cycle after
  // that. The last store, issued at 3 x 62125 + 61125 = 247500, completes 61125 later.
  RunResult one = runInfracc({OneGpu, input("copy4.kernels"), "-sim-model=gpu",
                              "-wavefronts=1", "-unroll=1"});
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(maximum(one), "308.625");
  // Unroll 4: four loads in four cycles (0..3000 ps); their answers share the router's
  // link to the CU, each 1000 ps long and arriving 1000 ps apart: the last completes at
  // 3000 + 61125 = 64125. The four stores follow in four cycles, the last issued at
  // 67125 and complete at 67125 + 61125.
  RunResult four = runInfracc({OneGpu, input("copy4.kernels"), "-sim-model=gpu",
                               "-wavefronts=1", "-unroll=4"});
  EXPECT_EQ(four.status, 0) << four.err;
  EXPECT_EQ(maximum(four), "128.250");
  EXPECT_NE(four.out.find("Requests: 8 (4 loads, 4 stores, 0 semaphore accesses)"),
            std::string::npos)
      << four.out;
}

TEST(GpuModel, TwoComputeUnitsContendForOneChannel) {
  // contend.kernels: workgroups 0 and 1 go to the two CUs (round robin) and each stores
  // one line at t = 0, lines 0 and 2 of the output: both on channel 0. The two lines
  // reach the router together (10 ns); the router's link to the channel sends the first
  // from 10000 to 11000 ps and the second from 11000 to 12000, so the second store is
  // one line's serialisation late: 61125 + 1000 ps.
  RunResult both = runInfracc({OneGpu, input("contend.kernels"), "-sim-model=gpu",
                               "-wavefronts=1"});
  EXPECT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(maximum(both), "62.125");

  // Alone, a store takes 61125 ps.
  std::string dir = makeTempDir("gpu");
  writeFile(dir + "/alone.kernels", "gpus 1\n\nkernel 0 gpu 0 instance 0 input 0 output 512 "
                                    "scratch 0\n  workgroup 0\n    store 128 output+0\n");
  RunResult alone = runInfracc({OneGpu, dir + "/alone.kernels", "-sim-model=gpu",
                                "-wavefronts=1"});
  EXPECT_EQ(maximum(alone), "61.125");

  // The JSON report shows the queue on that link: 256 bytes, 2 packets, one waited.
  nlohmann::json j = json(runInfracc({OneGpu, input("contend.kernels"), "-sim-model=gpu",
                                      "-wavefronts=1", "-sim-report=json"}));
  bool found = false;
  for (const auto &l : j["links"])
    if (l["link"] == "gpu_noc.0.router.0 -> gpu_noc.0.hbm.0") {
      found = true;
      EXPECT_EQ(l["kind"], "hbm_link");
      EXPECT_EQ(l["bytes"], 256);
      EXPECT_EQ(l["packets"], 2);
      EXPECT_EQ(l["peak_waiting"], 1);
      EXPECT_DOUBLE_EQ(l["busy_fraction"].get<double>(), 2000.0 / 62125.0);
    }
  EXPECT_TRUE(found) << j["links"].dump(1);
}

TEST(GpuModel, SemaphoreHandshakeBetweenTwoGpus) {
  // handshake.kernels: GPU 0 releases s0, which lives on GPU 1; GPU 1 acquires it.
  // GPU 0 -> GPU 1 memory: CU link 10, I/O link 100, switch link 50, the switch's
  // inside 0 and 0, switch link 50, I/O link 100, HBM link 20 ns = 330 ns, plus one
  // 125-ps serialisation (cut-through): the release lands at 330125 ps.
  // GPU 1's acquire reached its own memory at 30125 ps and waits there; at 330125 it is
  // answered (10 + 20 ns + 125 ps back): 360250 ps.
  // GPU 0's release completes when its ack is back: it leaves after that answer has
  // used the HBM link (330250), then 330 ns + 125 ps: 660375 ps.
  RunResult r = runInfracc({TwoGpus, input("handshake.kernels"), "-sim-model=gpu",
                            "-wavefronts=1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu 0 kernel 0: 0.000 ns .. 660.375 ns (660.375 ns)\n"
                       "  gpu 1 kernel 1: 0.000 ns .. 360.250 ns (360.250 ns)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Requests: 2 (0 loads, 0 stores, 2 semaphore accesses)"),
            std::string::npos);
}

TEST(GpuModel, LoadOfLlPacketsWaitsForThePut) {
  // ll.kernels: GPU 0 copies 64 bytes of its input into GPU 1's scratch as LL packets
  // (one 128-byte line); GPU 1 copies them from there into its output.
  // GPU 0: its load of input (16-byte request, 64-byte answer) is back at
  // 30125 + 30000 + 500 = 60625 ps; the 128-byte store then lands at GPU 1's memory
  // 330 ns + 1000 ps later: 391625.
  // GPU 1: its load of the packets reached its memory at 30125 and waits there until the
  // put lands; the 128-byte answer leaves at 391625 and is back at 391625 + 30000 + 1000 =
  // 422625; its 64-byte store to output then takes 30500 + 30125: 483250 ps. (Without the
  // wait: 121750.)
  // The put's ack leaves after that answer has used the HBM link (392625) and is back at
  // GPU 0 at 392625 + 330125 = 722750 ps.
  RunResult r = runInfracc({TwoGpus, input("ll.kernels"), "-sim-model=gpu", "-wavefronts=1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu 0 kernel 0: 0.000 ns .. 722.750 ns (722.750 ns)\n"
                       "  gpu 1 kernel 1: 0.000 ns .. 483.250 ns (483.250 ns)\n"),
            std::string::npos)
      << r.out;
}

TEST(GpuModel, LlPlansRun) {
  // MSCCL++'s LL plans: each reads packets that peers put (waiting for them), forwards
  // or reduces them, and reads its own packets again (no second put: no second wait).
  // They end; with the waits in the wrong order they would deadlock.
  expectPlansRun({"allgather_ll", "allreduce_ll", "reducescatter_ll"}, "-msg-size=3MiB");
}

TEST(GpuModel, MulticastStoreIsCopiedAtTheSwitch) {
  // multicast-store.kernels: GPU 0 stores one line into group mc0 (GPUs 0 and 1).
  // The line reaches the switch's port after 10 + 100 + 50 ns, whole 1000 ps later:
  // 161000 ps. The switch sends a copy to each member's memory, 170 ns away either way
  // (GPU 0's own by the port it came by): whole at 161000 + 170000 + 1000 = 332000. The
  // acks are back at the switch at 332000 + 170000 + 125 = 502125, and one ack goes on
  // to the CU: 502125 + 160000 + 125 = 662250 ps.
  // GPU 0's port link to the switch carries the line once (128 bytes) and its own copy's
  // ack (16): 144 bytes in 2 packets; a store to each GPU in turn would send it twice.
  nlohmann::json j = json(runInfracc({TwoGpus, input("multicast-store.kernels"),
                                      "-sim-model=gpu", "-wavefronts=1", "-sim-report=json"}));
  EXPECT_DOUBLE_EQ(j["kernels"][0]["time_ns"].get<double>(), 662.25);
  EXPECT_EQ(j["requests"]["stores"], 1);
  bool seen = false;
  for (const auto &l : j["links"])
    if (l["link"] == "gpu_noc.0.io.0 -> switch.0.port.0") {
      seen = true;
      EXPECT_EQ(l["bytes"], 144);
      EXPECT_EQ(l["packets"], 2);
    }
  EXPECT_TRUE(seen) << j["links"].dump();
}

TEST(GpuModel, MulticastLoadIsReducedAtTheSwitch) {
  // multicast-load.kernels: GPU 0 loads one line of group mc0 (NVLS's ld_reduce). The
  // request (16 bytes) is whole at the switch at 160125 ps, its copies at both memories
  // at 160125 + 170125 = 330250; the lines are back at the switch at 330250 + 171000 =
  // 501250, and one reduced line reaches the CU at 501250 + 161000 = 662250 ps.
  RunResult r = runInfracc({TwoGpus, input("multicast-load.kernels"), "-sim-model=gpu",
                            "-wavefronts=1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu 0 kernel 0: 0.000 ns .. 662.250 ns (662.250 ns)\n"),
            std::string::npos)
      << r.out;
}

TEST(GpuModel, NvlsPlansRun) {
  expectPlansRun({"allgather_nvls", "allreduce_nvls", "allgather_nvls_ll"}, "-msg-size=1MiB");
  // Multicast needs a switch to copy and reduce: GPUs wired port to port have none.
  RunResult r = runInfracc({input("direct-gpus.yaml"), input("multicast-store.kernels"),
                            "-sim-model=gpu"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err, "infracc: error: -sim-model=gpu: multicast group mc0 needs a switch "
                   "between its GPUs (NVLS); GPU 0's port 'g.0.io.0' does not lead to one\n");
}

TEST(GpuModel, ReleasesInARowShareOneFence) {
  // signal2.kernels: GPU 0 releases s0 then s1, both on GPU 1; GPU 1 acquires both.
  // s0 as in the handshake above: lands at 330125 ps, its ack is back at 660375.
  // s1 needs no fence of its own: issued one cycle later (1000 ps), it lands at 331125;
  // no acquire waits for it there yet, so its ack leaves at once and is back at
  // 331125 + 330125 = 661250 ps, the kernel's end. (With a fence before s1 it would
  // wait for s0's ack: 660375 + 660375 = 1320750 ps.)
  // GPU 1: s0 answered at 360250 as above; its acquire of s1 then goes to its memory and
  // back, 2 x 30125 ps: 420500.
  RunResult r = runInfracc({TwoGpus, input("signal2.kernels"), "-sim-model=gpu",
                            "-wavefronts=1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu 0 kernel 0: 0.000 ns .. 661.250 ns (661.250 ns)\n"
                       "  gpu 1 kernel 1: 0.000 ns .. 420.500 ns (420.500 ns)\n"),
            std::string::npos)
      << r.out;
}

TEST(GpuModel, JsonReport) {
  // The unroll-1 copy: the CU issued 8 requests, a cycle each, in 308625 ps.
  nlohmann::json j = json(runInfracc({OneGpu, input("copy4.kernels"), "-sim-model=gpu",
                                      "-wavefronts=1", "-sim-report=json"}));
  EXPECT_EQ(j["model"], "gpu");
  EXPECT_DOUBLE_EQ(j["makespan_ns"].get<double>(), 308.625);
  EXPECT_EQ(j["kernels"][0]["gpu"], 0);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["time_ns"].get<double>(), 308.625);
  EXPECT_EQ(j["requests"]["loads"], 4);
  EXPECT_EQ(j["gpus"][0]["device"], "gpu_noc.0");
  ASSERT_EQ(j["gpus"][0]["cu_busy_fraction"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["cu_busy_fraction"][0].get<double>(), 8000.0 / 308625.0);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["cu_busy_fraction"][1].get<double>(), 0.0);
  EXPECT_EQ(j["parameters"]["noc_arbitration"], "fifo");
}

TEST(GpuModel, ReduceOccupiesTheComputeUnit) {
  // A Reduce of one line occupies the CU for -reduce-cycles-per-line cycles: the store
  // after it is issued that much later, so the kernel ends (cycles x 1000 ps) later.
  std::string dir = makeTempDir("gpu");
  writeFile(dir + "/reduce.kernels",
            "gpus 1\n\nkernel 0 gpu 0 instance 0 input 0 output 128 scratch 0\n"
            "  workgroup 0\n    reduce 128 inputs 2\n    store 128 output+0\n");
  RunResult r1 = runInfracc({OneGpu, dir + "/reduce.kernels", "-sim-model=gpu",
                             "-wavefronts=1", "-reduce-cycles-per-line=1"});
  RunResult r9 = runInfracc({OneGpu, dir + "/reduce.kernels", "-sim-model=gpu",
                             "-wavefronts=1", "-reduce-cycles-per-line=9"});
  EXPECT_EQ(maximum(r1), "62.125") << r1.err;   // 1000 + 61125
  EXPECT_EQ(maximum(r9), "70.125") << r9.err;   // 9000 + 61125
}

TEST(GpuModel, GenericGpusWithoutAFabric) {
  // No fabric: the paper's generic GPU, one per plan GPU, on one switch.
  RunResult r = runInfracc({sourcePath("tests/msccl/inputs/allgather_put.json"),
                            "-sim-model=gpu"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Model: gpu, 4 GPUs of the generic GPU "
                       "(single_tier:hosts=4,host=gpu_noc,bw=128GiB/s); 128-byte lines"),
            std::string::npos)
      << r.out;
  // Every request of the plan ran: per GPU two workgroups copy 4 x 128 KiB (to itself
  // and to 3 peers), 8192 lines loaded and stored, and take or release 12 semaphores.
  EXPECT_NE(r.out.find("Requests: 65584 (32768 loads, 32768 stores, 48 semaphore accesses)"),
            std::string::npos)
      << r.out;
}

TEST(GpuModel, TheBundledFabricIsTheGenericMachine) {
  // examples/generic-gpus.yaml describes the machine used without a fabric: the same
  // graph (digest) and the same kernel times.
  RunResult file = runInfracc({sourcePath("examples/generic-gpus.yaml"), "-emit=digest"});
  RunResult flag = runInfracc({"-fabric=single_tier:hosts=4,host=gpu_noc,bw=128GiB/s",
                               "-emit=digest"});
  EXPECT_EQ(file.status, 0) << file.err;
  EXPECT_EQ(file.out, flag.out);
  std::string plan = sourcePath("tests/msccl/inputs/allgather_put.json");
  RunResult with = runInfracc({sourcePath("examples/generic-gpus.yaml"), plan,
                               "-passes=unroll-loadstore", "-sim-model=gpu"});
  RunResult without = runInfracc({plan, "-sim-model=gpu"});
  EXPECT_EQ(with.status, 0) << with.err;
  EXPECT_EQ(maximum(with), maximum(without));
}

TEST(GpuModel, MoreOutstandingRequestsNeverSlower) {
  // The paper's Figure 13 knob on a 4-GPU all-gather: allowing more requests in flight
  // per CU does not slow the collective down, and 1 is much slower than 64.
  auto run = [](const std::string &n) {
    return std::stod(maximum(runInfracc({sourcePath("tests/msccl/inputs/allgather_put.json"),
                                         "-sim-model=gpu", "-max-outstanding=" + n})));
  };
  double one = run("1"), eight = run("8"), many = run("64");
  EXPECT_GT(one, 4 * eight);
  EXPECT_GE(eight, many);
}

TEST(GpuModel, FairArbitrationLetsControlPassData) {
  // GPU 0's workgroup 0 writes 64 KiB into GPU 1 (put: data toward GPU 1) while its
  // workgroup 1 reads 64 KiB from GPU 1 (get: its requests, control, go the same way).
  // With 16 GB/s I/O ports the requests queue behind the put's lines; alternating the
  // two classes lets them through sooner, and the get, the longer of the two, ends
  // earlier.
  std::string dir = makeTempDir("gpu");
  writeFile(dir + "/mixed.kernels",
            "gpus 2\n\n"
            "kernel 0 gpu 0 instance 0 input 65536 output 65536 scratch 0\n"
            "  workgroup 0\n    memcpy 65536 input+0 -> gpu1.output+0\n"
            "  workgroup 1\n    memcpy 65536 gpu1.input+0 -> output+0\n\n"
            "kernel 1 gpu 1 instance 0 input 65536 output 65536 scratch 0\n");
  const std::string slowPorts =
      "-fabric=single_tier:hosts=2,host=gpu_noc(mesh=1x1,cus=2,hbm=1,io=1,bw=128GB/s,"
      "lat=10ns,hbm_bw=128GB/s,hbm_lat=20ns,io_bw=16GB/s,io_lat=100ns),bw=128GB/s,lat=50ns";
  auto run = [&](const std::string &arb) {
    return std::stod(maximum(runInfracc({slowPorts, dir + "/mixed.kernels", "-sim-model=gpu",
                                         "-wavefronts=4", "-unroll=16",
                                         "-noc-arbitration=" + arb})));
  };
  EXPECT_LT(run("fair"), run("fifo"));
}

TEST(GpuModel, TimelineShowsWorkgroupsPerComputeUnit) {
  // contend.kernels: workgroup 0 on CU 0, workgroup 1 on CU 1, both from 0 to their
  // stores' completion (61.125 and 62.125 ns, as above).
  RunResult r = runInfracc({OneGpu, input("contend.kernels"), "-sim-model=gpu",
                            "-wavefronts=1", "-emit=timeline"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char *text : {">gpu 0</text>", ">cu 0</text>", ">cu 1</text>",
                           "<title>kernel 0 workgroup 0: 0.000 .. 61.125 ns</title>",
                           "<title>kernel 0 workgroup 1: 0.000 .. 62.125 ns</title>",
                           ">1 GPU, 2 workgroups, 2 requests · makespan 62.125 ns</text>",
                           ">a workgroup on a compute unit, from its dispatch to its "
                           "retirement</text>"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  EXPECT_EQ(r.out.find("send overhead"), std::string::npos);
}

TEST(GpuModel, ErrorMessages) {
  auto err = [](std::vector<std::string> args) {
    RunResult r = runInfracc(args);
    EXPECT_NE(r.status, 0);
    return r.err;
  };
  std::string plan = sourcePath("tests/msccl/inputs/allgather_put.json");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-noc-arbitration=rr"}),
            "infracc: error: -noc-arbitration=rr: must be fifo or fair\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-wg-per-cu=0"}),
            "infracc: error: -wg-per-cu=0: must be from 1 to 64\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-max-outstanding=0"}),
            "infracc: error: -max-outstanding=0: must be from 1 to 65536\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-gpu-clock=0"}),
            "infracc: error: -gpu-clock=0: must be a clock in GHz above 0 and at most 1000\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-passes=verify"}),
            "infracc: error: -sim-model=gpu runs the kernels' instruction streams: add "
            "unroll-loadstore to -passes\n");
  EXPECT_EQ(err({sourcePath("examples/ring-allreduce-16.goal"), "-sim-model=gpu"}),
            "infracc: error: -sim-model=gpu runs GPU kernels: give an MSCCL++ plan or a "
            ".kernels file, or lower collectives with -coll-target=kernels\n");
  EXPECT_EQ(err({"-fabric=clos:radix=4,levels=2", plan, "-sim-model=gpu"}),
            "infracc: error: -sim-model=gpu: the fabric '-fabric=clos:radix=4,levels=2' has no "
            "GPU modelled at network-on-chip level (a device with compute units (xpu), memory "
            "channels (memory) and I/O ports (port), e.g. host=gpu_noc); without a fabric the "
            "model uses the paper's generic GPUs\n");
  EXPECT_EQ(err({"-fabric=single_tier:hosts=2,host=gpu_noc", plan, "-sim-model=gpu"}),
            "infracc: error: -sim-model=gpu: the kernels run on 4 GPUs; the fabric has 2\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-gpu-max-requests=100"}),
            "infracc: error: -sim-model=gpu: the kernels issue more than 100 requests "
            "(-gpu-max-requests)\n");
  // Counting an LL plan's puts (before the run) stops at the same limit.
  EXPECT_EQ(err({sourcePath("tests/msccl/inputs/allgather_ll.json"), "-msg-size=3MiB",
                 "-sim-model=gpu", "-gpu-max-requests=100"}),
            "infracc: error: -sim-model=gpu: the kernels issue more than 100 requests "
            "(-gpu-max-requests)\n");
  // The model's options with another model, which would ignore them.
  EXPECT_EQ(err({sourcePath("examples/ring-allreduce-16.goal"), "-max-outstanding=8"}),
            "infracc: error: -max-outstanding applies to -sim-model=gpu, not to -sim-model=lgs\n");
  EXPECT_EQ(err({plan, "-sim-model=gpu", "-emit=sensitivity"}),
            "infracc: error: -sim-model=gpu: the sensitivity analysis follows LogGOPSim's engine "
            "(models lgs and topo)\n");
}

TEST(GpuModel, DeadlockIsReported) {
  // Two workgroups meet at a barrier, but the GPU has one CU holding one workgroup: the
  // second is never dispatched and the first waits forever.
  std::string dir = makeTempDir("gpu");
  writeFile(dir + "/barrier.kernels",
            "gpus 1\n\nkernel 0 gpu 0 instance 0 input 0 output 0 scratch 0\n"
            "  workgroup 0\n    barrier 0 workgroups 2\n"
            "  workgroup 1\n    barrier 0 workgroups 2\n");
  std::string oneCu =
      "-fabric=single_tier:hosts=1,host=gpu_noc(mesh=1x1,cus=1,hbm=1,io=1)";
  RunResult r = runInfracc({oneCu, dir + "/barrier.kernels", "-sim-model=gpu", "-wavefronts=1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: -sim-model=gpu: the kernels cannot finish; 2 things wait forever"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("note: gpu 0: 1 workgroups never found a free compute unit "
                       "(-wg-per-cu=1 per CU)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("note: gpu 0 kernel 0 workgroup 0 op 0 (barrier), wavefront 0: at a "
                       "Barrier"),
            std::string::npos)
      << r.err;
  // With room for both it finishes.
  RunResult ok = runInfracc({oneCu, dir + "/barrier.kernels", "-sim-model=gpu",
                             "-wavefronts=1", "-wg-per-cu=2"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

} // namespace
