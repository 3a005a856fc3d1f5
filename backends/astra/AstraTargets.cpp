// -emit=astra-analytical -o DIR: the fabric for ASTRA-sim's analytical backends
// (congestion-unaware and congestion-aware): network.yml (dimensions, bandwidth in the
// backend's "GB/s" = 2^30 bytes/s, latency in ns), npus.txt (which fabric node each NPU
// is), system.json and remote_memory.json defaults, and run-astra.sh with the command
// lines. docs/astra-sim.md explains every number.
#include "backends/astra/AnalyticalNetwork.h"
#include "backends/astra/AstraUnits.h"
#include "backends/astra/ChakraWriter.h"
#include "backends/astra/Ns3Topology.h"
#include "backends/common/RankEndpoints.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/FabricCosts.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>
#include <set>

namespace infracc::astra {
namespace {
namespace cl = llvm::cl;

cl::opt<bool> Approximate(
    "astra-approx",
    cl::desc("-emit=astra-analytical: when the fabric is not a product of Ring, "
             "FullyConnected and Switch dimensions (oversubscribed tiers, NICs shared by "
             "xpus, a dragonfly), write the nearest one and list every approximation, "
             "instead of refusing"),
    cl::cat(opts::backendCategory()));

cl::opt<std::string> ChakraPrefix(
    "chakra-prefix", cl::init("workload"), cl::value_desc("name"),
    cl::desc("-emit=chakra, -emit=astra-analytical: the traces are <name>.<npu>.et in the "
             "output folder (default workload); ASTRA-sim's --workload-configuration is "
             "DIR/<name>"),
    cl::cat(opts::backendCategory()));

// Numbers as network.yml and the comments show them: shortest exact form.
std::string num(double v) { return fmt::format("{}", v); }

// Collective algorithm per dimension in system.json: what ASTRA-sim offers for the
// shape (its halvingDoubling has no all-to-all: "unknown communication type").
const char *algorithmFor(DimShape s, bool allToAll) {
  switch (s) {
  case DimShape::Ring: return "ring";
  case DimShape::FullyConnected: return "direct";
  case DimShape::Switch: return allToAll ? "direct" : "halvingDoubling";
  }
  return "ring";
}

std::string networkYaml(const AnalyticalNetwork &net, llvm::StringRef source) {
  std::string y = fmt::format(
      "# ASTRA-sim analytical network (congestion_unaware / congestion_aware), written by "
      "infracc from '{}'.\n"
      "# {} NPUs = {} host(s) x {} xpu(s); NPU i is line i of npus.txt. Dimension 0 varies "
      "fastest.\n"
      "# bandwidth: per NPU link, per direction, in the backend's GB/s, which it reads as "
      "2^30 bytes/s\n"
      "#   (bytes/s / 1073741824; e.g. 400 Gb/s = 46.566128730773926).\n"
      "# latency: ns per hop; a Switch dimension charges 2 hops (NPU -> switch -> NPU), so "
      "its value is half the path's.\n",
      source.str(), net.npus, net.hosts, net.npusPerHost);
  for (size_t d = 0; d < net.dims.size(); ++d) {
    const Dimension &dim = net.dims[d];
    y += fmt::format("# dim {}: {} {} - {}: {:g} Gb/s, {:g} ns per hop\n", d,
                     shapeName(dim.shape), dim.npus, dim.what, dim.bytesPerSecond * 8 / 1e9,
                     dim.latencyNs);
  }
  for (const std::string &a : net.approximations)
    y += "# approximated (-astra-approx): " + a + "\n";
  auto list = [&](auto f) {
    std::string s = "[ ";
    for (size_t d = 0; d < net.dims.size(); ++d)
      s += (d ? ", " : "") + f(net.dims[d]);
    return s + " ]";
  };
  y += "topology: " + list([](const Dimension &d) { return std::string(shapeName(d.shape)); }) +
       "\n";
  y += "npus_count: " + list([](const Dimension &d) { return std::to_string(d.npus); }) + "\n";
  y += "bandwidth: " +
       list([](const Dimension &d) { return num(analyticalBandwidth(d.bytesPerSecond)); }) +
       "\n";
  y += "latency: " + list([](const Dimension &d) { return num(d.latencyNs); }) + "\n";
  return y;
}

std::string systemJson(const AnalyticalNetwork &net) {
  nlohmann::ordered_json j;
  auto perDim = [&](bool allToAll = false) {
    nlohmann::json a = nlohmann::json::array();
    for (const Dimension &d : net.dims)
      a.push_back(algorithmFor(d.shape, allToAll));
    return a;
  };
  j["scheduling-policy"] = "LIFO";
  j["endpoint-delay"] = 10;
  j["active-chunks-per-dimension"] = 1;
  j["preferred-dataset-splits"] = 4;
  j["all-reduce-implementation"] = perDim();
  j["all-gather-implementation"] = perDim();
  j["reduce-scatter-implementation"] = perDim();
  j["all-to-all-implementation"] = perDim(true);
  j["collective-optimization"] = "localBWAware";
  j["local-mem-bw"] = 1600;
  j["boost-mode"] = 0;
  return j.dump(2) + "\n";
}

struct Workload {
  bool written = false;
  bool groups = false;
};

std::string runScript(const AnalyticalNetwork &net, const Workload &w) {
  std::string s =
      "#!/bin/sh\n"
      "# Runs ASTRA-sim's analytical backends on this folder (written by infracc).\n";
  if (w.written)
    s += fmt::format("#   ./run-astra.sh [WORKLOAD_PREFIX]   (default: this folder's {}.<npu>.et)\n",
                     ChakraPrefix.getValue());
  else
    s += "#   ./run-astra.sh WORKLOAD_PREFIX   (Chakra traces WORKLOAD_PREFIX.<npu>.et, one per "
         "NPU)\n";
  s += "# ASTRA_SIM: the folder of an ASTRA-sim build (build/astra_analytical/build/bin inside\n"
       "# it holds the binaries). system.json and remote_memory.json are defaults: edit them.\n"
       "set -eu\n"
       "here=$(cd \"$(dirname \"$0\")\" && pwd)\n";
  if (w.written)
    s += fmt::format("workload=${{1:-$here/{}}}\n", ChakraPrefix.getValue());
  else
    s += "workload=${1:?usage: $0 WORKLOAD_PREFIX (Chakra .et files, one per NPU)}\n";
  s += "bin=${ASTRA_SIM:?set ASTRA_SIM to the ASTRA-sim source folder}/build/astra_analytical/"
       "build/bin\n";
  s += fmt::format("# {} NPUs: the workload needs {} files, {}.0.et to {}.{}.et\n", net.npus,
                   net.npus, "$workload", "$workload", net.npus - 1);
  std::string groups = w.groups ? fmt::format("  --comm-group-configuration=\"$here/{}.comm_groups.json\" \\\n",
                                              ChakraPrefix.getValue())
                                : std::string();
  for (const char *kind : {"Unaware", "Aware"}) {
    if (std::string(kind) == "Aware" && net.dims.size() > 1) {
      s += fmt::format("# Not run: ASTRA-sim's congestion-aware backend (518bd51) takes only "
                       "1-dimensional networks\n# (\"only support 1-dim topology\"); this one "
                       "has {}.\n",
                       net.dims.size());
      break;
    }
    s += fmt::format("echo \"== congestion {}\"\n"
                     "\"$bin/AstraSim_Analytical_Congestion_{}\" \\\n"
                     "  --workload-configuration=\"$workload\" \\\n"
                     "  --system-configuration=\"$here/system.json\" \\\n"
                     "  --remote-memory-configuration=\"$here/remote_memory.json\" \\\n"
                     "{}"
                     "  --network-configuration=\"$here/network.yml\" \\\n"
                     "  --logging-folder=\"$here/log\"\n",
                     llvm::StringRef(kind).lower(), kind, groups);
  }
  return s;
}

void reportRounding(const Module &m, const ChakraStats &st) {
  if (st.roundedCalcs)
    m.diags.warning(m.workloadSource,
                    fmt::format("{} calc(s) are not whole microseconds, which is all Chakra's "
                                "duration_micros holds: rounded to the nearest (largest "
                                "change {:+} ns)",
                                st.roundedCalcs, st.largestRoundingNs));
}

// The workload's Chakra traces in the folder of a fabric target, NPU i = endpoint i
// (nothing to write without a workload).
llvm::Expected<Workload> writeWorkload(TargetContext &ctx, uint32_t numNpus) {
  Module &m = ctx.module;
  Workload w;
  if (!m.schedule)
    return w;
  auto npuOf = endpointOfEachRank(m, "NPU", "ASTRA-sim");
  if (!npuOf)
    return reportedError();
  auto st = writeChakra(*m.schedule, *npuOf, numNpus, ctx.output, ChakraPrefix, m.diags,
                        m.workloadSource);
  if (!st)
    return st.takeError();
  reportRounding(m, *st);
  w.written = true;
  w.groups = st->communicators != 0;
  return w;
}

llvm::Error emitAnalytical(TargetContext &ctx) {
  Module &m = ctx.module;
  const FabricGraph &g = *m.fabric;
  if (llvm::Error e = checkSwitchLatencyOption())
    return e;
  auto lat = switchLatencies(g, m.diags, m.fabricSource);
  if (!lat)
    return reportedError();
  auto net = analyticalNetwork(g, std::move(*lat), Approximate, m.diags, m.fabricSource);
  if (!net)
    return net.takeError();
  if (net->dims.empty())
    return inputError("no dimension has more than one NPU");
  for (const std::string &a : net->approximations)
    m.diags.warning(m.fabricSource, "approximated for ASTRA-sim: " + a);
  // A latency of 0 is legal for the backend but rarely what the fabric means.
  for (size_t d = 0; d < net->dims.size(); ++d)
    if (net->dims[d].latencyNs == 0)
      m.diags.warning(m.fabricSource,
                      fmt::format("dimension {} ({}): latency 0 ns, as no link or switch on its "
                                  "paths has one (give the links a latency, or -switch-latency)",
                                  d, net->dims[d].what));

  auto yml = ctx.output.file("network.yml");
  if (!yml)
    return yml.takeError();
  *yml << networkYaml(*net, m.fabricSource);
  auto npus = ctx.output.file("npus.txt");
  if (!npus)
    return npus.takeError();
  *npus << "# npu fabric-node (ASTRA-sim NPU i = this fabric endpoint)\n";
  for (uint32_t i = 0; i < g.endpoints().size(); ++i)
    *npus << fmt::format("{} {}\n", i, g.name(g.endpoints()[i]));
  auto sys = ctx.output.file("system.json");
  if (!sys)
    return sys.takeError();
  *sys << systemJson(*net);
  auto mem = ctx.output.file("remote_memory.json");
  if (!mem)
    return mem.takeError();
  *mem << "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
  auto w = writeWorkload(ctx, net->npus);
  if (!w)
    return w.takeError();
  auto run = ctx.output.file("run-astra.sh", /*executable=*/true);
  if (!run)
    return run.takeError();
  *run << runScript(*net, *w);
  return llvm::Error::success();
}

// --- ns-3 -------------------------------------------------------------------------

// ECN marking thresholds (KB) and probability per link rate, as ASTRA-sim's shipped
// config.txt gives them; ns-3 aborts on a link rate missing from the maps ("must set
// kmin for each link speed"). Other rates take the values of the next rate up.
struct Ecn {
  uint64_t bps;
  uint32_t kmax, kmin;
};
constexpr Ecn ShippedEcn[] = {{25000000000, 400, 100},   {40000000000, 800, 200},
                              {100000000000, 1600, 400}, {200000000000, 2400, 600},
                              {400000000000, 3200, 800}, {2400000000000, 3200, 800}};

Ecn ecnFor(uint64_t bps) {
  for (const Ecn &e : ShippedEcn)
    if (e.bps >= bps)
      return {bps, e.kmax, e.kmin};
  return {bps, ShippedEcn[5].kmax, ShippedEcn[5].kmin};
}

std::string ns3Config(const Ns3Topology &t) {
  std::set<uint64_t> rates;
  for (const Ns3Link &l : t.links)
    rates.insert(uint64_t(std::llround(l.bitsPerSecond)));
  std::string kmax = fmt::format("KMAX_MAP {}", rates.size()),
              kmin = fmt::format("KMIN_MAP {}", rates.size()),
              pmax = fmt::format("PMAX_MAP {}", rates.size());
  for (uint64_t r : rates) {
    Ecn e = ecnFor(r);
    kmax += fmt::format(" {} {}", r, e.kmax);
    kmin += fmt::format(" {} {}", r, e.kmin);
    pmax += fmt::format(" {} 0.2", r);
  }
  // No comments: ASTRA-sim's ReadConf reads every token as a key or a value.
  return "ENABLE_QCN 1\n"
         "USE_DYNAMIC_PFC_THRESHOLD 1\n"
         "PACKET_PAYLOAD_SIZE 1000\n"
         "TOPOLOGY_FILE topology.txt\n"
         "FLOW_FILE flow.txt\n"
         "TRACE_FILE trace.txt\n"
         "TRACE_OUTPUT_FILE output/mix.tr\n"
         "FCT_OUTPUT_FILE output/fct.txt\n"
         "PFC_OUTPUT_FILE output/pfc.txt\n"
         "QLEN_MON_FILE output/qlen.txt\n"
         "QLEN_MON_START 0\n"
         "QLEN_MON_END 20000\n"
         "SIMULATOR_STOP_TIME 40000000000000.00\n"
         "CC_MODE 12\n"
         "ALPHA_RESUME_INTERVAL 1\n"
         "RATE_DECREASE_INTERVAL 4\n"
         "CLAMP_TARGET_RATE 0\n"
         "RP_TIMER 900\n"
         "EWMA_GAIN 0.00390625\n"
         "FAST_RECOVERY_TIMES 1\n"
         "RATE_AI 50Mb/s\n"
         "RATE_HAI 100Mb/s\n"
         "MIN_RATE 100Mb/s\n"
         "DCTCP_RATE_AI 1000Mb/s\n"
         "ERROR_RATE_PER_LINK 0.0000\n"
         "L2_CHUNK_SIZE 4000\n"
         "L2_ACK_INTERVAL 1\n"
         "L2_BACK_TO_ZERO 0\n"
         "HAS_WIN 1\n"
         "GLOBAL_T 0\n"
         "VAR_WIN 1\n"
         "FAST_REACT 1\n"
         "U_TARGET 0.95\n"
         "MI_THRESH 0\n"
         "INT_MULTI 1\n"
         "MULTI_RATE 0\n"
         "SAMPLE_FEEDBACK 0\n"
         "PINT_LOG_BASE 1.05\n"
         "PINT_PROB 1.0\n"
         "NIC_TOTAL_PAUSE_TIME 0\n"
         "RATE_BOUND 1\n"
         "ACK_HIGH_PRIO 0\n"
         "LINK_DOWN 0 0 0\n"
         "ENABLE_TRACE 0\n" +
         kmax + "\n" + kmin + "\n" + pmax + "\n" + "BUFFER_SIZE 32\n";
}

std::string ns3Script(const Ns3Topology &t, const Workload &w) {
  std::string s =
      "#!/bin/sh\n"
      "# Runs ASTRA-sim's ns-3 backend on this folder (written by infracc).\n";
  s += w.written ? fmt::format("#   ./run-astra-ns3.sh [WORKLOAD_PREFIX]   (default: this "
                               "folder's {}.<npu>.et)\n",
                               ChakraPrefix.getValue())
                 : "#   ./run-astra-ns3.sh WORKLOAD_PREFIX   (Chakra traces "
                   "WORKLOAD_PREFIX.<npu>.et, one per NPU)\n";
  s += "# NS3_BIN: the ns-3 AstraSimNetwork binary (default: ASTRA_SIM's "
       "extern/network_backend/ns-3/\n"
       "# build/scratch/ns3.42-AstraSimNetwork-default). config.txt holds ASTRA-sim's "
       "shipped values\n"
       "# (DCQCN-style CC_MODE 12, 1000-byte packets, 32 MB switch buffers) and paths into "
       "this folder;\n"
       "# the simulator writes output/fct.txt, output/pfc.txt, output/qlen.txt here.\n"
       "# topology.txt: ns-3 nodes 0.." +
       std::to_string(t.npus - 1) + " are the NPUs, " + std::to_string(t.npus) + ".." +
       std::to_string(t.nodes - 1) + " switches (nodes.txt names them).\n"
       "set -eu\n"
       "here=$(cd \"$(dirname \"$0\")\" && pwd)\n";
  s += w.written ? fmt::format("workload=${{1:-$here/{}}}\n", ChakraPrefix.getValue())
                 : "workload=${1:?usage: $0 WORKLOAD_PREFIX (Chakra .et files, one per NPU)}\n";
  s += "bin=${NS3_BIN:-${ASTRA_SIM:?set ASTRA_SIM to the ASTRA-sim source folder, or NS3_BIN}/"
       "extern/network_backend/ns-3/build/scratch/ns3.42-AstraSimNetwork-default}\n"
       "cd \"$here\"\n"
       "mkdir -p output\n";
  s += fmt::format("\"$bin\" \\\n"
                   "  --workload-configuration=\"$workload\" \\\n"
                   "  --system-configuration=\"$here/system.json\" \\\n"
                   "  --remote-memory-configuration=\"$here/remote_memory.json\" \\\n"
                   "  --network-configuration=\"$here/config.txt\" \\\n"
                   "  --logical-topology-configuration=\"$here/logical_topology.json\" \\\n"
                   "  --comm-group-configuration={}\n",
                   w.groups ? fmt::format("\"$here/{}.comm_groups.json\"", ChakraPrefix.getValue())
                            : std::string("empty"));
  return s;
}

llvm::Error emitNs3(TargetContext &ctx) {
  Module &m = ctx.module;
  const FabricGraph &g = *m.fabric;
  auto topo = ns3Topology(g, m.diags, m.fabricSource);
  if (!topo)
    return topo.takeError();
  if (topo->npus < 2)
    return inputError(fmt::format("ASTRA-sim needs at least 2 NPUs; the fabric has {} "
                                  "endpoint(s)",
                                  topo->npus));
  if (!topo->linksWithoutLatency.empty())
    m.diags.warning(m.fabricSource,
                    fmt::format("links without a latency are written with delay 0ns: {}",
                                llvm::join(topo->linksWithoutLatency, ", ")));
  if (topo->npuToNpuLinks)
    m.diags.warning(m.fabricSource,
                    fmt::format("{} link(s) join NPUs directly, without a switch: some "
                                "versions of ASTRA-sim's ns-3 backend abort on such fabrics "
                                "(\"We assume at least one NIC is alive\", astra-sim#299)",
                                topo->npuToNpuLinks));
  // Logical dimensions for the system layer: the analytical ones when the fabric has
  // them exactly, else one dimension of every NPU.
  AnalyticalNetwork logical;
  {
    std::string quiet;
    llvm::raw_string_ostream qs(quiet);
    DiagEngine silent(qs);
    auto lat = switchLatencies(g, m.diags, m.fabricSource);
    if (!lat)
      return reportedError();
    auto net = analyticalNetwork(g, std::move(*lat), false, silent, m.fabricSource);
    if (net) {
      logical = std::move(*net);
    } else {
      llvm::consumeError(net.takeError());
      logical.npus = topo->npus;
      Dimension d;
      d.shape = DimShape::Ring;
      d.npus = topo->npus;
      logical.dims = {d};
    }
  }
  auto file = [&](const char *name, const std::string &text, bool exec = false) -> llvm::Error {
    auto os = ctx.output.file(name, exec);
    if (!os)
      return os.takeError();
    *os << text;
    return llvm::Error::success();
  };
  nlohmann::json dims = nlohmann::json::array();
  for (const Dimension &d : logical.dims)
    dims.push_back(std::to_string(d.npus));
  nlohmann::json lt;
  lt["logical-dims"] = dims;
  std::string names;
  for (uint32_t i = 0; i < topo->nodes; ++i)
    names += fmt::format("{} {} {}\n", i, i < topo->npus ? "npu" : "switch", topo->names[i]);
  for (auto &[name, text] :
       std::vector<std::pair<const char *, std::string>>{
           {"topology.txt", ns3TopologyFile(*topo)},
           {"config.txt", ns3Config(*topo)},
           {"logical_topology.json", lt.dump() + "\n"},
           {"system.json", systemJson(logical)},
           {"remote_memory.json", "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n"},
           {"flow.txt", "0\n"},
           {"trace.txt", "0\n\n"},
           {"nodes.txt", "# ns-3 node, role, fabric node (NPU i = ASTRA-sim rank i)\n" + names}})
    if (llvm::Error e = file(name, text))
      return e;
  auto w = writeWorkload(ctx, topo->npus);
  if (!w)
    return w.takeError();
  return file("run-astra-ns3.sh", ns3Script(*topo, *w), true);
}

llvm::Error emitChakra(TargetContext &ctx) {
  Module &m = ctx.module;
  const Schedule &s = *m.schedule;
  std::vector<uint32_t> identity(s.numRanks());
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    identity[r] = r;
  auto st = writeChakra(s, identity, s.numRanks(), ctx.output, ChakraPrefix, m.diags,
                        m.workloadSource);
  if (!st)
    return st.takeError();
  reportRounding(m, *st);
  return llvm::Error::success();
}

RegisterTarget ChakraTarget({
    .name = "chakra",
    .description = "the workload as Chakra execution traces in a folder (-o DIR): "
                   "<prefix>.<rank>.et per rank, <prefix>.comm_groups.json for communicators",
    .needs = TargetNeeds::Workload,
    .writesDirectory = true,
    .pointToPoint = false,
    .defaultPipeline = nullptr,
    .run = emitChakra,
});

RegisterTarget Ns3Target({
    .name = "astra-ns3",
    .description = "ASTRA-sim ns-3 backend's inputs in a folder (-o DIR): topology.txt (NPUs, "
                   "NICs and switches as nodes, exact rates and delays), config.txt, "
                   "logical_topology.json, system.json, nodes.txt, run-astra-ns3.sh, and with a "
                   "workload its Chakra traces",
    .needs = TargetNeeds::Fabric,
    .writesDirectory = true,
    .pointToPoint = false,
    .defaultPipeline = nullptr,
    .run = emitNs3,
});

RegisterTarget AnalyticalTarget({
    .name = "astra-analytical",
    .description = "ASTRA-sim analytical backends' inputs in a folder (-o DIR): network.yml "
                   "(dimensions found in the fabric, units as the backend reads them), "
                   "npus.txt, system.json, remote_memory.json, run-astra.sh, and with a "
                   "workload its Chakra traces",
    .needs = TargetNeeds::Fabric,
    .writesDirectory = true,
    .pointToPoint = false,
    .defaultPipeline = nullptr,
    .run = emitAnalytical,
});

} // namespace
} // namespace infracc::astra
