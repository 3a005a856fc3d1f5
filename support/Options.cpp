#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>

namespace infracc::opts {
namespace cl = llvm::cl;

cl::OptionCategory &generalCategory() {
  static cl::OptionCategory c("General options");
  return c;
}
cl::OptionCategory &fabricCategory() {
  static cl::OptionCategory c("Fabric options");
  return c;
}
cl::OptionCategory &passCategory() {
  static cl::OptionCategory c("Pass options");
  return c;
}
cl::OptionCategory &simCategory() {
  static cl::OptionCategory c("Simulation options (-emit=sim and friends)");
  return c;
}
cl::OptionCategory &backendCategory() {
  static cl::OptionCategory c("Backend options");
  return c;
}

static cl::list<std::string> Output(
    "o", cl::value_desc("file|dir|number"),
    cl::desc("Output file, or directory for targets that write several files (default: "
             "standard output). For the simulator targets a plain number is LogGOPSim's "
             "overhead o in ns (-o 1500); write ./1500 for a file of that name"),
    cl::cat(generalCategory()));

static cl::opt<std::string> Format(
    "format", cl::value_desc("yaml|json|tsv|text"),
    cl::desc("Output format where a target offers several (default: from the -o extension, "
             "else the target's own default)"),
    cl::cat(generalCategory()));

static cl::opt<bool> Progress("progress",
                              cl::desc("Show progress while reading large inputs (only on a "
                                       "terminal)"),
                              cl::cat(generalCategory()));

static cl::opt<uint64_t> Seed("seed", cl::init(1), cl::value_desc("n"),
                              cl::desc("Seed for random choices (default 1)"),
                              cl::cat(generalCategory()));

static bool isNumber(llvm::StringRef s) {
  if (s.empty())
    return false;
  double d;
  return !s.getAsDouble(d) && llvm::all_of(s, [](char c) { return llvm::isDigit(c) || c == '.'; });
}

const std::string &outputPath() {
  static const std::string empty;
  const std::string *last = &empty;
  for (const std::string &o : Output)
    if (!isNumber(o))
      last = &o;
  return *last;
}

std::optional<double> numericOverhead() {
  std::optional<double> last;
  for (const std::string &o : Output)
    if (isNumber(o)) {
      double d = 0;
      llvm::StringRef(o).getAsDouble(d);
      last = d;
    }
  return last;
}

std::string outputFormat() {
  if (!Format.empty())
    return Format;
  llvm::StringRef ext = llvm::sys::path::extension(outputPath());
  if (ext == ".json")
    return "json";
  if (ext == ".yaml" || ext == ".yml")
    return "yaml";
  if (ext == ".tsv")
    return "tsv";
  return "";
}

bool showProgress() { return Progress && llvm::sys::Process::StandardErrIsDisplayed(); }

uint64_t seed() { return Seed; }

} // namespace infracc::opts
