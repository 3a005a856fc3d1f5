// Pieces the fabric views share: the link legend (colours per link), the title
// block, common Graphviz attributes and the wording of labels and refusals.
#pragma once

#include "ir/FabricGraph.h"
#include "visualize/Graphviz.h"
#include "visualize/Style.h"
#include "visualize/UnitGraph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <map>
#include <string>
#include <vector>

namespace infracc::viz {

/// Bundles of parallel edges are labelled (`×8 nvlink 400 Gb/s`) only when there are
/// at most this many of them: beyond that the labels crowd each other and widen the
/// layout, and the legend says how the edges of each link are bundled instead. Every
/// edge keeps a tooltip (SVG) with the full text.
inline constexpr size_t MaxLabelledEdges = 12;

/// Colours per link: links with the same name and physics share a colour and a
/// legend row, whichever device defines them.
class LinkLegend {
public:
  explicit LinkLegend(const FabricGraph &g) : g_(g) {}

  size_t slot(LinkId l);
  /// One drawn line standing for n edges of link l.
  void count(LinkId l, uint64_t n);
  const char *colour(LinkId l) { return linkColour(slot(l)); }
  bool dashed(LinkId l) { return linkDashed(slot(l)); }
  /// "eth 100 Gb/s": what an edge label says about its link.
  std::string describe(LinkId l) const;
  void appendRows(std::string &html) const;
  size_t size() const { return rows_.size(); }

private:
  struct Row {
    std::string name, physics;
    uint64_t edges = 0, lines = 0, minBundle = ~uint64_t(0), maxBundle = 0;
  };
  const FabricGraph &g_;
  std::map<std::string, size_t> slots_;
  std::vector<Row> rows_;
};

/// The graph label: title, lines of facts and notes, the digest, the link legend.
std::string titleBlock(llvm::StringRef title, llvm::ArrayRef<std::string> lines,
                       llvm::StringRef digest, const LinkLegend &legend);

/// Fonts, title placement and spacing every fabric picture uses.
void setCommonStyle(Drawing &d, std::string titleHtml, llvm::StringRef rankdir);

/// Compact copy ranges in InfraGraph's slice notation: [3], [0:16], [0:16:2],
/// [1,5,9], or "" when `copies` is every copy of something with `count` copies.
std::string sliceOf(const std::vector<uint64_t> &copies, uint64_t count);

/// "2 per server", "1–3 per leaf".
std::string perMember(uint64_t lo, uint64_t hi, llvm::StringRef what);

/// Edge attributes for a line standing for `total` parallel edges of link l: colour,
/// width, and when `labelled` a label (`×8 nvlink 400 Gb/s`, then `detail` lines).
Attrs edgeAttrs(LinkLegend &legend, LinkId l, uint64_t total, bool labelled,
                llvm::ArrayRef<std::string> detail, llvm::StringRef tooltip);

/// Drawn edges that would carry a label: bundles of parallel edges, and edges
/// between summarised groups.
size_t labelledEdges(const std::vector<GroupEdge> &edges, const Grouping &gr);

/// The refusal of a picture larger than -max-nodes (a usage error).
llvm::Error refuse(uint64_t wouldDraw, llvm::StringRef view, uint32_t maxNodes,
                   llvm::StringRef alternatives);

/// Node fill per instance role.
const char *roleFill(InstanceRole r);

/// The box (FabricGraph::deviceCopyOf numbering) of every node, in one pass.
std::vector<uint32_t> boxOfNodes(const FabricGraph &g);

/// The row of every box in a layered picture, from the tiers of ir/FabricStructure.h:
/// hosts in row 0, switch tier t in row t + 1, boxes without a tier (switches no host
/// reaches, devices that are neither hosts nor switches) one row above the highest.
std::vector<uint32_t> drawingRows(const FabricGraph &g);

} // namespace infracc::viz
