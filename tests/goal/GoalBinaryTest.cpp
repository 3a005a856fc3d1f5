// Binary GOAL: the writer against golden files, the reader on good and corrupted
// files, and round trips.
//
// How the golden .bin files were checked: they are written by infracc's writer
// (INFRACC_UPDATE_GOLDEN=1), and each was compared byte for byte with LogGOPSim's
// txt2bin (spcl/LogGOPSim 76451de, -O2 build) on the same input:
//   txt2bin -i tests/goal/inputs/X.goal -o /tmp/X.bin && cmp /tmp/X.bin tests/golden/goal/X.bin
//   txt2bin -i tests/golden/goal/ring5x2.goal -o /tmp/r.bin && cmp /tmp/r.bin tests/golden/goal/ring5x2.bin
// (all identical). tests/goal/tools/compare_with_txt2bin.sh repeats the comparison on
// schedgen's patterns (16 patterns x 5 sizes, all identical where txt2bin's input
// was valid).
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "formats/GoalBinaryFormat.h"
#include "support/Diagnostics.h"

#include <llvm/Support/Endian.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

struct Read {
  std::optional<Schedule> schedule;
  std::string diags;
};

Read readBinary(const std::string &bytes, const std::string &name = "x.bin") {
  Read r;
  llvm::raw_string_ostream os(r.diags);
  DiagEngine diags(os);
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(bytes, name);
  r.schedule = goal::readBinaryGoal(diags, std::move(buf));
  os.flush();
  return r;
}

Schedule parseOrDie(const std::string &text) {
  Parsed p = parseGoalText(text);
  if (!p.schedule)
    throw std::runtime_error(p.diags);
  return std::move(*p.schedule);
}

// describe() without the labels, which binary GOAL does not keep.
std::string withoutLabels(std::string d) {
  std::string out;
  size_t at = 0;
  while (at < d.size()) {
    size_t eol = d.find('\n', at);
    std::string line = d.substr(at, eol - at);
    size_t a = line.find(' ', line.find(' ') + 1);   // after "rR #i"
    size_t b = line.find(' ', a + 1);
    out += line.substr(0, a) + line.substr(b) + "\n";
    at = eol + 1;
  }
  return out;
}

const char *const Fixtures[] = {"irequires", "cpu_nic", "wildcards", "empty_ranks", "labels"};

// rank 0: l1 send 8b to 1 tag 5, l2 calc 3 cpu 1, l2 requires l1; rank 1: recv.
// Layout (file offsets): header 0..13, jump table 14..45, rank 0 at 46 (n=2, 1 root
// at 54, nodes at 58 and 97, appendix entry at 136), rank 1 at 140 (node at 152);
// 191 bytes.
std::string smallBinary() {
  return toBinary(parseOrDie("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 5\nl2: calc 3 cpu 1\n"
                             "l2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 5\n}\n"));
}

void put32(std::string &b, size_t at, uint32_t v) { llvm::support::endian::write32le(&b[at], v); }
void put64(std::string &b, size_t at, uint64_t v) { llvm::support::endian::write64le(&b[at], v); }

std::string readError(const std::string &bytes) {
  Read r = readBinary(bytes);
  EXPECT_FALSE(r.schedule.has_value());
  return r.diags;
}

} // namespace

TEST(GoalBinary, FixturesMatchGoldenFiles) {
  for (const char *name : Fixtures) {
    SCOPED_TRACE(name);
    std::string text = readFile(sourcePath(std::string("tests/goal/inputs/") + name + ".goal"));
    EXPECT_EQ(compareGolden(std::string("goal/") + name + ".bin", toBinary(parseOrDie(text))), "");
  }
}

TEST(GoalBinary, GeneratedRingAllreduceMatchesGoldenFile) {
  std::string text = ringAllreduceText(5, 2, 4096);
  EXPECT_EQ(compareGolden("goal/ring5x2.goal", text), "");
  EXPECT_EQ(compareGolden("goal/ring5x2.bin", toBinary(parseOrDie(text))), "");
}

