#include "backends/infragraph/Digest.h"

#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/SHA256.h>

#include <fmt/format.h>

#include <string_view>

namespace infracc {

namespace {

// A raw_ostream that feeds everything written to it into SHA-256.
class HashStream : public llvm::raw_ostream {
public:
  HashStream() { SetBuffered(); }
  ~HashStream() override { flush(); }
  llvm::SHA256 sha;

private:
  void write_impl(const char *ptr, size_t size) override {
    sha.update(llvm::StringRef(ptr, size));
    pos_ += size;
  }
  uint64_t current_pos() const override { return pos_; }
  uint64_t pos_ = 0;
};

std::string number(double v) { return fmt::format("{}", v); }

} // namespace

void writeDigestText(const FabricGraph &g, llvm::raw_ostream &os, DigestKind kind) {
  uint32_t n = g.numNodes();
  // All names in one buffer (millions of small strings would each allocate).
  std::string buffer;
  std::vector<uint64_t> start(size_t(n) + 1, 0);
  llvm::SmallString<64> name;
  for (NodeId v = 0; v < n; ++v) {
    name.clear();
    g.appendName(v, name);
    buffer.append(name.data(), name.size());
    start[v + 1] = buffer.size();
  }
  auto nameOf = [&](NodeId v) {
    return std::string_view(buffer.data() + start[v], start[v + 1] - start[v]);
  };
  std::vector<NodeId> order(n);
  for (NodeId v = 0; v < n; ++v)
    order[v] = v;
  std::sort(order.begin(), order.end(),
            [&](NodeId a, NodeId b) { return nameOf(a) < nameOf(b); });
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < n; ++r)
    rank[order[r]] = r;

  if (kind == DigestKind::Simulation)
    os << "infracc-simulation-digest 1\n";
  os << "infracc-fabric-digest 1\n";
  for (NodeId v : order) {
    FabricGraph::NodePath p = g.decode(v);
    os << "node\t" << nameOf(v) << '\t' << componentKindName(p.leaf().kind) << '\t'
       << g.typeName(v) << '\n';
  }
  struct Key {
    uint32_t a, b;
    EdgeId e;
  };
  std::vector<Key> keys;
  keys.reserve(g.numEdges());
  for (EdgeId e = 0; e < g.numEdges(); ++e) {
    uint32_t a = rank[g.edge(e).u], b = rank[g.edge(e).v];
    keys.push_back({std::min(a, b), std::max(a, b), e});
  }
  std::sort(keys.begin(), keys.end(),
            [](const Key &x, const Key &y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  // "<link>\t<bandwidth>\t<latency>" once per link.
  std::vector<std::string> linkText;
  for (const FabricGraph::LinkInfo &l : g.links())
    linkText.push_back(l.name + '\t' +
                       (l.bandwidth ? number(l.bandwidth->bitsPerSecond) : std::string("-")) +
                       '\t' + (l.latency ? number(l.latency->ns) : std::string("-")));
  for (const Key &k : keys)
    os << "edge\t" << nameOf(order[k.a]) << '\t' << nameOf(order[k.b]) << '\t'
       << linkText[g.edge(k.e).link] << '\n';
  if (kind != DigestKind::Simulation)
    return;
  for (NodeId v = 0; v < n; ++v)
    os << "order\t" << nameOf(v) << '\t' << g.deviceName(v) << '\n';
  for (NodeId v = 0; v < n; ++v)
    if (const auto *attrs = g.nodeAttributes(v))
      for (const Attribute &a : *attrs)
        os << "attr\tnode\t" << nameOf(v) << '\t' << a.key << '\t' << a.value << '\n';
  for (const Key &k : keys)
    if (const auto *attrs = g.edgeAttributes(k.e))
      for (const Attribute &a : *attrs)
        os << "attr\tedge\t" << nameOf(order[k.a]) << '\t' << nameOf(order[k.b]) << '\t'
           << a.key << '\t' << a.value << '\n';
  for (const Attribute &a : g.graphAttributes())
    os << "attr\tgraph\t" << a.key << '\t' << a.value << '\n';
}

std::string fabricDigest(const FabricGraph &g, DigestKind kind) {
  HashStream hs;
  writeDigestText(g, hs, kind);
  hs.flush();
  std::array<uint8_t, 32> h = hs.sha.final();
  return llvm::toHex(h, /*LowerCase=*/true);
}

namespace {

namespace cl = llvm::cl;

cl::opt<DigestKind> DigestOption(
    "digest", cl::init(DigestKind::Structure), cl::value_desc("kind"),
    cl::desc("-emit=digest: which digest (default structure)"),
    cl::values(clEnumValN(DigestKind::Structure, "structure",
                          "the expanded graph: nodes, kinds, edges, links, bandwidths, latencies "
                          "(the same however the document spells it)"),
               clEnumValN(DigestKind::Simulation, "simulation",
                          "also node order (rank placement) and annotations "
                          "(switch_latency ...): equal digests simulate alike")),
    cl::cat(opts::backendCategory()));

RegisterTarget DigestTarget({
    .name = "digest",
    .description = "SHA-256 of the expanded fabric (nodes, kinds, edges, links, bandwidth, "
                   "latency; -digest=simulation adds node order and annotations)",
    .needs = TargetNeeds::Fabric,
    .defaultPipeline = {},
    .run = [](TargetContext &ctx) -> llvm::Error {
      // -format=canonical writes the text that is hashed, to see what changed.
      std::string format = opts::outputFormat();
      if (!format.empty() && format != "text" && format != "canonical")
        return usageError("-emit=digest writes text (the digest) or canonical (the text it "
                          "hashes), not '" + format + "'");
      auto os = ctx.output.stream();
      if (!os)
        return os.takeError();
      if (format == "canonical")
        writeDigestText(*ctx.module.fabric, *os, DigestOption);
      else
        *os << fabricDigest(*ctx.module.fabric, DigestOption) << "\n";
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc
