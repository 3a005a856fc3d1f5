#include "ir/Module.h"
#include "passes/Pass.h"

#include "support/Diagnostics.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/Timer.h>

#include <deque>

namespace infracc {

void Statistics::add(llvm::StringRef group, llvm::StringRef name, llvm::StringRef description,
                     uint64_t value) {
  Entry &e = entries_[{group.str(), name.str()}];
  e.description = description.str();
  e.value += value;
}

uint64_t Statistics::get(llvm::StringRef group, llvm::StringRef name) const {
  auto it = entries_.find({group.str(), name.str()});
  return it == entries_.end() ? 0 : it->second.value;
}

void Statistics::print(llvm::raw_ostream &os) const {
  // The layout of LLVM's -stats report.
  os << "===-------------------------------------------------------------------------===\n"
     << "                          ... Statistics Collected ...\n"
     << "===-------------------------------------------------------------------------===\n\n";
  // As LLVM: counters that stayed 0 are not listed.
  size_t valueWidth = 0, groupWidth = 0;
  for (const auto &[key, e] : entries_) {
    if (!e.value)
      continue;
    valueWidth = std::max(valueWidth, std::to_string(e.value).size());
    groupWidth = std::max(groupWidth, key.first.size());
  }
  for (const auto &[key, e] : entries_)
    if (e.value)
      os << llvm::format("%*llu %-*s - %s\n", int(valueWidth), (unsigned long long)e.value,
                         int(groupWidth), key.first.c_str(), e.description.c_str());
  os << "\n";
}

static std::deque<PassInfo> &passes() {
  static std::deque<PassInfo> p;
  return p;
}

void PassRegistry::add(PassInfo info) { passes().push_back(std::move(info)); }

const PassInfo *PassRegistry::find(llvm::StringRef name) {
  for (const PassInfo &p : passes())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::vector<const PassInfo *> PassRegistry::all() {
  std::vector<const PassInfo *> out;
  for (const PassInfo &p : passes())
    out.push_back(&p);
  std::sort(out.begin(), out.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return out;
}

static ModulePrinter &schedulePrinter() {
  static ModulePrinter p;
  return p;
}

void setSchedulePrinter(ModulePrinter printer) { schedulePrinter() = std::move(printer); }

llvm::Error PassManager::addPipeline(llvm::ArrayRef<std::string> names) {
  for (const std::string &n : names) {
    const PassInfo *info = PassRegistry::find(n);
    if (!info) {
      std::string known;
      for (const PassInfo *p : PassRegistry::all())
        known += (known.empty() ? "" : ", ") + p->name;
      return usageError("unknown pass '" + n + "' in -passes; passes are: " + known);
    }
    passes_.push_back(info->create());
  }
  for (const std::string &n : opts_.printAfter)
    if (n != "all" && !PassRegistry::find(n))
      return usageError("-print-after names '" + n + "', which is not a pass");
  for (const std::string &n : opts_.printAfter)
    if (n != "all" && !contains(n)) {
      std::string pipeline;
      for (const auto &p : passes_)
        pipeline += (pipeline.empty() ? "" : ",") + p->name().str();
      ctx_.diags.warning("", "-print-after=" + n + ": '" + n + "' is not in the pipeline (" +
                                 (pipeline.empty() ? std::string("no passes") : pipeline) +
                                 "), so nothing is printed for it");
    }
  return llvm::Error::success();
}

bool PassManager::contains(llvm::StringRef name) const {
  return llvm::any_of(passes_, [&](const auto &p) { return p->name() == name; });
}

llvm::Error PassManager::run(Module &module) {
  std::unique_ptr<llvm::TimerGroup> group;
  std::vector<std::unique_ptr<llvm::Timer>> timers;
  if (opts_.timePasses)
    group = std::make_unique<llvm::TimerGroup>("passes", "Pass execution timing report");
  std::unique_ptr<Pass> verifier;
  if (opts_.verifyEach)
    if (const PassInfo *v = PassRegistry::find("verify"))
      verifier = v->create();

  for (auto &pass : passes_) {
    llvm::Timer *timer = nullptr;
    if (group) {
      timers.push_back(std::make_unique<llvm::Timer>(pass->name(), pass->name(), *group));
      timer = timers.back().get();
      timer->startTimer();
    }
    llvm::Error err = pass->run(module, ctx_);
    if (timer)
      timer->stopTimer();
    if (err)
      return err;
    if (ctx_.diags.hasErrors())
      return reportedError();
    bool print = llvm::is_contained(opts_.printAfter, "all") ||
                 llvm::is_contained(opts_.printAfter, pass->name().str());
    if (print) {
      llvm::errs() << "; *** Schedule after " << pass->name() << " ***\n";
      if (schedulePrinter() && module.hasSchedule())
        schedulePrinter()(module, llvm::errs());
      else
        llvm::errs() << "; (no schedule)\n";
    }
    if (verifier && pass->name() != "verify") {
      if (llvm::Error e = verifier->run(module, ctx_))
        return e;
      if (ctx_.diags.hasErrors()) {
        ctx_.diags.error("", "the module no longer verifies after pass '" + pass->name() + "'");
        return reportedError();
      }
    }
  }
  if (group)
    group->print(llvm::errs(), /*ResetAfterPrint=*/true);   // else printed again when the timers go
  return llvm::Error::success();
}

} // namespace infracc
