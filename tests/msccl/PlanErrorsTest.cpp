// Errors of the MSCCL++ plan reader, each with its exact message at the JSON element it
// is about. The plans are a two-GPU template with the operations under test.
#include "formats/MscclPlan.h"
#include "tests/loadstore/LoadStoreTestUtil.h"

#include <gtest/gtest.h>

namespace infracc::test {
namespace {

using Lines = std::vector<std::string>;

/// Two GPUs with a memory and a port channel to each other, remote buffers (the peer's
/// output over memory channels, its scratch over port channels), one device semaphore;
/// gpu 0's threadblock runs `ops`.
std::string plan(const std::string &ops, const std::string &collective = "allreduce",
                 const std::string &extra = "") {
  auto gpu = [&](int id, const std::string &body) {
    int peer = 1 - id;
    return R"({"id": )" + std::to_string(id) + R"(, "input_chunks": 2, "output_chunks": 2, "scratch_chunks": 2,
     "channels": [{"channel_type": "memory", "connected_to": [)" + std::to_string(peer) + R"(]},
                  {"channel_type": "port", "connected_to": [)" + std::to_string(peer) + R"(]}],
     "remote_buffers": [{"rank": )" + std::to_string(peer) + R"(, "type": "o", "access_channel_types": ["memory"]},
                        {"rank": )" + std::to_string(peer) + R"(, "type": "s", "access_channel_types": ["port"]}],
     "semaphores": [{"init_value": 0}],
     "threadblocks": [{"id": 0,
       "channels": [{"channel_type": "memory", "channel_ids": [0]}, {"channel_type": "port", "channel_ids": [0]}],
       "remote_buffer_refs": [{"access_channel_type": "memory", "remote_buffer_ids": [0]},
                              {"access_channel_type": "port", "remote_buffer_ids": [1]}],
       "ops": [)" + body + R"(]}]})";
  };
  return R"({
  "name": "t",
  "collective": ")" + collective + R"(",
  "protocol": "Simple",
  "inplace": false,)" + extra + R"(
  "gpus": [
    )" + gpu(0, ops) + R"(,
    )" + gpu(1, "") + R"(
  ]
}
)";
}

Lines errors(const std::string &text, const std::string &msg = "-msg-size=4096") {
  RunResult r = runOnText("t.json", text, {"-emit=kernels", msg});
  EXPECT_EQ(r.status, 1) << r.err;
  return messages(r.err);
}

TEST(MscclPlanErrors, TheTemplateIsValid) {
  RunResult r = runOnText("t.json", plan(R"({"name": "nop"})"), {"-emit=kernels"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(MscclPlanErrors, UnknownOperationsListTheSupportedOnes) {
  std::string t = plan(R"({"name": "glre"})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"glre\"") + ": error: unknown operation 'glre' ('glre' is "
                             "the DSL's half of 'glres'; MSCCL++'s executor does not run it "
                             "alone); MSCCL++'s executor supports: " + msccl::supportedOpList()});
  t = plan(R"({"name": "sgnal", "channel_ids": [0], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"sgnal\"") + ": error: unknown operation 'sgnal'; did you "
                             "mean 'signal'?; MSCCL++'s executor supports: " +
                             msccl::supportedOpList()});
}

TEST(MscclPlanErrors, ChannelTypes) {
  std::string t = plan(R"({"name": "pws", "src_buff": [{"type": "i", "index": 0, "size": 1}],
       "dst_buff": [{"buffer_id": 0, "index": 0, "size": 1}], "channel_ids": [0], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"memory\"", "pws") + ": error: 'pws' runs over port "
                             "channels, not memory"});
  t = plan(R"({"name": "get", "src_buff": [{"buffer_id": 0, "index": 0, "size": 1}],
       "dst_buff": [{"type": "o", "index": 0, "size": 1}], "channel_type": "port"})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"port\"", "\"get\"") + ": error: 'get' runs over memory "
                             "channels, not port"});
  t = plan(R"({"name": "signal", "channel_ids": [0]})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"signal\"") + ": error: 'signal' runs over memory or port "
                             "channels; give channel_type"});
}

