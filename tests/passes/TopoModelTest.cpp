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
