#include "backends/stats/FabricStats.h"

#include "backends/common/YamlWriter.h"
#include "backends/infragraph/CanonicalDocument.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <fmt/format.h>

#include <deque>
#include <map>

namespace infracc {

using ojson = nlohmann::ordered_json;

static std::deque<StatsSection> &sections() {
  static std::deque<StatsSection> s;
  return s;
}

void StatsRegistry::add(StatsSection s) { sections().push_back(std::move(s)); }

std::vector<const StatsSection *> StatsRegistry::all() {
  std::vector<const StatsSection *> v;
  for (const StatsSection &s : sections())
    v.push_back(&s);
  std::sort(v.begin(), v.end(), [](const StatsSection *a, const StatsSection *b) {
    return a->order != b->order ? a->order < b->order : a->key < b->key;
  });
  return v;
}

ojson fabricStats(const Module &m) {
  ojson out = ojson::object();
  for (const StatsSection *s : StatsRegistry::all())
    if (auto j = s->compute(m))
      out[s->key] = std::move(*j);
  return out;
}

namespace {

// --- Built-in sections ---------------------------------------------------------------

RegisterStatsSection Summary({
    .key = "summary",
    .title = "fabric",
    .order = 10,
    .compute = [](const Module &m) -> std::optional<ojson> {
      const FabricGraph &g = *m.fabric;
      ojson j;
      j["name"] = g.definitions().name;
      j["nodes"] = g.numNodes();
      j["edges"] = g.numEdges();
      j["links"] = g.numLinks();
      j["instances"] = g.instances().size();
      j["device copies"] = g.numDeviceCopies();
      j[g.endpointsAreXpus() ? "endpoints (xpus)" : "endpoints (hosts)"] = g.endpoints().size();
      return j;
    },
});

RegisterStatsSection NodesByKind({
    .key = "nodes by kind",
    .title = "nodes by kind",
    .order = 20,
    .compute = [](const Module &m) -> std::optional<ojson> {
      const FabricGraph &g = *m.fabric;
      // Count per component definition (cheap) rather than per node.
      uint64_t byKind[NumComponentKinds] = {};
      std::map<std::string, uint64_t> byCustomType;
      std::function<void(uint32_t, uint64_t)> walk = [&](uint32_t d, uint64_t copies) {
        const DeviceDef &dev = g.definitions().devices[d];
        for (const auto &grp : g.layout(d).groups) {
          const Component &c = dev.components[grp.component];
          if (grp.childDevice >= 0)
            walk(static_cast<uint32_t>(grp.childDevice), copies * grp.count);
          else if (c.kind == ComponentKind::Custom)
            byCustomType[c.customType] += copies * grp.count;
          else
            byKind[unsigned(c.kind)] += copies * grp.count;
        }
      };
      for (const auto &inst : g.instances())
        walk(inst.device, inst.count);
      ojson j = ojson::object();
      for (unsigned k = 0; k < NumComponentKinds; ++k)
        if (byKind[k])
          j[componentKindName(ComponentKind(k)).str()] = byKind[k];
      for (auto &[type, n] : byCustomType)
        j["custom " + type] = n;
      return j;
    },
});

RegisterStatsSection EdgesByLink({
    .key = "edges by link",
    .title = "edges by link",
    .order = 30,
    .compute = [](const Module &m) -> std::optional<ojson> {
      const FabricGraph &g = *m.fabric;
      std::vector<uint64_t> count(g.numLinks(), 0);
      for (const auto &e : g.edges())
        ++count[e.link];
      ojson j = ojson::object();
      for (LinkId l = 0; l < g.numLinks(); ++l) {
        const auto &info = g.link(l);
        std::string key = info.device < 0
                              ? info.name
                              : fmt::format("{} (device {})", info.name,
                                            g.definitions().devices[size_t(info.device)].name);
        ojson row;
        row["edges"] = count[l];
        row["bandwidth gbps"] =
            info.bandwidth ? canonicalNumber(info.bandwidth->inGigabitsPerSecExact()) : nullptr;
        row["latency ns"] = info.latency ? canonicalNumber(info.latency->ns) : nullptr;
        j[key] = std::move(row);
      }
      return j;
    },
});

RegisterStatsSection Degrees({
    .key = "degree distribution",
    .title = "degree distribution (degree: nodes)",
    .order = 40,
    .compute = [](const Module &m) -> std::optional<ojson> {
      const FabricGraph &g = *m.fabric;
      std::map<uint32_t, uint64_t> hist;
      for (NodeId v = 0; v < g.numNodes(); ++v)
        ++hist[g.degree(v)];
      ojson j = ojson::object();
      for (auto &[d, n] : hist)
        j[std::to_string(d)] = n;
      return j;
    },
});

RegisterStatsSection Components({
    .key = "connected components",
    .title = "connected components",
    .order = 60,
    .compute = [](const Module &m) -> std::optional<ojson> {
      const FabricGraph &g = *m.fabric;
      uint32_t n = g.numNodes();
      std::vector<uint32_t> comp(n, ~0u);
      std::vector<uint64_t> sizes;
      std::vector<NodeId> stack;
      for (NodeId s = 0; s < n; ++s) {
        if (comp[s] != ~0u)
          continue;
        uint32_t id = static_cast<uint32_t>(sizes.size());
        uint64_t size = 0;
        comp[s] = id;
        stack.push_back(s);
        while (!stack.empty()) {
          NodeId v = stack.back();
          stack.pop_back();
          ++size;
          for (const auto &a : g.neighbours(v))
            if (comp[a.node] == ~0u) {
              comp[a.node] = id;
              stack.push_back(a.node);
            }
        }
        sizes.push_back(size);
      }
      uint64_t isolated = 0;
      for (NodeId v = 0; v < n; ++v)
        isolated += g.degree(v) == 0;
      ojson j;
      j["components"] = sizes.size();
      j["largest"] = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
      j["smallest"] = sizes.empty() ? 0 : *std::min_element(sizes.begin(), sizes.end());
      j["isolated nodes"] = isolated;
      return j;
    },
});

// --- Text rendering ----------------------------------------------------------------

std::string scalarText(const ojson &v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_null())
    return "-";
  if (v.is_number_float())
    return fmt::format("{}", v.get<double>());
  return v.dump();
}

void writeText(const ojson &obj, llvm::raw_ostream &os, unsigned indent) {
  // A row of scalars fits on one line; deeper objects nest.
  auto isFlat = [](const ojson &v) {
    return v.is_object() && llvm::all_of(v.items(), [](const auto &kv) {
             return !kv.value().is_object() && !kv.value().is_array();
           });
  };
  size_t width = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!it.value().is_object() || (isFlat(it.value()) && indent > 0))
      width = std::max(width, it.key().size() + 1);
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    os.indent(indent) << it.key() << ':';
    if (it.value().is_object()) {
      if (isFlat(it.value()) && indent > 0) {
        os.indent(unsigned(width - it.key().size()));
        bool first = true;
        for (auto f = it.value().begin(); f != it.value().end(); ++f) {
          os << (first ? " " : ", ") << f.key() << ' ' << scalarText(f.value());
          first = false;
        }
        os << '\n';
      } else {
        os << '\n';
        writeText(it.value(), os, indent + 2);
      }
      continue;
    }
    os.indent(unsigned(width - it.key().size())) << ' ' << scalarText(it.value()) << '\n';
  }
}

RegisterTarget StatsTarget({
    .name = "stats",
    .description = "a report on the fabric: nodes by kind, edges by link, degrees, components",
    .needs = TargetNeeds::Fabric,
    .defaultPipeline = {},
    .run = [](TargetContext &ctx) -> llvm::Error {
      std::string format = opts::outputFormat();
      if (format.empty())
        format = "text";
      if (format != "text" && format != "json" && format != "yaml")
        return usageError("-emit=stats writes text, json or yaml, not '" + format + "'");
      auto os = ctx.output.stream();
      if (!os)
        return os.takeError();
      ojson report = fabricStats(ctx.module);
      if (format == "json") {
        *os << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      } else if (format == "yaml") {
        writeYaml(report, *os);
      } else {
        bool first = true;
        for (const StatsSection *s : StatsRegistry::all()) {
          if (!report.contains(s->key))
            continue;
          *os << (first ? "" : "\n") << s->title << ":\n";
          writeText(report[s->key], *os, 2);
          first = false;
        }
      }
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc
