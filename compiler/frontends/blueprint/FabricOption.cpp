// -fabric=<blueprint>:<key>=<value>,... builds the fabric from a blueprint instead of a
// fabric file; -list-blueprints prints what is available. The spec text is registered
// as a source buffer, so parameter errors point into it with a caret.
#include "blueprints/Blueprint.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>

namespace infracc {
namespace {
namespace cl = llvm::cl;

cl::opt<std::string> FabricSpec(
    "fabric", cl::value_desc("blueprint:key=value,..."),
    cl::desc("Build the fabric from a blueprint instead of a fabric file, e.g. "
             "-fabric=clos:radix=16,levels=3,host=dgx_h100 (see -list-blueprints)"),
    cl::cat(opts::fabricCategory()));

cl::opt<bool> ListBlueprints(
    "list-blueprints",
    cl::desc("Print every fabric and device blueprint with its parameters, defaults and "
             "descriptions, then exit"),
    cl::cat(opts::fabricCategory()));

llvm::Error provideFabric(Module &m, DiagEngine &diags) {
  if (FabricSpec.getNumOccurrences() == 0)
    return llvm::Error::success();
  // The buffer holds the option as typed, so columns in messages match the command line.
  const std::string prefix = "-fabric=";
  std::string text = prefix + FabricSpec.getValue();
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "<command line>"));
  const char *start = diags.sourceMgr().getMemoryBuffer(id)->getBufferStart() + prefix.size();
  auto spec = blueprints::parseFabricSpec(FabricSpec.getValue(), llvm::SMLoc::getFromPointer(start),
                                          diags);
  if (!spec)
    return reportedError();
  spec->origin = "-fabric";
  auto infra = blueprints::instantiateFabric(*spec, diags);
  if (!infra || diags.hasErrors())
    return reportedError();
  m.fabricDefs = std::move(infra);
  m.fabricSource = text;
  return llvm::Error::success();
}

struct Registration {
  Registration() {
    InputRegistry::addProvider(provideFabric);
    InputRegistry::addAction([]() -> std::optional<int> {
      if (!ListBlueprints)
        return std::nullopt;
      blueprints::listBlueprints(llvm::outs());
      llvm::outs().flush();
      return 0;
    });
  }
} registration;

} // namespace
} // namespace infracc
