#include "visualize/ViewCommon.h"

#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"
#include "visualize/Style.h"

#include <llvm/ADT/STLExtras.h>

#include <fmt/format.h>

#include <cmath>

namespace infracc::viz {

size_t LinkLegend::slot(LinkId l) {
  const auto &info = g_.link(l);
  std::string physics = formatLinkPhysics(info.bandwidth, info.latency);
  auto [it, fresh] = slots_.try_emplace(info.name + "\x1f" + physics, rows_.size());
  if (fresh)
    rows_.push_back({info.name, physics});
  return it->second;
}

void LinkLegend::count(LinkId l, uint64_t n) {
  Row &r = rows_[slot(l)];
  r.edges += n;
  r.lines += 1;
  r.minBundle = std::min(r.minBundle, n);
  r.maxBundle = std::max(r.maxBundle, n);
}

std::string LinkLegend::describe(LinkId l) const {
  const auto &info = g_.link(l);
  std::string s = info.name;
  if (info.bandwidth)
    s += " " + formatBandwidth(*info.bandwidth);
  return s;
}

void LinkLegend::appendRows(std::string &html) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row &r = rows_[i];
    std::string edges = fmt::format("{} edge{}", formatCount(r.edges), r.edges == 1 ? "" : "s");
    if (r.lines != r.edges)
      edges += fmt::format(" in {} line{} of ×{}", formatCount(r.lines), r.lines == 1 ? "" : "s",
                           r.minBundle == r.maxBundle
                               ? formatCount(r.minBundle)
                               : formatCount(r.minBundle) + "–" + formatCount(r.maxBundle));
    html += fmt::format("<TR><TD ALIGN=\"RIGHT\"><FONT COLOR=\"{}\"><B>{}</B></FONT></TD>"
                        "<TD ALIGN=\"LEFT\">{}</TD><TD ALIGN=\"LEFT\">{}</TD>"
                        "<TD ALIGN=\"LEFT\">{}</TD></TR>",
                        linkColour(i), linkDashed(i) ? "╍╍╍" : "━━━",
                        htmlEscape(r.name),
                        htmlEscape(r.physics.empty() ? "(no physical data)" : r.physics), edges);
  }
}

std::string titleBlock(llvm::StringRef title, llvm::ArrayRef<std::string> lines,
                       llvm::StringRef digest, const LinkLegend &legend) {
  std::string html = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\">";
  html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"16\"><B>{}</B>"
                      "</FONT></TD></TR>",
                      htmlEscape(title));
  for (const std::string &l : lines)
    html += fmt::format("<TR><TD ALIGN=\"LEFT\">{}</TD></TR>", htmlEscape(l));
  if (!digest.empty())
    html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"9\">digest "
                        "{}</FONT></TD></TR>",
                        htmlEscape(digest));
  // The legend is a table of its own, so that its columns do not stretch to the
  // width of the title lines.
  if (legend.size()) {
    html += "<TR><TD ALIGN=\"LEFT\"><TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" "
            "CELLPADDING=\"1\">";
    legend.appendRows(html);
    html += "</TABLE></TD></TR>";
  }
  html += "</TABLE>";
  return html;
}

void setCommonStyle(Drawing &d, std::string titleHtml, llvm::StringRef rankdir) {
  d.graph = {{"rankdir", rankdir.str()},
             {"fontname", FontName},
             {"fontsize", "11"},
             {"labelloc", "t"},
             {"labeljust", "l"},
             {"nodesep", "0.25"},
             {"ranksep", "0.7"},
             {"label", std::move(titleHtml), true}};
  d.nodeDefaults = {{"fontname", FontName}, {"fontsize", "11"}, {"margin", "0.1,0.04"}};
  d.edgeDefaults = {{"fontname", FontName}, {"fontsize", "9"}, {"dir", "none"}};
}

