// -emit=chakra and the Chakra reader: the bytes ASTRA-sim expects (checked against the
// microbenchmark traces ASTRA-sim 518bd51 ships: GlobalMetadata `07 0a 05 "0.0.4"`,
// then nodes whose attributes have the feeder's types), a round trip back to the same
// schedule, irequires resolved, units (duration_micros), and every refusal.
#include "formats/ChakraEt.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace infracc;
using namespace infracc::test;

namespace {

// Three ranks in a ring: sends, receives and calcs in whole microseconds, with tags.
const std::string PointToPoint = readFile(sourcePath("tests/astra/inputs/p2p3.goal"));

const char *Collectives = R"(num_ranks 4
comm 5 ranks 0,2
rank 0 {
l1: allreduce 1048576b
l2: allgather 65536b
l3: reducescatter 4096b
l4: alltoall 1024b
l5: allreduce 512b comm 5
l2 requires l1
l3 requires l2
l4 requires l3
l5 requires l4
}
rank 1 {
l1: allreduce 1048576b
l2: allgather 65536b
l3: reducescatter 4096b
l4: alltoall 1024b
l2 requires l1
l3 requires l2
l4 requires l3
}
rank 2 {
l1: allreduce 1048576b
l2: allgather 65536b
l3: reducescatter 4096b
l4: alltoall 1024b
l5: allreduce 512b comm 5
l2 requires l1
l3 requires l2
l4 requires l3
l5 requires l4
}
rank 3 {
l1: allreduce 1048576b
l2: allgather 65536b
l3: reducescatter 4096b
l4: alltoall 1024b
l2 requires l1
l3 requires l2
l4 requires l3
}
)";

struct Files {
  std::string dir;
  std::string goal;
};

Files write(const std::string &hint, const std::string &text) {
  Files f;
  f.dir = makeTempDir(hint);
  f.goal = f.dir + "/in.goal";
  writeFile(f.goal, text);
  return f;
}

std::vector<chakra::Node> nodesOf(const std::string &path, chakra::GlobalMetadata *meta = nullptr) {
  std::string bytes = readFile(path);
  chakra::StreamReader in(bytes);
  chakra::GlobalMetadata m;
  EXPECT_TRUE(in.next(m)) << in.error();
  if (meta)
    *meta = m;
  std::vector<chakra::Node> nodes;
  chakra::Node n;
  while (in.next(n))
    nodes.push_back(n);
  EXPECT_EQ(in.error(), "");
  return nodes;
}

} // namespace

TEST(Chakra, BytesAreWhatAstraSimReads) {
  Files f = write("chakra-bytes", PointToPoint);
  RunResult r = runInfracc({f.goal, "-emit=chakra", "-o", f.dir + "/et"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string bytes = readFile(f.dir + "/et/workload.0.et");
  // The metadata message exactly as ASTRA-sim's bundled traces have it.
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x07\x0a\x05" "0.0.4", 8));
  auto nodes = nodesOf(f.dir + "/et/workload.0.et");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].type(), chakra::COMP_NODE);
  EXPECT_EQ(nodes[0].duration_micros(), 3u);   // 3000 ns
  EXPECT_EQ(nodes[1].type(), chakra::COMM_SEND_NODE);
  ASSERT_EQ(nodes[1].data_deps_size(), 1);
  EXPECT_EQ(nodes[1].data_deps(0), 0u);
  const chakra::AttributeProto *dst = chakra::findAttr(nodes[1], "comm_dst");
  ASSERT_NE(dst, nullptr);
  EXPECT_EQ(dst->value_case(), chakra::AttributeProto::kInt32Val);
  EXPECT_EQ(dst->int32_val(), 1);
  EXPECT_EQ(chakra::findAttr(nodes[1], "comm_size")->value_case(),
            chakra::AttributeProto::kInt64Val);
  EXPECT_EQ(*chakra::intAttr(nodes[1], "comm_size"), 4096);
  EXPECT_EQ(*chakra::intAttr(nodes[1], "comm_tag"), 7);
  EXPECT_EQ(*chakra::intAttr(nodes[1], "comm_src"), 0);
  EXPECT_EQ(chakra::findAttr(nodes[1], "is_cpu_op")->value_case(),
            chakra::AttributeProto::kBoolVal);
  EXPECT_EQ(nodes[2].type(), chakra::COMM_RECV_NODE);
  EXPECT_EQ(*chakra::intAttr(nodes[2], "comm_src"), 2);
  EXPECT_EQ(*chakra::intAttr(nodes[2], "comm_dst"), 0);
}

