// Blueprints: named, parameterised generators that produce ordinary InfraGraph
// definitions (ir/Topology.h). A fabric blueprint builds a whole Infrastructure; a
// device blueprint builds one DeviceDef (a host or switch used by fabrics), plus the
// definitions of the devices composed into it.
//
// Users reach them two ways, both ending in instantiateFabric():
//   * the command line:  -fabric=clos:radix=16,levels=3,host=dgx_h100
//   * a fabric file whose top level is a `blueprint:` mapping (the InfraGraph
//     frontend turns it into a BlueprintSpec, with source locations for messages).
//
// Parameter values are strings as written. A device-valued parameter (host=, switch=,
// nic_device=) names a device blueprint, optionally with its own parameters in
// parentheses, or a device defined in the fabric file (BlueprintSpec::devices):
//   host=server(npu_factor=2)      host=dgx_h100(nic_device=cx5(variant=100g_single))
#pragma once

#include "ir/Topology.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::blueprints {

struct Param {
  std::string key, value;   // value as written; the blueprint converts and validates it
  /// Of the first character of `value`, when it came from a text (a file or the
  /// -fabric= option); locations inside a nested device spec are derived from it, and
  /// messages about the key point at `key=` when the text just before the value reads so.
  llvm::SMLoc loc;
};

struct BlueprintSpec {
  std::string name;                 // e.g. "clos"
  std::vector<Param> params;        // e.g. radix=16, levels=3, host=dgx_h100
  /// Device definitions written out in the fabric file, usable by name in params
  /// such as host=<device> instead of a device blueprint.
  std::vector<DeviceDef> devices;
  llvm::SMLoc loc;                  // of the blueprint name, when from a file
  std::string origin;               // what messages without a location refer to
};

struct ParamInfo {
  /// An empty defaultValue means "derived from other parameters" (the description
  /// says how); -list-blueprints shows it as `<derived>`.
  std::string key, defaultValue, description;
};

struct FabricBlueprint {
  std::string name, description;
  std::vector<ParamInfo> params;
  /// Builds the definitions; reports every problem through diags (returning null).
  std::function<std::shared_ptr<Infrastructure>(const BlueprintSpec &, DiagEngine &)> build;
};

/// A device definition together with the definitions of the devices composed into
/// it (choice=device components), innermost first.
struct DeviceBuild {
  DeviceDef device;
  std::vector<DeviceDef> parts;
};

struct DeviceBlueprint {
  std::string name, description;
  std::vector<ParamInfo> params;
  /// The device alone, without the definitions of composed parts (kept for callers
  /// that only need the top-level definition; filled from buildWithParts).
  std::function<std::optional<DeviceDef>(const BlueprintSpec &, DiagEngine &)> build;
  /// The device and every definition it composes.
  std::function<std::optional<DeviceBuild>(const BlueprintSpec &, DiagEngine &)> buildWithParts;
};

class Registry {
public:
  static void addFabric(FabricBlueprint b);
  static void addDevice(DeviceBlueprint b);
  static const FabricBlueprint *findFabric(llvm::StringRef name);
  static const DeviceBlueprint *findDevice(llvm::StringRef name);
  static std::vector<const FabricBlueprint *> fabrics();   // sorted by name
  static std::vector<const DeviceBlueprint *> devices();   // sorted by name
};

struct RegisterFabricBlueprint {
  explicit RegisterFabricBlueprint(FabricBlueprint b) { Registry::addFabric(std::move(b)); }
};
struct RegisterDeviceBlueprint {
  explicit RegisterDeviceBlueprint(DeviceBlueprint b) { Registry::addDevice(std::move(b)); }
};

/// Looks up spec.name among the fabric blueprints and builds it; an unknown name is
/// reported with the list of fabric blueprints. Returns null after reporting errors.
std::shared_ptr<Infrastructure> instantiateFabric(const BlueprintSpec &spec, DiagEngine &diags);

/// The same for device blueprints (used for host=, switch=, nic_device= values).
std::optional<DeviceBuild> instantiateDevice(const BlueprintSpec &spec, DiagEngine &diags);

/// Parses `name:key=value,key=value` (the -fabric= syntax) whose first character is
/// at `loc` (invalid: no locations). Values may hold parenthesised device specs with
/// commas inside. Problems are reported through diags; returns nullopt after them.
std::optional<BlueprintSpec> parseFabricSpec(llvm::StringRef text, llvm::SMLoc loc,
                                             DiagEngine &diags);

/// Parses a device spec `name` or `name(key=value,...)` in the same way.
std::optional<BlueprintSpec> parseDeviceSpec(llvm::StringRef text, llvm::SMLoc loc,
                                             DiagEngine &diags);

/// Writes every fabric and device blueprint with its parameters, defaults and
/// descriptions (what -list-blueprints prints).
void listBlueprints(llvm::raw_ostream &os);

} // namespace infracc::blueprints
