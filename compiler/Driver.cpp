// The infracc driver: parse options, read inputs through their frontends, expand the
// fabric, run the pass pipeline, run the target's backend, commit its outputs.
//
// Exit status: 0 success, 1 bad input (anything wrong in a file or fabric), 2 bad
// usage (options, missing inputs).
#include "compiler/Driver.h"

#include "infracc/Version.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "passes/Pass.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/ADT/Statistic.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/Timer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace infracc {
namespace cl = llvm::cl;

namespace {

cl::list<std::string> Inputs(cl::Positional, cl::value_desc("inputs"),
                             cl::desc("<fabric.yaml|.json> <workload.goal|.bin|...>"),
                             cl::cat(opts::generalCategory()));

cl::opt<std::string> Emit("emit", cl::value_desc("target"),
                          cl::desc("What to produce (see TARGETS below). Default: sim when a "
                                   "workload is given, stats for a fabric alone"),
                          cl::cat(opts::generalCategory()));

cl::list<std::string> Passes("passes", cl::CommaSeparated, cl::value_desc("a,b,c"),
                             cl::desc("Run exactly these passes, in this order, instead of the "
                                      "target's default pipeline (see PASSES below)"),
                             cl::cat(opts::passCategory()));

cl::list<std::string> PrintAfter("print-after", cl::CommaSeparated, cl::value_desc("pass"),
                                 cl::desc("Print the schedule (extended GOAL) to stderr after "
                                          "the named passes ('all' for every pass)"),
                                 cl::cat(opts::passCategory()));

cl::opt<bool> VerifyEach("verify-each", cl::desc("Run the verifier after every pass"),
                         cl::cat(opts::passCategory()));

cl::opt<bool> DisableVerify("disable-verify",
                            cl::desc("Do not run the verifier after reading a workload"),
                            cl::cat(opts::passCategory()));

cl::opt<bool> TimePasses("time-passes",
                         cl::desc("Time reading, every pass and the backend; report on stderr"),
                         cl::cat(opts::generalCategory()));

cl::opt<unsigned> ErrorLimit("error-limit", cl::init(20), cl::value_desc("n"),
                             cl::desc("Stop after this many errors (0: no limit; default 20)"),
                             cl::cat(opts::generalCategory()));

cl::opt<bool> WarningsAsErrors("Werror", cl::desc("Treat warnings as errors"),
                               cl::cat(opts::generalCategory()));

cl::opt<bool> NoWarnings("w", cl::desc("Suppress warnings"), cl::cat(opts::generalCategory()));

int exitFor(llvm::Error err, DiagEngine &diags) {
  int status = 0;
  llvm::handleAllErrors(
      std::move(err), [&](const ReportedError &) { status = 1; },
      [&](const UsageError &e) {
        diags.stream() << "infracc: error: ";
        e.log(diags.stream());
        diags.stream() << "\n";
        status = 2;
      },
      [&](const llvm::ErrorInfoBase &e) {
        diags.stream() << "infracc: error: ";
        e.log(diags.stream());
        diags.stream() << "\n";
        status = 1;
      });
  return status;
}

std::string helpAppendix() {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "\nTARGETS (-emit=):\n";
  for (const Target *t : TargetRegistry::all())
    os << llvm::format("  %-17s %s\n", t->name.c_str(), t->description.c_str());
  os << "\nINPUTS (recognised by extension, then by content):\n";
  for (const InputFormat *f : InputRegistry::all()) {
    std::string exts = f->extensions.empty() ? "(by content)" : llvm::join(f->extensions, " ");
    os << llvm::format("  %-17s %s\n", exts.c_str(), f->description.c_str());
  }
  os << "  -                 one input from standard input, recognised by its first bytes\n";
  os << "\nPASSES (-passes=):\n";
  for (const PassInfo *p : PassRegistry::all())
    os << llvm::format("  %-17s %s\n", p->name.c_str(), p->description.c_str());
  os << "\nEXIT STATUS: 0 success, 1 bad input, 2 bad usage.\n";
  return s;
}

class Driver {
public:
  Driver() : diags_(llvm::errs()), module_(diags_) {}
  int run();

private:
  llvm::Error runProviders();
  llvm::Error readInputs();
  std::optional<llvm::Error> tryStreaming(const Target &target);
  llvm::Error expand();
  llvm::Error runPasses(const Target &target);
  llvm::Error emit(const Target &target);
  llvm::Expected<const Target *> chooseTarget();
  bool hasCollectives() const;
  llvm::Error checkPointToPoint(const Target &target) const;
  llvm::Timer *timer(llvm::StringRef name);

