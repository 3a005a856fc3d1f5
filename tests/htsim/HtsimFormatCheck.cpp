#include "tests/htsim/HtsimFormatCheck.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace infracc::test::htsimcheck {

namespace {

constexpr int64_t IntMax = 2147483647;

struct Lines {
  std::vector<std::string> text;
  std::vector<std::string> problems;
};

// Splits on '\n' and checks the characters and spacing every line must have.
Lines splitLines(const std::string &s) {
  Lines l;
  if (s.empty()) {
    l.problems.push_back("file: empty");
    return l;
  }
  if (s.back() != '\n')
    l.problems.push_back("file: the last line does not end with a newline");
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos)
      end = s.size();
    std::string line = s.substr(start, end - start);
    size_t n = l.text.size() + 1;
    auto bad = [&](const std::string &what) {
      l.problems.push_back("line " + std::to_string(n) + ": " + what);
    };
    if (line.find('\r') != std::string::npos)
      bad("carriage return (htsim splits lines on LF only)");
    if (line.find('\t') != std::string::npos)
      bad("tab (htsim separates tokens by single spaces only)");
    if (line.find("  ") != std::string::npos)
      bad("two spaces in a row (htsim reads an empty token)");
    if (!line.empty() && (line.front() == ' ' || line.back() == ' '))
      bad("leading or trailing space");
    l.text.push_back(line);
    start = end + 1;
  }
  return l;
}

std::vector<std::string> tokens(const std::string &line) {
  std::vector<std::string> t;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string::npos)
      end = line.size();
    if (end > start)
      t.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return t;
}

// A decimal integer as htsim's stoi reads it, without the leniencies we never emit.
std::optional<int64_t> integer(const std::string &s, int64_t lo = 0, int64_t hi = IntMax) {
  if (s.empty() || s.size() > 12 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit((unsigned char)c); }))
    return std::nullopt;
  int64_t v = std::stoll(s);
  if (v < lo || v > hi)
    return std::nullopt;
  return v;
}

} // namespace

std::string joined(const std::vector<std::string> &violations) {
  std::string s;
  for (const std::string &v : violations)
    s += v + "\n";
  return s;
}

// ---------------------------------------------------------------------------------------

