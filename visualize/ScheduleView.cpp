#include "visualize/ScheduleView.h"

#include "support/Diagnostics.h"
#include "visualize/Style.h"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <tuple>

namespace infracc::viz {

MessageMatching matchMessages(const Schedule &s) {
  MessageMatching m;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::deque<uint32_t>> sends;
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      uint32_t g = s.globalIndex(r, i);
      if (s.kind(g) == OpKind::Send)
        sends[{r, s.peer(g), s.tag(g)}].push_back(g);
    }
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      uint32_t g = s.globalIndex(r, i);
      if (s.kind(g) != OpKind::Recv)
        continue;
      if (s.peer(g) == AnySource || s.tag(g) == AnyTag) {
        ++m.wildcardRecvs;
        continue;
      }
      auto it = sends.find({s.peer(g), r, s.tag(g)});
      if (it == sends.end() || it->second.empty()) {
        ++m.unmatchedRecvs;
        continue;
      }
      m.matches.push_back({it->second.front(), g});
      it->second.pop_front();
    }
  for (auto &[key, q] : sends)
    m.unmatchedSends += q.size();
  return m;
}

std::string opLabel(const Schedule &s, uint32_t g) {
  std::string label;
  auto peer = [](uint32_t p) { return p == AnySource ? std::string("any") : std::to_string(p); };
  switch (s.kind(g)) {
  case OpKind::Send:
    label = fmt::format("send {}b → {}", s.size(g), peer(s.peer(g)));
    break;
  case OpKind::Recv:
    label = fmt::format("recv {}b ← {}", s.size(g), peer(s.peer(g)));
    break;
  case OpKind::Calc:
    label = fmt::format("calc {}", s.size(g));
    break;
  case OpKind::Collective: {
    const CollectiveInfo &c = s.collectives()[s.peer(g)];
    label = fmt::format("{} {}b", collectiveKindName(c.kind).str(), c.bytes);
    if (c.communicator < s.communicators().size())
      label += fmt::format(" comm {}", s.communicators()[c.communicator].id);
    if (c.kind == CollectiveKind::Bcast || c.kind == CollectiveKind::Reduce ||
        c.kind == CollectiveKind::Gather || c.kind == CollectiveKind::Scatter)
      label += fmt::format(" root {}", c.root);
    break;
  }
  default:
    label = fmt::format("{} {}b", opKindName(s.kind(g)).str(), s.size(g));
    break;
  }
  if ((s.kind(g) == OpKind::Send || s.kind(g) == OpKind::Recv) && s.tag(g) != 0)
    label += s.tag(g) == AnyTag ? " tag any" : fmt::format(" tag {}", s.tag(g));
  if (s.cpu(g) != 0)
    label += fmt::format(" cpu {}", s.cpu(g));
  if (s.nic(g) != 0 && s.kind(g) != OpKind::Calc)
    label += fmt::format(" nic {}", s.nic(g));
  if (std::string l = s.label(g); !l.empty())
    label = l + ": " + label;
  return label;
}

namespace {
const char *opFill(OpKind k) {
  switch (k) {
  case OpKind::Send: return "#FBE0BF";
  case OpKind::Recv: return "#C9DDF2";
  case OpKind::Calc: return "#E8E8E8";
  case OpKind::Collective: return "#E6D5EC";
  default: return "#CDEBC5";
  }
}
} // namespace

llvm::Expected<Drawing> drawSchedule(const Schedule &s, const ScheduleViewOptions &o) {
  if (s.numOps() > o.maxOps)
    return usageError(fmt::format(
        "the schedule has {} ops, more than -max-ops={}; a picture that large cannot be read "
        "(raise -max-ops to draw it anyway)",
        s.numOps(), o.maxOps));
  Drawing d;
  d.name = "schedule";
  uint64_t counts[4] = {0, 0, 0, 0};   // send, recv, calc, other
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    int cluster = d.addCluster(fmt::format("rank{}", r),
                               {{"label", fmt::format("rank {}", r)},
                                {"style", "rounded"},
                                {"color", "#999999"}});
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      uint32_t g = s.globalIndex(r, i);
      OpKind k = s.kind(g);
      ++counts[k == OpKind::Send ? 0 : k == OpKind::Recv ? 1 : k == OpKind::Calc ? 2 : 3];
      d.addNode(fmt::format("r{}.{}", r, i),
                {{"label", opLabel(s, g)}, {"fillcolor", opFill(k)}}, cluster);
    }
  }
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      uint32_t g = s.globalIndex(r, i);
      for (uint32_t k = 0; k < s.numSuccessors(g); ++k) {
        Attrs a;
        if (s.successorKind(g, k) == DepKind::IRequires)
          a = {{"style", "dashed"}, {"tooltip", "irequires: starts after this op starts"}};
        else
          a = {{"tooltip", "requires: starts after this op finishes"}};
        d.addEdge(g, s.globalIndex(r, s.successor(g, k)), std::move(a));
      }
    }
  MessageMatching m = matchMessages(s);
  for (const MessageMatch &mm : m.matches)
    d.addEdge(mm.send, mm.recv,
              {{"color", "#D55E00"},
               {"penwidth", "1.5"},
               // Ranks stay side by side: messages do not push the receiver down.
               {"constraint", "false"},
               {"tooltip", fmt::format("message, {}b", s.size(mm.send))}});

  std::string facts = fmt::format("{} rank{} · {} ops: {} send, {} recv, {} calc", s.numRanks(),
                                  s.numRanks() == 1 ? "" : "s", s.numOps(), counts[0], counts[1],
                                  counts[2]);
  if (counts[3])
    facts += fmt::format(", {} other", counts[3]);
  facts += fmt::format(" · {} dependencies", s.numDependencies());
  std::string html = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\">";
  html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"16\"><B>{}</B></FONT></TD></TR>",
                      htmlEscape(o.title.empty() ? "schedule" : o.title));
  html += fmt::format("<TR><TD ALIGN=\"LEFT\">{}</TD></TR>", htmlEscape(facts));
  html += "<TR><TD ALIGN=\"LEFT\">→ requires (after finish)   ⇢ irequires (after start, dashed)"
          "   <FONT COLOR=\"#D55E00\"><B>→</B> message (send to matching recv)</FONT></TD></TR>";
  std::vector<std::string> notes;
  if (m.wildcardRecvs)
    notes.push_back(fmt::format("{} receive{} with any source or tag not matched",
                                m.wildcardRecvs, m.wildcardRecvs == 1 ? "" : "s"));
  if (m.unmatchedSends || m.unmatchedRecvs)
    notes.push_back(fmt::format("{} send{} and {} receive{} without a partner", m.unmatchedSends,
                                m.unmatchedSends == 1 ? "" : "s", m.unmatchedRecvs,
                                m.unmatchedRecvs == 1 ? "" : "s"));
  for (const std::string &n : notes)
    html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT COLOR=\"#B00020\">{}</FONT></TD></TR>",
                        htmlEscape(n));
  html += "</TABLE>";
  d.graph = {{"rankdir", "TB"},  {"fontname", FontName}, {"fontsize", "11"},
             {"labelloc", "t"},  {"labeljust", "l"},     {"nodesep", "0.2"},
             {"ranksep", "0.35"}, {"label", html, true}};
  d.nodeDefaults = {{"fontname", FontName}, {"fontsize", "10"}, {"shape", "box"},
                    {"style", "rounded,filled"}, {"margin", "0.08,0.03"}, {"height", "0.3"}};
  d.edgeDefaults = {{"fontname", FontName}, {"arrowsize", "0.6"}};
  return d;
}

} // namespace infracc::viz