  DiagEngine diags_;
  Module module_;
  Statistics stats_;
  std::unique_ptr<llvm::TimerGroup> timers_;
  std::vector<std::unique_ptr<llvm::Timer>> timerList_;
};

llvm::Timer *Driver::timer(llvm::StringRef name) {
  if (!TimePasses)
    return nullptr;
  if (!timers_)
    timers_ = std::make_unique<llvm::TimerGroup>("infracc", "Reading, expansion and output");
  timerList_.push_back(std::make_unique<llvm::Timer>(name, name, *timers_));
  return timerList_.back().get();
}

struct TimeScope {
  llvm::Timer *t;
  explicit TimeScope(llvm::Timer *t) : t(t) {
    if (t)
      t->startTimer();
  }
  ~TimeScope() {
    if (t)
      t->stopTimer();
  }
};

llvm::Error Driver::runProviders() {
  for (const InputProvider &p : InputRegistry::providers())
    if (llvm::Error e = p(module_, diags_))
      return e;
  return llvm::Error::success();
}

/// The inputs named on the command line, then those LogGOPSim's options name.
static std::vector<std::string> allInputs() {
  std::vector<std::string> inputs(Inputs.begin(), Inputs.end());
  llvm::append_range(inputs, opts::lgsInputs());
  return inputs;
}

llvm::Error Driver::readInputs() {
  std::vector<std::string> inputs = allInputs();
  if (llvm::count(inputs, "-") > 1)
    return usageError("standard input ('-') is given more than once");
  // Classify everything first: fabric files of a format that combines files (e.g.
  // InfraGraph device files plus the infrastructure) are read in one load.
  std::vector<const InputFormat *> formats;
  for (const std::string &path : inputs) {
    if (path != "-" && !llvm::sys::fs::exists(path))
      return usageError("no such file: '" + path + "'");
    llvm::Expected<const InputFormat *> fmt = InputRegistry::classify(path);
    if (!fmt)
      return fmt.takeError();
    formats.push_back(*fmt);
  }
  std::vector<std::string> fabricFiles;
  const InputFormat *fabricFormat = nullptr;
  size_t firstFabric = inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (formats[i]->role != InputRole::Fabric)
      continue;
    bool combines = fabricFormat == formats[i] && formats[i]->combinesFiles;
    if (module_.fabricDefs || (fabricFormat && !combines))
      return usageError("two fabrics given ('" +
                        (module_.fabricDefs ? module_.fabricSource : fabricFiles.front()) +
                        "' and '" + inputs[i] + "'); give one fabric per run");
    fabricFormat = formats[i];
    fabricFiles.push_back(inputs[i]);
    firstFabric = std::min(firstFabric, i);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &path = inputs[i];
    bool isFabric = formats[i]->role == InputRole::Fabric;
    if (isFabric && i != firstFabric)
      continue;   // read together with the first fabric file
    // A workload format that combines files (per-node traces of one run) reads all of
    // its inputs in one load, at the first of them.
    std::vector<std::string> files = isFabric ? fabricFiles : std::vector{path};
    if (!isFabric && formats[i]->combinesFiles) {
      if (std::find(formats.begin(), formats.begin() + i, formats[i]) != formats.begin() + i)
        continue;
      for (size_t j = i + 1; j < inputs.size(); ++j)
        if (formats[j] == formats[i])
          files.push_back(inputs[j]);
    }
    TimeScope ts(timer(("read " + path).c_str()));
    InputContext ctx{module_, diags_, path, files};
    if (llvm::Error e = formats[i]->load(ctx))
      return e;
    if (diags_.hasErrors())
      return reportedError();
    if (isFabric && module_.fabricSource.empty())   // of several: the infrastructure's
      module_.fabricSource = fabricFiles.size() > 1 ? module_.fabricDefs->origin : path;
  }
  if (module_.jobs.size() != 1)   // the traced nodes are those of one run's ranks
    module_.traceNodeOfRank.clear();
  if (module_.jobs.size() == 1) {
    module_.workloadSource = module_.jobs.front().source;
    module_.timedWorkload = module_.jobs.front().timed;
    module_.schedule.emplace(std::move(module_.jobs.front().schedule));
    module_.jobs.clear();
  }
  return llvm::Error::success();
}

