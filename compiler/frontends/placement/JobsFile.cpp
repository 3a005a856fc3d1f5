#include "compiler/frontends/placement/JobsFile.h"

#include "compiler/frontends/infragraph/YamlTree.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

namespace infracc {

namespace {

class Reader {
public:
  explicit Reader(DiagEngine &diags) : diags_(diags) {}

  bool read(const YamlNode *root, JobsSpec &spec);

private:
  void error(llvm::SMLoc loc, const std::string &msg) { diags_.error(loc, msg); }
  bool checkKeys(const YamlNode &map, std::initializer_list<llvm::StringRef> keys,
                 llvm::StringRef what);
  std::optional<uint64_t> number(const YamlNode &n, llvm::StringRef what);
  bool readJob(const YamlNode &n, size_t index, JobsSpec::Job &job);

  DiagEngine &diags_;
};

bool Reader::checkKeys(const YamlNode &map, std::initializer_list<llvm::StringRef> keys,
                       llvm::StringRef what) {
  bool ok = true;
  for (const auto &e : map.entries)
    if (!llvm::is_contained(keys, llvm::StringRef(e.key))) {
      std::string list;
      for (llvm::StringRef k : keys)
        list += (list.empty() ? "" : ", ") + k.str();
      error(e.keyLoc, fmt::format("unknown key '{}' in {}; the keys are {}", e.key, what.str(),
                                  list));
      ok = false;
    }
  return ok;
}

std::optional<uint64_t> Reader::number(const YamlNode &n, llvm::StringRef what) {
  uint64_t v = 0;
  if (n.kind != YamlNode::Scalar || n.quoted || !llvm::all_of(n.value, llvm::isDigit) ||
      n.value.empty() || llvm::StringRef(n.value).getAsInteger(10, v)) {
    error(n.loc, fmt::format("{} must be a whole number (0, 1, 2, ...), not {}", what.str(),
                             n.describe()));
    return std::nullopt;
  }
  return v;
}

bool Reader::readJob(const YamlNode &n, size_t index, JobsSpec::Job &job) {
  std::string what = fmt::format("job {}", index);
  job.loc = n.loc;
  if (n.kind != YamlNode::Map) {
    error(n.loc, fmt::format("{} must be a mapping with keys workload, placement and seed, not "
                             "{}",
                             what, n.describe()));
    return false;
  }
  bool ok = checkKeys(n, {"workload", "placement", "seed"}, what);
  if (const YamlNode *w = n.get("workload")) {
    if (w->kind != YamlNode::Scalar || w->value.empty()) {
      error(w->loc, fmt::format("the workload of {} must be a file name, not {}", what,
                                w->describe()));
      ok = false;
    } else {
      job.workload = w->value;
      job.workloadLoc = w->loc;
    }
  }
  if (const YamlNode *s = n.get("seed")) {
    job.seed = number(*s, "the seed of " + what);
    ok &= job.seed.has_value();
  }
  if (const YamlNode *p = n.get("placement")) {
    job.placementLoc = p->loc;
    if (p->kind == YamlNode::Seq) {
      job.strategy = JobsSpec::Strategy::List;
      for (const YamlNode *item : p->items) {
        JobsSpec::Slot slot;
        slot.loc = item->loc;
        if (item->kind != YamlNode::Scalar || item->value.empty()) {
          error(item->loc, fmt::format("the placement list of {} holds endpoint names or slot "
                                       "numbers, not {}",
                                       what, item->describe()));
          ok = false;
          continue;
        }
        if (!item->quoted && llvm::all_of(item->value, llvm::isDigit)) {
          slot.isIndex = true;
          if (llvm::StringRef(item->value).getAsInteger(10, slot.index)) {
            error(item->loc, "slot number " + item->value + " is too large");
            ok = false;
          }
        } else {
          slot.name = item->value;
        }
        job.slots.push_back(std::move(slot));
      }
      if (p->items.empty()) {
        error(p->loc, fmt::format("the placement list of {} is empty; it needs one slot per "
                                  "rank",
                                  what));
        ok = false;
      }
    } else if (p->kind == YamlNode::Scalar && p->value == "packed") {
      job.strategy = JobsSpec::Strategy::Packed;
    } else if (p->kind == YamlNode::Scalar && p->value == "random") {
      job.strategy = JobsSpec::Strategy::Random;
    } else if (p->kind == YamlNode::Scalar && p->value == "interleaved") {
      job.strategy = JobsSpec::Strategy::Interleaved;
    } else {
      error(p->loc, fmt::format("the placement of {} must be packed, random, interleaved or a "
                                "list of endpoints, not {}",
                                what, p->describe()));
      ok = false;
    }
  }
  return ok;
}

bool Reader::read(const YamlNode *root, JobsSpec &spec) {
  if (!root || root->kind != YamlNode::Map) {
    diags_.error(spec.path, "a jobs file is a mapping with keys mode, share-nic, slots, "
                            "slots-per-host, seed and jobs" +
                                std::string(root ? ", not " + root->describe() : " (it is empty)"));
    return false;
  }
  bool ok = checkKeys(*root, {"mode", "share-nic", "slots", "slots-per-host", "seed", "jobs"},
                      "the jobs file");
  if (const YamlNode *m = root->get("mode")) {
    if (m->kind == YamlNode::Scalar && m->value == "multi-job")
      spec.mode = JobsSpec::Mode::MultiJob;
    else if (m->kind == YamlNode::Scalar && m->value == "multi-tenant")
      spec.mode = JobsSpec::Mode::MultiTenant;
    else {
      error(m->loc, "mode must be multi-job or multi-tenant, not " + m->describe());
      ok = false;
    }
  }
  if (const YamlNode *s = root->get("share-nic")) {
    if (!s->isBoolScalar()) {
      error(s->loc, "share-nic must be true or false, not " + s->describe());
      ok = false;
    } else {
      llvm::StringRef v = s->value;
      spec.shareNic = v.equals_insensitive("true") || v.equals_insensitive("yes") ||
                      v.equals_insensitive("on");
    }
  }
  if (const YamlNode *s = root->get("slots")) {
    spec.slots = number(*s, "slots");
    spec.slotsLoc = s->loc;
    ok &= spec.slots.has_value();
    if (spec.slots && *spec.slots == 0) {
      error(s->loc, "slots must be at least 1");
      ok = false;
    }
  }
  if (const YamlNode *s = root->get("slots-per-host")) {
    spec.slotsPerHost = number(*s, "slots-per-host");
    spec.slotsPerHostLoc = s->loc;
    ok &= spec.slotsPerHost.has_value();
    if (spec.slotsPerHost && *spec.slotsPerHost == 0) {
      error(s->loc, "slots-per-host must be at least 1");
      ok = false;
    }
  }
  if (const YamlNode *s = root->get("seed")) {
    spec.seed = number(*s, "seed");
    ok &= spec.seed.has_value();
  }
  const YamlNode *jobs = root->get("jobs");
  if (!jobs) {
    diags_.error(spec.path, "the jobs file has no 'jobs' list (one entry per workload)");
    return false;
  }
  spec.jobsLoc = root->entry("jobs")->keyLoc;
  if (jobs->kind != YamlNode::Seq || jobs->items.empty()) {
    error(jobs->loc, "jobs must be a list with one entry per workload, not " + jobs->describe());
    return false;
  }
  for (size_t i = 0; i < jobs->items.size(); ++i) {
    JobsSpec::Job job;
    ok &= readJob(*jobs->items[i], i, job);
    spec.jobs.push_back(std::move(job));
  }
  return ok;
}

} // namespace

std::optional<JobsSpec> readJobsFile(llvm::StringRef path, DiagEngine &diags) {
  YamlTree tree;
  if (!tree.parseFile(path, "jobs file", diags))
    return std::nullopt;
  JobsSpec spec;
  spec.path = path.str();
  if (!Reader(diags).read(tree.root(), spec))
    return std::nullopt;
  return spec;
}

} // namespace infracc
