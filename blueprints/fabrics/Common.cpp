#include "blueprints/fabrics/Common.h"

#include <fmt/format.h>

namespace infracc::blueprints {

std::optional<HostDevice> readHost(ParamReader &r, llvm::StringRef key) {
  auto dev = r.device(key);
  if (!dev)
    return std::nullopt;
  auto nics = hostNics(*dev);
  if (!nics) {
    reportNoNics(r, key, *dev);
    return std::nullopt;
  }
  return HostDevice{std::move(*dev), *nics};
}

std::optional<SwitchDevice> readSwitch(ParamReader &r, uint64_t need, llvm::StringRef role,
                                       llvm::StringRef name) {
  if (!r.given("switch")) {
    DeviceBuild d = genericSwitch(need, name.str());
    AttachPoints p = *switchPorts(d);
    return SwitchDevice{std::move(d), p};
  }
  auto dev = r.device("switch");
  if (!dev)
    return std::nullopt;
  auto ports = switchPorts(*dev);
  if (!ports) {
    reportNoPorts(r, "switch", *dev);
    return std::nullopt;
  }
  if (ports->count < need) {
    r.error("switch", fmt::format("switch '{}' has {} port{}; {} {}", dev->device.name,
                                  ports->count, ports->count == 1 ? "" : "s", role.str(), need));
    return std::nullopt;
  }
  return SwitchDevice{std::move(*dev), *ports};
}

} // namespace infracc::blueprints
