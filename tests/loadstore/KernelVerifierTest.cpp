// The kernel-level verifier: each finding with its exact message, at the operation it
// is about (kernel levels read from .kernels text, so every op has a location).
#include "tests/loadstore/LoadStoreTestUtil.h"

#include <gtest/gtest.h>

namespace infracc::test {
namespace {

using Lines = std::vector<std::string>;

/// The messages infracc prints for the kernel level `text` (which must be refused).
Lines verify(const std::string &text) {
  RunResult r = runOnText("t.kernels", text, {"-emit=kernels"});
  EXPECT_EQ(r.status, 1) << r.err;
  return messages(r.err);
}

const std::string Chan01 = "semaphore s0 gpu 1 instance 0 channel from 0 index 0 init 0\n";

TEST(KernelVerifier, SemaphoreAcquiredMoreOftenThanReleased) {
  std::string t = twoGpuKernels(Chan01, "    sem_release s0\n    sem_release s0\n",
                                "    sem_acquire s0\n    sem_acquire s0\n    sem_acquire s0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "sem_acquire") + ": error: semaphore s0 (on gpu 1, from gpu "
                             "0) is acquired 3 times but released 2 times and starts at 0: a "
                             "wait would never end"});
  // Loops count by their iterations; the initial count counts too.
  std::string init1 = "semaphore s0 gpu 1 instance 0 channel from 0 index 0 init 1\n";
  t = twoGpuKernels(init1, "    sem_release s0\n    loop 3 unit 8 ops 1\n    sem_release s0\n",
                    "    loop 10 unit 4 ops 1\n    sem_acquire s0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "sem_acquire") + ": error: semaphore s0 (on gpu 1, from gpu "
                             "0) is acquired 10 times but released 4 times and starts at 1: a "
                             "wait would never end"});
  t = twoGpuKernels(init1, "    sem_release s0\n    loop 3 unit 8 ops 1\n    sem_release s0\n",
                    "    loop 5 unit 4 ops 1\n    sem_acquire s0\n");
  EXPECT_EQ(runOnText("t.kernels", t, {"-emit=kernels"}).status, 0);
}

TEST(KernelVerifier, SemaphoreOwnership) {
  std::string t = twoGpuKernels(Chan01, "    sem_acquire s0\n", "    sem_release s0\n");
  EXPECT_EQ(verify(t),
            (Lines{at(t, "sem_acquire") + ": error: sem_acquire waits on semaphore s0, which "
                   "lives on gpu 1; a GPU waits only on its own semaphores",
                   at(t, "sem_release") + ": error: sem_release on gpu 1 releases semaphore s0, "
                   "which only gpu 0 releases (it is gpu 0's channel to gpu 1)"}));
  t = twoGpuKernels("semaphore s0 gpu 1 instance 0 device index 0 init 0\n",
                    "    sem_release s0\n", "    sem_acquire s0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "sem_release") + ": error: sem_release releases device "
                             "semaphore s0 of gpu 1; device semaphores are released on their "
                             "GPU"});
  t = twoGpuKernels("", "    sem_acquire s3\n");
  EXPECT_EQ(verify(t), Lines{at(t, "sem_acquire") + ": error: sem_acquire names semaphore s3, "
                             "but there are 0 semaphores"});
}

TEST(KernelVerifier, Ranges) {
  std::string t = twoGpuKernels("", "    memcpy 512 input+768 -> gpu1.output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "memcpy") + ": error: the source range input+768 of 512 "
                             "bytes on gpu 0 ends at 1280, past the input buffer's 1024 bytes"});
  t = twoGpuKernels("", "    memcpy 8 input+0 -> gpu1.scratch+1020:ll\n");
  EXPECT_EQ(verify(t), Lines{at(t, "memcpy") + ": error: the destination range scratch+1020 of "
                             "16 bytes on gpu 1 ends at 1036, past the scratch buffer's 1024 "
                             "bytes"});
  t = twoGpuKernels("", "    memcpy 512 input+0 -> gpu2.output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "memcpy") + ": error: the destination is on gpu 2, but there "
                             "are 2 GPUs (0..1)"});
  t = twoGpuKernels("multicast mc0 instance 0 input gpus 1\n",
                    "    memcpy 8 mc0.input+0 -> output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "memcpy") + ": error: the source uses multicast group mc0, "
                             "which gpu 0 is not a member of"});
  t = twoGpuKernels("", "    flush gpu5\n");
  EXPECT_EQ(verify(t), Lines{at(t, "flush") + ": error: flush names the channel to gpu 5, but "
                             "there are 2 GPUs"});
}

TEST(KernelVerifier, FusedGroups) {
  std::string t = twoGpuKernels("", "    load 64 input+0 fused\n    reduce 64 inputs 3 fused\n"
                                    "    store 64 output+0 fused\n");
  EXPECT_EQ(verify(t), Lines{at(t, "store") + ": error: store is fused with the next operation, "
                             "but it is the last of its workgroup"});
  t = twoGpuKernels("", "    load 64 input+0 fused\n    reduce 64 inputs 3 fused\n"
                        "    store 64 output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "reduce") + ": error: reduce combines 3 inputs, but the group loads 1"});
  t = twoGpuKernels("", "    load 64 input+0 fused\n    store 64 output+0 fused\n"
                        "    reduce 64 inputs 1\n");
  EXPECT_EQ(verify(t), Lines{at(t, "reduce") + ": error: a fused group loads first, then "
                             "reduces, then stores; this reduce comes too late"});
  t = twoGpuKernels("", "    load 64 input+0 fused\n    nop\n");
  EXPECT_EQ(verify(t), Lines{at(t, "nop") + ": error: a nop cannot be fused with data "
                             "operations (a fused group holds loads, at most one reduce and "
                             "stores)"});
  t = twoGpuKernels("", "    load 64 input+0 fused\n    store 32 output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "store") + ": error: store is fused with an operation of 64 "
                             "bytes but moves 32; a fused group works on equal sizes"});
}

TEST(KernelVerifier, LoopsAndBarriers) {
  std::string t = twoGpuKernels("", "    loop 2 unit 8 ops 3\n    nop\n");
  EXPECT_EQ(verify(t), Lines{at(t, "loop") + ": error: the loop's body of 3 operations runs past "
                             "the workgroup's end"});
  t = twoGpuKernels("", "    loop 2 unit 8 ops 2\n    loop 2 unit 8 ops 1\n    nop\n");
  EXPECT_EQ(verify(t), Lines{at(t, "loop", "ops 2") + ": error: a loop inside a loop (loops do "
                             "not nest)"});
  t = twoGpuKernels("", "    load 8 input+0 fused\n    loop 2 unit 8 ops 1\n    store 8 output+0\n");
  EXPECT_EQ(verify(t), Lines{at(t, "loop") + ": error: a loop cannot be fused with data "
                             "operations (a fused group holds loads, at most one reduce and "
                             "stores)"});
  t = twoGpuKernels("", "    barrier 0 workgroups 2\n");
  EXPECT_EQ(verify(t), Lines{at(t, "barrier") + ": error: barrier 0 waits for 2 workgroups, but "
                             "1 of gpu 0's kernel reach it"});
}

} // namespace
} // namespace infracc::test