std::vector<std::string> checkConnectionMatrix(const std::string &text, const CmOptions &opts) {
  Lines l = splitLines(text);
  std::vector<std::string> out = l.problems;
  auto bad = [&](size_t i, const std::string &what) {
    out.push_back("line " + std::to_string(i + 1) + ": " + what);
  };
  std::map<std::string, int64_t> header;
  struct Flow {
    int64_t id = 0, trigger = 0, sendDone = 0, recvDone = 0;
    bool start = false;
    size_t line = 0;
  };
  std::vector<Flow> flows;
  struct Trigger {
    std::string type;
    int64_t count = 0;
    size_t line = 0;
  };
  std::map<int64_t, Trigger> triggers;
  size_t triggerLines = 0;
  bool body = false;
  std::set<int64_t> ids;
  for (size_t i = 0; i < l.text.size(); ++i) {
    std::vector<std::string> t = tokens(l.text[i]);
    bool isBody = !t.empty() && (t[0].find("->") != std::string::npos || t[0] == "trigger" ||
                                 t[0] == "failure");
    if (!body && !isBody) {
      if (t.empty() || t[0][0] == '#')
        continue;
      if (t[0] == "Failures") {
        bad(i, "Failures: failure lines crash csg-htsim (Route::push_back assertion)");
        continue;
      }
      if (t[0] != "Nodes" && t[0] != "Connections" && t[0] != "Triggers") {
        bad(i, "unknown header line '" + l.text[i] + "' (htsim ignores it)");
        continue;
      }
      if (t.size() != 2 || !integer(t[1])) {
        bad(i, t[0] + " needs one non-negative integer");
        continue;
      }
      if (header.count(t[0]))
        bad(i, t[0] + " given twice");
      header[t[0]] = *integer(t[1]);
      continue;
    }
    body = true;
    if (t.empty()) {
      bad(i, "blank line after the header");
      continue;
    }
    if (t[0][0] == '#') {
      bad(i, "comment after the header (htsim: unknown id)");
      continue;
    }
    if (t[0] == "failure") {
      bad(i, "failure line (crashes csg-htsim)");
      continue;
    }
    if (t[0] == "trigger") {
      ++triggerLines;
      Trigger tr;
      tr.line = i;
      int64_t id = 0;
      for (size_t k = 1; k < t.size(); ++k) {
        if ((t[k] == "id" || t[k] == "count") && k + 1 < t.size()) {
          auto v = integer(t[k + 1], 1);
          if (!v)
            bad(i, "trigger " + t[k] + " '" + t[k + 1] + "' is not a positive integer");
          else if (t[k] == "id")
            id = *v;
          else
            tr.count = *v;
          ++k;
        } else if (t[k] == "oneshot" || t[k] == "barrier" || t[k] == "multishot") {
          if (!tr.type.empty())
            bad(i, "trigger with two types (htsim asserts)");
          tr.type = t[k];
        } else {
          bad(i, "unknown trigger token '" + t[k] + "'");
        }
      }
      if (!id) {
        bad(i, "trigger without an id");
        continue;
      }
      if (tr.type.empty())
        bad(i, "trigger without a type");
      if (tr.type == "barrier" && tr.count < 1)
        bad(i, "barrier without a count");
      if (tr.type != "barrier" && tr.count)
        bad(i, "count on a " + tr.type + " trigger");
      if (triggers.count(id))
        bad(i, "trigger " + std::to_string(id) + " declared twice (htsim asserts)");
      triggers[id] = tr;
      continue;
    }
    if (t[0].find("->") == std::string::npos) {
      bad(i, "'" + t[0] + "' in the body (htsim: unknown id)");
      continue;
    }
    // A connection.
    Flow f;
    f.line = i;
    size_t arrow = t[0].find("->");
    auto src = integer(t[0].substr(0, arrow)), dst = integer(t[0].substr(arrow + 2));
    if (!src || !dst) {
      bad(i, "'" + t[0] + "' is not <src>-><dst>");
    } else {
      if (header.count("Nodes") && (*src >= header["Nodes"] || *dst >= header["Nodes"]))
        bad(i, "node beyond Nodes");
      if (*src == *dst)
        bad(i, "a flow from a node to itself");
    }
    std::set<std::string> seen;
    bool haveSize = false;
    for (size_t k = 1; k < t.size(); ++k) {
      const std::string &key = t[k];
      static const std::set<std::string> keys = {"id", "start", "size", "trigger",
                                                 "send_done_trigger", "recv_done_trigger",
                                                 "prio"};
      if (!keys.count(key)) {
        bad(i, "unknown token '" + key + "'");
        continue;
      }
      if (k + 1 >= t.size()) {
        bad(i, key + " without a value");
        break;
      }
      if (!seen.insert(key).second)
        bad(i, key + " given twice");
      const std::string &value = t[++k];
      std::optional<int64_t> v =
          key == "start" ? integer(value, 0, INT64_MAX / 2) : integer(value, 1);
      if (!v) {
        bad(i, key + " '" + value + "' is not " +
                   (key == "start" ? "a whole number of ps" : "an integer from 1 to 2^31-1"));
        continue;
      }
      if (key == "id") {
        f.id = *v;
        if (!ids.insert(*v).second)
          bad(i, "flow id " + value + " used twice (htsim asserts)");
      } else if (key == "trigger") {
        if (!f.id)
          bad(i, "trigger before id (htsim asserts)");
        f.trigger = *v;
      } else if (key == "start") {
        f.start = true;
      } else if (key == "size") {
        haveSize = true;
      } else if (key == "send_done_trigger") {
        f.sendDone = *v;
      } else if (key == "recv_done_trigger") {
        f.recvDone = *v;
        if (!opts.allowRecvDone)
          bad(i, "recv_done_trigger: csg-htsim's receivers never fire it");
      }
    }
    if (!f.id)
      bad(i, "flow without an id");
    if (!haveSize)
      bad(i, "flow without a size (htsim leaves it uninitialised)");
    if (f.start == (f.trigger != 0))
      bad(i, f.start ? "both start and trigger" : "neither start nor trigger");
    flows.push_back(f);
  }
  auto need = [&](const char *key) {
    if (!header.count(key))
      out.push_back(std::string("header: no ") + key);
  };
  need("Nodes");
  need("Connections");
  if (opts.nodes >= 0 && header.count("Nodes") && header["Nodes"] != opts.nodes)
    out.push_back("header: Nodes " + std::to_string(header["Nodes"]) + ", expected " +
                  std::to_string(opts.nodes));
  if (header.count("Connections") && size_t(header["Connections"]) != flows.size())
    out.push_back("header: Connections " + std::to_string(header["Connections"]) + " but " +
                  std::to_string(flows.size()) + " connection lines");
  size_t declared = header.count("Triggers") ? size_t(header["Triggers"]) : 0;
  if (declared != triggerLines)
    out.push_back("header: Triggers " + std::to_string(declared) + " but " +
                  std::to_string(triggerLines) + " trigger lines");

  // Triggers: declared, targets, activations; then whether every flow starts.
  std::map<int64_t, std::vector<size_t>> targets, activators;
  for (size_t k = 0; k < flows.size(); ++k) {
    const Flow &f = flows[k];
    for (int64_t ref : {f.trigger, f.sendDone, f.recvDone})
      if (ref && !triggers.count(ref))
        bad(f.line, "trigger " + std::to_string(ref) + " is not declared");
    if (f.trigger)
      targets[f.trigger].push_back(k);
    if (f.sendDone)
      activators[f.sendDone].push_back(k);
    if (f.recvDone)
      activators[f.recvDone].push_back(k);
  }
  for (const auto &[id, tr] : triggers) {
    size_t acts = activators[id].size();
    if (targets[id].empty())
      bad(tr.line, "trigger " + std::to_string(id) + " starts no flow");
    if (tr.type == "oneshot" && acts != 1)
      bad(tr.line, "oneshot trigger " + std::to_string(id) + " has " + std::to_string(acts) +
                       " activations (a second one asserts, none never fires)");
    if (tr.type == "barrier" && int64_t(acts) != tr.count)
      bad(tr.line, "barrier " + std::to_string(id) + " needs " + std::to_string(tr.count) +
                       " activations but gets " + std::to_string(acts));
  }
  std::vector<bool> runs(flows.size(), false);
  std::map<int64_t, int64_t> got;
  std::vector<size_t> queue;
  for (size_t k = 0; k < flows.size(); ++k)
    if (flows[k].start) {
      runs[k] = true;
      queue.push_back(k);
    }
  for (size_t q = 0; q < queue.size(); ++q) {
    const Flow &f = flows[queue[q]];
    for (int64_t ref : {f.sendDone, f.recvDone}) {
      if (!ref || !triggers.count(ref))
        continue;
      const Trigger &tr = triggers[ref];
      int64_t need = tr.type == "barrier" ? tr.count : 1;
      if (++got[ref] == need)
        for (size_t k : targets[ref])
          if (!runs[k]) {
            runs[k] = true;
            queue.push_back(k);
          }
    }
  }
  for (size_t k = 0; k < flows.size(); ++k)
    if (!runs[k]) {
      bad(flows[k].line, "this flow never starts (its trigger never fires)");
      break;
    }
  return out;
}

