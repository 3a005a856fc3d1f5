// The exit statuses docs/htsim.md promises for run.sh: 2 when htsim cannot be found,
// 1 when htsim fails or a flow did not finish, 0 when every flow finished. A stand-in
// for htsim_eqds (a shell script printing htsim's flow lines) plays htsim.
#include "tests/htsim/HtsimTestUtil.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

namespace {

using namespace infracc::test;

const std::string OnePair = "-fabric=leaf_spine:leaves=2,spines=1,hosts_per_leaf=1,"
                            "host=simple_host,bw0=100G,bw1=100G,lat0=500ns,lat1=500ns";

struct Script {
  int status;
  std::string err;
};

Script runScript(const std::string &dir, std::vector<std::string> args,
                 std::vector<std::string> env = {}) {
  std::string errPath = dir + "/run.err", script = dir + "/run.sh";
  llvm::sys::fs::remove(errPath);
  std::vector<llvm::StringRef> argv = {"/usr/bin/env", "HTSIM_DIR="};
  for (const std::string &e : env)
    argv.push_back(e);
  argv.push_back("/bin/sh");
  argv.push_back(script);
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef("/dev/null"),
                                                llvm::StringRef(errPath)};
  int status = llvm::sys::ExecuteAndWait("/usr/bin/env", argv, std::nullopt, redirects);
  return {status, readFile(errPath)};
}

// An htsim_eqds stand-in that prints `lines` and exits with `status`.
std::string fakeHtsim(const std::string &dir, const std::string &lines, int status) {
  std::string bin = dir + "/bin";
  llvm::sys::fs::create_directories(bin);
  writeFile(bin + "/htsim_eqds",
            "#!/bin/sh\nprintf '" + lines + "'\nexit " + std::to_string(status) + "\n");
  llvm::sys::fs::setPermissions(bin + "/htsim_eqds", llvm::sys::fs::all_exe |
                                                         llvm::sys::fs::owner_read |
                                                         llvm::sys::fs::owner_write);
  return bin;
}

} // namespace

TEST(HtsimRunScript, ExitStatusesAreTheDocumentedOnes) {
  std::string dir = makeTempDir("htsim-run");
  writeFile(dir + "/one.goal", "num_ranks 2\nrank 0 {\nl1: send 100b to 1\n}\n"
                               "rank 1 {\nl1: recv 100b from 0\n}\n");
  RunResult r = runInfracc({OnePair, dir + "/one.goal", "-emit=htsim", "-o", dir + "/out"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = dir + "/out";
  // No htsim directory, or one without the binary: 2.
  Script s = runScript(out, {});
  EXPECT_EQ(s.status, 2);
  EXPECT_EQ(s.err, "run.sh: error: give the htsim binary directory as an argument or in "
                   "HTSIM_DIR\n");
  s = runScript(out, {dir});
  EXPECT_EQ(s.status, 2);
  EXPECT_NE(s.err.find("run.sh: error: no executable htsim_eqds in '" + dir + "'"),
            std::string::npos)
      << s.err;
  // htsim fails: 1.
  s = runScript(out, {fakeHtsim(dir, "", 3)});
  EXPECT_EQ(s.status, 1);
  EXPECT_EQ(s.err, "run.sh: error: htsim_eqds failed (exit status 3)\n");
  // The flow (id 1 in workload.cm) never finishes: 1.
  s = runScript(out, {fakeHtsim(dir, "", 0)}, {"END_US=5"});
  EXPECT_EQ(s.status, 1);
  EXPECT_EQ(s.err, "run.sh: error: not every flow finished by -end 5 us; run again with a "
                   "larger END_US\n");
  // It finishes: 0.
  s = runScript(out, {fakeHtsim(dir, "Flow eqds_0_1 flowId 1 uec finished at 2.5 total\\n", 0)});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.err, "");
}

// Past 50 ms of simulated time htsim prints progress dots ('.', '|') ahead of a "Flow ...
// finished at" line (seen with csg-htsim's htsim_eqds: ".Flow Eqds_0_1 flowId 1 eqdsSrc 0
// finished at 65958.8 ..." for 800 MB on 100 Gb/s). run.sh finds the completions anywhere
// in a line and writes results.tsv: a triggered flow starts when its trigger's last flow
// finished.
TEST(HtsimRunScript, CompletionsAfterProgressDotsAndResultsTsv) {
  std::string dir = makeTempDir("htsim-run");
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: send 100b to 1\n"
                               "l2: recv 200b from 1\n}\n"
                               "rank 1 {\nl1: recv 100b from 0\nl2: send 200b to 0\n"
                               "l2 requires l1\n}\n");
  RunResult r = runInfracc({OnePair, dir + "/two.goal", "-emit=htsim", "-o", dir + "/out"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = dir + "/out";
  Script s = runScript(out, {fakeHtsim(dir,
                                       "..|.Flow Eqds_0_1 flowId 1 eqdsSrc 0 finished at "
                                       "65958.8 total packets 2\\n"
                                       ".|Flow Eqds_1_0 flowId 2 eqdsSrc 1 finished at 65970.25 "
                                       "total packets 1\\n",
                                       0)});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.err, "");
  EXPECT_EQ(readFile(out + "/results.tsv"),
            "flow\tsrc_rank\tdst_rank\tsrc_nic\tdst_nic\tbytes\tstart_us\tfinish_us\n"
            "1\t0\t1\tsimple_host.0.nic.0\tsimple_host.1.nic.0\t100\t0\t65958.8\n"
            "2\t1\t0\tsimple_host.1.nic.0\tsimple_host.0.nic.0\t200\t65958.8\t65970.25\n");
}
