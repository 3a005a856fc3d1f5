// -emit=stats: a report on the fabric, made of sections. Each section computes an
// ordered JSON object from the module; the report prints every section that has
// something to say, as text (default), JSON (-format=json) or YAML (-format=yaml).
//
// Another file adds a section without touching this one, e.g. the blueprints' sizing:
//
//   static infracc::RegisterStatsSection Sizing({
//       .key = "sizing", .title = "sizing", .order = 50,
//       .compute = [](const infracc::Module &m) -> std::optional<nlohmann::ordered_json> {
//         nlohmann::ordered_json j;
//         j["hosts"] = ...; j["switches per tier"] = {...}; j["bisection bandwidth gbps"] = ...;
//         return j;   // or std::nullopt when the section does not apply
//       }});
//
// Built-in sections (order): summary 10, nodes by kind 20, edges by link 30,
// degree distribution 40, connected components 60.
//
// Text layout: a section prints "<title>:" then its keys indented by two spaces;
// a nested object indents further; numbers print as they are, strings bare.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

struct Module;

struct StatsSection {
  std::string key;     // JSON/YAML key
  std::string title;   // heading in the text report
  int order = 100;
  std::function<std::optional<nlohmann::ordered_json>(const Module &)> compute;
};

class StatsRegistry {
public:
  static void add(StatsSection s);
  /// All sections, by order then key.
  static std::vector<const StatsSection *> all();
};

struct RegisterStatsSection {
  explicit RegisterStatsSection(StatsSection s) { StatsRegistry::add(std::move(s)); }
};

/// The whole report as one JSON object, sections in order.
nlohmann::ordered_json fabricStats(const Module &m);

} // namespace infracc
