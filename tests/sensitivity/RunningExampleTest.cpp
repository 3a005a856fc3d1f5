// LLAMP's running example through -emit=lp and the -emit=sensitivity picture. The
// linear program (golden, both objectives) is solved by Debian's glpsol to the numbers
// -emit=sensitivity computes without a solver (T(500 ns) = 1615 ns, the 2 us tolerance
// L = 885 ns), and a 16-rank ring allreduce's to what LogGOPSim prints for it; the
// usage errors; the SVG curve with its tolerance zones and critical value (golden).
#include "tests/support/TestUtil.h"

#include <llvm/Support/Program.h>

#include <gtest/gtest.h>
#include <llvm/Support/Regex.h>


using namespace infracc::test;

namespace {

/// LLAMP's Fig. 4c: c0 = 0.1 us, send, c1 = 1 us; c2 = 0.5 us, recv, c3 = 1 us.
const char *RunningExample = R"(num_ranks 2
rank 0 {
c0: calc 100
s: send 4b to 1 tag 0
c1: calc 1000
s requires c0
c1 requires s
}
rank 1 {
c2: calc 500
r: recv 4b from 0 tag 0
c3: calc 1000
r requires c2
c3 requires r
}
)";

/// The paper's parameters: o = 0, g = 0, G = 5 ns per byte.
const std::vector<std::string> PaperParams = {"-sim-o=0", "-g=0", "-G=5"};

std::string runningExample() {
  std::string path = makeTempDir("lp") + "/llamp.goal";
  writeFile(path, RunningExample);
  return path;
}

/// Writes the LP of `args` to a file and returns its text.
std::string emitLp(std::vector<std::string> args, const std::string &path) {
  args.insert(args.end(), PaperParams.begin(), PaperParams.end());
  args.insert(args.end(), {"-emit=lp", "-o", path});
  RunResult r = runInfracc(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return readFile(path);
}

/// glpsol's optimum of the LP file, as printed ("obj = 1615 (MINimum)"), or "" when
/// glpsol fails.
std::string solve(const std::string &glpsol, const std::string &lp) {
  std::string sol = lp + ".sol";
  llvm::StringRef argv[] = {glpsol, "--lp", lp, "-o", sol};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef("/dev/null"),
                                                llvm::StringRef("/dev/null")};
  if (llvm::sys::ExecuteAndWait(glpsol, argv, std::nullopt, redirects) != 0)
    return "";
  llvm::SmallVector<llvm::StringRef, 2> m;
  std::string text = readFile(sol);
  return llvm::Regex("Objective: +obj = ([^\n]*)").match(text, &m) ? m[1].str() : "";
}

TEST(Lp, RunningExampleIsLlampsProgram) {
  std::string goal = runningExample(), dir = makeTempDir("lp-out");
  EXPECT_EQ(compareGolden("sensitivity/llamp-runtime.lp",
                          emitLp({goal, "-range=500:1us"}, dir + "/runtime.lp")),
            "");
  EXPECT_EQ(compareGolden("sensitivity/llamp-tolerance.lp",
                          emitLp({goal, "-range=0:1us", "-lp-objective=tolerance",
                                  "-tolerance=2us"},
                                 dir + "/tolerance.lp")),
            "");
}

TEST(Lp, GlpsolSolvesItToTheAnalysisNumbers) {
  auto glpsol = llvm::sys::findProgramByName("glpsol");
  if (!glpsol)
    GTEST_SKIP() << "glpsol not found on PATH (Debian package glpk-utils): the LP is not solved";
  std::string goal = runningExample(), dir = makeTempDir("lp-solve");
  // The same numbers -emit=sensitivity prints for this example (docs/sensitivity.md).
  emitLp({goal, "-range=500:1us"}, dir + "/runtime.lp");
  EXPECT_EQ(solve(*glpsol, dir + "/runtime.lp"), "1615 (MINimum)");
  emitLp({goal, "-range=0:1us", "-lp-objective=tolerance", "-tolerance=2us"},
         dir + "/tolerance.lp");
  EXPECT_EQ(solve(*glpsol, dir + "/tolerance.lp"), "885 (MAXimum)");
  // A percentage over T(L0) = 1515 ns: 10% is 1666.5 ns, reached at L = 551.5 ns.
  emitLp({goal, "-range=0:1us", "-lp-objective=tolerance", "-tolerance=10"},
         dir + "/percent.lp");
  EXPECT_EQ(solve(*glpsol, dir + "/percent.lp"), "551.5 (MAXimum)");
  // Beyond the range: the bound l <= 1000 is the answer, as -emit=sensitivity says.
  emitLp({goal, "-range=0:1us", "-lp-objective=tolerance", "-tolerance=3us"},
         dir + "/beyond.lp");
  EXPECT_EQ(solve(*glpsol, dir + "/beyond.lp"), "1000 (MAXimum)");

  // 16-rank ring allreduce at LogGOPSim's default L = 2500 ns: 12084180 ns, what
  // LogGOPSim printed for this file (ReadmeExamples; the simulator test checks it too).
  RunResult r = runInfracc({sourcePath("examples/ring-allreduce-16.goal"), "-emit=lp",
                            "-range=2500:100us", "-o", dir + "/ring.lp"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(solve(*glpsol, dir + "/ring.lp"), "12084180 (MINimum)");
}

TEST(Lp, UsageErrors) {
  std::string goal = runningExample();
  RunResult r = runInfracc({goal, "-emit=lp", "-lp-objective=fastest"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: unknown objective 'fastest' for -lp-objective; valid are: runtime, "
                   "tolerance\n");
  r = runInfracc({goal, "-emit=lp", "-lp-objective=tolerance", "-tolerance=1,2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=lp -lp-objective=tolerance writes one linear program: give one "
                   "-tolerance value (a percentage over T(L0) such as 2, or a runtime bound "
                   "such as 2us)\n");
  r = runInfracc({goal, "-emit=lp", "-lp-objective=tolerance", "-tolerance=2 us"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = runInfracc({goal, "-emit=lp", "-lp-objective=tolerance", "-tolerance=fast"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -tolerance=fast: write a percentage (1, 2.5%) or a runtime bound "
                   "with a unit (2us)\n");
}

// Contention is checked by one pass at each end of the range, and one more traces the
// curve; without those ends' slopes to show that the curve has few breakpoints (here
// one), a pass bounding the paths to the end comes first (relevance pruning).
TEST(SensitivityCurve, ContentionIsCheckedAtTheEndsOfTheRange) {
  std::string goal = runningExample();
  auto report = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {goal, "-emit=sensitivity"});
    args.insert(args.end(), PaperParams.begin(), PaperParams.end());
    RunResult r = runInfracc(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  std::string out = report({"-range=0:1us"});
  EXPECT_NE(out.find("contention: none at L=0 and 1000 ns, the ends of the range checked (T "
                     "equals the simulator's there)\nsimulator at L=0 ns: 1515 ns (equal)\n3 "
                     "sweeps over 7 elements (1 messages)\n"),
            std::string::npos)
      << out;
  out = report({"-range=500:500"});
  EXPECT_NE(out.find("contention: none at L=500 ns, the ends of the range checked (T equals the "
                     "simulator's there)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n2 sweeps over 7 elements"), std::string::npos) << out;
  out = report({"-range=0:1us", "-sensitivity-contention=false"});
  EXPECT_EQ(out.find("contention"), std::string::npos) << out;
  EXPECT_NE(out.find("\n2 sweeps over 7 elements (1 messages), one bounding"), std::string::npos)
      << out;
  // The JSON report says what pruning did. 34 sample points: 0, then 1000 ns times
  // 2^(-j/2) for j = 32..0, all distinct at this range's scale. Two merges: the message's
  // receipt (the arrival's one line and the posted recv's one line: 2 read; its result
  // is T's two lines, max(1515, L + 1115)) and the end (rank 0's one line and rank 1's
  // two: 3 read), 5 lines in all. Nothing dropped: both lines of the receipt are T's.
  out = report({"-range=0:1us", "-sensitivity-contention=false", "-format=json"});
  EXPECT_NE(out.find("\"sweeps\": 2,\n  \"pruning\": {\n    \"samples\": 34,\n    \"merges\": "
                     "2,\n    \"lines_merged\": 5,\n    \"lines_dropped\": 0\n  },"),
            std::string::npos)
      << out;
  out = report({"-range=0:1us", "-sensitivity-contention=false", "-sensitivity-prune=false"});
  EXPECT_NE(out.find("\n1 sweeps over 7 elements (1 messages)\n"), std::string::npos) << out;
}

TEST(SensitivityCurve, SvgShadesToleranceZonesAndMarksCriticalValues) {
  std::string goal = runningExample(), svg = makeTempDir("curve") + "/curve.svg";
  std::vector<std::string> args = {goal, "-emit=sensitivity", "-range=0:1us",
                                   "-tolerance=1,2,5,2us", "-o", svg};
  args.insert(args.end(), PaperParams.begin(), PaperParams.end());
  RunResult r = runInfracc(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("sensitivity/llamp-curve.svg", readFile(svg)), "");
}

} // namespace
