#include "support/Options.h"

#include "support/Diagnostics.h"

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
    "o", cl::value_desc("file|dir"),
    cl::desc("Output file, or directory for targets that write several files (default: "
             "standard output; directory targets need it). The simulator's overhead o is "
             "-sim-o (or -o <number> with -lgs-compat)"),
    cl::cat(generalCategory()));

static cl::opt<bool> LgsCompat(
    "lgs-compat",
    cl::desc("Read LogGOPSim's spellings: -o <number> is the overhead o in ns (another -o "
             "names the output file), -b prints LogGOPSim's batch-mode report (-sim-batch "
             "with its parameter and PERFORMANCE lines), -f <file> names the schedule. "
             "Default: off"),
    cl::cat(simCategory()));

static cl::opt<bool> LgsBatch("b", cl::Hidden,
                              cl::desc("LogGOPSim's batch mode (with -lgs-compat)"));

static cl::list<std::string> LgsFile("f", cl::Hidden, cl::value_desc("file"),
                                     cl::desc("LogGOPSim's schedule file (with -lgs-compat)"));

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

// With -lgs-compat a numeric -o is the overhead, not an output.
static bool isOutput(const std::string &o) { return !LgsCompat || !isNumber(o); }

const std::string &outputPath() {
  static const std::string empty;
  const std::string *last = &empty;
  for (const std::string &o : Output)
    if (isOutput(o))
      last = &o;
  return *last;
}

bool lgsCompat() { return LgsCompat; }
bool lgsBatch() { return LgsCompat && LgsBatch; }
const std::vector<std::string> &lgsInputs() {
  static const std::vector<std::string> none;
  return LgsCompat ? LgsFile : none;
}

llvm::Error checkOutputAndCompatOptions(DiagEngine &diags) {
  if (!LgsCompat) {
    if (LgsBatch)
      return usageError("-b is LogGOPSim's spelling of batch mode: write -sim-batch (only the "
                        "maximum finishing time), or add -lgs-compat for LogGOPSim's -b");
    if (!LgsFile.empty())
      return usageError("-f is LogGOPSim's spelling of the input schedule: name the file "
                        "without -f, or add -lgs-compat");
  }
  std::vector<std::string> outputs;
  for (const std::string &o : Output)
    if (isOutput(o))
      outputs.push_back("'" + o + "'");
  if (outputs.size() > 1)
    return usageError("-o is given " + llvm::Twine(outputs.size()) + " times (" +
                      llvm::join(outputs, ", ") + "); give one output" +
                      (LgsCompat ? "" : " (the simulator's overhead is -sim-o)"));
  if (!LgsCompat && outputs.size() == 1 && isNumber(Output.front()))
    diags.warning("", "-o " + Output.front() + " writes the output to a file named '" +
                          Output.front() + "'; LogGOPSim's overhead o is -sim-o=" +
                          Output.front() + " (or -lgs-compat -o " + Output.front() +
                          "); write ./" + Output.front() + " for the file");
  return llvm::Error::success();
}

std::optional<double> numericOverhead() {
  std::optional<double> last;
  for (const std::string &o : Output)
    if (!isOutput(o)) {
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
