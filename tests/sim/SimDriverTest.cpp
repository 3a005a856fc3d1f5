// -emit=sim through the infracc binary: options, output files, report formats, exit
// statuses. Numbers are those of SimLgsRulesTest / SimAtlahsTest (hand-derived and
// checked against LogGOPSim and ATLAHS's LogGOPSim).
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>

using namespace infracc::test;

namespace {

const char *Nbp2p = R"(num_ranks 2

rank 0 {
l1: calc 1
l2: send 1b to 1
l3: calc 2
l4: calc 3
l2 requires l1
l3 irequires l2
l4 requires l2
l4 requires l3
}

rank 1 {
l1: calc 1
l2: recv 1b from 0
l3: calc 2
l4: calc 3
l2 requires l1
l3 irequires l2
l4 requires l2
l4 requires l3
}
)";

std::string writeGoal(const std::string &dir, const std::string &name, const std::string &text) {
  std::string path = dir + "/" + name;
  writeFile(path, text);
  return path;
}

/// stdout without the PERFORMANCE line (wall-clock fields).
std::string stable(const std::string &out) {
  std::string kept;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(out), '\n'))
    if (!line.empty() && !line.starts_with("PERFORMANCE: "))
      kept += line.str() + "\n";
  return kept;
}

} // namespace

