// The test plans (tests/msccl/inputs, written by tools/gen_plans.py) read into the
// kernel level, pass the verifier and compute their collective when run by the
// symbolic executor; together they use every operation of MSCCL++'s table.
#include "compiler/frontends/msccl/MscclReader.h"
#include "formats/MscclPlan.h"
#include "ir/Kernels.h"
#include "passes/KernelVerifier.h"
#include "support/Diagnostics.h"
#include "tests/loadstore/KernelExec.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <set>

namespace infracc::test {
namespace {

struct PlanCase {
  const char *file;
  const char *collective;
  uint32_t gpus;
  uint64_t msg;
};

const PlanCase Plans[] = {
    {"allreduce_ring", "allreduce", 4, 64},        {"allgather_put", "allgather", 4, 128},
    {"allgather_get", "allgather", 4, 64},         {"reducescatter_get", "reducescatter", 4, 64},
    {"alltoall_port", "alltoall", 4, 64},          {"allreduce_pipeline", "allreduce", 4, 64},
    {"allreduce_nvls", "allreduce", 4, 64},        {"allgather_nvls", "allgather", 4, 64},
    {"allreduce_ll", "allreduce", 2, 32},          {"reducescatter_ll", "reducescatter", 3, 48},
    {"allgather_ll", "allgather", 3, 48},          {"allgather_nvls_ll", "allgather", 2, 32},
};

std::string planPath(const std::string &name) {
  return sourcePath("tests/msccl/inputs/" + name + ".json");
}

TEST(MscclPlans, EachComputesItsCollective) {
  for (const PlanCase &c : Plans) {
    std::string text;
    llvm::raw_string_ostream os(text);
    DiagEngine diags(os);
    msccl::ReadOptions o;
    o.messageBytes = c.msg;
    std::optional<Schedule> s = msccl::readPlan(planPath(c.file), o, diags);
    ASSERT_TRUE(s) << c.file << ": " << text;
    ASSERT_TRUE(verifyKernels(*s, diags, c.file)) << c.file << ": " << text;
    EXPECT_EQ(s->kernels()->numGpus, c.gpus) << c.file;
    EXPECT_EQ(checkCollective(execute(*s->kernels()), c.collective, c.msg / c.gpus), "") << c.file;
  }
}

TEST(MscclPlans, TogetherUseEveryOperation) {
  std::set<std::string> used;
  for (const PlanCase &c : Plans) {
    std::string text = readFile(planPath(c.file));
    for (const msccl::OpInfo &i : msccl::allOps())
      if (text.find("\"name\": \"" + std::string(i.name) + "\"") != std::string::npos)
        used.insert(i.name);
  }
  std::string missing;
  for (const msccl::OpInfo &i : msccl::allOps())
    if (!used.count(i.name))
      missing += std::string(" ") + i.name;
  EXPECT_EQ(missing, "");
  EXPECT_EQ(used.size(), 30u);
}

} // namespace
} // namespace infracc::test
