// lower-collectives: replaces every collective by the sends, recvs and calcs of its
// algorithm (passes/collectives/), optionally proving the result with the semantic
// checker (-verify-collectives).
#include "ir/Module.h"
#include "passes/Pass.h"
#include "passes/collectives/KernelLowering.h"
#include "passes/collectives/Lowering.h"
#include "passes/collectives/SemanticChecker.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

namespace infracc {

namespace {

namespace cl = llvm::cl;

cl::opt<unsigned> Channels("coll-channels", cl::init(1), cl::value_desc("n"),
                           cl::desc("lower-collectives: split each collective into n channels, "
                                    "each on its own cpu (the statement's cpu + channel); "
                                    "default 1"),
                           cl::cat(opts::passCategory()));
cl::opt<uint64_t> ChunkSize("coll-chunk-size", cl::init(0), cl::value_desc("bytes"),
                            cl::desc("lower-collectives: pipelining unit in bytes for ring and "
                                     "dbtree (0, the default: no pipelining)"),
                            cl::cat(opts::passCategory()));
cl::opt<std::string> ProtocolName("coll-protocol", cl::init("simple"), cl::value_desc("name"),
                                  cl::desc("lower-collectives: NCCL protocol for wire sizes: "
                                           "simple (payload), ll (16 bytes per 8), ll128 (128 "
                                           "per 120); default simple"),
                                  cl::cat(opts::passCategory()));
cl::opt<double> ReduceNsPerByte("reduce-ns-per-byte", cl::init(0), cl::value_desc("ns"),
                                cl::desc("lower-collectives: cost of reducing one received byte, "
                                         "as a calc after the recv (default 0: no calc)"),
                                cl::cat(opts::passCategory()));
cl::opt<std::string> SelectionFile("coll-selection", cl::value_desc("file"),
                                   cl::desc("lower-collectives: algorithm selection rules tried "
                                            "before the default table (docs/collectives.md)"),
                                   cl::cat(opts::passCategory()));
cl::opt<bool> SchedgenDeps("coll-schedgen-deps",
                           cl::desc("lower-collectives: keep only the dependencies Schedgen's "
                                    "patterns have (drops the transitive data dependencies of "
                                    "dissemination and rabenseifner; default off)"),
                           cl::cat(opts::passCategory()));
cl::opt<std::string> Target("coll-target", cl::init("messages"), cl::value_desc("messages|kernels"),
                           cl::desc("lower-collectives: what collectives become: sends, recvs "
                                    "and calcs (messages, the default) or GPU kernel launches "
                                    "of GPU operations (kernels; docs/loadstore.md)"),
                           cl::cat(opts::passCategory()));
cl::opt<unsigned> Workgroups("workgroups", cl::init(1), cl::value_desc("n"),
                             cl::desc("lower-collectives -coll-target=kernels: workgroups per "
                                      "GPU kernel, each moving its slice of every block "
                                      "(1..1024); default 1"),
                             cl::cat(opts::passCategory()));
cl::opt<std::string> Transfer("coll-transfer", cl::init("put"), cl::value_desc("put|get"),
                              cl::desc("lower-collectives -coll-target=kernels: put (write into "
                                       "the peer, then signal) or get (signal, the peer reads); "
                                       "default put"),
                              cl::cat(opts::passCategory()));
cl::opt<bool> VerifyCollectives("verify-collectives",
                                cl::desc("lower-collectives: prove with the semantic checker "
                                         "that every lowered collective delivers its result"),
                                cl::cat(opts::passCategory()));

class LowerCollectivesPass : public Pass {
public:
  llvm::StringRef name() const override { return "lower-collectives"; }
  llvm::Error run(Module &m, PassContext &ctx) override {
    bool any = m.schedule ? !m.schedule->collectives().empty()
                          : llvm::any_of(m.jobs, [](const Module::Job &j) {
                              return !j.schedule.collectives().empty();
                            });
    if (!any)
      return llvm::Error::success();
    if (Target != "messages" && Target != "kernels")
      return usageError("-coll-target must be messages or kernels (got '" + Target + "')");
    if (Target == "kernels") {
      if (!m.schedule)
        return usageError("-coll-target=kernels lowers one workload; merge the jobs first");
      return toKernels(m, ctx);
    }
    std::optional<coll::SelectionPolicy> policy;
    llvm::Expected<coll::LoweringOptions> o = options(ctx, policy);
    if (!o)
      return o.takeError();
    if (!m.schedule) {
      // Several workloads not merged yet: each job is lowered on its own (merge-jobs
      // regroups ranks, which collectives name).
      for (Module::Job &j : m.jobs)
        if (!j.schedule.collectives().empty()) {
          std::optional<Schedule> out = toMessages(j.schedule, *o, {}, j.source, ctx);
          if (!out)
            return reportedError();
          j.schedule = std::move(*out);
        }
      return llvm::Error::success();
    }
    const Schedule &s = *m.schedule;
    std::vector<uint32_t> hosts;
    if (m.fabric && !m.placement.empty() && m.placement.numRanks() == s.numRanks())
      for (NodeId n : m.placement.endpointOfRank)
        hosts.push_back(m.fabric->deviceCopyOf(n));
    std::optional<Schedule> out = toMessages(s, *o, hosts, m.workloadSource, ctx);
    if (!out)
      return reportedError();
    m.schedule = std::move(*out);
    return llvm::Error::success();
  }

private:
  /// The options, checked; `policy` holds the -coll-selection table they point to.
  llvm::Expected<coll::LoweringOptions> options(PassContext &ctx,
                                                std::optional<coll::SelectionPolicy> &policy) {
    coll::LoweringOptions o;
    if (Channels == 0 || Channels > 4096)
      return usageError("-coll-channels must be between 1 and 4096 (got " +
                        llvm::Twine(unsigned(Channels)) + ")");
    o.channels = Channels;
    o.chunkBytes = ChunkSize;
    if (std::optional<CollProtocol> p = parseCollProtocol(ProtocolName))
      o.protocol = *p;
    else
      return usageError("-coll-protocol must be simple, ll or ll128 (got '" + ProtocolName + "')");
    if (!(ReduceNsPerByte >= 0))
      return usageError("-reduce-ns-per-byte must be 0 or more");
    o.reduceNsPerByte = ReduceNsPerByte;
    o.schedgenDeps = SchedgenDeps;
    if (!SelectionFile.empty()) {
      policy = coll::SelectionPolicy::load(ctx.diags, SelectionFile);
      if (!policy)
        return reportedError();
      o.policy = &*policy;
    }
    return o;
  }

