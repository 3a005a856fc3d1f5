// -emit=infragraph: the canonical document (backends/infragraph/CanonicalDocument.h),
// as YAML (default) or JSON (-format=json, or an -o name ending in .json).
#include "backends/common/YamlWriter.h"
#include "backends/infragraph/CanonicalDocument.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

namespace infracc {
namespace {

RegisterTarget InfraGraphTarget({
    .name = "infragraph",
    .description = "the canonical InfraGraph document (YAML, or JSON with -format=json)",
    .needs = TargetNeeds::Fabric,
    .defaultPipeline = {},
    .run = [](TargetContext &ctx) -> llvm::Error {
      std::string format = opts::outputFormat();
      if (format.empty())
        format = "yaml";
      if (format != "yaml" && format != "json")
        return usageError("-emit=infragraph writes yaml or json, not '" + format + "'");
      auto os = ctx.output.stream();
      if (!os)
        return os.takeError();
      nlohmann::json doc = canonicalDocument(*ctx.module.fabric);
      if (format == "json")
        *os << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      else
        writeYaml(doc, *os);
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc
