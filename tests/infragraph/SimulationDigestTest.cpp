// -digest=simulation covers everything that changes a result: perturbed copies of one
// fabric with equal simulation digests give byte-identical -emit=sim (topo), -emit=htsim
// and -emit=fqg output, and the perturbations that change an output change the digest.
// The structural digest alone does not: annotations and instance order leave it as it is.
#include "tests/support/TestUtil.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <gtest/gtest.h>

#include <map>

using namespace infracc::test;

namespace {

struct Outputs {
  std::string structure, simulation, sim, htsim, fqg;
};

std::string replaced(std::string doc, const std::string &from, const std::string &to) {
  size_t at = doc.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    doc.replace(at, from.size(), to);
  return doc;
}

// Every file of an -emit=htsim folder, by name.
std::string folder(const std::string &dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    files[std::string(llvm::sys::path::filename(it->path()))] = readFile(it->path());
  std::string out;
  for (auto &[name, text] : files)
    out += "=== " + name + "\n" + text;
  return out;
}

// Outputs without the wall-clock line of the simulator's report.
std::string withoutWallClock(const std::string &text) {
  std::string kept;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n'))
    if (!line.starts_with("PERFORMANCE: "))
      kept += line.str() + "\n";
  return kept;
}

// Each fabric is written to the same file name, so messages and comments that name the
// input are equal too.
Outputs outputsOf(const std::string &dir, const std::string &doc) {
  writeFile(dir + "/f.yaml", doc);
  Outputs o;
  auto run = [&](std::vector<std::string> args) {
    RunResult r = runInfracc(args, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out + r.err;
  };
  o.structure = run({"f.yaml", "-emit=digest"});
  o.simulation = run({"f.yaml", "-emit=digest", "-digest=simulation"});
  o.sim = withoutWallClock(run({"f.yaml", "w.goal", "-emit=sim"}));
  llvm::sys::fs::remove_directories(dir + "/out");
  run({"f.yaml", "w.goal", "-emit=htsim", "-o", "out"});
  o.htsim = folder(dir + "/out");
  o.fqg = run({"f.yaml", "-emit=fqg"});
  return o;
}

TEST(SimulationDigest, EqualDigestsSimulateAlikeInEveryBackend) {
  std::string dir = makeTempDir("simdigest");
  std::string goal = "num_ranks 8\n";
  for (int r = 0; r < 8; ++r)
    goal += "rank " + std::to_string(r) + " {\nl1: send 100000b to " +
            std::to_string((r + 1) % 8) + " tag 1\nl2: recv 100000b from " +
            std::to_string((r + 7) % 8) + " tag 1\nl3: send 2000b to " +
            std::to_string((r + 3) % 8) + " tag 2\nl4: recv 2000b from " +
            std::to_string((r + 5) % 8) + " tag 2\nl3 requires l2\n}\n";
  writeFile(dir + "/w.goal", goal);
  const std::string base = readFile(sourcePath("tests/infragraph/inputs/digest-leafspine.yaml"));
  const std::string down = "{name: down, physical: {bandwidth: 100Gbps, latency: 500ns}}";
  const std::string up = "{name: up, physical: {bandwidth: 100Gbps, latency: 500ns}}";
  const std::string a = "{name: a, device: h, count: 2}", b = "{name: b, device: h, count: 2}";
  const std::vector<std::pair<std::string, std::string>> fabrics = {
      {"base", base},
      {"links reordered", replaced(replaced(replaced(base, down, "@@"), up, down), "@@", up)},
      {"slices rewritten",
       replaced(replaced(base, "{instance: \"leaf[0]\", component: \"port[0:2]\"}",
                         "{instance: \"leaf[0:1]\", component: \"port[:2]\"}"),
                "{instance: a, component: nic}", "{instance: \"a[0:2]\", component: \"nic[0]\"}")},
      {"units respelled", replaced(base, down,
                                   "{name: down, physical: {bandwidth: {choice: "
                                   "gigabytes_per_second, gigabytes_per_second: 12.5}, latency: "
                                   "0.5us}}")},
      {"switch latency", replaced(base, "value: 300ns}]}\n  - {name: spine",
                                  "value: 400ns}]}\n  - {name: spine")},
      {"instance order", replaced(replaced(replaced(base, a, "@@"), b, a), "@@", b)},
      {"link latency", replaced(base, up, "{name: up, physical: {bandwidth: 100Gbps, latency: "
                                          "700ns}}")},
      {"other annotation", replaced(base, "  nodes:\n",
                                    "  nodes:\n  - {name: a, attributes: [{attribute: rack, "
                                    "value: r1}]}\n")},
  };
  std::vector<Outputs> out;
  for (const auto &[what, doc] : fabrics) {
    ASSERT_TRUE(what == "base" || doc != base) << what;
    out.push_back(outputsOf(dir, doc));
  }
  // Equal simulation digests: equal results, whichever backend.
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size(); ++j)
      if (out[i].simulation == out[j].simulation) {
        EXPECT_EQ(out[i].sim, out[j].sim) << fabrics[i].first << " / " << fabrics[j].first;
        EXPECT_EQ(out[i].htsim, out[j].htsim) << fabrics[i].first << " / " << fabrics[j].first;
        EXPECT_EQ(out[i].fqg, out[j].fqg) << fabrics[i].first << " / " << fabrics[j].first;
      }
  // Respelling the document changes neither digest.
  for (size_t i : {1, 2, 3}) {
    EXPECT_EQ(out[i].structure, out[0].structure) << fabrics[i].first;
    EXPECT_EQ(out[i].simulation, out[0].simulation) << fabrics[i].first;
  }
  // Annotations and instance order change results but not the structural digest; the
  // simulation digest tells them apart.
  for (size_t i : {4, 5, 7}) {
    EXPECT_EQ(out[i].structure, out[0].structure) << fabrics[i].first;
    EXPECT_NE(out[i].simulation, out[0].simulation) << fabrics[i].first;
  }
  EXPECT_NE(out[4].sim, out[0].sim);      // the leaves' latency is on every path
  EXPECT_NE(out[5].htsim, out[0].htsim);  // ranks 0-3 now on b's hosts
  EXPECT_NE(out[5].fqg, out[0].fqg);
  EXPECT_NE(out[6].structure, out[0].structure);
  EXPECT_NE(out[6].simulation, out[0].simulation);
  EXPECT_NE(out[6].sim, out[0].sim);
}

} // namespace
