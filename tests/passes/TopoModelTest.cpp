// -sim-model=topo: L and G per message from the fabric path, numbers derived by hand
// from the LogGOPSim rules (o = 1500, g = 1000; a message sent at t arrives at
// t + o + L and costs the receiver o + (s-1)*G).
#include "support/Units.h"
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

#define LGS_HEADER                                                                            \
  "LogGP network backend; size: 4 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, O=0, P=4, "    \
  "S=65535\nTimes: \n"
#define TOPO_LINE(fabric)                                                                     \
  "Model: topo, per-message L and G from the fabric '" fabric "'; the L and G below apply "     \
  "only where it has none\n"

TEST(TopoModel, PerGpuSchedule) {
  // ping4 on small_cluster.yaml, placed linearly (the default pipeline of topo places):
  //  * rank 0 (host 0 GPU 0) -> rank 2 (host 1 GPU 0), 1001 B: L = 3100 ns (see the
  //    fabric's comment), G = 8 bit / 100 Gb/s = 0.08 ns/B: arrives at 1500 + 3100 =
  //    4600, done at 4600 + 1500 + 1000*0.08 = 6180.
  //  * rank 1 -> rank 0 inside host 0: L = 250, G = 8 / 800 Gb/s = 0.01 ns/B: arrives
  //    at 1750 (rank 0's cpu is free from 1500), done at 1750 + 1500 + 10 = 3260.
  PassDir d({"small_cluster.yaml", "ping4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "ping4.goal", "-sim-model=topo"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(stableSim(r.out), TOPO_LINE("small_cluster.yaml") LGS_HEADER
            "Host 0: 3260\nHost 1: 1500\nHost 2: 6180\nHost 3: 0\n");
  // With a fabric, topo is the default model.
  EXPECT_EQ(d.run({"small_cluster.yaml", "ping4.goal"}).out, r.out);
  // The uniform model: L = 2500, G = 6: 1500 + 2500 + 1500 + 6000 = 11500 for both.
  r = d.run({"small_cluster.yaml", "ping4.goal", "-sim-model=lgs"});
  EXPECT_EQ(stableSim(r.out), "Model: lgs; the fabric 'small_cluster.yaml' is not used "
                              "(-sim-model=topo prices messages by it)\n" LGS_HEADER
                              "Host 0: 11500\nHost 1: 1500\nHost 2: 11500\nHost 3: 0\n");
  // Without a fabric the output is LogGOPSim's, with no model line.
  r = d.run({"ping4.goal"});
  EXPECT_EQ(stableSim(r.out), LGS_HEADER "Host 0: 11500\nHost 1: 1500\nHost 2: 11500\nHost 3: 0\n");
}

TEST(TopoModel, PerNodeScheduleUsesTheGpusOfEachMessage) {
  // After remap-gpus node 0 holds GPUs 0 and 1 (cpu 0 and 1), node 1 GPUs 0 and 1.
  // GPU 0 -> node 1 GPU 0 is the 3100 ns path: done at 6180 on node 1. GPU 1 -> GPU 0
  // of its own node is the 250 ns NVLink path: charged (LogGOPSim) on the sender's cpu
  // 1 at 1750: done at 3260.
  PassDir d({"small_cluster.yaml", "ping4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "ping4.goal", "-passes=place,remap-gpus",
                       "-sim-model=topo"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(stableSim(r.out), TOPO_LINE("small_cluster.yaml")
            "LogGP network backend; size: 2 (2 CPUs, 2 NICs); L=2500, o=1500 "
                              "g=1000, G=6, O=0, P=2, S=65535\nTimes: \nHost 0: 3260\n"
                              "Host 1: 6180\n");
}

TEST(TopoModel, SwitchLatencyFromOptionOrAnnotation) {
  // line.yaml: 220 ns of links plus one switch; 1001 B at 100 Gb/s cost 80 ns at the
  // receiver: host 1 ends at 1500 + L + 1500 + 80.
  PassDir d({"line.yaml", "ping2.goal"});
  auto host1 = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"line.yaml", "ping2.goal", "-sim-model=topo"};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = d.run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    size_t at = r.out.find("Host 1: ");
    return at == std::string::npos ? r.err : r.out.substr(at + 8, r.out.find('\n', at) - at - 8);
  };
  EXPECT_EQ(host1({}), "3300");                              // L = 220
  EXPECT_EQ(host1({"-switch-latency=80"}), "3380");          // L = 300
  std::string text = readFile(d.path() + "/line.yaml");
  d.write("annotated.yaml", "infrastructure:\n" + [&] {
    std::string indented;
    for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n'))
      if (!line.empty() && !line.starts_with("#"))
        indented += "  " + line.str() + "\n";
    return indented;
  }() + "annotations:\n  graph: [{attribute: switch_latency, value: 1us}]\n");
  RunResult r = d.run({"annotated.yaml", "ping2.goal", "-sim-model=topo", "-switch-latency=80"});
  EXPECT_NE(r.out.find("Host 1: 4300\n"), std::string::npos) << r.out << r.err;   // L = 1220
  // Without a bandwidth anywhere on the path G stays the global one; without any
  // latency, L does.
  d.write("bare.yaml", "name: bare\ndevices:\n- name: h\n  components:\n  - {name: xpu, count: 1, "
                       "choice: xpu}\n  - {name: nic, count: 1, choice: nic}\n  links:\n"
                       "  - {name: l}\n  edges:\n  - {ep1: {component: xpu}, ep2: {component: "
                       "nic}, scheme: one2one, link: l}\nlinks:\n- {name: w}\ninstances:\n"
                       "- {name: h, device: h, count: 2}\nedges:\n- {ep1: {instance: \"h[0]\", "
                       "component: nic}, ep2: {instance: \"h[1]\", component: nic}, scheme: "
                       "one2one, link: w}\n");
  r = d.run({"bare.yaml", "ping2.goal", "-sim-model=topo"});
  EXPECT_NE(r.out.find("Host 1: 11500\n"), std::string::npos) << r.out << r.err;
}

TEST(TopoModelErrors, All) {
  PassDir d({"line.yaml", "ping2.goal", "ping4.goal"});
  RunResult r = d.run({"ping2.goal", "-sim-model=topo"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -sim-model=topo needs a fabric (an InfraGraph .yaml/.json "
                   "file or -fabric=<blueprint>) besides the workload\n");
  r = d.run({"line.yaml", "ping2.goal", "-sim-model=topo", "-passes=verify"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -sim-model=topo needs the ranks placed on the fabric: add "
                   "place to -passes (it runs by default when -passes is not given)\n");
  r = d.run({"line.yaml", "ping2.goal", "-sim-model=topo", "-switch-latency=-1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, std::string("infracc: error: -switch-latency=-1: not a latency of 0 or more; ") +
                       infracc::DurationSpellings + "\n");
  std::string text = readFile(d.path() + "/line.yaml");
  d.write("badann.yaml", "infrastructure:\n" + [&] {
    std::string indented;
    for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n'))
      if (!line.empty() && !line.starts_with("#"))
        indented += "  " + line.str() + "\n";
    return indented;
  }() + "annotations:\n  nodes: [{name: sw, attributes: [{attribute: switch_latency, value: "
        "fast}]}]\n");
  r = d.run({"badann.yaml", "ping2.goal", "-sim-model=topo"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, std::string("badann.yaml:31:47: error: switch 'sw.0' has switch_latency 'fast', "
                               "which is not a latency of 0 or more; ") +
                       infracc::DurationSpellings +
                       "\n  nodes: [{name: sw, attributes: [{attribute: switch_latency, value: "
                       "fast}]}]\n                                              ^\n");
  // Two hosts and no edge between them.
  d.write("apart.yaml", "name: apart\ndevices:\n- name: h\n  components:\n  - {name: xpu, count: "
                        "1, choice: xpu}\ninstances:\n- {name: h, device: h, count: 2}\n");
  r = d.run({"apart.yaml", "ping2.goal", "-sim-model=topo", "-w"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "infracc: error: -sim-model=topo: no path in the fabric 'apart.yaml' from "
                   "'h.0.xpu.0' to 'h.1.xpu.0', which exchange messages\n");
}

// One 60001-byte message between the first two GPUs of one host (eager, S = 65535): the
// receiver ends at o + L + o + trunc(60000 G).
const char *const Ping60k = "num_ranks 2\nrank 0 {\nl1: send 60001b to 1 tag 0\n}\n"
                            "rank 1 {\nl1: recv 60001b from 0 tag 0\n}\n";

std::string hostOne(const RunResult &r) {
  size_t at = r.out.find("Host 1: ");
  return at == std::string::npos ? "(none) " + r.err
                                 : r.out.substr(at + 8, r.out.find('\n', at) - at - 8);
}

TEST(TopoModel, BlueprintHostsPriceGpuTrafficByTheirLinks) {
  PassDir d;
  d.write("p.goal", Ping60k);
  // dgx_h100: xpu - NVSwitch - xpu, 4.5 NVLink 4 links per edge = 900 Gb/s: G = 8/900
  // ns/B, 60000 G = 533.3; no link latency, the NVSwitch counts (0 ns): L = 0.
  RunResult r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100", "p.goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(hostOne(r), "3533");
  // Without the figures (as the reference's blueprint) the default G = 6 prices it, and
  // the run says so, naming the link.
  r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100(specs=none)", "p.goal"});
  EXPECT_EQ(hostOne(r), "363000");   // 3000 + 60000 * 6
  EXPECT_EQ(r.err, "-fabric=single_tier:hosts=1,host=dgx_h100(specs=none): warning: link "
                   "'xpu_fabric' of device 'dgx_h100' has no bandwidth, nor has any other link "
                   "on the path from 'dgx_h100.0.xpu.0' to 'dgx_h100.0.xpu.1': -sim-model=topo "
                   "used G=6 ns/byte (the -G default) there\n");
  // Given -G is that default, and said to be.
  r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100(specs=none)", "p.goal", "-G=2"});
  EXPECT_EQ(hostOne(r), "123000");   // 3000 + 60000 * 2
  EXPECT_NE(r.err.find("-sim-model=topo used G=2 ns/byte (-G) there\n"), std::string::npos)
      << r.err;
  // MI300X: one Infinity Fabric link, 512 Gb/s, no published latency: L is the default.
  r = d.run({"-fabric=single_tier:hosts=1,host=mi300x", "p.goal"});
  EXPECT_EQ(hostOne(r), "6437");   // 1500 + 2500 + 1500 + trunc(60000 * 8 / 512)
  EXPECT_EQ(r.err, "-fabric=single_tier:hosts=1,host=mi300x: warning: no link or switch on the "
                   "path from 'mi300x.0.xpu.0' to 'mi300x.0.xpu.1' has a latency: "
                   "-sim-model=topo used L=2500 ns (the -L default) there\n");
  r = d.run({"-fabric=single_tier:hosts=1,host=mi300x", "p.goal", "-L=1000"});
  EXPECT_EQ(hostOne(r), "4937");
}

TEST(TopoModel, LinksWithoutBandwidthThatDoNotLimitAPathAreNamed) {
  PassDir d;
  d.write("p.goal", Ping60k);
  // Two servers on one switch, their PCIe bare: GPU 0 of host 0 to GPU 0 of host 1 runs
  // xpu - pciesw - nic (bare), then the 100 Gb/s host link: G = 0.08 ns/B = 4800 ns.
  RunResult r = d.run({"-fabric=single_tier:hosts=2,host=server(specs=none)", "p.goal",
                       "-place=round-robin"});
  EXPECT_EQ(hostOne(r), "7800");   // 1500 + 0 + 1500 + 4800: no latency, but switches count
  EXPECT_EQ(r.err, "-fabric=single_tier:hosts=2,host=server(specs=none): warning: link 'pcie' of "
                   "device 'server' has no bandwidth: -sim-model=topo prices the paths through "
                   "it, e.g. 'server.0.xpu.0' to 'server.1.xpu.0', by their other links' "
                   "bandwidth\n");
}

TEST(TopoModel, LatencyAndGapOptionsAreUsedOrRefused) {
  PassDir d;
  d.write("p.goal", Ping60k);
  RunResult r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100", "p.goal", "-L=3000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -L=3000 is not used by -sim-model=topo: L applies only to "
                   "paths without any latency in the fabric, and no message's path lacks one; "
                   "drop -L, or use -sim-model=lgs for LogGOPSim's single L\n");
  r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100", "p.goal", "-G", "0.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -G=0.5 is not used by -sim-model=topo: G applies only to "
                   "paths without any bandwidth in the fabric, and no message's path lacks one; "
                   "drop -G, or use -sim-model=lgs for LogGOPSim's single G\n");
  // With the lgs model they are the model's L and G.
  r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100", "p.goal", "-L=3000", "-G", "0.5",
             "-sim-model=lgs"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(hostOne(r), "36000");   // 1500 + 3000 + 1500 + 60000 * 0.5
}
