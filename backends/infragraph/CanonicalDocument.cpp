#include "backends/infragraph/CanonicalDocument.h"

#include <fmt/format.h>

#include <cmath>

namespace infracc {

using nlohmann::json;

json canonicalNumber(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9007199254740992.0)
    return json(static_cast<int64_t>(v));
  return json(v);
}

namespace {

// The indices a slice selects (already validated by the expansion).
std::vector<int64_t> selected(const PathElem &e, uint64_t count) {
  std::vector<int64_t> out;
  if (!e.slice) {
    for (uint64_t i = 0; i < count; ++i)
      out.push_back(int64_t(i));
    return out;
  }
  const Slice &s = *e.slice;
  if (s.isIndex)
    return {s.start.value_or(0)};
  int64_t step = s.step.value_or(1);
  int64_t start = s.start.value_or(0), stop = s.stop.value_or(int64_t(count));
  if (step > 0)
    for (int64_t i = start; i < stop; i += step)
      out.push_back(i);
  else if (step < 0)
    for (int64_t i = start; i > stop; i += step)
      out.push_back(i);
  return out;
}

// `name`, `name[i]`, `name[a:b]` or `name[a:b:s]`: the shortest spelling of the
// indices `e` selects from `count` copies.
std::string canonicalElem(const PathElem &e, uint64_t count) {
  std::vector<int64_t> idx = selected(e, count);
  if (idx.empty())
    return e.name;   // no slice on something with no copies
  if (idx.size() == count && count > 0 && idx.front() == 0 &&
      (idx.size() == 1 || idx[1] - idx[0] == 1))
    return e.name;
  if (idx.size() == 1)
    return fmt::format("{}[{}]", e.name, idx[0]);
  int64_t step = idx[1] - idx[0];
  int64_t stop = step > 0 ? idx.back() + 1 : idx.back() - 1;
  if (step == 1)
    return fmt::format("{}[{}:{}]", e.name, idx.front(), stop);
  return fmt::format("{}[{}:{}:{}]", e.name, idx.front(), stop, step);
}

std::string canonicalPath(const Infrastructure &defs, const DeviceDef *dev,
                          llvm::ArrayRef<PathElem> path) {
  std::string out;
  for (const PathElem &e : path) {
    const Component *comp = nullptr;
    for (const Component &c : dev->components)
      if (c.name == e.name)
        comp = &c;
    if (!out.empty())
      out += '.';
    out += canonicalElem(e, comp ? comp->count : 0);
    if (!comp || comp->kind != ComponentKind::Device)
      break;
    dev = defs.findDevice(comp->name);
    if (!dev)
      break;
  }
  return out;
}

json linkJson(const LinkDef &l) {
  json j;
  j["name"] = l.name;
  if (!l.description.empty())
    j["description"] = l.description;
  if (l.bandwidth || l.latency) {
    json phys = json::object();
    if (l.bandwidth)
      phys["bandwidth"] = {{"choice", "gigabits_per_second"},
                           {"gigabits_per_second",
                            canonicalNumber(l.bandwidth->inGigabitsPerSecExact())}};
    if (l.latency)
      phys["latency"] = {{"choice", "ns"}, {"ns", canonicalNumber(l.latency->ns)}};
    j["physical"] = std::move(phys);
  }
  return j;
}

json sortedByName(std::vector<json> items) {
  std::stable_sort(items.begin(), items.end(), [](const json &a, const json &b) {
    return a["name"].get_ref<const std::string &>() < b["name"].get_ref<const std::string &>();
  });
  return json(std::move(items));
}

// Edges sort by their text: endpoints, then link and scheme; duplicates go.
json sortedEdges(std::vector<json> items) {
  std::vector<std::pair<std::string, json>> keyed;
  for (json &e : items)
    keyed.push_back({e.dump(), std::move(e)});
  std::sort(keyed.begin(), keyed.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  // Edges that read the same after normalisation add nothing: keep one.
  json out = json::array();
  for (size_t i = 0; i < keyed.size(); ++i)
    if (i == 0 || keyed[i].first != keyed[i - 1].first)
      out.push_back(std::move(keyed[i].second));
  return out;
}

json attributesJson(llvm::ArrayRef<Attribute> attrs) {
  static const llvm::StringRef immutable[] = {"type",   "instance",        "instance_idx",
                                              "device", "composed_device", "link"};
  json out = json::array();
  for (const Attribute &a : attrs)
    if (!llvm::is_contained(immutable, llvm::StringRef(a.key)))
      out.push_back({{"attribute", a.key}, {"value", a.value}});
  return out;
}

} // namespace

json canonicalDocument(const FabricGraph &g) {
  const Infrastructure &defs = g.definitions();
  json infra;
  if (!defs.name.empty())
    infra["name"] = defs.name;
  if (!defs.description.empty())
    infra["description"] = defs.description;

  std::vector<json> devices;
  for (const DeviceDef &dev : defs.devices) {
    json d;
    d["name"] = dev.name;
    if (!dev.description.empty())
      d["description"] = dev.description;
    json comps = json::array();
    for (const Component &c : dev.components) {
      json cj;
      cj["name"] = c.name;
      if (!c.description.empty())
        cj["description"] = c.description;
      cj["count"] = c.count;
      cj["choice"] = componentKindName(c.kind).str();
      if (c.kind == ComponentKind::Custom)
        cj["custom"] = {{"type", c.customType}};
      comps.push_back(std::move(cj));
    }
    d["components"] = std::move(comps);
    std::vector<json> links;
    for (const LinkDef &l : dev.links)
      links.push_back(linkJson(l));
    d["links"] = sortedByName(std::move(links));
    std::vector<json> edges;
    for (const DeviceEdge &e : dev.edges)
      edges.push_back({{"ep1", {{"component", canonicalPath(defs, &dev, e.ep1)}}},
                       {"ep2", {{"component", canonicalPath(defs, &dev, e.ep2)}}},
                       {"link", e.link},
                       {"scheme", schemeName(e.scheme).str()}});
    d["edges"] = sortedEdges(std::move(edges));
    devices.push_back(std::move(d));
  }
  infra["devices"] = sortedByName(std::move(devices));

  std::vector<json> links;
  for (const LinkDef &l : defs.links)
    links.push_back(linkJson(l));
  infra["links"] = sortedByName(std::move(links));

  json instances = json::array();
  for (const Instance &i : defs.instances) {
    json ij{{"name", i.name}, {"device", i.device}, {"count", i.count}};
    if (!i.description.empty())
      ij["description"] = i.description;
    instances.push_back(std::move(ij));
  }
  infra["instances"] = std::move(instances);

  std::vector<json> edges;
  for (const InfraEdge &e : defs.edges) {
    auto endpoint = [&](const InfraEndpoint &ep) {
      const Instance *inst = nullptr;
      for (const Instance &i : defs.instances)
        if (i.name == ep.instance.name)
          inst = &i;
      const DeviceDef *dev = inst ? defs.findDevice(inst->device) : nullptr;
      return json{{"instance", canonicalElem(ep.instance, inst ? inst->count : 0)},
                  {"component", dev ? canonicalPath(defs, dev, ep.component) : std::string()}};
    };
    edges.push_back({{"ep1", endpoint(e.ep1)},
                     {"ep2", endpoint(e.ep2)},
                     {"link", e.link},
                     {"scheme", schemeName(e.scheme).str()}});
  }
  infra["edges"] = sortedEdges(std::move(edges));

  const Annotations &ann = defs.annotations;
  if (ann.empty())
    return infra;
  json a;
  a["nodes"] = json::array();
  for (const auto &n : ann.nodes)
    a["nodes"].push_back({{"name", n.name}, {"attributes", attributesJson(n.attributes)}});
  a["edges"] = json::array();
  for (const auto &e : ann.edges)
    a["edges"].push_back(
        {{"ep1", e.ep1}, {"ep2", e.ep2}, {"attributes", attributesJson(e.attributes)}});
  a["links"] = json::array();
  for (const auto &l : ann.links)
    a["links"].push_back({{"name", l.name}, {"attributes", attributesJson(l.attributes)}});
  a["graph"] = attributesJson(ann.graph);
  return json{{"infrastructure", std::move(infra)}, {"annotations", std::move(a)}};
}

} // namespace infracc