TEST(MscclPlanErrors, Pipelines) {
  std::string t = plan(R"({"name": "pipeline", "iter_context": {"unit_size": 64, "num_chunks": 1},
       "ops": [{"name": "cpkt", "src_buff": [{"type": "i", "index": 0, "size": 1}], "dst_buff": [{"type": "s", "index": 0, "size": 1}]}]})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"cpkt\"") + ": error: 'cpkt' inside a pipeline: MSCCL++'s "
                             "executor runs packet operations whole in every iteration, which "
                             "is not modelled"});
  t = plan(R"({"name": "pipeline", "iter_context": {"unit_size": 64, "num_chunks": 1},
       "ops": [{"name": "pipeline", "iter_context": {"unit_size": 64, "num_chunks": 1}, "ops": []}]})");
  EXPECT_EQ(errors(t), Lines{at(t, "\"pipeline\"", "{\"name\": \"pipeline\", \"iter_context\": {\"unit_size\": 64, \"num_chunks\": 1}, \"ops\": []") +
                             ": error: 'pipeline' inside a "
                             "pipeline: MSCCL++'s executor does not nest pipelines"});
  t = plan(R"({"name": "pipeline", "iter_context": {"unit_size": 0, "num_chunks": 1}, "ops": []})");
  EXPECT_EQ(errors(t), Lines{at(t, "0", "unit_size") + ": error: 'unit_size' must be at least 1 "
                             "byte"});
}

TEST(MscclPlanErrors, BufferReferences) {
  std::string t = plan(R"({"name": "put", "src_buff": [{"type": "i", "index": 0, "size": 1}],
       "dst_buff": [{"buffer_id": 5, "index": 0, "size": 1}], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "5,") + ": error: buffer_id 5 is not one of the threadblock's "
                             "remote buffers over memory channels (it has 1)"});
  t = plan(R"({"name": "copy", "src_buff": [{"type": "i", "buffer_id": 0, "index": 0, "size": 1}],
       "dst_buff": [{"type": "o", "index": 0, "size": 1}]})");
  EXPECT_EQ(errors(t), Lines{at(t, "{\"type\": \"i\", \"buffer_id\"") + ": error: a buffer "
                             "reference names exactly one of 'type' (local), 'buffer_id' "
                             "(remote) and 'switch_channel_id' (NVLS)"});
  t = plan(R"({"name": "put", "src_buff": [{"type": "i", "index": 0, "size": 1}],
       "dst_buff": [{"type": "o", "index": 0, "size": 1}], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "{\"type\": \"o\"") + ": error: the destination of 'put' is a "
                             "peer's buffer (give 'buffer_id')"});
  t = plan(R"({"name": "rppkt", "src_buff": [{"type": "i", "index": 0, "size": 1}],
       "dst_buff": [{"buffer_id": 0, "index": 0, "size": 1}], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "{\"type\": \"i\"") + ": error: the source of 'rppkt' holds LL "
                             "packets, which MSCCL++'s executor always places in the scratch "
                             "buffer; give type \"s\""});
  t = plan(R"({"name": "signal", "channel_ids": [3], "channel_type": "memory"})");
  EXPECT_EQ(errors(t), Lines{at(t, "3]") + ": error: channel id 3 is not one of the "
                             "threadblock's memory channels (it has 1)"});
  t = plan(R"({"name": "copy", "dst_buff": [{"type": "o", "index": 0, "size": 1}]})");
  EXPECT_EQ(errors(t), Lines{at(t, "{\"name\": \"copy\"") + ": error: the operation has no "
                             "'src_buff'"});
}

TEST(MscclPlanErrors, UnknownKeysAreWarnedAbout) {
  std::string t = plan(R"({"name": "copy", "src_buf": [{"type": "i", "index": 0, "size": 1}],
       "dst_buff": [{"type": "o", "index": 0, "size": 1}]})");
  EXPECT_EQ(errors(t), (Lines{at(t, "\"src_buf\"") + ": warning: unknown key 'src_buf' in an "
                              "operation (MSCCL++ ignores it); did you mean 'src_buff'?",
                              at(t, "{\"name\": \"copy\"") + ": error: the operation has no "
                              "'src_buff'"}));
}

