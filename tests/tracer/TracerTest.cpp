// -emit=otf2 and -emit=codes: the OTF2 trace as otf2-print (otf2-tools) reads it, the
// MPI program a schedule becomes, the CODES .conf of each network, tracer_config and the
// rank maps. Every network.conf and map layout here ran in TraceR 5152e57 on CODES
// a5958cf / ROSS dc3a6a0 with the workloads of docs/scale-out.md (the torus of
// TorusOfSwitches with the 64-rank halo: "Job 0 Time 0.000052 s", 768 one-hop packets).
#include "compiler/Driver.h"
#include "tests/htsim/HtsimTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <llvm/Support/Program.h>

#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <sstream>
#include <filesystem>
#include <memory>

using namespace infracc::test;

namespace {

// Three ranks in a ring (the Chakra tests' input too).
const std::string Ring = readFile(sourcePath("tests/astra/inputs/p2p3.goal"));

// otf2-print's output, or "" (and a skip) when otf2-tools is not installed.
std::string otf2Print(const std::string &anchor) {
  auto tool = llvm::sys::findProgramByName("otf2-print");
  if (!tool)
    return "";
  std::string out = anchor + ".print";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                std::nullopt};
  llvm::StringRef args[] = {*tool, anchor};
  if (llvm::sys::ExecuteAndWait(*tool, args, std::nullopt, redirects) != 0)
    return "otf2-print failed";
  return readFile(out);
}

// The events of one location, as otf2-print lists them: "KIND time detail".
std::vector<std::string> eventsOf(const std::string &print, int location) {
  std::vector<std::string> ev;
  std::istringstream in(print);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind;
    int loc;
    uint64_t t;
    if (!(ls >> kind >> loc >> t) || loc != location)
      continue;
    std::string rest;
    std::getline(ls, rest);
    size_t b = rest.find_first_not_of(' ');
    ev.push_back(kind + " " + std::to_string(t) + (b == std::string::npos ? "" : " " + rest.substr(b)));
  }
  return ev;
}

} // namespace

