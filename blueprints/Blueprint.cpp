#include "blueprints/Blueprint.h"

#include "compiler/Diagnostics.h"

#include <algorithm>
#include <deque>

namespace infracc::blueprints {

static std::deque<FabricBlueprint> &fabricList() {
  static std::deque<FabricBlueprint> l;
  return l;
}
static std::deque<DeviceBlueprint> &deviceList() {
  static std::deque<DeviceBlueprint> l;
  return l;
}

void Registry::addFabric(FabricBlueprint b) { fabricList().push_back(std::move(b)); }
void Registry::addDevice(DeviceBlueprint b) { deviceList().push_back(std::move(b)); }

const FabricBlueprint *Registry::findFabric(llvm::StringRef name) {
  for (const FabricBlueprint &b : fabricList())
    if (b.name == name)
      return &b;
  return nullptr;
}

const DeviceBlueprint *Registry::findDevice(llvm::StringRef name) {
  for (const DeviceBlueprint &b : deviceList())
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<const FabricBlueprint *> Registry::fabrics() {
  std::vector<const FabricBlueprint *> v;
  for (const FabricBlueprint &b : fabricList())
    v.push_back(&b);
  std::sort(v.begin(), v.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return v;
}

std::vector<const DeviceBlueprint *> Registry::devices() {
  std::vector<const DeviceBlueprint *> v;
  for (const DeviceBlueprint &b : deviceList())
    v.push_back(&b);
  std::sort(v.begin(), v.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return v;
}

std::shared_ptr<Infrastructure> instantiateFabric(const BlueprintSpec &spec, DiagEngine &diags) {
  const FabricBlueprint *b = Registry::findFabric(spec.name);
  if (!b) {
    std::string known;
    for (const FabricBlueprint *f : Registry::fabrics())
      known += (known.empty() ? "" : ", ") + f->name;
    std::string msg = "unknown fabric blueprint '" + spec.name + "' (fabric blueprints: " +
                      (known.empty() ? std::string("none") : known) +
                      "; see infracc -list-blueprints)";
    if (spec.loc.isValid())
      diags.error(spec.loc, msg);
    else
      diags.error(spec.origin, msg);
    return nullptr;
  }
  return b->build(spec, diags);
}

} // namespace infracc::blueprints