TEST(GoalBinary, SmallBinaryLayout) {
  std::string b = smallBinary();
  ASSERT_EQ(b.size(), 191u);
  using llvm::support::endian::read32le;
  using llvm::support::endian::read64le;
  EXPECT_EQ(read64le(&b[0]), 4223u);
  EXPECT_EQ(read32le(&b[8]), 2u);
  EXPECT_EQ(uint8_t(b[12]), 1u);   // max cpu
  EXPECT_EQ(uint8_t(b[13]), 0u);   // max nic
  EXPECT_EQ(read64le(&b[14]), 38u);
  EXPECT_EQ(read64le(&b[22]), 132u);
  EXPECT_EQ(read64le(&b[30]), 132u);
  EXPECT_EQ(read64le(&b[38]), 183u);
  EXPECT_EQ(read32le(&b[46]), 2u);    // nodes
  EXPECT_EQ(read32le(&b[50]), 1u);    // roots
  EXPECT_EQ(read32le(&b[54]), 0u);    // root l1
  EXPECT_EQ(read32le(&b[58]), 0u);    // l1 dep_count
  EXPECT_EQ(uint8_t(b[62]), 1u);      // send
  EXPECT_EQ(read32le(&b[63]), 1u);    // peer
  EXPECT_EQ(read64le(&b[67]), 8u);    // size
  EXPECT_EQ(read32le(&b[75]), 5u);    // tag
  EXPECT_EQ(read32le(&b[81]), 1u);    // one requires-successor
  EXPECT_EQ(read32le(&b[85]), 0u);    // from appendix entry 0
  EXPECT_EQ(read32le(&b[89]), 0u);    // no irequires-successor
  EXPECT_EQ(read32le(&b[93]), 1u);
  EXPECT_EQ(read32le(&b[97]), 1u);    // l2 dep_count
  EXPECT_EQ(uint8_t(b[101]), 3u);     // calc
  EXPECT_EQ(uint8_t(b[118]), 1u);     // cpu
  EXPECT_EQ(read32le(&b[136]), 1u);   // appendix: l2
}

TEST(GoalBinary, ReadBackGivesTheSameSchedule) {
  for (const char *name : Fixtures) {
    SCOPED_TRACE(name);
    Schedule s = parseOrDie(readFile(sourcePath(std::string("tests/goal/inputs/") + name + ".goal")));
    std::string bytes = toBinary(s);
    Read r = readBinary(bytes);
    ASSERT_TRUE(r.schedule) << r.diags;
    EXPECT_EQ(withoutLabels(describe(*r.schedule)), withoutLabels(describe(s)));
    EXPECT_FALSE(r.schedule->hasLabels());
    EXPECT_EQ(r.schedule->maxCpu(), s.maxCpu());
    EXPECT_EQ(r.schedule->maxNic(), s.maxNic());
    EXPECT_EQ(toBinary(*r.schedule), bytes);
  }
}