TEST(Otf2, ScheduleBecomesAnMpiProgram) {
  std::string dir = makeTempDir("otf2");
  writeFile(dir + "/ring.goal", Ring);
  RunResult r = runInfracc({dir + "/ring.goal", "-emit=otf2", "-o", dir + "/t"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char *f : {"traces.otf2", "traces.def", "traces/0.evt", "traces/2.evt", "traces/1.def"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/t/" + f)) << f;
  std::string print = otf2Print(dir + "/t/traces.otf2");
  if (print.empty())
    GTEST_SKIP() << "otf2-print (otf2-tools) is not installed";
  // Rank 0: 3 us of compute (the gap before MPI_Isend), the send, its wait before the
  // recv that requires it, then the recv posted and completed at the end.
  EXPECT_EQ(eventsOf(print, 0),
            (std::vector<std::string>{
                "ENTER 0 Region: \"MPI_Init\" <0>", "LEAVE 0 Region: \"MPI_Init\" <0>",
                "ENTER 3000 Region: \"MPI_Isend\" <2>",
                "MPI_ISEND 3000 Receiver: 1 (\"Master thread\" <1>), Communicator: "
                "\"MPI_COMM_WORLD\" <0>, Tag: 7, Length: 4096, Request: 1",
                "LEAVE 3000 Region: \"MPI_Isend\" <2>", "ENTER 3000 Region: \"MPI_Wait\" <4>",
                "MPI_ISEND_COMPLETE 3000 Request: 1", "LEAVE 3000 Region: \"MPI_Wait\" <4>",
                "ENTER 3000 Region: \"MPI_Irecv\" <3>", "MPI_IRECV_REQUEST 3000 Request: 2",
                "LEAVE 3000 Region: \"MPI_Irecv\" <3>", "ENTER 3000 Region: \"MPI_Wait\" <4>",
                "MPI_IRECV 3000 Sender: 2 (\"Master thread\" <2>), Communicator: "
                "\"MPI_COMM_WORLD\" <0>, Tag: 1, Length: 100, Request: 2",
                "LEAVE 3000 Region: \"MPI_Wait\" <4>", "ENTER 3000 Region: \"MPI_Finalize\" <1>",
                "LEAVE 3000 Region: \"MPI_Finalize\" <1>"}));
}

// An MPI trace names every message's sender; a receive from any source only has one
// when static matching pairs it (ir/MessageMatching.h), which wildcards it does not.
TEST(Otf2, WildcardReceivesAreRefused) {
  std::string dir = makeTempDir("otf2-any");
  writeFile(dir + "/any.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from -1 tag 0\n}\n");
  RunResult r = runInfracc({dir + "/any.goal", "-emit=otf2", "-o", dir + "/t"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/any.goal: error: rank 1: a receive from any source or with any tag "
                         "that no send matches: an MPI trace records its sender\n");
}

TEST(Otf2, CollectivesWithTraceRsSizes) {
  std::string dir = makeTempDir("otf2-coll");
  writeFile(dir + "/c.goal", "num_ranks 2\ncomm 4 ranks 1,0\nrank 0 {\nl1: allreduce 64b\n"
                             "l2: alltoall 8b comm 4\nl2 requires l1\n}\nrank 1 {\n"
                             "l1: allreduce 64b\nl2: alltoall 8b comm 4\nl2 requires l1\n}\n");
  RunResult r = runInfracc({dir + "/c.goal", "-emit=otf2", "-o", dir + "/t"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string print = otf2Print(dir + "/t/traces.otf2");
  if (print.empty())
    GTEST_SKIP() << "otf2-print (otf2-tools) is not installed";
  // TraceR reads an allreduce's size as sizeSent / ranks and an alltoall's the same.
  EXPECT_NE(print.find("MPI_COLLECTIVE_END                             0                    0  "
                       "Operation: ALLREDUCE, Communicator: \"MPI_COMM_WORLD\" <0>, Root: 0 "
                       "(\"Master thread\" <0>), Sent: 128, Received: 128"),
            std::string::npos)
      << print;
  // Root 0 of communicator 4 (ranks 1, 0) is rank 1.
  EXPECT_NE(print.find("Operation: ALLTOALL, Communicator: \"communicator 4\" <1>, Root: 0 "
                       "(\"Master thread\" <1>), Sent: 16, Received: 16"),
            std::string::npos)
      << print;
  writeFile(dir + "/rs.goal", "num_ranks 2\nrank 0 {\nl1: reducescatter 8b\n}\n"
                              "rank 1 {\nl1: reducescatter 8b\n}\n");
  RunResult bad = runInfracc({dir + "/rs.goal", "-emit=otf2", "-o", dir + "/t3"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, dir + "/rs.goal: error: rank 0: TraceR does not replay reducescatter; "
                           "lower it with -passes=lower-collectives\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/t3"));
}

const std::string Torus = "-fabric=torus:dims=4x4x4,of=switch,host=simple_host,bw=100G,"
                          "lat=100ns,host_bw=200G";

TEST(Codes, TorusOfSwitches) {
  std::string dir = makeTempDir("codes");
  std::string goal = "num_ranks 64\n";
  for (int r = 0; r < 64; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 1) % 64) +
            " tag 0\nl2: recv 8b from " + std::to_string((r + 63) % 64) + " tag 0\n}\n";
  writeFile(dir + "/ring.goal", goal);
  RunResult r = runInfracc({Torus, dir + "/ring.goal", "-emit=codes", "-o", dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("tracer/torus-4x4x4/network.conf", readFile(dir + "/s/network.conf")),
            "");
  EXPECT_EQ(readFile(dir + "/s/tracer_config"), "NA\n1\ntrace/traces.otf2 NA 64 1\n");
  EXPECT_EQ(compareGolden("tracer/torus-4x4x4/run-tracer.sh", readFile(dir + "/s/run-tracer.sh")),
            "");
  EXPECT_TRUE(std::filesystem::exists(dir + "/s/trace/traces.otf2"));
  const std::string servers = readFile(dir + "/s/servers.txt");
  EXPECT_NE(servers.find("\n0 simple_host.0.xpu.0 0\n"), std::string::npos) << servers;
}

// Placed ranks: the job map holds each rank's server, the global map (server, rank, job).
// TraceR read these maps: a 64 KiB message from server 5 to 63 (5 hops) took 54 us where
// the same message from 0 to 1 took 52 us.
TEST(Codes, PlacementGoesIntoTheMaps) {
  std::string dir = makeTempDir("codes-map");
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
  writeFile(dir + "/map.txt", "0 simple_host.5.xpu.0\n1 simple_host.63.xpu.0\n");
  RunResult r = runInfracc({Torus, dir + "/two.goal", "-place-map=" + dir + "/map.txt",
                            "-passes=place", "-emit=codes", "-o", dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readFile(dir + "/s/tracer_config"),
            "global_map.bin\n1\ntrace/traces.otf2 job0.map 2 1\n");
  const std::string job = readFile(dir + "/s/job0.map");
  ASSERT_EQ(job.size(), 8u);
  int32_t v[2];
  std::memcpy(v, job.data(), 8);
  EXPECT_EQ(v[0], 5);
  EXPECT_EQ(v[1], 63);
  const std::string global = readFile(dir + "/s/global_map.bin");
  ASSERT_EQ(global.size(), 24u);
  int32_t g[6];
  std::memcpy(g, global.data(), 24);
  EXPECT_EQ((std::vector<int32_t>(g, g + 6)), (std::vector<int32_t>{5, 0, 0, 63, 1, 0}));
}

TEST(Codes, WhatCodesCannotSay) {
  std::string dir = makeTempDir("codes-bad");
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
  const std::string mesh = "-fabric=mesh:dims=4x4,of=switch,host=simple_host,bw=100G";
  RunResult r = runInfracc({mesh, dir + "/two.goal", "-emit=codes", "-o", dir + "/s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, mesh + ": error: CODES cannot express this fabric: not a torus (router 0 is "
                          "not wired as position 0 of a 4x4 torus (a mesh without wrap-around "
                          "links is not a CODES torus)), not a dragonfly (its routers are joined "
                          "by 1 kind(s) of link; a dragonfly's local and global links are two, "
                          "named apart), not a fat tree (1 switch tier(s); CODES's fat tree has "
                          "two or three)\n");
  // One rank per server (backends/common/RankEndpoints.h, shared with ASTRA-sim's NPUs).
  writeFile(dir + "/map.txt", "0 simple_host.3.xpu.0\n1 simple_host.3.xpu.0\n");
  const std::string torus = "-fabric=torus:dims=4x4,of=switch,host=simple_host";
  r = runInfracc({torus, dir + "/two.goal", "-place-map=" + dir + "/map.txt", "-passes=place",
                  "-oversubscribe", "-emit=codes", "-o", dir + "/s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/two.goal: error: ranks 0 and 1 both run on simple_host.3.xpu.0: "
                         "TraceR runs one rank per server\n");
  std::string five = "num_ranks 5\n";
  for (int k = 0; k < 5; ++k)
    five += "rank " + std::to_string(k) + " {\n}\n";
  writeFile(dir + "/five.goal", five);
  r = runInfracc({"-fabric=torus:dims=2x2,of=switch,host=simple_host", dir + "/five.goal",
                  "-emit=codes", "-o", dir + "/s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/five.goal: error: the workload has 5 ranks but the fabric has 4 "
                         "servers\n");
  const std::string two = "-fabric=torus:dims=4x4,of=switch,host=simple_host,hosts_per_switch=2";
  r = runInfracc({two, dir + "/two.goal", "-emit=codes", "-o", dir + "/s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("router 0 has 2 endpoints: CODES's torus has one terminal per router"),
            std::string::npos)
      << r.err;
}

// OTF2 traces read back: infracc's own come back as the same schedule (GOAL text equal),
// others' (TraceR ships Score-P's) as the program they recorded.
TEST(Otf2Reader, RoundTrip) {
  std::string dir = makeTempDir("otf2-read");
  writeFile(dir + "/ring.goal", Ring);
  ASSERT_EQ(runInfracc({dir + "/ring.goal", "-emit=otf2", "-o", dir + "/t"}).status, 0);
  RunResult back = runInfracc({dir + "/t/traces.otf2", "-emit=goal"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, runInfracc({dir + "/ring.goal", "-emit=goal"}).out);

  writeFile(dir + "/c.goal", "num_ranks 4\ncomm 4 ranks 3,1\nrank 0 {\nl1: allreduce 64b\n"
                             "l2: calc 500\nl3: bcast 32b root 2\nl2 requires l1\nl3 requires l2\n}\n"
                             "rank 1 {\nl1: allreduce 64b\nl2: alltoall 8b comm 4\nl3: bcast 32b root 2\n"
                             "l2 requires l1\nl3 requires l2\n}\n"
                             "rank 2 {\nl1: allreduce 64b\nl3: bcast 32b root 2\nl3 requires l1\n}\n"
                             "rank 3 {\nl1: allreduce 64b\nl2: alltoall 8b comm 4\nl3: bcast 32b root 2\n"
                             "l2 requires l1\nl3 requires l2\n}\n");
  ASSERT_EQ(runInfracc({dir + "/c.goal", "-emit=otf2", "-o", dir + "/c"}).status, 0);
  RunResult sim = runInfracc({dir + "/c/traces.otf2", "-emit=sim", "-sim-batch"});
  RunResult direct = runInfracc({dir + "/c.goal", "-emit=sim", "-sim-batch"});
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_EQ(maximumFinishingTime(sim.out), maximumFinishingTime(direct.out));
  EXPECT_GT(maximumFinishingTime(direct.out), 0);
}

namespace {
size_t openDescriptorCount() {
  size_t n = 0;
  for ([[maybe_unused]] auto &e : std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}
} // namespace

// libotf2 leaves the anchor file open when it cannot read an archive; the otf2 fuzz
// target, which reads thousands in one process, leaked one descriptor per damaged
// archive (19 for 121 inputs). The library now runs only in the reading child, so
// infracc's own process keeps nothing open. Read in process (in a forked test child, so
// the driver's option state stays there), damaged archives leave no file open.
TEST(Otf2Reader, DamagedArchivesLeaveNoFileOpen) {
  std::string dir = makeTempDir("otf2-fds");
  writeFile(dir + "/junk.otf2", "not an anchor file\n");
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
  ASSERT_EQ(runInfracc({dir + "/two.goal", "-emit=otf2", "-o", dir + "/t"}).status, 0);
  std::filesystem::remove(dir + "/t/traces.def");   // no global definitions
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    // The archive is read by a worker process, kept for later archives: its socket is
    // opened once, by the first read.
    if (infracc::runDriverInProcess({dir + "/t/traces.otf2", "-emit=goal", "-o", "/dev/null"}) != 1)
      _exit(2);
    const size_t before = openDescriptorCount();
    for (int i = 0; i < 3; ++i)
      for (const std::string &input : {dir + "/junk.otf2", dir + "/t/traces.otf2"})
        if (infracc::runDriverInProcess({input, "-emit=goal", "-o", "/dev/null"}) != 1)
          _exit(2);
    _exit(openDescriptorCount() == before ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 2) << "a damaged archive was not an error";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "descriptors were left open";
}

TEST(Otf2Reader, NotATrace) {
  std::string dir = makeTempDir("otf2-bad");
  writeFile(dir + "/junk.otf2", "not an anchor file\n");
  RunResult r = runInfracc({dir + "/junk.otf2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/junk.otf2: error: not an OTF2 trace (its anchor file could not be "
                         "read)\n");
  // An archive whose event files are gone.
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
  ASSERT_EQ(runInfracc({dir + "/two.goal", "-emit=otf2", "-o", dir + "/t"}).status, 0);
  std::filesystem::remove(dir + "/t/traces/1.evt");
  r = runInfracc({dir + "/t/traces.otf2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(dir + "/t/traces.otf2: error: "), std::string::npos) << r.err;
  // Counts in the anchor file that OTF2 would allocate by are checked first (the otf2
  // fuzz target found a damaged property count making the library ask for 4 GiB).
  const std::string anchor = readFile(dir + "/t/traces.otf2");
  const std::string description = "written by infracc";
  const size_t count = anchor.find(description) + description.size() + 1;
  ASSERT_LT(count + 4, anchor.size());
  std::string damaged = anchor;
  damaged.replace(count, 4, std::string("\xff\xff\xff\x0f", 4));
  writeFile(dir + "/t/traces.otf2", damaged);
  r = runInfracc({dir + "/t/traces.otf2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t/traces.otf2: error: damaged anchor file: it announces 268435455 "
                         "properties, whose names and values need at least 536870910 bytes, "
                         "but 19 follow\n");
  // The location count (little-endian, after the magic, the formats, the version, the
  // chunk sizes, the substrate and the compression) beyond the definitions.
  damaged = anchor;
  damaged[30] = '\x10';
  damaged[31] = '\x27';
  writeFile(dir + "/t/traces.otf2", damaged);
  r = runInfracc({dir + "/t/traces.otf2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: damaged anchor file: it announces 10000 locations but only 25 "
                       "global definitions, one of which each location needs"),
            std::string::npos)
      << r.err;
}

// Two workloads are two jobs (merge-jobs packs them): a trace and a job map each, and
// the global map's (server, local rank, job) triples. TraceR 5152e57 ran the same layout
// with a 32- and a 16-rank ring of 64 KiB: "Job 0 Time 0.000053 s", "Job 1 Time
// 0.000052 s" (docs/scale-out.md).
TEST(Codes, JobsGetTracesAndMaps) {
  std::string dir = makeTempDir("codes-jobs");
  auto ring = [](int P) {
    std::string g = "num_ranks " + std::to_string(P) + "\n";
    for (int r = 0; r < P; ++r)
      g += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 1) % P) +
           " tag 0\nl2: recv 8b from " + std::to_string((r + P - 1) % P) + " tag 0\n}\n";
    return g;
  };
  writeFile(dir + "/a.goal", ring(3));
  writeFile(dir + "/b.goal", ring(2));
  RunResult r = runInfracc({Torus, dir + "/a.goal", dir + "/b.goal", "-emit=codes", "-o",
                            dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readFile(dir + "/s/tracer_config"),
            "global_map.bin\n2\ntrace-job0/traces.otf2 job0.map 3 1\n"
            "trace-job1/traces.otf2 job1.map 2 1\n");
  const std::string global = readFile(dir + "/s/global_map.bin");
  ASSERT_EQ(global.size(), 5 * 12u);
  std::vector<int32_t> g(15);
  std::memcpy(g.data(), global.data(), global.size());
  EXPECT_EQ(g, (std::vector<int32_t>{0, 0, 0, 1, 1, 0, 2, 2, 0, 3, 0, 1, 4, 1, 1}));
  const std::string job1 = readFile(dir + "/s/job1.map");
  ASSERT_EQ(job1.size(), 8u);
  int32_t j[2];
  std::memcpy(j, job1.data(), 8);
  EXPECT_EQ(j[0], 3);
  EXPECT_EQ(j[1], 4);
  // Job 1's trace numbers its ranks 0 and 1, whatever their merged numbers.
  RunResult back = runInfracc({dir + "/s/trace-job1/traces.otf2", "-emit=goal"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out.substr(0, 12), "num_ranks 2\n");
  EXPECT_NE(back.out.find("send 8b to 1 tag 0"), std::string::npos) << back.out;
}

// A dragonfly as CODES's dragonfly-custom: its own wiring in the binary connection files
// (one group's local links, every global link, both directions). TraceR 5152e57 ran this
// network.conf with a 72-rank shift of 64 KiB: "Job 0 Time 0.000043 s", the same with
// NP=1 SYNC=1 and NP=2 SYNC=3 (docs/scale-out.md).
TEST(Codes, DragonflyIsWiredAsItIs) {
  std::string dir = makeTempDir("codes-df");
  std::string goal = "num_ranks 72\n";
  for (int r = 0; r < 72; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 9) % 72) +
            " tag 0\nl2: recv 8b from " + std::to_string((r + 63) % 72) + " tag 0\n}\n";
  writeFile(dir + "/shift.goal", goal);
  const std::string fly = "-fabric=dragonfly:host=simple_host,host_lat=100ns,local_lat=100ns,"
                          "global_lat=300ns";
  RunResult r = runInfracc({fly, dir + "/shift.goal", "-emit=codes", "-o", dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, fly + ": warning: approximated for CODES: CODES has one router_delay: the "
                         "global links' latency (300 ns) is not modelled apart from the local "
                         "links' (100 ns)\n" +
                         fly + ": note: the shape of CODES's 1-D dragonfly (p = h = a/2, g = "
                               "a*h + 1), but not its global wiring: written as dragonfly-custom "
                               "to keep this fabric's\n");
  EXPECT_EQ(compareGolden("tracer/dragonfly/network.conf", readFile(dir + "/s/network.conf")), "");
  // 4 routers per group, a full mesh: 12 directed links of (src, dest, 0).
  const std::string intra = readFile(dir + "/s/intra.bin");
  ASSERT_EQ(intra.size(), 12 * 12u);
  std::vector<int32_t> in(36);
  std::memcpy(in.data(), intra.data(), intra.size());
  EXPECT_EQ((std::vector<int32_t>(in.begin(), in.begin() + 6)), (std::vector<int32_t>{0, 1, 0, 0, 2, 0}));
  // 9 groups, one global link between every pair: 36 links, 72 directed records.
  EXPECT_EQ(readFile(dir + "/s/inter.bin").size(), 72 * 8u);
}

// CODES builds its fat tree's wiring from radix, tapering and leaf count; a fabric wired
// exactly so is written (a leaf-spine of its two-level shape, the standard k = 4
// three-level Clos), another refused naming its shape. TraceR 5152e57 ran both confs with
// a 16-rank shift of 64 KiB: "Job 0 Time 0.000012 s" and "0.000013 s".
TEST(Codes, FatTreeOfCodesShape) {
  std::string dir = makeTempDir("codes-ft");
  std::string goal = "num_ranks 16\n";
  for (int r = 0; r < 16; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 4) % 16) +
            " tag 0\nl2: recv 8b from " + std::to_string((r + 12) % 16) + " tag 0\n}\n";
  writeFile(dir + "/shift.goal", goal);
  const std::string ft = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=4,bundle=2,"
                         "host=simple_host,bw0=100G,bw1=100G,lat0=100ns,lat1=100ns";
  RunResult r = runInfracc({ft, dir + "/shift.goal", "-emit=codes", "-o", dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("tracer/fat-tree/network.conf", readFile(dir + "/s/network.conf")), "");
  const std::string three = "-fabric=clos:radix=4,levels=3,host=simple_host,bw0=100G,bw1=100G,"
                            "bw2=100G";
  r = runInfracc({three, dir + "/shift.goal", "-emit=codes", "-o", dir + "/t"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string conf = readFile(dir + "/t/network.conf");
  for (const char *key : {"fattree_switch=\"3\"", "num_levels=\"3\"", "switch_count=\"8\"",
                          "switch_radix=\"4\"", "tapering=\"1\""})
    EXPECT_NE(conf.find(key), std::string::npos) << key;
  const std::string clos = "-fabric=clos:radix=8,levels=2,host=simple_host";
  r = runInfracc({clos, dir + "/shift.goal", "-emit=codes", "-o", dir + "/c"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("not a fat tree (2 tiers: 8/4 switches, leaves of 4 endpoints and 4 "
                       "link(s) up: not wired as CODES's 2-level fat tree of radix 8, tapering 1 "
                       "and 8 leaves"),
            std::string::npos)
      << r.err;
}

// A multi-plane fat tree is CODES's multi-rail one (ft_type 2): NIC i of every host on
// plane i % 2, every xpu sending through its own NIC. TraceR 5152e57 ran both workloads
// below on this network.conf: ranks 0 and 1 (one host, one NIC on each plane) sending 15
// messages of 64 KiB each: "Job 0 Time 0.000085 s" (each NIC carries its own 15, 5.2 us
// each at 100 Gb/s; -sim-model=topo and flow say 78.6 us); an all-to-all of 64 KiB over
// the 32 xpus: 0.000175 s with NP=1 SYNC=1 and NP=2 SYNC=3 (flow, -lb=spray: 157 us).
TEST(Codes, PlanesAreRails) {
  std::string dir = makeTempDir("codes-planes");
  std::string goal = "num_ranks 32\n";
  for (int r = 0; r < 32; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 8) % 32) +
            " tag 0\nl2: recv 8b from " + std::to_string((r + 24) % 32) + " tag 0\n}\n";
  writeFile(dir + "/shift.goal", goal);
  const std::string planes = "-fabric=leaf_spine:planes=2,leaves=4,spines=2,hosts_per_leaf=4,"
                             "bundle=2,host=simple_host(xpus=2,nics=2),bw1=100G";
  RunResult r = runInfracc({planes, dir + "/shift.goal", "-emit=codes", "-o", dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("tracer/fat-tree-planes/network.conf",
                          readFile(dir + "/s/network.conf")),
            "");
  // Server o of a leaf's repetition sends through NIC LP o % 8 = terminal o/2, rail o%2:
  // xpu k of a host is on rail k.
  const std::string servers = readFile(dir + "/s/servers.txt");
  for (const char *line : {"\n0 simple_host.0.xpu.0 0\n", "\n1 simple_host.0.xpu.1 1\n",
                           "\n2 simple_host.1.xpu.0 2\n", "\n9 simple_host.4.xpu.1 9\n",
                           "\n31 simple_host.15.xpu.1 31\n"})
    EXPECT_NE(servers.find(line), std::string::npos) << line << servers;
  // A NIC without an xpu: CODES gives every NIC the same number of servers.
  const std::string idle = "-fabric=leaf_spine:planes=2,leaves=4,spines=2,hosts_per_leaf=4,"
                           "bundle=2,host=simple_host(xpus=1,nics=2)";
  r = runInfracc({idle, dir + "/shift.goal", "-emit=codes", "-o", dir + "/i"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("not a fat tree (simple_host.0.nic.0 sends for 1 endpoint(s) and "
                       "simple_host.0.nic.1 for 0; CODES gives every NIC of a multi-rail fat "
                       "tree the same number of servers)"),
            std::string::npos)
      << r.err;
  // Rails that share their spines are one plane, not CODES's rails.
  r = runInfracc({"-fabric=rail:radix=8,host=simple_host(xpus=2,nics=2)", dir + "/shift.goal",
                  "-emit=codes", "-o", dir + "/r"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is on 2 leaves; a CODES terminal hangs off one (CODES's multi-rail "
                       "trees, num_rails, are separate planes of switches, which rails sharing "
                       "spines are not)"),
            std::string::npos)
      << r.err;
}

// CODES's own 1-D dragonfly (a = 4 routers per group, p = h = 2, 9 groups) wired the way
// its dragonfly.c wires global links: written as `modelnet_dragonfly`, not -custom.
// TraceR 5152e57 ran the 72-rank shift on it: "Job 0 Time 0.000044 s" (NP=1 and 2).
TEST(Codes, CanonicalDragonfly) {
  YamlFabric f;
  const int a = 4, G = 9, R = a * G;
  f.hosts = R * 2;
  f.links = {{"host_link", 100}, {"local", 100}, {"global", 100}};
  f.switches = {{"r", R}};
  for (int h = 0; h < f.hosts; ++h)
    f.link("host", h, "r", h / 2, "host_link");
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < a; ++i)
      for (int j = i + 1; j < a; ++j)
        f.link("r", g * a + i, "r", g * a + j, "local");
  for (int r = 0; r < R; ++r) {
    int grp = r / a, first = r % a;
    for (int j = 0; j < a / 2; ++j, first += a) {
      int target = first == grp ? G - 1 : first;
      int pos = grp == G - 1 ? target % a : grp % a;
      int other = target * a + pos;
      if (r < other)
        f.link("r", r, "r", other, "global");
    }
  }
  std::string dir = makeTempDir("codes-dfc");
  writeFile(dir + "/fly.yaml", f.yaml());
  std::string goal = "num_ranks 72\n";
  for (int r = 0; r < 72; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 8b to " + std::to_string((r + 9) % 72) +
            " tag 0\nl2: recv 8b from " + std::to_string((r + 63) % 72) + " tag 0\n}\n";
  writeFile(dir + "/shift.goal", goal);
  RunResult r = runInfracc({dir + "/fly.yaml", dir + "/shift.goal", "-emit=codes", "-o",
                            dir + "/s"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string conf = readFile(dir + "/s/network.conf");
  EXPECT_NE(conf.find("modelnet_dragonfly=\"2\";"), std::string::npos) << conf;
  EXPECT_NE(conf.find("num_routers=\"4\";"), std::string::npos) << conf;
  EXPECT_FALSE(std::filesystem::exists(dir + "/s/inter.bin"));
}
