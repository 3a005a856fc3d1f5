// Blueprints: named, parameterised generators that produce ordinary InfraGraph
// definitions (ir/Topology.h). A fabric blueprint builds a whole Infrastructure; a
// device blueprint builds one DeviceDef (a host or switch used by fabrics).
//
// Users reach them two ways, both ending in instantiateFabric():
//   * the command line:  -fabric=clos:radix=16,levels=3,host=dgx_h100
//   * a fabric file whose top level is a `blueprint:` mapping (the InfraGraph
//     frontend turns it into a BlueprintSpec, with source locations for messages).
#pragma once

#include "ir/Topology.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::blueprints {

struct Param {
  std::string key, value;   // value as written; the blueprint converts and validates it
  llvm::SMLoc loc;          // of the value, when it came from a file
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
  std::string key, defaultValue, description;
};

struct FabricBlueprint {
  std::string name, description;
  std::vector<ParamInfo> params;
  /// Builds the definitions; reports every problem through diags (returning null).
  std::function<std::shared_ptr<Infrastructure>(const BlueprintSpec &, DiagEngine &)> build;
};

struct DeviceBlueprint {
  std::string name, description;
  std::vector<ParamInfo> params;
  std::function<std::optional<DeviceDef>(const BlueprintSpec &, DiagEngine &)> build;
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

/// Looks up spec.name among the fabric blueprints and builds it; an unknown name is
/// reported with the list of fabric blueprints. Returns null after reporting errors.
std::shared_ptr<Infrastructure> instantiateFabric(const BlueprintSpec &spec, DiagEngine &diags);

} // namespace infracc::blueprints
