// SPC block-I/O traces on the Direct-Drive-like storage service: the requests' message
// exchanges (golden), how requests are cut into slices, issue times, the placement of
// the roles on ranks, and the errors of the trace and of -storage-layout.
#include "compiler/frontends/storage/StorageLayout.h"
#include "support/Diagnostics.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

using namespace infracc::test;

namespace {

std::string input(const std::string &name) { return sourcePath("tests/storage/inputs/" + name); }

// The finishing time of host `h` in the simulator's per-host listing.
uint64_t hostTime(const std::string &out, int h) {
  const std::string key = "Host " + std::to_string(h) + ": ";
  size_t at = out.find(key);
  if (at == std::string::npos)
    return 0;
  return std::stoull(out.substr(at + key.size()));
}

// The (bytes, destination) of the sends of rank `rank` in a GOAL text.
std::vector<std::pair<uint64_t, uint32_t>> sendsOfRank(const std::string &goal, int rank) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  llvm::StringRef text = goal;
  bool in = false;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (line.starts_with("rank "))
      in = line == "rank " + std::to_string(rank) + " {";
    llvm::SmallVector<llvm::StringRef, 8> t;
    line.split(t, ' ', -1, false);
    if (in && t.size() >= 5 && t[1] == "send") {
      uint64_t bytes = 0;
      uint32_t to = 0;
      t[2].drop_back().getAsInteger(10, bytes);
      t[4].getAsInteger(10, to);
      out.push_back({bytes, to});
    }
  }
  return out;
}

} // namespace

