// -emit=otf2 -o DIR: the workload as an OTF2 MPI trace (DIR/traces.otf2, the anchor file
// TraceR and otf2-print take, DIR/traces.def and DIR/traces/).
// -emit=codes -o DIR: a study for TraceR on CODES: network.conf, the trace, tracer_config,
// the rank maps, servers.txt and run-tracer.sh. docs/scale-out.md.
#include "backends/tracer/CodesNetwork.h"
#include "backends/tracer/Otf2Writer.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>
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
  if (pl.hasMembers() || !pl.jobOfRank.empty())
    return inputError("-emit=codes: ranks grouped by remap-gpus or merged jobs are not written "
                      "yet (one job per study, one rank per endpoint; docs/scale-out.md)");
  const uint32_t P = s.numRanks();
  const auto eps = g.endpoints();
  // Server of every rank: its placed endpoint's, else rank r on endpoint r.
  std::vector<uint32_t> server(P);
  if (pl.empty()) {
    if (P > eps.size())
      return inputError(fmt::format("the workload has {} ranks but '{}' has {} endpoints",
                                    P, m.fabricSource, eps.size()));
    for (uint32_t r = 0; r < P; ++r)
      server[r] = net->serverOfEndpoint[r];
  } else {
    llvm::DenseMap<NodeId, uint32_t> index;
    for (uint32_t i = 0; i < eps.size(); ++i)
      index[eps[i]] = i;
    std::vector<uint8_t> used(eps.size(), 0);
    for (uint32_t r = 0; r < P; ++r) {
      auto it = index.find(pl.endpointOfRank[r]);
      if (it == index.end() || used[it->second]++)
        return inputError(fmt::format("rank {} shares its endpoint or runs on no endpoint: "
                                      "TraceR runs one rank per server",
                                      r));
      server[r] = net->serverOfEndpoint[it->second];
    }
  }
  bool linear = true;
  for (uint32_t r = 0; r < P; ++r)
    linear = linear && server[r] == r;

  auto conf = ctx.output.file("network.conf");
  if (!conf)
    return conf.takeError();
  *conf << codesConf(*net, m.fabricSource);
  auto st = writeOtf2(s, ctx.output, "trace", "traces", m.diags, m.workloadSource);
  if (!st)
    return st.takeError();
  reportSerialized(m, *st);
  auto cfg = ctx.output.file("tracer_config");
  if (!cfg)
    return cfg.takeError();
  if (linear) {
    *cfg << fmt::format("NA\n1\ntrace/traces.otf2 NA {} 1\n", P);
  } else {
    *cfg << fmt::format("global_map.bin\n1\ntrace/traces.otf2 job0.map {} 1\n", P);
    auto gm = ctx.output.file("global_map.bin");
    if (!gm)
      return gm.takeError();
    for (uint32_t r = 0; r < P; ++r)
      writeInts(*gm, {int32_t(server[r]), int32_t(r), 0});
    auto jm = ctx.output.file("job0.map");
    if (!jm)
      return jm.takeError();
    for (uint32_t r = 0; r < P; ++r)
      writeInts(*jm, {int32_t(server[r])});
  }
  auto servers = ctx.output.file("servers.txt");
  if (!servers)
    return servers.takeError();
  *servers << "# CODES server, fabric endpoint, rank that runs there (- for none)\n";
  std::vector<int64_t> rankOf(eps.size(), -1);
  for (uint32_t r = 0; r < P; ++r)
    rankOf[server[r]] = r;
  std::vector<uint32_t> endpointOfServer(eps.size());
  for (uint32_t i = 0; i < eps.size(); ++i)
    endpointOfServer[net->serverOfEndpoint[i]] = i;
  for (uint32_t sv = 0; sv < eps.size(); ++sv)
    *servers << fmt::format("{} {} {}\n", sv, g.name(eps[endpointOfServer[sv]]),
                            rankOf[sv] < 0 ? std::string("-") : std::to_string(rankOf[sv]));
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
                   "CODES torus), trace/traces.otf2, tracer_config, rank maps, servers.txt, "
                   "run-tracer.sh",
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
