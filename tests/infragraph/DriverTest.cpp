// Driver behaviour on fabrics: --help, unknown targets, exit codes, atomic outputs,
// several errors per run and the error cap.
#include "ir/TargetRegistry.h"
#include "tests/support/TestUtil.h"

#include <llvm/Support/FileSystem.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

std::string example(const std::string &name) { return sourcePath("examples/" + name); }

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    out.push_back(it->path().substr(dir.size() + 1));
  std::sort(out.begin(), out.end());
  return out;
}

// A fabric with `n` edges that each name an instance that does not exist.
std::string manyErrors(int n) {
  std::string doc = "devices:\n- name: d\n  components: [{name: p, count: 1, choice: port}]\n"
                    "links: [{name: l}]\n"
                    "instances: [{name: x, device: d, count: 1}]\n"
                    "edges:\n";
  for (int i = 0; i < n; ++i)
    doc += "- {ep1: {instance: y" + std::to_string(i) +
           ", component: p}, ep2: {instance: x, component: p}, scheme: one2one, link: l}\n";
  return doc;
}

} // namespace

TEST(Driver, HelpListsEveryTarget) {
  RunResult r = runInfracc({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const Target *t : TargetRegistry::all()) {
    EXPECT_NE(r.out.find("  " + t->name + " "), std::string::npos) << t->name;
    EXPECT_NE(r.out.find(t->description), std::string::npos) << t->name;
  }
  for (const char *name : {"infragraph", "digest", "fqg", "stats"})
    EXPECT_NE(r.out.find(std::string("  ") + name + " "), std::string::npos) << name;
}

TEST(Driver, UnknownTargetIsAUsageErrorListingTheValidOnes) {
  RunResult r = runInfracc({example("single-switch.yaml"), "-emit=fgq"});
  EXPECT_EQ(r.status, 2);
  std::string known;
  for (const Target *t : TargetRegistry::all())
    known += (known.empty() ? "" : ", ") + t->name;
  EXPECT_EQ(r.err, "infracc: error: unknown target 'fgq' for -emit; valid targets are: " + known +
                       "\n");
  EXPECT_EQ(r.out, "");
}

TEST(Driver, SuccessIsExitZero) {
  RunResult r = runInfracc({example("single-switch.yaml"), "-emit=digest"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
}

TEST(Driver, BadInputIsExitOne) {
  std::string dir = makeTempDir("driver");
  writeFile(dir + "/bad.yaml", "devices: [\n");
  RunResult r = runInfracc({dir + "/bad.yaml", "-emit=fqg"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/bad.yaml:1:11: error: YAML syntax: could not find closing ]!\n"
                         "devices: [\n          ^\n");
}

TEST(Driver, MissingFileIsExitTwo) {
  RunResult r = runInfracc({"/nonexistent/fabric.yaml", "-emit=fqg"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: no such file: '/nonexistent/fabric.yaml'\n");
}

TEST(Driver, UnsupportedFormatIsExitTwo) {
  RunResult r = runInfracc({example("single-switch.yaml"), "-emit=fqg", "-format=xml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=fqg writes json or tsv, not 'xml'\n");
}

TEST(Driver, FailedRunLeavesNoOutputFile) {
  std::string dir = makeTempDir("driver");
  writeFile(dir + "/bad.yaml", manyErrors(2));
  RunResult r = runInfracc({dir + "/bad.yaml", "-emit=fqg", "-o", dir + "/out.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(filesIn(dir), (std::vector<std::string>{"bad.yaml"}));
  // A failure inside the backend (after the output was opened) leaves nothing either.
  r = runInfracc({example("single-switch.yaml"), "-emit=fqg", "-format=xml", "-o",
                  dir + "/out.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(filesIn(dir), (std::vector<std::string>{"bad.yaml"}));
}

TEST(Driver, FailedRunKeepsAnExistingOutputFile) {
  std::string dir = makeTempDir("driver");
  writeFile(dir + "/bad.yaml", manyErrors(1));
  writeFile(dir + "/out.json", "previous\n");
  RunResult r = runInfracc({dir + "/bad.yaml", "-emit=fqg", "-o", dir + "/out.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(readFile(dir + "/out.json"), "previous\n");
  EXPECT_EQ(filesIn(dir), (std::vector<std::string>{"bad.yaml", "out.json"}));
}

TEST(Driver, OutputFileIsWrittenOnSuccess) {
  std::string dir = makeTempDir("driver");
  RunResult r = runInfracc({example("single-switch.yaml"), "-emit=digest", "-o", dir + "/d"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(filesIn(dir), (std::vector<std::string>{"d"}));
  EXPECT_EQ(readFile(dir + "/d"), runInfracc({example("single-switch.yaml"), "-emit=digest"}).out);
}

TEST(Driver, SeveralErrorsInOneRun) {
  std::string dir = makeTempDir("driver");
  writeFile(dir + "/bad.yaml", manyErrors(3));
  RunResult r = runInfracc({dir + "/bad.yaml"});
  EXPECT_EQ(r.status, 1);
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(r.err.find("error: instance 'y" + std::to_string(i) + "' is not defined"),
              std::string::npos)
        << r.err;
}

TEST(Driver, ErrorsAreCapped) {
  std::string dir = makeTempDir("driver");
  writeFile(dir + "/bad.yaml", manyErrors(50));
  RunResult r = runInfracc({dir + "/bad.yaml", "-error-limit=4"});
  EXPECT_EQ(r.status, 1);
  size_t errors = 0;
  for (size_t p = r.err.find(": error: "); p != std::string::npos; p = r.err.find(": error: ", p + 1))
    ++errors;
  EXPECT_EQ(errors, 4u) << r.err;
  EXPECT_NE(r.err.find("infracc: note: too many errors (limit 4, see -error-limit); stopping "
                       "here\n"),
            std::string::npos)
      << r.err;
}

TEST(Driver, DefaultTargetForAFabricIsStats) {
  RunResult a = runInfracc({example("single-switch.yaml")});
  RunResult b = runInfracc({example("single-switch.yaml"), "-emit=stats"});
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(Driver, WerrorTurnsTheOne2OneWarningIntoAnError) {
  std::string dir = makeTempDir("werror");
  writeFile(dir + "/f.yaml", "name: f\n"
                             "devices:\n"
                             "- name: h\n"
                             "  components: [{name: nic, count: 2, choice: nic}]\n"
                             "- name: s\n"
                             "  components: [{name: port, count: 4, choice: port}]\n"
                             "  links: [{name: ic}]\n"
                             "  edges: [{ep1: {component: \"port[0]\"}, ep2: {component: "
                             "\"port[1:4]\"}, scheme: many2many, link: ic}]\n"
                             "links: [{name: eth}]\n"
                             "instances: [{name: host, device: h, count: 1}, {name: sw, device: s, "
                             "count: 1}]\n"
                             "edges:\n"
                             "- {ep1: {instance: host, component: nic}, ep2: {instance: sw, "
                             "component: port}, scheme: one2one, link: eth}\n");
  RunResult ok = runInfracc({dir + "/f.yaml", "-emit=digest"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.err, dir + "/f.yaml:12:3: warning: one2one edge joins 2 nodes to 4: made 2 pairs "
                          "up to the shorter side, as InfraGraph's reference does; 2 nodes of the "
                          "longer side got no partner: sw.0.port.2, sw.0.port.3\n"
                          "- {ep1: {instance: host, component: nic}, ep2: {instance: sw, "
                          "component: port}, scheme: one2one, link: eth}\n  ^\n");
  RunResult strict = runInfracc({dir + "/f.yaml", "-emit=digest", "-Werror"});
  EXPECT_EQ(strict.status, 1);
  EXPECT_EQ(strict.out, "");
  EXPECT_TRUE(llvm::StringRef(strict.err).starts_with(dir + "/f.yaml:12:3: error: one2one edge"))
      << strict.err;
}