  /// `s` lowered to sends, recvs and calcs (and proven with -verify-collectives); nullopt
  /// after errors reported through ctx.diags.
  std::optional<Schedule> toMessages(const Schedule &s, const coll::LoweringOptions &o,
                                     llvm::ArrayRef<uint32_t> hosts, llvm::StringRef source,
                                     PassContext &ctx) {
    coll::Recording rec;
    std::optional<Schedule> out = coll::lowerCollectives(
        s, o, hosts, ctx.diags, source, VerifyCollectives ? &rec : nullptr, &ctx.stats);
    if (!out)
      return std::nullopt;
    if (VerifyCollectives) {
      coll::CheckResult r = coll::checkCollectives(*out, rec, s.communicators());
      ctx.stats.add("lower-collectives", "verified", "Collectives proven by the semantic checker",
                    r.instancesChecked);
      if (!r.ok()) {
        for (const std::string &msg : r.errors)
          ctx.diags.error(source, msg);
        return std::nullopt;
      }
    }
    return out;
  }

  llvm::Error toKernels(Module &m, PassContext &ctx) {
    coll::KernelLoweringOptions o;
    if (Workgroups == 0 || Workgroups > 1024)
      return usageError("-workgroups must be between 1 and 1024 (got " +
                        llvm::Twine(unsigned(Workgroups)) + ")");
    if (Transfer != "put" && Transfer != "get")
      return usageError("-coll-transfer must be put or get (got '" + Transfer + "')");
    if (m.schedule->kernels())
      return usageError("-coll-target=kernels: the schedule already has a kernel level; lower "
                        "its collectives in a separate run");
    o.workgroups = Workgroups;
    o.transfer = Transfer == "put" ? coll::Transfer::Put : coll::Transfer::Get;
    std::optional<Schedule> out =
        coll::lowerToKernels(*m.schedule, o, ctx.diags, m.workloadSource, &ctx.stats);
    if (!out)
      return reportedError();
    m.schedule = std::move(*out);
    return llvm::Error::success();
  }
};

RegisterPass<LowerCollectivesPass> X("lower-collectives",
                                     "replace collectives by sends, recvs and calcs");

} // namespace
} // namespace infracc