// ---------------------------------------------------------------------------------------

std::vector<std::string> checkTopo(const std::string &text, TopoShape *shape) {
  Lines l = splitLines(text);
  std::vector<std::string> out = l.problems;
  auto bad = [&](size_t i, const std::string &what) {
    out.push_back("line " + std::to_string(i + 1) + ": " + what);
  };
  auto lower = [](std::string s) {
    for (char &c : s)
      c = char(std::tolower((unsigned char)c));
    return s;
  };
  std::map<std::string, int64_t> header;
  std::vector<std::map<std::string, int64_t>> tier;
  int64_t current = -1;
  static const std::set<std::string> keys = {"downlink_speed_gbps", "radix_down", "radix_up",
                                             "downlink_latency_ns", "switch_latency_ns",
                                             "oversubscribed", "bundle"};
  for (size_t i = 0; i < l.text.size(); ++i) {
    std::vector<std::string> t = tokens(l.text[i]);
    if (t.empty() || t[0][0] == '#')
      continue;
    std::string key = lower(t[0]);
    if (t.size() != 2) {
      bad(i, "'" + l.text[i] + "' is not <key> <integer>");
      continue;
    }
    auto v = integer(t[1]);
    if (!v) {
      bad(i, t[0] + " '" + t[1] + "' is not an integer htsim reads");
      continue;
    }
    if (key == "tier") {
      if (*v != int64_t(tier.size()))
        bad(i, "Tier " + t[1] + " where Tier " + std::to_string(tier.size()) + " comes next");
      current = *v;
      tier.emplace_back();
      continue;
    }
    if (current < 0) {
      if (key != "nodes" && key != "tiers" && key != "podsize") {
        bad(i, "unknown header key '" + t[0] + "'");
        continue;
      }
      if (header.count(key))
        bad(i, t[0] + " given twice");
      header[key] = *v;
      continue;
    }
    if (key == "queue_down" || key == "queue_up") {
      bad(i, t[0] + ": the stock mains preset every queue, so htsim rejects it as a duplicate");
      continue;
    }
    if (!keys.count(key)) {
      bad(i, "unknown key '" + t[0] + "' (csg-htsim ignores it, uet-htsim rejects it)");
      continue;
    }
    if (tier.back().count(key))
      bad(i, t[0] + " given twice in tier " + std::to_string(current));
    tier.back()[key] = *v;
  }
  for (const char *k : {"nodes", "tiers", "podsize"})
    if (!header.count(k) || header[k] == 0)
      out.push_back(std::string("header: ") + k + " missing or 0");
  if (!out.empty())
    return out;
  const int64_t T = header["tiers"], N = header["nodes"], P = header["podsize"];
  if (T != 2 && T != 3)
    return out.push_back("header: Tiers must be 2 or 3"), out;
  if (int64_t(tier.size()) != T)
    return out.push_back("file: " + std::to_string(tier.size()) + " tier blocks for Tiers " +
                         std::to_string(T)),
           out;
  auto get = [&](int64_t t, const char *k, int64_t dflt) {
    auto it = tier[t].find(k);
    return it == tier[t].end() ? dflt : it->second;
  };
  for (int64_t t = 0; t < T; ++t) {
    std::string where = "tier " + std::to_string(t) + ": ";
    if (get(t, "downlink_speed_gbps", 0) < 1)
      out.push_back(where + "Downlink_speed_Gbps missing or 0");
    if (get(t, "downlink_latency_ns", 0) < 1)
      out.push_back(where + "Downlink_Latency_ns missing or 0");
    if (get(t, "radix_down", 0) < 1)
      out.push_back(where + "Radix_Down missing or 0");
    if (t + 1 < T && get(t, "radix_up", 0) < 1)
      out.push_back(where + "Radix_Up missing or 0");
    if (t + 1 == T && tier[t].count("radix_up"))
      out.push_back(where + "Radix_Up on the top tier");
    if (t + 1 == T && tier[t].count("oversubscribed"))
      out.push_back(where + "Oversubscribed on the top tier means nothing to htsim");
    if (get(t, "bundle", 1) < 1 || get(t, "oversubscribed", 1) < 1)
      out.push_back(where + "Bundle and Oversubscribed must be at least 1");
    if (t == 0 && get(t, "bundle", 1) != 1)
      out.push_back(where + "Bundle must be 1 (htsim asserts)");
  }
  if (!out.empty())
    return out;
  // set_custom_params, with speeds in Gb/s (the factor 10^9 cancels in every ratio).
  auto s = [&](int64_t t) { return get(t, "downlink_speed_gbps", 0); };
  auto rd = [&](int64_t t) { return get(t, "radix_down", 0); };
  auto ru = [&](int64_t t) { return get(t, "radix_up", 0); };
  auto b = [&](int64_t t) { return get(t, "bundle", 1); };
  auto os = [&](int64_t t) { return get(t, "oversubscribed", 1); };
  auto fail = [&](const std::string &what) {
    out.push_back("shape: " + what);
    return out;
  };
  for (int64_t t = 0; t < T; ++t) {
    if (rd(t) % b(t))
      return fail("tier " + std::to_string(t) + " Radix_Down not a multiple of its Bundle");
    if (t + 1 < T && ru(t) % b(t + 1))
      return fail("tier " + std::to_string(t) + " Radix_Up not a multiple of the next Bundle");
  }
  if (N % P)
    return fail("Nodes not a multiple of Podsize");
  const int64_t pods = N / P;
  if (P % rd(0))
    return fail("Podsize not a multiple of tier 0's Radix_Down");
  const int64_t torsPerPod = P / rd(0);
  if ((N * s(0)) % (s(1) * os(0)))
    return fail("Nodes*s0 not a multiple of s1*Oversubscribed0 (htsim asserts)");
  const int64_t torUp = N * s(0) / (s(1) * os(0));
  if (rd(0) / ru(0) != os(0))
    return fail("tier 0 Radix_Down/Radix_Up differs from Oversubscribed");
  if (torUp % (pods * rd(1)))
    return fail("ToR uplinks not a multiple of pods*Radix_Down1 (htsim asserts)");
  const int64_t aggsPerPod = torUp / (pods * rd(1));
  if (aggsPerPod * b(1) != ru(0))
    return fail("tier-1 switches per pod x Bundle1 differs from tier 0's Radix_Up");
  int64_t cores = 0;
  if (T == 3) {
    if ((torUp * s(1)) % (s(2) * os(1)))
      return fail("ToR uplinks*s1 not a multiple of s2*Oversubscribed1 (htsim asserts)");
    const int64_t aggUp = torUp * s(1) / (s(2) * os(1));
    if (aggUp % rd(2))
      return fail("tier-1 uplinks not a multiple of Radix_Down2 (htsim asserts)");
    cores = aggUp / rd(2);
    if (cores % aggsPerPod)
      return fail("core switches not a multiple of tier-1 switches per pod");
    if (cores * b(2) / aggsPerPod != ru(1))
      return fail("core switches x Bundle2 / tier-1 per pod differs from tier 1's Radix_Up");
  }
  // The ports init_network adds (addPort's index is asserted below 96 / 64).
  const int64_t aggs = T == 3 ? aggsPerPod : aggsPerPod * pods;
  if (rd(0) + aggs * b(1) > 96)
    return fail("a ToR would have more than 96 ports");
  if ((T == 3 ? torsPerPod : torsPerPod * pods) * b(1) + (T == 3 ? ru(1) : 0) > 64)
    return fail("a tier-1 switch would have more than 64 ports");
  if (T == 3 && pods * b(2) > 64)
    return fail("a core switch would have more than 64 ports");
  if (shape)
    *shape = {uint64_t(N), uint64_t(T), uint64_t(pods), uint64_t(torsPerPod),
              uint64_t(aggsPerPod), uint64_t(cores)};
  return out;
}

} // namespace infracc::test::htsimcheck