// Streaming conversion: a workload that is the only input, converted by a target that
// can write it rank by rank (-emit=goal-bin), is never held whole: memory stays flat
// however large the file. It stays an optimisation: the verifier must have had nothing
// to say (QuietVerification) and the target must accept every rank, or the whole
// schedule is read as usual and reported on as usual. Where the writer cannot go back
// (a pipe), the input is read twice: once to measure, once to write. nullopt: not
// streamed.
std::optional<llvm::Error> Driver::tryStreaming(const Target &target) {
  std::vector<std::string> inputs = allInputs();
  if (!target.streamWriter || inputs.size() != 1 || module_.fabricDefs || !Passes.empty() ||
      !PrintAfter.empty() || VerifyEach || TimePasses || llvm::AreStatisticsEnabled())
    return std::nullopt;
  const std::string &path = inputs.front();
  if (path != "-" && !llvm::sys::fs::is_regular_file(path))
    return std::nullopt;
  llvm::Expected<const InputFormat *> fmt = InputRegistry::classify(path);
  if (!fmt) {
    llvm::consumeError(fmt.takeError());
    return std::nullopt;
  }
  if (!(*fmt)->stream || (*fmt)->role != InputRole::Workload)
    return std::nullopt;
  auto out = std::make_unique<OutputManager>(opts::outputPath(), target.writesDirectory);
  TargetContext ctx{module_, *out, diags_};
  std::unique_ptr<ScheduleStreamWriter> writer;
  QuietVerification quiet;
  bool ok = true;
  unsigned warningsBefore = diags_.warningCount();
  InputContext input{module_, diags_, path, {path}};
  std::optional<Schedule> summary = (*fmt)->stream(input, [&](uint32_t numRanks) {
    writer = target.streamWriter(ctx, numRanks);
    ok = writer != nullptr;
    return [&, numRanks](uint32_t r, const RankOps &ops) {
      ok = ok && (DisableVerify || quiet.rank(r, numRanks, ops)) && writer->rank(r, ops);
    };
  });
  auto discard = [&] {
    writer.reset();   // before its stream goes
    out->discard();
  };
  if (!summary || diags_.hasErrors()) {
    discard();
    return reportedError();   // the input's errors, as reading it whole reports them
  }
  if (!ok || (!DisableVerify && !quiet.finish()) || diags_.warningCount() != warningsBefore) {
    discard();
    return std::nullopt;
  }
  if (writer->measuring()) {
    // Nothing is written yet, and the input was read without a complaint: read it again
    // and write (the header comes first, so on a pipe only now is it known).
    writer->startWriting(*summary);
    summary = (*fmt)->stream(input, [&](uint32_t) {
      return [&](uint32_t r, const RankOps &ops) { ok = ok && writer->rank(r, ops); };
    });
    if (!summary || diags_.hasErrors() || !ok) {
      discard();
      return summary && !diags_.hasErrors()
                 ? usageError(path + " changed while it was read a second time to write "
                                     "it; the output is incomplete")
                 : reportedError();
    }
  }
  if (llvm::Error e = writer->finish(*summary)) {
    discard();
    return e;
  }
  writer.reset();
  return out->commit();
}

llvm::Error Driver::expand() {
  if (!module_.fabricDefs || module_.fabric)
    return llvm::Error::success();
  TimeScope ts(timer("expand fabric"));
  module_.fabric = expandFabric(module_.fabricDefs, diags_);
  if (!module_.fabric || diags_.hasErrors())
    return reportedError();
  return llvm::Error::success();
}

llvm::Expected<const Target *> Driver::chooseTarget() {
  std::string name = Emit;
  if (name.empty())
    name = (module_.schedule || !module_.jobs.empty()) ? "sim" : "stats";
  const Target *t = TargetRegistry::find(name);
  if (!t) {
    std::string known;
    for (const Target *k : TargetRegistry::all())
      known += (known.empty() ? "" : ", ") + k->name;
    return usageError("unknown target '" + name + "' for -emit; valid targets are: " + known);
  }
  return t;
}

bool Driver::hasCollectives() const {
  if (module_.schedule)
    return !module_.schedule->collectives().empty();
  return llvm::any_of(module_.jobs,
                      [](const Module::Job &j) { return !j.schedule.collectives().empty(); });
}

