// A small description of a picture (nodes, edges, clusters, attributes) that the
// views build, and its rendering through Graphviz's libraries (cgraph + gvc,
// in-process). Keeping the views independent of cgraph makes them easy to test and
// lets the same Drawing be written as DOT, SVG, PNG or PDF.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace infracc::viz {

struct Attr {
  std::string key, value;
  bool html = false;   // value is an HTML-like label (written as <...> in DOT)
};
using Attrs = std::vector<Attr>;

struct Drawing {
  struct Cluster {
    std::string id;      // without the "cluster_" prefix, which is added
    Attrs attrs;
    int parent = -1;     // index of the enclosing cluster, or -1
  };
  struct Node {
    std::string id;
    Attrs attrs;
    int cluster = -1;    // index into clusters, or -1
  };
  struct Edge {
    uint32_t tail = 0, head = 0;   // indices into nodes
    Attrs attrs;
  };

  std::string name;
  bool directed = true;
  std::string engine = "dot";      // layout engine: dot, neato, ...
  Attrs graph, nodeDefaults, edgeDefaults;
  std::vector<Cluster> clusters;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  /// Nodes placed on one rank (`rank=same`), all in `cluster` (-1: none).
  struct RankGroup {
    int cluster = -1;
    std::vector<uint32_t> nodes;
  };
  std::vector<RankGroup> sameRank;
  /// Why this picture is not the one asked for (a larger view fell back to the
  /// overview); the target prints it as a warning. Empty: it is the one asked for.
  std::string fallbackNote;

  uint32_t addNode(std::string id, Attrs attrs, int cluster = -1) {
    nodes.push_back({std::move(id), std::move(attrs), cluster});
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  void addEdge(uint32_t tail, uint32_t head, Attrs attrs) {
    edges.push_back({tail, head, std::move(attrs)});
  }
  int addCluster(std::string id, Attrs attrs, int parent = -1) {
    clusters.push_back({std::move(id), std::move(attrs), parent});
    return static_cast<int>(clusters.size() - 1);
  }
};

/// The formats render() produces: "dot" is the graph as built (no layout, stable
/// across Graphviz versions); the others are laid out and rendered by Graphviz.
bool isRenderFormat(llvm::StringRef format);
inline constexpr const char *RenderFormats = "dot, svg, png, pdf";

/// Renders the drawing. Anything Graphviz reports (errors and warnings alike) makes
/// this fail with Graphviz's messages, since a picture drawn from our own graph
/// should never provoke one.
llvm::Expected<std::string> render(const Drawing &d, llvm::StringRef format);

/// Escapes text for an HTML-like label.
std::string htmlEscape(llvm::StringRef s);

} // namespace infracc::viz