TEST(Chakra, PointToPointRoundTrip) {
  Files f = write("chakra-p2p", PointToPoint);
  ASSERT_EQ(runInfracc({f.goal, "-emit=chakra", "-o", f.dir + "/et"}).status, 0);
  RunResult direct = runInfracc({f.goal, "-emit=goal"});
  // Any one file of the set, or the folder, reads all ranks.
  for (std::string input : {f.dir + "/et/workload.1.et", f.dir + "/et"}) {
    RunResult back = runInfracc({input, "-emit=goal"});
    ASSERT_EQ(back.status, 0) << back.err;
    EXPECT_EQ(back.out, direct.out);
  }
  RunResult simDirect = runInfracc({f.goal, "-emit=sim", "-sim-batch"});
  RunResult simBack = runInfracc({f.dir + "/et/workload.0.et", "-emit=sim", "-sim-batch"});
  EXPECT_EQ(maximumFinishingTime(simBack.out), maximumFinishingTime(simDirect.out));
  EXPECT_GT(maximumFinishingTime(simDirect.out), 0);
}

// Collectives stay collectives (COMM_COLL_NODE) with ASTRA-sim's sizes and come back
// as the same collectives; the sub-communicator goes through the comm-group JSON.
TEST(Chakra, CollectivesRoundTrip) {
  Files f = write("chakra-coll", Collectives);
  RunResult w = runInfracc({f.goal, "-emit=chakra", "-o", f.dir + "/et"});
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(readFile(f.dir + "/et/workload.comm_groups.json"), "{\n  \"5\": [\n    0,\n    2\n  ]\n}\n");
  auto nodes = nodesOf(f.dir + "/et/workload.0.et");
  ASSERT_EQ(nodes.size(), 5u);
  const int64_t types[] = {chakra::ALL_REDUCE, chakra::ALL_GATHER, chakra::REDUCE_SCATTER,
                           chakra::ALL_TO_ALL, chakra::ALL_REDUCE};
  const int64_t sizes[] = {1048576, 65536, 4 * 4096, 4 * 1024, 512};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(nodes[i].type(), chakra::COMM_COLL_NODE);
    EXPECT_EQ(*chakra::intAttr(nodes[i], "comm_type"), types[i]) << i;
    EXPECT_EQ(*chakra::intAttr(nodes[i], "comm_size"), sizes[i]) << i;
    EXPECT_EQ(chakra::findAttr(nodes[i], "pg_name") != nullptr, i == 4) << i;
  }
  EXPECT_EQ(chakra::findAttr(nodes[4], "pg_name")->string_val(), "5");

  RunResult noGroups = runInfracc({f.dir + "/et", "-emit=goal"});
  EXPECT_EQ(noGroups.status, 1);
  EXPECT_NE(noGroups.err.find("workload.0.et:offset "), std::string::npos) << noGroups.err;
  EXPECT_NE(noGroups.err.find("error: pg_name '5': give the communicator groups with "
                              "-chakra-comm-groups=FILE (ASTRA-sim's "
                              "--comm-group-configuration JSON)"),
            std::string::npos)
      << noGroups.err;
  RunResult back = runInfracc({f.dir + "/et", "-chakra-comm-groups=" + f.dir +
                                                  "/et/workload.comm_groups.json", "-emit=sim"});
  RunResult direct = runInfracc({f.goal, "-emit=sim"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, direct.out);
}

// `irequires` (start after the predecessor starts) has no Chakra form: the op waits for
// what its predecessor waits for. Calcs that are not whole microseconds are rounded,
// and said.
TEST(Chakra, IrequiresAndRounding) {
  Files f = write("chakra-ireq", R"(num_ranks 2
rank 0 {
l1: calc 1500
l2: send 8b to 1 tag 0
l3: calc 2400
l2 requires l1
l3 irequires l2
}
rank 1 {
l1: recv 8b from 0 tag 0
}
)");
  RunResult r = runInfracc({f.goal, "-emit=chakra", "-o", f.dir + "/et"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, f.goal + ": warning: 2 calc(s) are not whole microseconds, which is all "
                            "Chakra's duration_micros holds: rounded to the nearest (largest "
                            "change +500 ns)\n");
  auto nodes = nodesOf(f.dir + "/et/workload.0.et");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].duration_micros(), 2u);   // 1500 ns -> 2 us
  EXPECT_EQ(nodes[2].duration_micros(), 2u);   // 2400 ns -> 2 us
  ASSERT_EQ(nodes[2].data_deps_size(), 1);
  EXPECT_EQ(nodes[2].data_deps(0), 0u);        // l3 waits for what l2 waits for: l1
}

TEST(Chakra, WhatChakraCannotSay) {
  Files any = write("chakra-any", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                                  "rank 1 {\nl1: recv 8b from -1 tag 0\n}\n");
  RunResult r = runInfracc({any.goal, "-emit=chakra", "-o", any.dir + "/et"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, any.goal + ": error: rank 1 op 0: a receive from any source or with any "
                              "tag: Chakra's RECV names its source and tag\n");
  EXPECT_FALSE(std::filesystem::exists(any.dir + "/et"));
  Files bcast = write("chakra-bcast", "num_ranks 2\nrank 0 {\nl1: bcast 8b\n}\n"
                                      "rank 1 {\nl1: bcast 8b\n}\n");
  r = runInfracc({bcast.goal, "-emit=chakra", "-o", bcast.dir + "/et"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, bcast.goal + ": error: rank 0 op 0: ASTRA-sim has no bcast collective; lower "
                                "it to sends and receives with -passes=lower-collectives\n");
  // Lowered, its messages carry tags from 2^31 up (ir/Collectives.h): beyond int32, they
  // are written as uint32_val, which ASTRA-sim's feeder reads as the uint32 it wants.
  r = runInfracc({bcast.goal, "-passes=lower-collectives", "-emit=chakra", "-o",
                  bcast.dir + "/et"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto nodes = nodesOf(bcast.dir + "/et/workload.0.et");
  ASSERT_EQ(nodes.size(), 1u);
  const chakra::AttributeProto *tag = chakra::findAttr(nodes[0], "comm_tag");
  ASSERT_NE(tag, nullptr);
  EXPECT_EQ(tag->value_case(), chakra::AttributeProto::kUint32Val);
  RunResult back = runInfracc({bcast.dir + "/et", "-emit=goal"});
  RunResult direct = runInfracc({bcast.goal, "-passes=lower-collectives", "-emit=goal"});
  EXPECT_EQ(back.out, direct.out);
}

TEST(Chakra, DamagedTracesAreLocated) {
  Files f = write("chakra-bad", PointToPoint);
  ASSERT_EQ(runInfracc({f.goal, "-emit=chakra", "-o", f.dir + "/et"}).status, 0);
  const std::string rank1 = f.dir + "/et/workload.1.et";
  std::string bytes = readFile(rank1);
  // Cut inside the last node.
  writeFile(rank1, bytes.substr(0, bytes.size() - 3));
  RunResult r = runInfracc({f.dir + "/et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("workload.1.et:offset "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": error: damaged trace: a message of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bytes, but only "), std::string::npos) << r.err;
  // A missing rank in the middle.
  std::filesystem::remove(rank1);
  r = runInfracc({f.dir + "/et/workload.0.et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, f.dir + "/et/workload.0.et: error: the traces of 'workload' stop at "
                           "workload.0.et: no workload.1.et (one file per rank, numbered from "
                           "0)\n");
  // Not a trace at all.
  writeFile(f.dir + "/junk.et", std::string("\xff\xff\xff\xff\xff\xff", 6));
  r = runInfracc({f.dir + "/junk.et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, f.dir + "/junk.et:offset 0: error: not a Chakra trace: its first message "
                           "is a damaged message length\n");
}

// Nodes that refer to what is not there, written with the library as another
// generator would.
TEST(Chakra, BadNodesAreNamed) {
  std::string dir = makeTempDir("chakra-nodes");
  auto writeTrace = [&](const std::string &name, const std::vector<chakra::Node> &nodes) {
    std::string s;
    llvm::raw_string_ostream os(s);
    chakra::GlobalMetadata meta;
    meta.set_version("0.0.4");
    chakra::writeDelimited(os, meta);
    for (const auto &n : nodes)
      chakra::writeDelimited(os, n);
    os.flush();
    writeFile(dir + "/" + name, s);
  };
  chakra::Node send;
  send.set_id(10);
  send.set_type(chakra::COMM_SEND_NODE);
  chakra::addInt32(send, "comm_dst", 5);
  chakra::addInt64(send, "comm_size", 8);
  chakra::addInt32(send, "comm_tag", 0);
  writeTrace("a.0.et", {send});
  writeTrace("a.1.et", {});
  RunResult r = runInfracc({dir + "/a.0.et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/a.0.et:offset 8: error: node 10: comm_dst 5 is not another rank of "
                         "the 2-rank workload\n");
  chakra::Node calc;
  calc.set_id(3);
  calc.set_type(chakra::COMP_NODE);
  calc.set_duration_micros(4);
  calc.add_ctrl_deps(99);
  writeTrace("a.0.et", {calc});
  r = runInfracc({dir + "/a.0.et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/a.0.et:offset 8: error: a node depends on node 99, which this trace "
                         "does not have\n");
  chakra::Node recv;
  recv.set_id(1);
  recv.set_type(chakra::COMM_RECV_NODE);
  chakra::addInt64(recv, "comm_size", 8);
  writeTrace("a.1.et", {recv});
  calc.clear_ctrl_deps();
  writeTrace("a.0.et", {calc});
  r = runInfracc({dir + "/a.0.et", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/a.1.et:offset 8: error: node 1 (COMM_RECV_NODE): no integer "
                         "attribute 'comm_src'\n");
}