TEST(GoalBinary, DriverWritesAndReadsBinary) {
  std::string dir = makeTempDir("goal-bin");
  std::string in = sourcePath("tests/goal/inputs/cpu_nic.goal");
  RunResult w = runInfracc({in, "-emit=goal-bin", "-o", dir + "/x.bin"});
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(w.err, "");
  EXPECT_EQ(readFile(dir + "/x.bin"), readFile(sourcePath("tests/golden/goal/cpu_nic.bin")));
  // .bin in, binary out: the same bytes; text out: our plain GOAL of the same schedule.
  RunResult again = runInfracc({dir + "/x.bin", "-emit=goal-bin", "-o", dir + "/y.bin"});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(readFile(dir + "/y.bin"), readFile(dir + "/x.bin"));
  RunResult text = runInfracc({dir + "/x.bin", "-emit=goal"});
  RunResult text2 = runInfracc({in, "-emit=goal"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out, text2.out);
  // A binary file without the .bin extension is recognised by its magic number.
  writeFile(dir + "/schedule.dat", readFile(dir + "/x.bin"));
  RunResult sniffed = runInfracc({dir + "/schedule.dat", "-emit=goal"});
  EXPECT_EQ(sniffed.status, 0) << sniffed.err;
  EXPECT_EQ(sniffed.out, text.out);
}

TEST(GoalBinary, RefusesCpuOrNicAbove255) {
  std::string dir = makeTempDir("goal-bin-cpu");
  writeFile(dir + "/t.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 cpu 300\nl2: calc 1 cpu 255\n"
                             "}\nrank 1 {\nl1: recv 8b from 0 nic 256\n}\n");
  RunResult r = runInfracc({dir + "/t.goal", "-emit=goal-bin", "-o", dir + "/t.bin"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t.goal: error: rank 0 operation 'l1' uses cpu 300; binary GOAL stores "
                         "the cpu index in one byte (0..255), so this schedule can only be "
                         "written as text (-emit=goal)\n" +
                     dir + "/t.goal: error: rank 1 operation 'l1' uses nic 256; binary GOAL "
                           "stores the nic index in one byte (0..255), so this schedule can "
                           "only be written as text (-emit=goal)\n");
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/t.bin"));
  // The text writer keeps them.
  RunResult t = runInfracc({dir + "/t.goal", "-emit=goal"});
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("l1: send 8b to 1 tag 0 cpu 300\n"), std::string::npos);
}

TEST(GoalBinary, ReaderRejectsTruncatedFiles) {
  std::string b = smallBinary();
  EXPECT_EQ(readError(b.substr(0, 5)),
            "x.bin:offset 0: error: the file is 5 bytes long; binary GOAL starts with the 8-byte "
            "magic number 4223\n");
  EXPECT_EQ(readError(b.substr(0, 10)),
            "x.bin:offset 10: error: the file ends inside the header (10 bytes; the header has "
            "14)\n");
  EXPECT_EQ(readError(b.substr(0, 30)),
            "x.bin:offset 30: error: the file ends inside the jump table: 2 ranks need a table up "
            "to offset 46, but the file has 30 bytes\n");
  EXPECT_EQ(readError(b.substr(0, 190)),
            "x.bin:offset 38: error: rank 1's data ends at 183 (relative to byte 8), outside the "
            "file (190 bytes) or before its 8-byte header\n");
  EXPECT_EQ(readError(b + "abc"),
            "x.bin:offset 191: error: 3 bytes follow the data of the last rank; the file is "
            "inconsistent\n");
}

TEST(GoalBinary, ReaderRejectsInconsistentFiles) {
  struct Case {
    size_t at;
    int width;   // 1, 4 or 8 bytes
    uint64_t value;
    const char *message;
  };
  const Case cases[] = {
      {0, 8, 2342,
       "x.bin:offset 0: error: this binary GOAL file was consumed by a 'LogGOPSim --save-mem' run "
       "(magic 2342); convert the text schedule again\n"},
      {0, 8, 1234, "x.bin:offset 0: error: not a binary GOAL file: the magic number is 1234, "
                   "expected 4223\n"},
      {8, 4, 0, "x.bin:offset 8: error: num_ranks is 0; a schedule has at least one rank\n"},
      {14, 8, 40,
       "x.bin:offset 14: error: rank 0's data starts at 40 (relative to byte 8), expected 38, "
       "right after the jump table\n"},
      {30, 8, 131,
       "x.bin:offset 30: error: rank 1's data starts at 131 (relative to byte 8), expected 132, "
       "where rank 0's data ends\n"},
      {38, 8, 500,
       "x.bin:offset 38: error: rank 1's data ends at 500 (relative to byte 8), outside the file "
       "(191 bytes) or before its 8-byte header\n"},
      {46, 4, 3,
       "x.bin:offset 46: error: rank 0 declares 3 operations and 1 roots, which need 129 bytes, "
       "but its data is 94 bytes long\n"},
      {101, 1, 9,
       "x.bin:offset 101: error: rank 0 operation 1: type 9 is not 1 (send), 2 (recv) or 3 "
       "(calc)\n"},
      {63, 4, 2,
       "x.bin:offset 63: error: rank 0 operation 0: destination rank 2 is out of range "
       "(num_ranks is 2)\n"},
      {157, 4, 0xFFFFFFFFu, nullptr},   // recv from any source: valid
      {85, 4, 1,
       "x.bin:offset 85: error: rank 0 operation 0: its successor list starts at appendix entry "
       "1, expected 0 (successor lists follow each other in operation order)\n"},
      {89, 4, 1,
       "x.bin:offset 81: error: rank 0 operation 0: its successor lists run past the end of the "
       "rank's appendix (1 entries)\n"},
      {136, 4, 7,
       "x.bin:offset 136: error: rank 0 operation 0: successor 7 is not an operation of the rank "
       "(it has 2)\n"},
      {97, 4, 2,
       "x.bin:offset 97: error: rank 0 operation 1: its dependency count is 2, but 1 successor "
       "lists name it\n"},
      {54, 4, 1,
       "x.bin:offset 54: error: rank 0's root list does not match: operation 0 has no "
       "dependencies and must be listed (roots are the operations without dependencies, "
       "ascending)\n"},
      {12, 1, 3,
       "x.bin:offset 12: error: the header says the largest cpu index is 3, but the operations "
       "use 1\n"},
      {13, 1, 1,
       "x.bin:offset 13: error: the header says the largest nic index is 1, but the operations "
       "use 0\n"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.at);
    std::string b = smallBinary();
    if (c.width == 1)
      b[c.at] = char(c.value);
    else if (c.width == 4)
      put32(b, c.at, uint32_t(c.value));
    else
      put64(b, c.at, c.value);
    if (c.message) {
      EXPECT_EQ(readError(b), c.message);
    } else {
      Read r = readBinary(b);
      EXPECT_TRUE(r.schedule.has_value()) << r.diags;
    }
  }
}

TEST(GoalBinary, ReaderErrorThroughTheDriver) {
  std::string dir = makeTempDir("goal-bin-bad");
  std::string b = smallBinary();
  b[101] = 9;
  writeFile(dir + "/bad.bin", b);
  RunResult r = runInfracc({dir + "/bad.bin", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, dir + "/bad.bin:offset 101: error: rank 0 operation 1: type 9 is not 1 "
                         "(send), 2 (recv) or 3 (calc)\n");
}

// The ranks are checked in contiguous shares by several threads (one per CPU for large
// files); the schedule and the first error in the file must not depend on how many.
namespace {

namespace bin = goal::bin;

// Six ranks in a ring, rank r sending 2^r bytes on, with a calc between that uses cpu
// (r % 2) and a wildcard recv: ops of different sizes in every share.
std::string sixRanks() {
  std::string text = "num_ranks 6\n";
  for (int r = 0; r < 6; ++r)
    text += "rank " + std::to_string(r) + " {\nl1: send " + std::to_string(1 << r) + "b to " +
            std::to_string((r + 1) % 6) + " tag 1\nl2: calc " + std::to_string(10 * r) +
            " cpu " + std::to_string(r % 2) + "\nl3: recv " + std::to_string(1 << ((r + 5) % 6)) +
            "b from -1 tag 1\nl2 requires l1\nl3 irequires l2\n}\n";
  return toBinary(parseOrDie(text));
}

Read readBinaryThreads(const std::string &bytes, unsigned threads) {
  Read r;
  llvm::raw_string_ostream os(r.diags);
  DiagEngine diags(os);
  r.schedule = goal::readBinaryGoal(diags, llvm::MemoryBuffer::getMemBufferCopy(bytes, "x.bin"),
                                    nullptr, threads);
  os.flush();
  return r;
}

// The file offset of field `field` of op `op` of rank `rank`.
size_t nodeField(const std::string &b, uint32_t rank, uint32_t op, size_t field) {
  size_t start = bin::OffsetBase +
                 llvm::support::endian::read64le(&b[bin::JumpTableAt + bin::JumpEntrySize * rank]);
  uint32_t roots = llvm::support::endian::read32le(&b[start + 4]);
  return start + bin::RankHeaderSize + 4 * roots + bin::NodeSize * op + field;
}

} // namespace

TEST(GoalBinary, ThreadsGiveTheSameSchedule) {
  std::string bytes = sixRanks();
  Read one = readBinaryThreads(bytes, 1);
  ASSERT_TRUE(one.schedule) << one.diags;
  for (unsigned threads : {2u, 3u, 4u, 6u, 9u}) {
    SCOPED_TRACE(threads);
    Read r = readBinaryThreads(bytes, threads);
    ASSERT_TRUE(r.schedule) << r.diags;
    EXPECT_EQ(describe(*r.schedule), describe(*one.schedule));
    EXPECT_EQ(r.schedule->maxCpu(), 1u);
    EXPECT_EQ(toBinary(*r.schedule), bytes);
  }
}

TEST(GoalBinary, ThreadsReportTheFirstErrorInTheFile) {
  const std::string good = sixRanks();
  auto typeError = [&](uint32_t rank) {
    return "x.bin:offset " + std::to_string(nodeField(good, rank, 1, bin::node::Type)) +
           ": error: rank " + std::to_string(rank) +
           " operation 1: type 9 is not 1 (send), 2 (recv) or 3 (calc)\n";
  };
  std::string late = good;   // an error in the last share only
  late[nodeField(good, 5, 1, bin::node::Type)] = 9;
  std::string both = late;   // and one in the first share
  both[nodeField(good, 1, 1, bin::node::Type)] = 9;
  for (unsigned threads : {1u, 2u, 3u, 6u}) {
    SCOPED_TRACE(threads);
    Read r = readBinaryThreads(late, threads);
    EXPECT_FALSE(r.schedule);
    EXPECT_EQ(r.diags, typeError(5));
    r = readBinaryThreads(both, threads);
    EXPECT_FALSE(r.schedule);
    EXPECT_EQ(r.diags, typeError(1));
  }
  // The largest cpu index is taken over all shares before the header is compared.
  std::string cpu = good;
  cpu[nodeField(good, 4, 1, bin::node::Cpu)] = 2;
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    Read r = readBinaryThreads(cpu, threads);
    EXPECT_FALSE(r.schedule);
    EXPECT_EQ(r.diags, "x.bin:offset 12: error: the header says the largest cpu index is 1, "
                       "but the operations use 2\n");
  }
}
