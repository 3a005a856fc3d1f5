#include "visualize/Graphviz.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <llvm/ADT/StringExtras.h>

#include <map>
#include <memory>
#include <string_view>

namespace infracc::viz {

bool isRenderFormat(llvm::StringRef f) {
  return f == "dot" || f == "svg" || f == "png" || f == "pdf";
}

std::string htmlEscape(llvm::StringRef s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

namespace {

// cgraph's API predates const; it copies every string it is given.
char *cs(const std::string &s) { return const_cast<char *>(s.c_str()); }
char *cs(const char *s) { return const_cast<char *>(s); }

// Graphviz reports through a process-wide hook; collect everything it says while one
// drawing is processed.
std::string *capturedMessages = nullptr;

int captureMessage(char *msg) {
  if (capturedMessages)
    *capturedMessages += msg;
  return 0;
}

class CaptureGraphvizMessages {
public:
  explicit CaptureGraphvizMessages(std::string &sink) {
    capturedMessages = &sink;
    prevFn_ = agseterrf(captureMessage);
    prevLevel_ = agseterr(AGWARN);
    agreseterrors();
  }
  ~CaptureGraphvizMessages() {
    agseterrf(prevFn_);
    agseterr(prevLevel_);
    capturedMessages = nullptr;
  }

private:
  agusererrf prevFn_;
  agerrlevel_t prevLevel_;
};

int appendToString(void *chan, const char *str) {
  *static_cast<std::string *>(chan) += str;
  return 0;
}
int flushNothing(void *) { return 0; }
Agiodisc_t StringIo = {nullptr, appendToString, flushNothing};

// Object ids in creation order. cgraph's default discipline uses the address of the
// interned name as the id and orders subgraphs by id, so clusters would come out (and
// be laid out) in an order that depends on the heap; sequential ids make both follow
// the drawing. Named objects get even ids, anonymous ones odd, as cgraph expects, and
// names stay interned with agstrdup: cgraph inspects them as its own strings.
struct SequentialIds {
  Agraph_t *root;
  std::map<std::string_view, IDTYPE> byName;   // views of the interned names
  std::vector<char *> names;                    // by id / 2 - 1
  IDTYPE nextAnonymous = 1;
};

void *idOpen(Agraph_t *g, Agdisc_t *) { return new SequentialIds{g, {}, {}, 1}; }

long idMap(void *state, int, char *str, IDTYPE *id, int createflag) {
  auto *ids = static_cast<SequentialIds *>(state);
  if (!str) {
    *id = ids->nextAnonymous;
    ids->nextAnonymous += 2;
    return 1;
  }
  if (auto it = ids->byName.find(std::string_view(str)); it != ids->byName.end()) {
    *id = it->second;
    return 1;
  }
  if (!createflag)
    return 0;
  char *interned = agstrdup(ids->root, str);
  ids->names.push_back(interned);
  *id = 2 * ids->names.size();
  ids->byName.emplace(std::string_view(interned), *id);
  return 1;
}

long idAlloc(void *, int, IDTYPE) { return 0; }
// Names stay interned until the graph is closed (which frees its string table).
void idFree(void *, int, IDTYPE) {}

char *idPrint(void *state, int, IDTYPE id) {
  auto *ids = static_cast<SequentialIds *>(state);
  if (id % 2 == 1 || id == 0 || id / 2 > ids->names.size())
    return nullptr;
  return ids->names[id / 2 - 1];
}

void idClose(void *state) { delete static_cast<SequentialIds *>(state); }
void idRegister(void *, int, void *) {}

Agiddisc_t SequentialIdDisc = {idOpen, idMap, idAlloc, idFree, idPrint, idClose, idRegister};

struct GraphCloser {
  void operator()(Agraph_t *g) const { agclose(g); }
};
using GraphPtr = std::unique_ptr<Agraph_t, GraphCloser>;

void setAttr(Agraph_t *root, void *obj, int kind, const Attr &a) {
  Agsym_t *sym = agattr(root, kind, cs(a.key), nullptr);
  if (!sym)
    sym = agattr(root, kind, cs(a.key), cs(""));
  if (a.html) {
    char *h = agstrdup_html(root, cs(a.value));
    agxset(obj, sym, h);
    agstrfree(root, h);
  } else {
    agxset(obj, sym, cs(a.value));
  }
}

void setDefault(Agraph_t *root, int kind, const Attr &a) {
  if (a.html) {
    char *h = agstrdup_html(root, cs(a.value));
    agattr(root, kind, cs(a.key), h);
    agstrfree(root, h);
  } else {
    agattr(root, kind, cs(a.key), cs(a.value));
  }
}

GraphPtr build(const Drawing &d, Agdisc_t *disc) {
  GraphPtr g(agopen(cs(d.name), d.directed ? Agdirected : Agundirected, disc));
  Agraph_t *root = g.get();
  for (const Attr &a : d.graph)
    setDefault(root, AGRAPH, a);
  for (const Attr &a : d.nodeDefaults)
    setDefault(root, AGNODE, a);
  for (const Attr &a : d.edgeDefaults)
    setDefault(root, AGEDGE, a);

  std::vector<Agraph_t *> clusters;
  clusters.reserve(d.clusters.size());
  for (const Drawing::Cluster &c : d.clusters) {
    Agraph_t *parent = c.parent < 0 ? root : clusters[c.parent];
    Agraph_t *sub = agsubg(parent, cs("cluster_" + c.id), 1);
    // A root graph attribute is also every subgraph's default: give each cluster
    // its own label so none inherits the title.
    bool hasLabel = false;
    for (const Attr &a : c.attrs) {
      setAttr(root, sub, AGRAPH, a);
      hasLabel |= a.key == "label";
    }
    if (!hasLabel)
      setAttr(root, sub, AGRAPH, {"label", ""});
    clusters.push_back(sub);
  }

  std::vector<Agnode_t *> nodes;
  nodes.reserve(d.nodes.size());
  for (const Drawing::Node &n : d.nodes) {
    Agnode_t *node = agnode(root, cs(n.id), 1);
    for (const Attr &a : n.attrs)
      setAttr(root, node, AGNODE, a);
    if (n.cluster >= 0)
      agsubnode(clusters[n.cluster], node, 1);
    nodes.push_back(node);
  }
  for (size_t i = 0; i < d.sameRank.size(); ++i) {
    const Drawing::RankGroup &rg = d.sameRank[i];
    Agraph_t *parent = rg.cluster < 0 ? root : clusters[rg.cluster];
    Agraph_t *sub = agsubg(parent, cs("rank_" + std::to_string(i)), 1);
    setAttr(root, sub, AGRAPH, {"rank", "same"});
    for (uint32_t n : rg.nodes)
      agsubnode(sub, nodes[n], 1);
  }
  for (const Drawing::Edge &e : d.edges) {
    // Named edges: parallel edges between the same pair stay distinct.
    Agedge_t *edge = agedge(root, nodes[e.tail], nodes[e.head], nullptr, 1);
    for (const Attr &a : e.attrs)
      setAttr(root, edge, AGEDGE, a);
  }
  return g;
}

// One Graphviz context for the whole process, created before the first graph and
// never freed: Graphviz 2.43's pango plugin keeps a pointer into a context's font
// table across gvFreeContext (found by AddressSanitizer: a second context reads freed
// memory). Creating it first also matters for DOT: the first context declares
// Graphviz's default attributes (label="\N") for every graph created afterwards, and
// the output must not depend on what was drawn before.
GVC_t *context() {
  static GVC_t *gvc = gvContext();
  return gvc;
}

llvm::Error graphvizError(llvm::StringRef what, llvm::StringRef messages) {
  std::string msg = ("Graphviz failed to " + what).str();
  llvm::StringRef m = messages.trim();
  if (!m.empty())
    msg += ": " + m.str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

llvm::Expected<std::string> render(const Drawing &d, llvm::StringRef format) {
  if (!isRenderFormat(format))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown picture format '" + format + "' (valid: " +
                                       RenderFormats + ")");
  std::string messages;
  CaptureGraphvizMessages capture(messages);
  GVC_t *gvc = context();
  if (!gvc)
    return graphvizError("start", messages);
  if (format == "dot") {
    Agdisc_t disc = {&AgMemDisc, &SequentialIdDisc, &StringIo};
    GraphPtr g = build(d, &disc);
    std::string out;
    if (agwrite(g.get(), &out) != 0 || !messages.empty())
      return graphvizError("write DOT", messages);
    return out;
  }
  Agdisc_t disc = {&AgMemDisc, &SequentialIdDisc, &AgIoDisc};
  GraphPtr g = build(d, &disc);
  if (gvLayout(gvc, g.get(), d.engine.c_str()) != 0 || !messages.empty())
    return graphvizError("lay out the drawing with '" + d.engine + "'", messages);
  char *data = nullptr;
  unsigned int len = 0;
  int rc = gvRenderData(gvc, g.get(), format.str().c_str(), &data, &len);
  std::string out;
  if (data)
    out.assign(data, len);
  gvFreeRenderData(data);
  gvFreeLayout(gvc, g.get());
  if (rc != 0 || !messages.empty())
    return graphvizError("render " + format.str(), messages);
  return out;
}

} // namespace infracc::viz