TEST(SimDriver, PrintsWhatLogGOPSimPrints) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult r = runInfracc({goal, "-emit=sim"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(stable(r.out),
            "LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, O=0, "
            "P=2, S=65535\n"
            "Times: \n"
            "Host 0: 1506\n"
            "Host 1: 5504\n");
  EXPECT_NE(r.out.find("PERFORMANCE: Processes: 2 \t Events: 9 \t Time: "), std::string::npos);
  // sim is the default target for a workload.
  RunResult d = runInfracc({goal});
  EXPECT_EQ(stable(d.out), stable(r.out));
}

TEST(SimDriver, DashOIsTheOutputAndSimOTheOverhead) {
  // o = 0: rank 0 ends at 6 (1 + 2 + 3), rank 1 at 2501 (arrival 1 + 2500) + 3.
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult b = runInfracc({goal, "-sim-o=0"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("o=0 g=1000"), std::string::npos);
  EXPECT_NE(b.out.find("Host 0: 6\nHost 1: 2504\n"), std::string::npos) << b.out;
  // `-o 0` is a file named 0, with a warning for LogGOPSim users.
  RunResult a = runInfracc({goal, "-o", "0"}, dir);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(a.err, "infracc: warning: -o 0 writes the output to a file named '0'; LogGOPSim's "
                   "overhead o is -sim-o=0 (or -lgs-compat -o 0); write ./0 for the file\n");
  EXPECT_NE(readFile(dir + "/0").find("o=1500 g=1000"), std::string::npos);
  RunResult two = runInfracc({goal, "-o", dir + "/report.txt", "-o", "100"});
  EXPECT_EQ(two.status, 2);
  EXPECT_EQ(two.err, "infracc: error: -o is given 2 times ('" + dir +
                         "/report.txt', '100'); give one output (the simulator's overhead is "
                         "-sim-o)\n");
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/report.txt"));
}

TEST(SimDriver, LgsCompatReadsLogGOPSimSpellings) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult a = runInfracc({"-lgs-compat", goal, "-o", "0"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("o=0 g=1000"), std::string::npos);
  EXPECT_NE(a.out.find("Host 0: 6\nHost 1: 2504\n"), std::string::npos) << a.out;
  RunResult both = runInfracc({"-lgs-compat", goal, "-o", "0", "-sim-o=0"});
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err,
            "infracc: error: the overhead is given twice (-o 0 and -sim-o=0); give one\n");
  RunResult frac = runInfracc({"-lgs-compat", goal, "-o", "12.5"});
  EXPECT_EQ(frac.status, 2);
  EXPECT_EQ(frac.err,
            "infracc: error: -o 12.5: the overhead o must be a whole number of nanoseconds\n");
  // A numeric -o and an output file together.
  RunResult r = runInfracc({"-lgs-compat", goal, "-o", dir + "/report.txt", "-o", "100"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(readFile(dir + "/report.txt").find("o=100 g=1000"), std::string::npos);
  // LogGOPSim 76451de, `LogGOPSim -f nbp2p.bin -b` on this schedule (txt2bin'd) printed
  //   LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, ...
  //   PERFORMANCE: Processes: 2 \t Events: 9 \t Time: 0 s \t Speed: inf ev/s
  //   Maximum finishing time at host 1: 5504 (5.504e-06 s)
  // and `-f nbp2p.bin -o0 -L2000` ended with Host 1: 2004.
  RunResult b = runInfracc({"-lgs-compat", "-f", goal, "-b"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(stable(b.out),
            "LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, O=0, "
            "P=2, S=65535\n"
            "Maximum finishing time at host 1: 5504 (5.504e-06 s)\n");
  EXPECT_NE(b.out.find("PERFORMANCE: Processes: 2 \t Events: 9 \t Time: "), std::string::npos);
  RunResult c = runInfracc({"-lgs-compat", "-f", goal, "-o", "0", "-L2000"});
  EXPECT_NE(c.out.find("Host 1: 2004\n"), std::string::npos) << c.out;
  // Without -lgs-compat, LogGOPSim's spellings are refused with the infracc spelling.
  RunResult nb = runInfracc({goal, "-b"});
  EXPECT_EQ(nb.status, 2);
  EXPECT_EQ(nb.err, "infracc: error: -b is LogGOPSim's spelling of batch mode: write -sim-batch "
                    "(only the maximum finishing time), or add -lgs-compat for LogGOPSim's -b\n");
  RunResult nf = runInfracc({"-f", goal});
  EXPECT_EQ(nf.status, 2);
  EXPECT_EQ(nf.err, "infracc: error: -f is LogGOPSim's spelling of the input schedule: name the "
                    "file without -f, or add -lgs-compat\n");
}

TEST(SimDriver, LogGPValuesFollowTheOptionAsInLogGOPSim) {
  // -L2000 and -L 2000 as LogGOPSim takes them, and -L=2000 (LLVM's spelling).
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  std::string header = "LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2000, o=1500 g=7, "
                       "G=0.5, O=2, P=2, S=100\n";
  for (std::vector<std::string> args :
       {std::vector<std::string>{"-L2000", "-g7", "-G0.5", "-O2", "-S100"},
        std::vector<std::string>{"-L", "2000", "-g", "7", "-G", "0.5", "-O", "2", "-S", "100"},
        std::vector<std::string>{"-L=2000", "-g=7", "-G=0.5", "-O=2", "-S=100"}}) {
    args.insert(args.begin(), goal);
    RunResult r = runInfracc(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), header) << llvm::join(args, " ");
  }
}

TEST(SimDriver, FractionalGAndOAreAcceptedNegativeOnesAreNot) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "p.goal",
                               "num_ranks 2\n\nrank 0 {\ns: send 1024b to 1\n}\n\nrank 1 {\nr: "
                               "recv 1024b from 0\n}\n");
  // G = 0.5: trunc(1023*0.5) = 511 -> 4000 + 1500 + 511.
  RunResult r = runInfracc({goal, "-G", "0.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("G=0.5, O=0"), std::string::npos);
  EXPECT_NE(r.out.find("Host 1: 6011\n"), std::string::npos) << r.out;
  RunResult neg = runInfracc({goal, "-G=-1"});
  EXPECT_EQ(neg.status, 2);
  EXPECT_EQ(neg.err, "infracc: error: -G=-1: must be a non-negative number of ns per byte\n");
}

TEST(SimDriver, ModelsAndReportFormatsAreChecked) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult bad = runInfracc({goal, "-sim-model=nope"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "infracc: error: unknown model 'nope' for -sim-model; valid models are: atlahs, flow, gpu, lgs, "
            "topo\n");
  RunResult fmt = runInfracc({goal, "-sim-report=xml"});
  EXPECT_EQ(fmt.status, 2);
  EXPECT_EQ(fmt.err, "infracc: error: -emit=sim writes text or json, not 'xml'\n");
  RunResult atl = runInfracc({goal, "-sim-model=atlahs"});
  ASSERT_EQ(atl.status, 0) << atl.err;
  EXPECT_EQ(stable(atl.out),
            "size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6.000000, O=0, P=2, S=65535\n"
            "Average FCT is 0.040000\n"
            "Times: \n"
            "Host 0: 1506\n"
            "Host 1: 6504\n");
  // -sim-batch: that one line and nothing else, for any model.
  RunResult batch = runInfracc({goal, "-sim-batch"});
  EXPECT_EQ(batch.out, "Maximum finishing time at host 1: 5504 (5.504e-06 s)\n");
  batch = runInfracc({goal, "-sim-batch", "-sim-model=atlahs"});
  EXPECT_EQ(batch.out, "Maximum finishing time at host 1: 6504 (6.504e-06 s)\n");
}

TEST(SimDriver, JsonReportSchema) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult r = runInfracc({goal, "-sim-report=json"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "lgs");
  EXPECT_EQ(j["parameters"],
            nlohmann::json::parse(R"({"L_ns":2500,"o_ns":1500,"g_ns":1000,"G_ns_per_byte":6,
                                      "O_ns_per_byte":0,"S_bytes":65535})"));
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["cpus_per_rank"], 1);
  EXPECT_EQ(j["nics_per_rank"], 1);
  EXPECT_EQ(j["makespan_ns"], 5504);
  EXPECT_EQ(j["makespan_rank"], 1);
  EXPECT_EQ(j["hosts"], nlohmann::json::parse(R"([
    {"rank":0,"finish_ns":1506,"cpu_finish_ns":[1506]},
    {"rank":1,"finish_ns":5504,"cpu_finish_ns":[5504]}])"));
  EXPECT_EQ(j["counts"], nlohmann::json::parse(R"({"ops":8,"events":9,"reinsertions":0,"messages":1,
                                                  "bytes":1,"eager":1,"rendezvous":0})"));
  const nlohmann::json &cp = j["critical_path"];
  EXPECT_EQ(cp["length_ns"], 5504);
  EXPECT_EQ(cp["breakdown_ns"], nlohmann::json::parse(R"({"computation":4,"overhead":3000,"gap":0,
                                                         "latency":2500,"bandwidth":0,"wait":0})"));
  EXPECT_EQ(cp["steps"], nlohmann::json::parse(R"([
    {"kind":"calc","rank":0,"op":0,"label":"l1","via":"start","start_ns":0,"end_ns":1,
     "breakdown_ns":{"computation":1}},
    {"kind":"send","rank":0,"op":1,"label":"l2","to_rank":1,"via":"cpu","start_ns":1,"end_ns":4001,
     "breakdown_ns":{"overhead":1500,"latency":2500}},
    {"kind":"message","rank":1,"from_rank":0,"send_op":1,"send_label":"l2","via":"arrival",
     "start_ns":4001,"end_ns":5501,"breakdown_ns":{"overhead":1500}},
    {"kind":"calc","rank":1,"op":3,"label":"l4","via":"cpu","start_ns":5501,"end_ns":5504,
     "breakdown_ns":{"computation":3}}])"));
  EXPECT_TRUE(j["performance"]["wall_seconds"].is_number());
  EXPECT_TRUE(j["performance"]["events_per_second"].is_number());
  // A .json output file implies the JSON report.
  RunResult f = runInfracc({goal, "-o", dir + "/r.json"});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(readFile(dir + "/r.json"))["makespan_ns"], 5504);
}

TEST(SimDriver, AScheduleThatCannotFinishIsAnErrorWithNoOutput) {
  // A cycle through messages: each rank receives before it sends (the verifier only
  // checks cycles within a rank).
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "cycle.goal",
                               "num_ranks 2\n\nrank 0 {\nr: recv 8b from 1\ns: send 8b to 1\ns "
                               "requires r\n}\n\nrank 1 {\nr: recv 8b from 0\ns: send 8b to 0\ns "
                               "requires r\n}\n");
  RunResult r = runInfracc({goal, "-o", dir + "/out.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/out.txt"));
  EXPECT_EQ(r.err,
            goal + ": error: the schedule cannot finish: 4 operations never completed (2 ranks "
                   "affected; simulated time reached 0 ns)\n" +
                goal + ": note: rank 0: r (op 0): recv 8b from 1 tag 0: posted at 0 ns, no "
                       "matching message arrived\n" +
                goal + ": note: rank 0: s (op 1): send 8b to 1 tag 0: never started: its "
                       "dependency was never satisfied\n" +
                goal + ": note: rank 1: r (op 0): recv 8b from 0 tag 0: posted at 0 ns, no "
                       "matching message arrived\n" +
                goal + ": note: rank 1: s (op 1): send 8b to 0 tag 0: never started: its "
                       "dependency was never satisfied\n");
}

TEST(SimDriver, BinaryGoalGivesTheSameResult) {
  std::string dir = makeTempDir("sim");
  std::string goal = writeGoal(dir, "nbp2p.goal", Nbp2p);
  RunResult conv = runInfracc({goal, "-emit=goal-bin", "-o", dir + "/nbp2p.bin"});
  ASSERT_EQ(conv.status, 0) << conv.err;
  RunResult text = runInfracc({goal});
  RunResult bin = runInfracc({dir + "/nbp2p.bin"});
  ASSERT_EQ(bin.status, 0) << bin.err;
  EXPECT_EQ(stable(bin.out), stable(text.out));
}

TEST(SimDriver, MaxEventsStopsWithAnErrorAndWritesNothing) {
  // ring5x2: 5 ranks of 48 ops (240), 16 steps of a 4096-byte send to the right, the
  // recv from the left, a calc of 1200 that requires it, the next send after the calc.
  // Events in all: 320, as LogGOPSim 76451de prints for the same file (txt2bin, then
  // LogGOPSim -f: "Events: 320"). By hand, with the defaults o=1500, L=2500, G=6: a step
  // takes o + L + o + 4095 G + 1200 = 31270 ns, so the run ends at 16 x 31270 = 500320.
  // The last events scheduled are the five calcs freed when the last messages arrive,
  // all at 15 x 31270 + o + L = 473050: with 319 allowed, the run stops there, those
  // five calcs not done (235 of 240). Each rank has 17 roots (the first send and its 16
  // recvs), numbered first (85); rank 0's send then schedules its message: 86 events
  // and one op done (the eager send) when the roots of rank 0 have run.
  std::string dir = makeTempDir("sim-max-events");
  std::string goal = sourcePath("tests/golden/goal/ring5x2.goal");
  RunResult full = runInfracc({goal, "-emit=sim", "-sim-batch"});
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_EQ(full.out, "Maximum finishing time at host 0: 500320 (0.00050032 s)\n");
  // Every event allowed: the same run.
  RunResult all = runInfracc({goal, "-emit=sim", "-sim-batch", "-sim-max-events=320"});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.out, full.out);
  // One fewer: stopped at the last event, and no report file.
  RunResult cut = runInfracc(
      {goal, "-emit=sim", "-sim-max-events=319", "-o", dir + "/report.txt"});
  EXPECT_EQ(cut.status, 1);
  EXPECT_EQ(cut.err, goal + ": error: the simulation was stopped after 320 events at simulated "
                            "time 473050 ns, as -sim-max-events asks; 235 of 240 operations "
                            "were done\n");
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/report.txt"));
  // The roots are counted first (each rank's, then the check): a tiny limit stops after
  // the first rank's roots have run (86 events, above).
  RunResult early = runInfracc({goal, "-emit=sim", "-sim-max-events=7"});
  EXPECT_EQ(early.status, 1);
  EXPECT_EQ(early.err, goal + ": error: the simulation was stopped after 86 events at simulated "
                              "time 0 ns, as -sim-max-events asks; 1 of 240 operations were "
                              "done\n");
  // The other engines stop the same way.
  RunResult atlahs = runInfracc({goal, "-emit=sim", "-sim-model=atlahs", "-sim-max-events=100"});
  EXPECT_EQ(atlahs.status, 1);
  EXPECT_NE(atlahs.err.find("error: the simulation was stopped after "), std::string::npos)
      << atlahs.err;
}