// MSCCL++'s DSL (microsoft/mscclpp 1f5f065, e.g. its allgather_nvls_zero_copy.py) writes
// 'rank' into buffer references; its executor never reads it, and neither warns about it.
TEST(MscclPlanErrors, TheDslsRankInABufferReferenceIsAccepted) {
  std::string t = plan(R"({"name": "copy", "src_buff": [{"type": "i", "index": 0, "size": 1,
       "rank": 0}], "dst_buff": [{"type": "o", "index": 0, "size": 1, "rnak": 0}]})");
  RunResult r = runOnText("t.json", t, {"-emit=kernels"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(messages(r.err), Lines{at(t, "\"rnak\"") + ": warning: unknown key 'rnak' in a "
                                   "buffer reference (MSCCL++ ignores it); did you mean 'rank'?"});
}

TEST(MscclPlanErrors, Sizes) {
  std::string t = plan(R"({"name": "nop"})");
  std::string tooFine = ": error: the input buffer of 1000 bytes (from -msg-size=1000) does "
                        "not split into 2 chunks of whole 16-byte units (buffer_alignment); "
                        "MSCCL++'s executor refuses such a size";
  EXPECT_EQ(errors(t, "-msg-size=1000"), (Lines{at(t, "2", "input_chunks") + tooFine,
                                                at(t, "2", "\"id\": 1") + tooFine}));
  t = plan(R"({"name": "nop"})", "allgather");
  EXPECT_EQ(errors(t, "-msg-size=4095"),
            Lines{at(t, "\"allgather\"") + ": error: -msg-size=4095 does not split into 2 equal "
                  "blocks for allgather"});
  t = plan(R"({"name": "nop"})", "allreduce", R"( "max_message_size": 1024,)");
  EXPECT_EQ(errors(t), Lines{at(t, "1024") + ": error: the plan is for messages of 0 to 1024 "
                             "bytes, but -msg-size=4096"});
}

TEST(MscclPlanErrors, MessageSizeTakesBinarySuffixes) {
  std::string plan = sourcePath("tests/msccl/inputs/allgather_put.json");
  RunResult bytes = runInfracc({plan, "-msg-size=4194304", "-emit=goal"});
  RunResult mib = runInfracc({plan, "-msg-size=4MiB", "-emit=goal"});
  EXPECT_EQ(bytes.status, 0) << bytes.err;
  EXPECT_EQ(mib.out, bytes.out);
  RunResult bad = runInfracc({plan, "-msg-size=4x", "-emit=goal"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "infracc: error: -msg-size=4x: expected a byte count such as 1048576, "
                     "512KiB or 1MiB\n");
}

TEST(MscclPlanErrors, Structure) {
  std::string t = plan(R"({"name": "nop"})");
  std::string bad = t;
  bad.replace(bad.find("\"threadblocks\": [{\"id\": 0"), 25, "\"threadblocks\": [{\"id\": 3");
  EXPECT_EQ(errors(bad), Lines{at(bad, "3,\n") + ": error: threadblock 0 of gpu 0 has id 3; "
                               "MSCCL++'s executor needs the ids in order (0, 1, ...)"});
  bad = t;
  bad.replace(bad.find("\"gpus\""), 6, "\"gpuz\"");
  EXPECT_EQ(errors(bad), (Lines{at(bad, "\"gpuz\"") + ": warning: unknown key 'gpuz' in the plan "
                                "(MSCCL++ ignores it); did you mean 'gpus'?",
                                "1:1: error: the plan has no 'gpus'"}));
  bad = t;
  bad.replace(bad.find("\"inplace\": false,"), 17, "\"inplace\": false");
  // nlohmann::json reports the last character of the unexpected token.
  EXPECT_EQ(errors(bad), Lines{at(bad, "\": [", "\"gpus") + ": error: JSON syntax: syntax error while "
                               "parsing object - unexpected string literal; expected '}'"});
}

} // namespace
} // namespace infracc::test