// After explicit -passes, a collective left for a point-to-point target is the
// command line's to fix.
llvm::Error Driver::checkPointToPoint(const Target &target) const {
  if (!target.pointToPoint || !module_.schedule || module_.schedule->collectives().empty())
    return llvm::Error::success();
  const Schedule &s = *module_.schedule;
  for (uint32_t g = 0; g < s.numOps(); ++g) {
    if (s.kind(g) != OpKind::Collective)
      continue;
    std::string what = s.peer(g) < s.collectives().size()
                           ? collectiveKindName(s.collectives()[s.peer(g)].kind).str()
                           : "collective";
    return usageError("-emit=" + target.name + " takes sends, recvs and calcs, but rank " +
                      llvm::Twine(s.rankOf(g)) + "'s " + s.opName(g) + " is " +
                      (llvm::StringRef("aeiou").contains(what[0]) ? "an " : "a ") + what +
                      ": add lower-collectives to -passes (without -passes it runs by itself)");
  }
  return llvm::Error::success();
}

llvm::Error Driver::runPasses(const Target &target) {
  PipelineOptions popts;
  popts.printAfter.assign(PrintAfter.begin(), PrintAfter.end());
  popts.verifyEach = VerifyEach;
  popts.timePasses = TimePasses;
  PassManager pm(PassContext{diags_, stats_}, popts);
  std::vector<std::string> names;
  if (!Passes.empty())
    names.assign(Passes.begin(), Passes.end());
  else if (target.defaultPipeline)
    names = target.defaultPipeline(module_);
  bool haveWorkload = module_.schedule || !module_.jobs.empty();
  bool verifyExists = PassRegistry::find("verify") != nullptr;
  if (!module_.jobs.empty()) {
    // Several workloads: they must be merged first; verify the merged schedule.
    auto it = std::find(names.begin(), names.end(), "merge-jobs");
    if (it == names.end() && Passes.empty()) {
      // The default pipeline merges first; merge-jobs places the jobs itself.
      names.erase(std::remove(names.begin(), names.end(), "place"), names.end());
      it = names.insert(names.begin(), "merge-jobs");
    }
    if (it == names.end())
      return usageError(llvm::Twine(module_.jobs.size()) +
                        " workloads given; combine them with -passes=merge-jobs,... and "
                        "-jobs=<file>, or give one workload");
    if (!DisableVerify && verifyExists)
      names.insert(it + 1, "verify");
  } else if (haveWorkload && !DisableVerify && verifyExists &&
             (names.empty() || names.front() != "verify")) {
    names.insert(names.begin(), "verify");
  }
  // A point-to-point target lowers collectives by default: after the verifier (which
  // checks them) and placement (hierarchical algorithms need the placement), but before
  // merge-jobs, which regroups the ranks collectives name (each job is lowered alone).
  if (Passes.empty() && target.pointToPoint && hasCollectives() &&
      PassRegistry::find("lower-collectives") && !llvm::is_contained(names, "lower-collectives")) {
    auto at = names.begin();
    if (!module_.jobs.empty())
      at = std::find(names.begin(), names.end(), "merge-jobs");
    else
      for (auto it = names.begin(); it != names.end(); ++it)
        if (*it == "verify" || *it == "place")
          at = it + 1;
    names.insert(at, "lower-collectives");
  }
  if (llvm::Error e = pm.addPipeline(names))
    return e;
  return pm.run(module_);
}

llvm::Error Driver::emit(const Target &target) {
  bool haveWorkload = module_.schedule.has_value();
  if (llvm::Error e = checkPointToPoint(target))
    return e;
  switch (target.needs) {
  case TargetNeeds::Nothing:
    break;
  case TargetNeeds::Fabric:
    if (!module_.fabric)
      return usageError("-emit=" + target.name + " needs a fabric (an InfraGraph .yaml/.json "
                        "file or -fabric=<blueprint>)");
    break;
  case TargetNeeds::Workload:
    if (!haveWorkload)
      return usageError("-emit=" + target.name + " needs a workload (e.g. a .goal file)");
    break;
  case TargetNeeds::FabricOrWorkload:
    if (!haveWorkload && !module_.fabric)
      return usageError("-emit=" + target.name + " needs a fabric or a workload");
    break;
  case TargetNeeds::FabricAndWorkload:
    if (!haveWorkload || !module_.fabric)
      return usageError("-emit=" + target.name + " needs both a fabric and a workload");
    break;
  }
  OutputManager out(opts::outputPath(), target.writesDirectory);
  TargetContext ctx{module_, out, diags_};
  {
    TimeScope ts(timer(("emit " + target.name).c_str()));
    if (llvm::Error e = target.run(ctx)) {
      out.discard();
      return e;
    }
  }
  if (diags_.hasErrors()) {
    out.discard();
    return reportedError();
  }
  return out.commit();
}

int Driver::run() {
  diags_.setErrorLimit(ErrorLimit);
  diags_.setWarningsAsErrors(WarningsAsErrors);
  diags_.setSuppressWarnings(NoWarnings);
  for (const DriverAction &a : InputRegistry::actions())
    if (std::optional<int> status = a())
      return *status;
  if (Inputs.empty() && opts::lgsInputs().empty() && InputRegistry::providers().empty()) {
    llvm::errs() << "infracc: error: no input files (see infracc --help)\n";
    return 2;
  }
  auto body = [&]() -> llvm::Error {
    if (llvm::Error e = opts::checkOutputAndCompatOptions(diags_))
      return e;
    // An unknown -emit, or a directory target without -o, is a usage error, reported
    // before any input is read.
    if (!Emit.empty()) {
      auto t = chooseTarget();
      if (!t)
        return t.takeError();
      llvm::StringRef out = opts::outputPath();
      if ((*t)->writesDirectory && (out.empty() || out == "-"))
        return usageError("-emit=" + (*t)->name + " writes a directory of files; name it with "
                          "-o <dir> (e.g. -o out/)");
    }
    if (llvm::Error e = runProviders())
      return e;
    if (!Emit.empty())
      if (std::optional<llvm::Error> streamed = tryStreaming(**chooseTarget()))
        return std::move(*streamed);
    if (llvm::Error e = readInputs())
      return e;
    auto target = chooseTarget();
    if (!target)
      return target.takeError();
    if (!module_.fabricDefs && !module_.schedule && module_.jobs.empty())
      return usageError("no input files (see infracc --help)");
    if (llvm::Error e = expand())
      return e;
    if (llvm::Error e = runPasses(**target))
      return e;
    return emit(**target);
  };
  int status;
  try {
    status = exitFor(body(), diags_);
  } catch (const std::bad_alloc &) {
    llvm::errs() << "infracc: error: out of memory\n";
    status = 1;
  } catch (const std::length_error &e) {
    llvm::errs() << "infracc: error: " << e.what() << "\n";
    status = 1;
  }
  if (status == 0 && diags_.hasErrors())
    status = 1;
  // -stats is LLVM Support's own option (registered by it); we print our counters.
  if (llvm::AreStatisticsEnabled() && !stats_.empty())
    stats_.print(llvm::errs());
  if (timers_)
    timers_->print(llvm::errs(), /*ResetAfterPrint=*/true);   // else printed again at exit
  return status;
}

} // namespace

namespace {

const char *const Overview =
    "infracc: one fabric description and one workload in, every simulator's input out\n\n"
    "  infracc fabric.yaml -emit=fqg                      the expanded fabric graph\n"
    "  infracc fabric.yaml -emit=infragraph -o f.json     canonical, shareable document\n"
    "  infracc fabric.yaml -emit=digest                   SHA-256 of the expanded fabric\n"
    "  infracc workload.goal -emit=sim                    LogGOPSim-exact simulation\n"
    "  infracc fabric.yaml workload.goal -emit=htsim -o out/\n";

// Once per process: the version text, --help's appendix and which option categories show.
void configureOptions() {
  static bool done = false;
  if (done)
    return;
  done = true;
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "infracc " << INFRACC_VERSION << "\n"
       << "  a compiler for network-infrastructure studies: InfraGraph fabrics and GOAL/MPI\n"
       << "  workloads in; htsim, LogGOPSim and LLAMP inputs, simulations and pictures out\n"
       << "  built with LLVM " << LLVM_VERSION_STRING << "\n";
  });
  static std::string appendix = helpAppendix();
  static cl::extrahelp help(appendix);
  cl::HideUnrelatedOptions({&opts::generalCategory(), &opts::fabricCategory(),
                            &opts::passCategory(), &opts::simCategory(),
                            &opts::backendCategory()});
  // LLVM Support registers -stats itself; show it with ours.
  if (cl::Option *stats = cl::getRegisteredOptions().lookup("stats")) {
    stats->setHiddenFlag(cl::NotHidden);
    stats->addCategory(opts::generalCategory());
    stats->setDescription("Print statistics collected by passes and backends (on stderr)");
  }
}

int parseAndRun(int argc, const char *const *argv) {
  configureOptions();
  if (!cl::ParseCommandLineOptions(argc, argv, Overview, &llvm::errs()))
    return 2;
  Driver d;
  return d.run();
}

} // namespace

int runDriver(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return parseAndRun(argc, argv);
}

int runDriverInProcess(llvm::ArrayRef<std::string> args) {
  cl::ResetAllOptionOccurrences();
  std::vector<const char *> argv{"infracc"};
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  return parseAndRun(static_cast<int>(argv.size()), argv.data());
}

} // namespace infracc