std::string sliceOf(const std::vector<uint64_t> &copies, uint64_t count) {
  if (copies.size() == 1)
    return fmt::format("[{}]", copies[0]);
  if (copies.size() == count)
    return "";
  uint64_t step = copies[1] - copies[0];
  bool arithmetic = step > 0;
  for (size_t i = 2; arithmetic && i < copies.size(); ++i)
    arithmetic = copies[i] - copies[i - 1] == step;
  if (arithmetic)
    return step == 1 ? fmt::format("[{}:{}]", copies.front(), copies.back() + 1)
                     : fmt::format("[{}:{}:{}]", copies.front(), copies.back() + 1, step);
  std::string s = "[";
  for (size_t i = 0; i < copies.size() && i < 3; ++i)
    s += (i ? "," : "") + std::to_string(copies[i]);
  return s + (copies.size() > 3 ? ",…]" : "]");
}

std::string perMember(uint64_t lo, uint64_t hi, llvm::StringRef what) {
  return lo == hi ? fmt::format("{} per {}", lo, what.str())
                  : fmt::format("{}–{} per {}", lo, hi, what.str());
}

Attrs edgeAttrs(LinkLegend &legend, LinkId l, uint64_t total, bool labelled,
                llvm::ArrayRef<std::string> detail, llvm::StringRef tooltip) {
  std::string text =
      (total > 1 ? "×" + formatCount(total) + " " : std::string()) + legend.describe(l);
  Attrs a = {{"color", legend.colour(l)}};
  if (legend.dashed(l))
    a.push_back({"style", "dashed"});
  if (total > 1)
    a.push_back(
        {"penwidth", fmt::format("{:.1f}", std::min(1.0 + 0.75 * std::log2(double(total)), 4.0))});
  // A single edge needs no label: its colour and the legend say what it is. Lines
  // of a label are left-aligned (\l) so that none runs into the edge.
  // Labels start with a little space: dot puts them right against the edge, which
  // may be drawn several points wide.
  if (labelled && (total > 1 || !detail.empty())) {
    std::string label = "  " + text;
    if (!detail.empty()) {
      label += "\\l";
      for (const std::string &line : detail)
        label += "  " + line + "\\l";
    }
    a.push_back({"label", label});
  }
  a.push_back({"tooltip", tooltip.empty() ? text : tooltip.str()});
  return a;
}

size_t labelledEdges(const std::vector<GroupEdge> &edges, const Grouping &gr) {
  return llvm::count_if(edges, [&](const GroupEdge &e) {
    return e.total > 1 || gr.members[e.ga].size() > 1 || gr.members[e.gb].size() > 1;
  });
}

llvm::Error refuse(uint64_t wouldDraw, llvm::StringRef view, uint32_t maxNodes,
                   llvm::StringRef alternatives) {
  return usageError(fmt::format("{} would draw {} nodes, more than -max-nodes={}; {}", view.str(),
                                wouldDraw, maxNodes, alternatives.str()));
}

std::vector<uint32_t> boxOfNodes(const FabricGraph &g) {
  std::vector<uint32_t> box(g.numNodes());
  uint32_t base = 0;
  for (const auto &inst : g.instances()) {
    if (inst.nodesPerCopy)
      for (uint64_t c = 0; c < inst.count; ++c)
        std::fill_n(box.begin() + inst.firstNode + c * inst.nodesPerCopy, inst.nodesPerCopy,
                    base + static_cast<uint32_t>(c));
    base += static_cast<uint32_t>(inst.count);
  }
  return box;
}

std::vector<uint32_t> drawingRows(const FabricGraph &g) {
  StructureOptions cheap;
  cheap.bisection = false;
  cheap.diameter = false;
  std::vector<int32_t> tiers = analyzeFabricStructure(g, cheap).copyTier;
  int32_t highest = -1;
  for (int32_t t : tiers)
    if (t != NoTier)
      highest = std::max(highest, t == HostTier ? 0 : t + 1);
  std::vector<uint32_t> rows(tiers.size());
  for (size_t i = 0; i < tiers.size(); ++i)
    rows[i] = tiers[i] == HostTier ? 0
              : tiers[i] == NoTier ? static_cast<uint32_t>(highest + 1)
                                   : static_cast<uint32_t>(tiers[i] + 1);
  return rows;
}

const char *roleFill(InstanceRole r) {
  switch (r) {
  case InstanceRole::Host: return "#D9EAD3";
  case InstanceRole::Switch: return "#CFE2F3";
  case InstanceRole::Other: break;
  }
  return "#EEEEEE";
}

} // namespace infracc::viz