// Two hosts (ASUs 0 and 1), the service on 9 more ranks: SLB 2, GS 3, MDS 4, CCS 5-6,
// BSS 7-10, 4 KiB slices, 2 replicas. Host 0 writes 4 KiB at sector 4 (bytes 2048-6143:
// two slices of 2048 bytes, to CCS 0 and 1, each copied to its 2 BSS) at 10 us and reads
// 512 bytes at sector 24 (slice 3: CCS 1, BSS 2) at 30 us; host 1 reads 4 KiB at sector
// 16 (slice 2: CCS 0, BSS 0) at 0 us. Each host mounts first (SLB -> GS -> MDS and back).
// Checked by hand against the rules in docs/workloads.md.
TEST(SpcTrace, MessageExchanges) {
  RunResult r = runInfracc({input("small.spc"), "-storage-layout=" + input("small.yaml"),
                            "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("storage/small.goal", r.out), "");
}

// A request is cut at slice boundaries into the bytes it covers: ATLAHS's generator sized
// a piece from the smaller start (a 4 KiB write at byte 8192 became 12 KiB) and read the
// LBA as bytes.
TEST(SpcTrace, Slices) {
  std::string dir = makeTempDir("spc-slices");
  writeFile(dir + "/layout.yaml", "ccs: 4\nbss: 4\nreplicas: 1\nslice_bytes: 4096\nmount: false\n");
  auto hostSends = [&](const std::string &line) {
    writeFile(dir + "/t.spc", line + "\n");
    RunResult r = runInfracc({dir + "/t.spc", "-storage-layout=" + dir + "/layout.yaml",
                              "-emit=goal-extended"});
    EXPECT_EQ(r.status, 0) << r.err;
    return sendsOfRank(r.out, 0);
  };
  using Sends = std::vector<std::pair<uint64_t, uint32_t>>;
  // Ranks: host 0, SLB 1, GS 2, MDS 3, CCS 4-7, BSS 8-11.
  EXPECT_EQ(hostSends("0,16,4096,w,0"), (Sends{{4096, 6}}));             // byte 8192: slice 2
  EXPECT_EQ(hostSends("0,4,4096,w,0"), (Sends{{2048, 4}, {2048, 5}}));    // bytes 2048-6143
  EXPECT_EQ(hostSends("0,8,8192,w,0"), (Sends{{4096, 5}, {4096, 6}}));    // slices 1 and 2
  EXPECT_EQ(hostSends("0,7,1,W,0"), (Sends{{1, 4}}));                     // byte 3584
  // A read: lookup at the CCS, then the request to the BSS (1024 bytes each).
  EXPECT_EQ(hostSends("0,8,100,r,0"), (Sends{{1024, 5}, {1024, 9}}));
}

// Issue times: with `issue: trace` (the default) a request starts at its timestamp, so
// moving host 1's request 1 ms later moves its end by exactly 1 ms in the engines that
// carry a dependency's time across cpus (atlahs) and in the flow model; LogGOPSim v1
// (lgs) does not carry it. `issue: closed` ignores timestamps: each request of a host
// follows the previous one's end.
TEST(SpcTrace, IssueTimes) {
  std::string dir = makeTempDir("spc-issue");
  writeFile(dir + "/a.spc", "0,0,65536,r,0.0\n1,4096,65536,w,0.001\n");
  writeFile(dir + "/b.spc", "0,0,65536,r,0.0\n1,4096,65536,w,0.002\n");
  auto host1 = [&](const std::string &trace, const std::string &model) {
    RunResult r = runInfracc({trace, "-storage-layout=" + input("small.yaml"), "-emit=sim",
                              "-sim-model=" + model,
                              "-fabric=leaf_spine:leaves=1,spines=1,hosts_per_leaf=16,host=simple_host"});
    EXPECT_EQ(r.status, 0) << r.err;
    return hostTime(r.out, 1);
  };
  for (const char *model : {"atlahs", "flow"}) {
    SCOPED_TRACE(model);
    const uint64_t a = host1(dir + "/a.spc", model), b = host1(dir + "/b.spc", model);
    EXPECT_GT(a, 1000000u);
    EXPECT_EQ(b - a, 1000000u);
  }
  // LogGOPSim v1: the write starts when host 1's cpu 0 is free, long before its time; the
  // host's time is its clock cpu's (2 ms) alone. The simulator says so.
  EXPECT_EQ(host1(dir + "/b.spc", "lgs"), 2000000u);
  RunResult w = runInfracc({dir + "/b.spc", "-storage-layout=" + input("small.yaml"), "-emit=sim"});
  EXPECT_EQ(w.err, dir + "/b.spc: warning: the workload's messages start at generated times, "
                         "which -sim-model=lgs does not keep: LogGOPSim v1 does not carry a "
                         "time to another cpu, so a message starts as soon as its own cpu is "
                         "free; -sim-model=atlahs or flow keeps the times (docs/workloads.md, "
                         "\"Timed workloads\")\n");
  w = runInfracc({dir + "/b.spc", "-storage-layout=" + input("small.yaml"), "-emit=sim",
                  "-sim-model=atlahs"});
  EXPECT_EQ(w.err, "");
  writeFile(dir + "/closed-small.yaml", readFile(input("small.yaml")) + "issue: closed\n");
  w = runInfracc({dir + "/b.spc", "-storage-layout=" + dir + "/closed-small.yaml", "-emit=sim"});
  EXPECT_EQ(w.err, "");

  writeFile(dir + "/closed.yaml", readFile(input("small.yaml")) + "issue: closed\n");
  writeFile(dir + "/c.spc", "0,0,4096,r,0.0\n0,4096,4096,r,0.5\n");
  RunResult r = runInfracc({dir + "/c.spc", "-storage-layout=" + dir + "/closed.yaml",
                            "-emit=sim", "-sim-model=atlahs"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(hostTime(r.out, 0), 1000000u);
  r = runInfracc({dir + "/c.spc", "-storage-layout=" + input("small.yaml"), "-emit=sim",
                  "-sim-model=atlahs"});
  EXPECT_GT(hostTime(r.out, 0), 500000000u);
}

// Roles on ranks: grouped (hosts, SLB, GS, MDS, CCS, BSS in a row), spread (the i-th of n
// instances near round((i+1) x ranks / (n+1)), ATLAHS's fat-tree strategy) and explicit.
TEST(SpcTrace, Placement) {
  using infracc::StorageLayout;
  std::string text;
  llvm::raw_string_ostream os(text);
  infracc::DiagEngine diags(os);
  StorageLayout l;
  l.count = {2, 1, 1, 1, 2, 4};
  uint32_t n = 0;
  auto g = infracc::placeStorageRoles(l, n, diags, "t");
  ASSERT_TRUE(g);
  EXPECT_EQ(n, 11u);
  EXPECT_EQ((*g)[0], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ((*g)[3], (std::vector<uint32_t>{4}));
  EXPECT_EQ((*g)[5], (std::vector<uint32_t>{7, 8, 9, 10}));
  l.ranks = 16;
  l.placement = StorageLayout::Placement::Spread;
  g = infracc::placeStorageRoles(l, n, diags, "t");
  ASSERT_TRUE(g);
  EXPECT_EQ(n, 16u);
  // Hosts at 16/3 and 32/3 (5, 11); SLB, GS, MDS each want 8: 8, then 7 (left first), 9;
  // CCS want 5 and 11 (taken): 4 and 10; BSS want 3, 6, 10, 13: 3, 6, 12, 13.
  EXPECT_EQ((*g)[0], (std::vector<uint32_t>{5, 11}));
  EXPECT_EQ((*g)[1], (std::vector<uint32_t>{8}));
  EXPECT_EQ((*g)[2], (std::vector<uint32_t>{7}));
  EXPECT_EQ((*g)[3], (std::vector<uint32_t>{9}));
  EXPECT_EQ((*g)[4], (std::vector<uint32_t>{4, 10}));
  EXPECT_EQ((*g)[5], (std::vector<uint32_t>{3, 6, 12, 13}));
  l.placement = StorageLayout::Placement::Grouped;
  l.at[4] = {15, 0};
  l.atLoc[4] = {llvm::SMLoc(), llvm::SMLoc()};
  g = infracc::placeStorageRoles(l, n, diags, "t");
  ASSERT_TRUE(g);
  EXPECT_EQ((*g)[0], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ((*g)[4], (std::vector<uint32_t>{15, 0}));
  EXPECT_EQ((*g)[5], (std::vector<uint32_t>{6, 7, 8, 9}));
  EXPECT_EQ(text, "");
}

// Spread placement gives each instance the free rank nearest its target, the lower on a
// tie: checked against that rule walked out rank by rank (what the placement did until
// 2026-11-28) on layouts with explicit blocks, then on a block of 300,000 explicit ranks
// with 300,000 spread instances aimed into it, where the walk took 59 s (4.5 x 10^10
// steps) and the placement now takes milliseconds.
TEST(SpcTrace, SpreadPlacementTakesTheNearestFreeRank) {
  using infracc::StorageLayout;
  auto walked = [](const StorageLayout &l, uint32_t numRanks) {
    std::vector<int8_t> owner(numRanks, -1);
    std::array<std::vector<uint32_t>, infracc::NumStorageRoles> out;
    for (size_t r = 0; r < infracc::NumStorageRoles; ++r)
      for (uint32_t rank : l.at[r]) {
        owner[rank] = int8_t(r);
        out[r].push_back(rank);
      }
    for (size_t r = 0; r < infracc::NumStorageRoles; ++r) {
      if (!l.at[r].empty())
        continue;
      const uint32_t n = l.count[r];
      for (uint32_t i = 0; i < n; ++i) {
        const int64_t target =
            std::min<int64_t>(numRanks - 1, std::llround(double(i + 1) * numRanks / (n + 1)));
        int64_t rank = -1;
        for (int64_t d = 0; rank < 0; ++d)
          if (target - d >= 0 && owner[target - d] < 0)
            rank = target - d;
          else if (target + d < numRanks && owner[target + d] < 0)
            rank = target + d;
        owner[rank] = int8_t(r);
        out[r].push_back(uint32_t(rank));
      }
    }
    return out;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  infracc::DiagEngine diags(os);
  uint64_t seed = 12345;
  auto next = [&seed](uint64_t below) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % below;
  };
  for (int trial = 0; trial < 200; ++trial) {
    StorageLayout l;
    l.placement = StorageLayout::Placement::Spread;
    l.ranks = uint32_t(8 + next(120));
    uint32_t left = l.ranks;
    // One or two roles on explicit blocks of ranks, the others spread.
    for (size_t r = 0; r < infracc::NumStorageRoles; ++r) {
      const uint32_t n = uint32_t(next(left / 3 + 1));
      left -= n;
      l.count[r] = n;
      if (n > 0 && next(3) == 0) {
        uint32_t from = uint32_t(next(l.ranks - n + 1));
        for (uint32_t k = 0; k < n; ++k) {
          const uint32_t rank = from + k;
          bool taken = false;
          for (const auto &at : l.at)
            taken |= std::find(at.begin(), at.end(), rank) != at.end();
          if (!taken) {
            l.at[r].push_back(rank);
            l.atLoc[r].push_back(llvm::SMLoc());
          }
        }
        l.count[r] = uint32_t(l.at[r].size());
        left += n - l.count[r];
      }
    }
    uint32_t n = 0;
    auto placed = infracc::placeStorageRoles(l, n, diags, "t");
    ASSERT_TRUE(placed) << text;
    EXPECT_EQ(*placed, walked(l, n)) << "trial " << trial;
  }
  StorageLayout big;
  big.placement = StorageLayout::Placement::Spread;
  big.ranks = 600000;
  for (uint32_t k = 0; k < 300000; ++k) {
    big.at[5].push_back(k);
    big.atLoc[5].push_back(llvm::SMLoc());
  }
  big.count = {0, 0, 0, 0, 300000, 300000};
  uint32_t n = 0;
  auto placed = infracc::placeStorageRoles(big, n, diags, "t");
  ASSERT_TRUE(placed) << text;
  // Every free rank is taken, in the order the targets come: the instances aimed into
  // the block all queue at its end.
  const std::vector<uint32_t> &ccs = (*placed)[4];
  ASSERT_EQ(ccs.size(), 300000u);
  std::vector<uint32_t> sorted = ccs;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t k = 0; k < 300000; ++k)
    ASSERT_EQ(sorted[k], 300000 + k);
  EXPECT_EQ(ccs[0], 300000u);       // targets 2, 4, ... inside the block take 300000, ...
  EXPECT_EQ(ccs[149999], 449999u);  // ... the last in the block
  EXPECT_EQ(ccs[150000], 450000u);  // target 300001 is taken: 450000 is the nearest free rank
  EXPECT_EQ(text, "");
}

TEST(SpcTrace, Errors) {
  std::string dir = makeTempDir("spc-errors");
  auto trace = [&](const std::string &text) {
    writeFile(dir + "/t.spc", text);
    RunResult r = runInfracc({dir + "/t.spc", "-emit=sim"});
    EXPECT_EQ(r.status, 1);
    return r.err;
  };
  const std::string t = dir + "/t.spc";
  EXPECT_EQ(trace("0,1,2,3\n"), t + ":1:1: error: expected 'ASU,LBA,Size,Opcode,Timestamp' (SPC "
                                    "format), found 4 field(s)\n0,1,2,3\n^\n");
  EXPECT_EQ(trace("0,1,4096,r,0\n0,1,4096,x,0\n"),
            t + ":2:10: error: the opcode must be R or W (read or write, either case), not 'x'\n"
                "0,1,4096,x,0\n         ^\n");
  EXPECT_EQ(trace("0,1,4096,r,-1\n"),
            t + ":1:12: error: the timestamp must be seconds since the trace began (a number in "
                "[0, 1e9]), not '-1'\n0,1,4096,r,-1\n           ^\n");
  EXPECT_EQ(trace("0,1,0,r,0\n"),
            t + ":1:5: error: the size must be at least 1 byte\n0,1,0,r,0\n    ^\n");
  EXPECT_EQ(trace("0,1,99999999999999,r,0\n"),
            t + ":1:5: error: a request of 99999999999999 bytes is absurd (at most 1 TiB)\n"
                "0,1,99999999999999,r,0\n    ^\n");
  EXPECT_EQ(trace("0,36028797018963968,4096,w,0\n"),
            t + ":1:1: error: the request's end, sector 36028797018963968 x 512 bytes + 4096 "
                "bytes, is beyond 2^64 bytes\n0,36028797018963968,4096,w,0\n^\n");

  writeFile(dir + "/ok.spc", "0,1,4096,r,0\n");
  auto layout = [&](const std::string &yaml) {
    writeFile(dir + "/l.yaml", yaml);
    RunResult r = runInfracc({dir + "/ok.spc", "-storage-layout=" + dir + "/l.yaml", "-emit=sim"});
    EXPECT_EQ(r.status, 1);
    return r.err;
  };
  const std::string l = dir + "/l.yaml";
  EXPECT_EQ(layout("ccs: 2\nbss: 4\nreplicas: 5\n"),
            l + ":3:11: error: replicas 5 is more than the 4 BSS\nreplicas: 5\n          ^\n");
  EXPECT_EQ(layout("placement: random\n"),
            l + ":1:12: error: placement must be grouped or spread, not the string 'random'\n"
                "placement: random\n           ^\n");
  EXPECT_EQ(layout("write_mb: 3\n"),
            l + ":1:1: error: unknown key 'write_mb' in the storage layout; the keys are hosts, "
                "slb, gs, mds, ccs, bss, ranks, placement, sector_bytes, slice_bytes, replicas, "
                "issue, mount, read_mb_per_s, write_mb_per_s, lookup_ns, mount_ns, messages\n"
                "write_mb: 3\n^\n");
  EXPECT_EQ(layout("ranks: 8\n"),
            l + ":1:8: error: the storage service's roles need 76 ranks (hosts 1, slb 1, gs 1, "
                "mds 1, ccs 8, bss 64), more than ranks: 8\nranks: 8\n       ^\n");
  EXPECT_EQ(layout("ccs: [0, 1]\nbss: [1, 2]\n"),
            l + ":2:7: error: rank 1 is given to both ccs and bss\nbss: [1, 2]\n      ^\n");
  EXPECT_EQ(layout("ccs: [20]\nbss: 2\n"),
            l + ":1:7: error: ccs is placed on rank 20, but there are 7 ranks (set ranks:)\n"
                "ccs: [20]\n      ^\n");
  EXPECT_EQ(layout("slb: 0\n"),
            l + ":1:1: error: a mount needs at least one of each of slb, gs and mds (slb is 0); "
                "set mount: false to leave mounts out\nslb: 0\n^\n");
  EXPECT_EQ(layout("issue: later\n"),
            l + ":1:8: error: issue must be trace (each request at its timestamp) or closed "
                "(each after the host's previous one), not the string 'later'\n"
                "issue: later\n       ^\n");
  EXPECT_EQ(layout("messages:\n  ack: 0\n"),
            l + ":2:8: error: the ack message's size 0 is out of range: it must be in [1, "
                "1099511627776]\n  ack: 0\n       ^\n");
  RunResult r = runInfracc({dir + "/ok.spc", "-storage-layout=" + dir + "/none.yaml", "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "infracc: error: cannot read the storage layout '" + dir +
                       "/none.yaml': No such file or directory\n");
  EXPECT_EQ(layout("read_mb_per_s: 0\n"),
            l + ":1:16: error: read_mb_per_s 0 is out of range: it must be above 0 and at most "
                "1e9\nread_mb_per_s: 0\n               ^\n");
}

// Sizes are checked against -max-memory before anything is built: the requests the trace
// holds, the service's ranks, and the schedule's ops.
TEST(SpcTrace, Limits) {
  std::string dir = makeTempDir("spc-limits");
  writeFile(dir + "/t.spc", "0,0,1073741824,r,0\n");   // a 1 GiB read
  const std::string t = dir + "/t.spc";
  // 19 bytes of text: at most 2 requests of 48 bytes.
  RunResult r = runInfracc({t, "-emit=goal", "-max-memory=64"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, t + ":1:1: error: the trace's requests would need about 96 bytes (2 x 48 "
                       "bytes), more than -max-memory (64 bytes); raise it with -max-memory=\n"
                       "0,0,1073741824,r,0\n^\n");
  writeFile(dir + "/ranks.yaml", "ranks: 16000000\n");
  r = runInfracc({t, "-storage-layout=" + dir + "/ranks.yaml", "-emit=goal", "-max-memory=1G"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, t + ": error: the storage service's 16000000 ranks would need about 2.4 GiB "
                       "(16000000 x 160 bytes), more than -max-memory (1.0 GiB); raise it with "
                       "-max-memory=\n");
  // Role counts are checked before the roles are placed on ranks, which costs per rank
  // too (a 45-byte input asking for 4.8 million servers took 0.4 s and 48 MB to be
  // refused; found by the spc fuzz target).
  writeFile(dir + "/bss.yaml", "ccs: 2\nbss: 4812500\n");
  r = runInfracc({t, "-storage-layout=" + dir + "/bss.yaml", "-emit=goal", "-max-memory=1M"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, t + ": error: the storage service's 4812506 ranks would need about 734.3 MiB "
                       "(4812506 x 160 bytes), more than -max-memory (1.0 MiB); raise it with "
                       "-max-memory=\n");
  // 1-byte slices: 2^30 read slices of 10 ops, a mount of 14 and the clock's 2.
  writeFile(dir + "/slices.yaml", "slice_bytes: 1\n");
  r = runInfracc({t, "-storage-layout=" + dir + "/slices.yaml", "-emit=goal", "-max-memory=1G"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, t + ": error: the storage schedule's 10737418256 ops would need about 800.0 "
                       "GiB (10737418256 x 80 bytes), more than -max-memory (1.0 GiB); raise it "
                       "with -max-memory=\n");
}
