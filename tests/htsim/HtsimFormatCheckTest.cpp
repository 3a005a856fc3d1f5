// The format checker itself: files htsim accepts pass, and each rule catches what it is
// for. The accepted files were run through csg-htsim 841d9e7 (htsim_eqds -topo ... -tm
// ...): every flow finished.
#include "tests/htsim/HtsimFormatCheck.h"

#include <gtest/gtest.h>

using namespace infracc::test::htsimcheck;

namespace {

// htsim_eqds ran it on GoodTopo (-linkspeed 100000 -end 400000): flows 1 and 2 finished
// at 16.2 and 516.2 us, the barrier fired, 3 and 4 finished at 532.4 us, then flow 5
// (2^31-1 bytes) at 177756 us.
const std::string GoodCm = "# a comment in the header\n"
                           "Nodes 8\n"
                           "Connections 5\n"
                           "Triggers 2\n"
                           "0->4 id 1 start 0 size 100000 send_done_trigger 1\n"
                           "6->2 id 2 start 500000000 size 100000 send_done_trigger 1\n"
                           "1->5 id 3 trigger 1 size 100000 send_done_trigger 2\n"
                           "7->3 id 4 trigger 1 size 100000\n"
                           "3->1 id 5 trigger 2 size 2147483647\n"
                           "trigger id 1 barrier count 2\n"
                           "trigger id 2 oneshot\n";

const std::string GoodTopo = "# 8 hosts, 2 pods\n"
                             "Nodes 8\nTiers 3\nPodsize 4\n\n"
                             "Tier 0\nDownlink_speed_Gbps 100\nRadix_Down 2\nRadix_Up 2\n"
                             "Downlink_Latency_ns 500\nSwitch_Latency_ns 0\nOversubscribed 1\n\n"
                             "Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 2\nRadix_Up 2\n"
                             "Downlink_Latency_ns 500\nSwitch_Latency_ns 100\nBundle 1\n\n"
                             "Tier 2\nDownlink_speed_Gbps 100\nRadix_Down 2\n"
                             "Downlink_Latency_ns 500\nBundle 1\n";

std::string cm(const std::string &text, bool recvDone = false) {
  CmOptions o;
  o.allowRecvDone = recvDone;
  return joined(checkConnectionMatrix(text, o));
}

std::string replaced(std::string s, const std::string &from, const std::string &to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

} // namespace

TEST(HtsimFormatCheck, AcceptsWhatHtsimRuns) {
  EXPECT_EQ(cm(GoodCm), "");
  TopoShape s;
  EXPECT_EQ(joined(checkTopo(GoodTopo, &s)), "");
  // htsim printed: No of pods: 2, ToR switches per pod: 2, Agg switches per pod: 2,
  // No of core switches: 4.
  EXPECT_EQ(s.pods, 2u);
  EXPECT_EQ(s.torsPerPod, 2u);
  EXPECT_EQ(s.aggsPerPod, 2u);
  EXPECT_EQ(s.cores, 4u);
}

TEST(HtsimFormatCheck, Characters) {
  EXPECT_EQ(cm(replaced(GoodCm, "Nodes 8\n", "Nodes 8\r\n")),
            "line 2: carriage return (htsim splits lines on LF only)\n"
            "line 2: Nodes needs one non-negative integer\n"
            "header: no Nodes\n");
  EXPECT_EQ(cm(replaced(GoodCm, "id 1 start", "id 1  start")),
            "line 5: two spaces in a row (htsim reads an empty token)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "id 2 start", "id 2\tstart")),
            "line 6: tab (htsim separates tokens by single spaces only)\n"
            "line 6: id '2\tstart' is not an integer from 1 to 2^31-1\n"
            "line 6: unknown token '500000000'\n"
            "line 6: flow without an id\n"
            "line 6: neither start nor trigger\n"
            "line 6: this flow never starts (its trigger never fires)\n");
  EXPECT_EQ(cm(GoodCm.substr(0, GoodCm.size() - 1)),
            "file: the last line does not end with a newline\n");
}

TEST(HtsimFormatCheck, Header) {
  EXPECT_EQ(cm(replaced(GoodCm, "Connections 5\n", "Connections 4\n")),
            "header: Connections 4 but 5 connection lines\n");
  EXPECT_EQ(cm(replaced(GoodCm, "Triggers 2\n", "")),
            "header: Triggers 0 but 2 trigger lines\n");
  EXPECT_EQ(cm(replaced(GoodCm, "Triggers 2\n", "Triggers 2\nFailures 0\n")),
            "line 5: Failures: failure lines crash csg-htsim (Route::push_back assertion)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "Nodes 8\n", "")), "header: no Nodes\n");
  EXPECT_EQ(cm(replaced(GoodCm, "trigger id 2 oneshot\n", "trigger id 2 oneshot\n# done\n")),
            "line 12: comment after the header (htsim: unknown id)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "trigger id 2 oneshot\n", "trigger id 2 oneshot\n\n")),
            "line 12: blank line after the header\n");
  EXPECT_EQ(cm(replaced(GoodCm, "trigger id 2 oneshot\n", "trigger id 2 oneshot\nNodes 8\n")),
            "line 12: 'Nodes' in the body (htsim: unknown id)\n");
}

TEST(HtsimFormatCheck, Flows) {
  EXPECT_EQ(cm(replaced(GoodCm, "1->5 id 3 trigger 1", "1->5 trigger 1 id 3")),
            "line 7: trigger before id (htsim asserts)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "id 2 start", "id 1 start")),
            "line 6: flow id 1 used twice (htsim asserts)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "id 1 start", "id 0 start")),
            "line 5: id '0' is not an integer from 1 to 2^31-1\nline 5: flow without an id\n");
  EXPECT_EQ(cm(replaced(GoodCm, "start 500000000", "start 5e8")),
            "line 6: start '5e8' is not a whole number of ps\n"
            "line 6: neither start nor trigger\n"
            "line 6: this flow never starts (its trigger never fires)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "size 2147483647", "size 2147483648")),
            "line 9: size '2147483648' is not an integer from 1 to 2^31-1\n"
            "line 9: flow without a size (htsim leaves it uninitialised)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "7->3 id 4 trigger 1", "7->3 id 4 start 0 trigger 1")),
            "line 8: both start and trigger\n");
  EXPECT_EQ(cm(replaced(GoodCm, "7->3", "7->7")), "line 8: a flow from a node to itself\n");
  EXPECT_EQ(cm(replaced(GoodCm, "7->3", "7->8")), "line 8: node beyond Nodes\n");
  EXPECT_EQ(cm(replaced(GoodCm, "7->3 id 4 trigger 1 size 100000\n",
                        "7->3 id 4 trigger 1 size 100000 prio 1 addon\n")),
            "line 8: unknown token 'addon'\n");
}

TEST(HtsimFormatCheck, Triggers) {
  EXPECT_EQ(cm(replaced(GoodCm, "barrier count 2", "barrier count 3")),
            "line 10: barrier 1 needs 3 activations but gets 2\n"
            "line 7: this flow never starts (its trigger never fires)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "barrier count 2", "oneshot")),
            "line 10: oneshot trigger 1 has 2 activations (a second one asserts, none never "
            "fires)\n");
  EXPECT_EQ(cm(replaced(GoodCm, "trigger id 2 oneshot\n", "trigger id 1 oneshot\n")),
            "line 11: trigger 1 declared twice (htsim asserts)\n"
            "line 7: trigger 2 is not declared\n"
            "line 9: trigger 2 is not declared\n"
            "line 11: oneshot trigger 1 has 2 activations (a second one asserts, none never "
            "fires)\n"
            "line 9: this flow never starts (its trigger never fires)\n");
  EXPECT_EQ(cm(replaced(GoodCm, " send_done_trigger 2", " recv_done_trigger 2")),
            "line 7: recv_done_trigger: csg-htsim's receivers never fire it\n");
  EXPECT_EQ(cm(replaced(GoodCm, " send_done_trigger 2", " recv_done_trigger 2"), true), "");
  // A cycle: flow 1 waits for flow 2, which waits for flow 1.
  EXPECT_EQ(cm("Nodes 4\nConnections 2\nTriggers 2\n"
               "0->1 id 1 trigger 1 size 10 send_done_trigger 2\n"
               "1->0 id 2 trigger 2 size 10 send_done_trigger 1\n"
               "trigger id 1 oneshot\ntrigger id 2 oneshot\n"),
            "line 4: this flow never starts (its trigger never fires)\n");
}

TEST(HtsimFormatCheck, Topology) {
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Switch_Latency_ns 100\n", "Queue_Down 100000\n"))),
            "line 19: Queue_Down: the stock mains preset every queue, so htsim rejects it as a "
            "duplicate\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Bundle 1\n\nTier 2", "Speed 1\n\nTier 2"))),
            "line 20: unknown key 'Speed' (csg-htsim ignores it, uet-htsim rejects it)\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Downlink_Latency_ns 500\nBundle 1\n",
                                      "Downlink_Latency_ns 0\nBundle 1\n"))),
            "tier 2: Downlink_Latency_ns missing or 0\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Radix_Down 2\nDownlink_Latency_ns 500\nBundle",
                                      "Radix_Down 2\nRadix_Up 2\nDownlink_Latency_ns 500\nBundle"))),
            "tier 2: Radix_Up on the top tier\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Oversubscribed 1\n", "Bundle 2\n"))),
            "tier 0: Bundle must be 1 (htsim asserts)\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Podsize 4\n", "Podsize 3\n"))),
            "shape: Nodes not a multiple of Podsize\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Radix_Up 2\nDownlink_Latency_ns 500\nSwitch_"
                                                "Latency_ns 0",
                                      "Radix_Up 1\nDownlink_Latency_ns 500\nSwitch_Latency_ns 0"))),
            "shape: tier 0 Radix_Down/Radix_Up differs from Oversubscribed\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Tier 2\nDownlink_speed_Gbps 100",
                                      "Tier 2\nDownlink_speed_Gbps 300"))),
            "shape: ToR uplinks*s1 not a multiple of s2*Oversubscribed1 (htsim asserts)\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Tiers 3", "Tiers 2"))),
            "file: 3 tier blocks for Tiers 2\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Tier 1\n", "Tier 2\n"))),
            "line 14: Tier 2 where Tier 1 comes next\n");
  EXPECT_EQ(joined(checkTopo(replaced(GoodTopo, "Nodes 8", "Nodes 8.0"))),
            "line 2: Nodes '8.0' is not an integer htsim reads\n"
            "header: nodes missing or 0\n");
  // 97 hosts on one ToR and 1 uplink: a 2-tier tree htsim's ToR cannot hold.
  EXPECT_EQ(joined(checkTopo("Nodes 194\nTiers 2\nPodsize 194\n\nTier 0\nDownlink_speed_Gbps "
                             "100\nRadix_Down 97\nRadix_Up 1\nDownlink_Latency_ns 1\n"
                             "Oversubscribed 97\n\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 2\n"
                             "Downlink_Latency_ns 1\n")),
            "shape: a ToR would have more than 96 ports\n");
}
