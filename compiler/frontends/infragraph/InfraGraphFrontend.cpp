// Registers the InfraGraph reader as the input format for .yaml, .yml and .json
// fabric files; several given together form one fabric (their devices combine).
#include "compiler/frontends/infragraph/InfraGraphReader.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"

namespace infracc {
namespace {

// Other formats may share .json: claim a file whose first bytes use InfraGraph's
// top-level keys.
int sniffInfraGraph(llvm::StringRef head) {
  for (llvm::StringRef key : {"devices", "instances", "infrastructure", "blueprint"})
    if (head.contains(("\"" + key + "\"").str()) || head.contains((key + ":").str()))
      return 60;
  return 0;
}

RegisterInputFormat InfraGraphFormat({
    .name = "infragraph",
    .description = "InfraGraph fabric (YAML or JSON), or a blueprint: document",
    .extensions = {".yaml", ".yml", ".json"},
    .role = InputRole::Fabric,
    .sniff = sniffInfraGraph,
    .load = [](InputContext &ctx) -> llvm::Error {
      auto defs = infragraph::readFiles(ctx.paths, ctx.diags);
      if (!defs)
        return reportedError();
      ctx.module.fabricDefs = std::move(defs);
      return llvm::Error::success();
    },
    .combinesFiles = true,
});

} // namespace
} // namespace infracc
