#include "ir/Topology.h"

#include <llvm/ADT/StringSwitch.h>

namespace infracc {

llvm::StringRef componentKindName(ComponentKind k) {
  switch (k) {
  case ComponentKind::Custom: return "custom";
  case ComponentKind::Device: return "device";
  case ComponentKind::Cpu: return "cpu";
  case ComponentKind::Xpu: return "xpu";
  case ComponentKind::Nic: return "nic";
  case ComponentKind::Memory: return "memory";
  case ComponentKind::Port: return "port";
  case ComponentKind::Switch: return "switch";
  }
  return "custom";
}

std::optional<ComponentKind> parseComponentKind(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<ComponentKind>>(s)
      .Case("custom", ComponentKind::Custom)
      .Case("device", ComponentKind::Device)
      .Case("cpu", ComponentKind::Cpu)
      .Case("xpu", ComponentKind::Xpu)
      .Case("nic", ComponentKind::Nic)
      .Case("memory", ComponentKind::Memory)
      .Case("port", ComponentKind::Port)
      .Case("switch", ComponentKind::Switch)
      .Default(std::nullopt);
}

llvm::StringRef schemeName(Scheme s) {
  switch (s) {
  case Scheme::One2One: return "one2one";
  case Scheme::Many2Many: return "many2many";
  case Scheme::Ring: return "ring";
  }
  return "one2one";
}

std::optional<Scheme> parseScheme(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<Scheme>>(s)
      .Case("one2one", Scheme::One2One)
      .Case("many2many", Scheme::Many2Many)
      .Case("ring", Scheme::Ring)
      .Default(std::nullopt);
}

const DeviceDef *Infrastructure::findDevice(llvm::StringRef n) const {
  for (const DeviceDef &d : devices)
    if (d.name == n)
      return &d;
  return nullptr;
}

} // namespace infracc
