// -emit=otf2 -o DIR: the workload as an OTF2 MPI trace (DIR/traces.otf2, the anchor file
// TraceR and otf2-print take, DIR/traces.def and DIR/traces/).
// -emit=codes -o DIR: a study for TraceR on CODES: network.conf, the trace, tracer_config,
// the rank maps, servers.txt and run-tracer.sh. docs/scale-out.md.
#include "backends/common/RankEndpoints.h"
#include "backends/tracer/CodesNetwork.h"
#include "backends/tracer/Otf2Writer.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"

#include <llvm/Support/Endian.h>

#include <fmt/format.h>

namespace infracc::tracer {
namespace {

void reportSerialized(const Module &m, const Otf2Stats &st) {
  if (st.serializedOps)
    m.diags.warning(m.workloadSource,
                    fmt::format("{} op(s) run on cpu streams other than 0: an MPI trace has one "
                                "stream per rank, so they run one after the other",
                                st.serializedOps));
}

llvm::Error emitOtf2(TargetContext &ctx) {
  Module &m = ctx.module;
  auto st = writeOtf2(*m.schedule, ctx.output, "", "traces", m.diags, m.workloadSource);
  if (!st)
    return st.takeError();
  reportSerialized(m, *st);
  return llvm::Error::success();
}

// Native-endian int32 records, as TraceR reads its map files (fread of int).
void writeInts(llvm::raw_ostream &os, std::initializer_list<int32_t> v) {
  for (int32_t x : v)
    os.write(reinterpret_cast<const char *>(&x), sizeof x);
}

llvm::Error emitCodes(TargetContext &ctx) {
  Module &m = ctx.module;
  const FabricGraph &g = *m.fabric;
  const Schedule &s = *m.schedule;
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  auto lat = switchLatencies(g, m.diags, m.fabricSource);
  if (!lat)
    return reportedError();
  auto net = codesNetwork(g, *lat, m.diags, m.fabricSource);
  if (!net)
    return net.takeError();
  const Placement &pl = m.placement;
  const uint32_t P = s.numRanks();
  const auto eps = g.endpoints();
  // Server of every rank: its endpoint's.
  auto endpoint = endpointOfEachRank(m, "server", "TraceR");
  if (!endpoint)
    return reportedError();
  std::vector<uint32_t> server(P);
  for (uint32_t r = 0; r < P; ++r)
    server[r] = net->serverOfEndpoint[(*endpoint)[r]];
  // Jobs (merge-jobs): each its own trace and job map, its ranks numbered in order.
  uint32_t J = 1;
  for (uint32_t r = 0; r < P; ++r)
    J = std::max(J, pl.job(r) + 1);
  std::vector<std::vector<uint32_t>> ranksOf(J);
  for (uint32_t r = 0; r < P; ++r)
    ranksOf[pl.job(r)].push_back(r);
  bool linear = J == 1;
  for (uint32_t r = 0; r < P && linear; ++r)
    linear = server[r] == r;

  for (const std::string &a : net->approximations)
    m.diags.warning(m.fabricSource, "approximated for CODES: " + a);
  auto conf = ctx.output.file("network.conf");
  if (!conf)
    return conf.takeError();
  *conf << codesConf(*net, m.fabricSource);
  for (const std::string &note : net->notes)
    m.diags.note(m.fabricSource, note);
  if (net->model == "dragonfly_custom") {
    auto intra = ctx.output.file("intra.bin");
    if (!intra)
      return intra.takeError();
    for (auto [a, b] : net->intraLinks)
      writeInts(*intra, {int32_t(a), int32_t(b), 0});
    auto inter = ctx.output.file("inter.bin");
    if (!inter)
      return inter.takeError();
    for (auto [a, b] : net->interLinks)
      writeInts(*inter, {int32_t(a), int32_t(b)});
  }
  auto cfg = ctx.output.file("tracer_config");
  if (!cfg)
    return cfg.takeError();
  *cfg << (linear ? "NA\n" : "global_map.bin\n") << J << "\n";
  for (uint32_t j = 0; j < J; ++j) {
    const std::string dir = J == 1 ? "trace" : fmt::format("trace-job{}", j);
    auto st = writeOtf2(s, ctx.output, dir, "traces", m.diags, m.workloadSource,
                        J == 1 ? llvm::ArrayRef<uint32_t>() : llvm::ArrayRef(ranksOf[j]));
    if (!st)
      return st.takeError();
    reportSerialized(m, *st);
    *cfg << fmt::format("{}/traces.otf2 {} {} 1\n", dir,
                        linear ? std::string("NA") : fmt::format("job{}.map", j),
                        ranksOf[j].size());
    if (!linear) {
      auto jm = ctx.output.file(fmt::format("job{}.map", j));
      if (!jm)
        return jm.takeError();
      for (uint32_t r : ranksOf[j])
        writeInts(*jm, {int32_t(server[r])});
    }
  }
  if (!linear) {
    auto gm = ctx.output.file("global_map.bin");
    if (!gm)
      return gm.takeError();
    for (uint32_t j = 0; j < J; ++j)
      for (uint32_t i = 0; i < ranksOf[j].size(); ++i)
        writeInts(*gm, {int32_t(server[ranksOf[j][i]]), int32_t(i), int32_t(j)});
  }
  auto servers = ctx.output.file("servers.txt");
  if (!servers)
    return servers.takeError();
  *servers << "# CODES server, fabric endpoint, rank that runs there (job:rank with several "
              "jobs; - for none)\n";
  std::vector<std::string> rankOf(eps.size(), "-");
  for (uint32_t j = 0; j < J; ++j)
    for (uint32_t i = 0; i < ranksOf[j].size(); ++i)
      rankOf[server[ranksOf[j][i]]] = J == 1 ? std::to_string(i) : fmt::format("{}:{}", j, i);
  std::vector<uint32_t> endpointOfServer(eps.size());
  for (uint32_t i = 0; i < eps.size(); ++i)
    endpointOfServer[net->serverOfEndpoint[i]] = i;
  for (uint32_t sv = 0; sv < eps.size(); ++sv)
    *servers << fmt::format("{} {} {}\n", sv, g.name(eps[endpointOfServer[sv]]), rankOf[sv]);
  auto run = ctx.output.file("run-tracer.sh", true);
  if (!run)
    return run.takeError();
  *run << fmt::format(
      "#!/bin/sh\n"
      "# Runs TraceR on this folder (written by infracc): {} ranks on {} CODES servers.\n"
      "# TRACER: the traceR binary (default: traceR on PATH). NP: MPI processes of the\n"
      "# parallel simulation (default 2). Any NP works (CODES spreads its {} x 3 LPs over\n"
      "# them); more processes simulate faster until the LPs per process get few, and\n"
      "# optimistic runs (--sync=3) may then roll back more. --sync=1 runs sequentially\n"
      "# (NP=1) and gives the reference result; 3 must agree with it.\n"
      "# The result: 'Job 0 Time <seconds>' (the latest rank's finish).\n"
      "set -eu\n"
      "cd \"$(dirname \"$0\")\"\n"
      "exec mpirun ${{MPIRUN_FLAGS:-}} -np \"${{NP:-2}}\" \"${{TRACER:-traceR}}\" "
      "--sync=\"${{SYNC:-3}}\" -- network.conf tracer_config\n",
      P, eps.size(), net->routers);
  return llvm::Error::success();
}

RegisterTarget CodesTarget({
    .name = "codes",
    .description = "a TraceR study on CODES in a folder (-o DIR): network.conf (the fabric as a "
                   "CODES torus, dragonfly or fat tree), trace/traces.otf2, tracer_config, rank maps, "
                   "servers.txt, run-tracer.sh",
    .needs = TargetNeeds::FabricAndWorkload,
    .writesDirectory = true,
    .pointToPoint = false,
    .defaultPipeline = nullptr,
    .run = emitCodes,
});

RegisterTarget Otf2Target({
    .name = "otf2",
    .description = "the workload as an OTF2 MPI trace in a folder (-o DIR): traces.otf2 (the "
                   "anchor file for TraceR, otf2-print, Vampir), traces.def, traces/",
    .needs = TargetNeeds::Workload,
    .writesDirectory = true,
    .pointToPoint = false,
    .defaultPipeline = nullptr,
    .run = emitOtf2,
});

} // namespace
} // namespace infracc::tracer
