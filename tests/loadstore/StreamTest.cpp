// Instruction streams (ir/LoadStore.h): exact instructions per wavefront for data,
// packet, fused, control and loop operations; the one-at-a-time iterator and the
// counts agree with the counted loops.
#include "ir/LoadStore.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace infracc::test {
namespace {

/// One kernel on gpu 0 of two GPUs (both with 4 KiB buffers), one workgroup of `ops`.
KernelLevel level(std::vector<GpuOp> ops, uint32_t wavefronts, uint64_t scratchWrap = 0) {
  KernelLevel k;
  k.numGpus = 2;
  for (uint32_t g = 0; g < 2; ++g) {
    Kernel K;
    K.gpu = g;
    K.wavefronts = wavefronts;
    K.firstWorkgroup = g;
    K.numWorkgroups = 1;
    K.bufferBytes[0] = K.bufferBytes[1] = K.bufferBytes[2] = 4096;
    K.scratchWrap = scratchWrap;
    k.kernels.push_back(K);
  }
  k.workgroups.push_back({0, 0, uint32_t(ops.size())});
  k.workgroups.push_back({1, uint32_t(ops.size()), 0});
  k.ops = std::move(ops);
  Semaphore s;
  s.gpu = 1;
  s.kind = SemaphoreKind::Channel;
  s.peer = 0;
  k.semaphores.push_back(s);
  return k;
}

BufferRef ref(uint32_t gpu, BufferKind b, uint64_t off, bool packet = false) {
  BufferRef r;
  r.gpu = gpu;
  r.buffer = b;
  r.offset = off;
  r.packet = packet;
  return r;
}

GpuOp memcpyOp(uint64_t bytes, BufferRef src, BufferRef dst) {
  GpuOp o;
  o.kind = GpuOpKind::Memcpy;
  o.bytes = bytes;
  o.src = src;
  o.dst = dst;
  return o;
}

std::string show(const Instruction &x) {
  switch (x.kind) {
  case InstrKind::Load:
  case InstrKind::Store:
    return fmt::format("{} g{}.{}+{}/{}{}", instrKindName(x.kind).str(), x.gpu,
                       bufferKindName(x.buffer).str(), x.address, x.bytes,
                       x.flags & instr::Packet ? ":ll" : "");
  case InstrKind::Waitcnt:
    return fmt::format("Waitcnt {},{}", x.arg == instr::Unlimited ? -1 : int(x.arg),
                       x.arg2 == instr::Unlimited ? -1 : int(x.arg2));
  case InstrKind::Reduce:
    return fmt::format("Reduce {}x{}", x.bytes, x.arg);
  default:
    return fmt::format("{} {}", instrKindName(x.kind).str(), x.arg);
  }
}

/// The wavefront's segments: "N x [a; b; ...] +stride" per counted loop.
std::vector<std::string> segments(const KernelLevel &k, LoadStoreParams p, uint32_t wf) {
  std::vector<std::string> out;
  WavefrontStream s(k, p, 0, 0, wf);
  Segment seg;
  while (s.next(seg)) {
    std::string body;
    for (size_t j = 0; j < seg.body.size(); ++j)
      body += (j ? "; " : "") + show(seg.body[j]);
    uint64_t stride = seg.stride.empty() ? 0 : *std::max_element(seg.stride.begin(), seg.stride.end());
    out.push_back(fmt::format("{} x [{}] +{}", seg.iterations, body, stride));
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(Streams, MemcpyLinesSplitOverWavefrontsAndUnrolled) {
  // 1000 bytes: 7 full lines and one of 104; wavefront 0 takes lines 0-3, 1 lines 4-7.
  KernelLevel k = level({memcpyOp(1000, ref(0, BufferKind::Input, 0), ref(1, BufferKind::Output, 64))}, 2);
  LoadStoreParams p{128, 2};
  EXPECT_EQ(segments(k, p, 0),
            Lines{"2 x [Load g0.input+0/128; Load g0.input+128/128; Waitcnt 0,-1; "
                  "Store g1.output+64/128; Store g1.output+192/128] +256"});
  EXPECT_EQ(segments(k, p, 1),
            (Lines{"1 x [Load g0.input+512/128; Load g0.input+640/128; Waitcnt 0,-1; "
                   "Store g1.output+576/128; Store g1.output+704/128] +0",
                   "1 x [Load g0.input+768/128; Load g0.input+896/104; Waitcnt 0,-1; "
                   "Store g1.output+832/128; Store g1.output+960/104] +0"}));
}

TEST(Streams, PacketLinesCarryHalfAPayload) {
  // 96 bytes of data into LL packets: lines of 64 payload bytes (128 bytes of packets).
  KernelLevel k = level({memcpyOp(96, ref(0, BufferKind::Input, 32),
                                  ref(1, BufferKind::Scratch, 256, true))}, 1);
  EXPECT_EQ(segments(k, {128, 1}, 0),
            (Lines{"1 x [Load g0.input+32/64; Waitcnt 0,-1; Store g1.scratch+256/128:ll] +0",
                   "1 x [Load g0.input+96/32; Waitcnt 0,-1; Store g1.scratch+384/64:ll] +0"}));
}

TEST(Streams, FusedGroupLoadsReducesStores) {
  GpuOp l1, l2, r, s1, s2;
  l1.kind = l2.kind = GpuOpKind::Load;
  r.kind = GpuOpKind::Reduce;
  s1.kind = s2.kind = GpuOpKind::Store;
  l1.src = ref(0, BufferKind::Input, 0);
  l2.src = ref(1, BufferKind::Input, 0);
  r.id = 2;
  s1.dst = ref(0, BufferKind::Output, 0);
  s2.dst = ref(1, BufferKind::Output, 0);
  for (GpuOp *o : {&l1, &l2, &r, &s1, &s2}) {
    o->bytes = 256;
    o->flags = gpuop::FusedWithNext;
  }
  s2.flags = 0;
  KernelLevel k = level({l1, l2, r, s1, s2}, 1);
  EXPECT_EQ(segments(k, {128, 1}, 0),
            Lines{"2 x [Load g0.input+0/128; Load g1.input+0/128; Waitcnt 0,-1; Reduce 128x2; "
                  "Store g0.output+0/128; Store g1.output+0/128] +128"});
}

TEST(Streams, ControlOperationsOnWavefrontZeroOrAll) {
  GpuOp rel, acq, nop, bar, fl;
  rel.kind = GpuOpKind::SemRelease;
  acq.kind = GpuOpKind::SemAcquire;
  nop.kind = GpuOpKind::Nop;
  bar.kind = GpuOpKind::Barrier;
  bar.id = 3;
  bar.count = 1;
  fl.kind = GpuOpKind::Flush;
  fl.id = 1;
  KernelLevel k = level({rel, acq, nop, bar, fl}, 2);
  EXPECT_EQ(segments(k, {128, 1}, 0),
            (Lines{"1 x [Waitcnt 0,0; SemaphoreRelease 0] +0", "1 x [SemaphoreAcquire 0] +0",
                   "1 x [Waitcnt 0,0; Nop 0] +0", "1 x [Waitcnt 0,0; Barrier 3] +0",
                   "1 x [Waitcnt 0,0] +0"}));
  EXPECT_EQ(segments(k, {128, 1}, 1),
            (Lines{"1 x [Waitcnt 0,0; Nop 0] +0", "1 x [Waitcnt 0,0; Barrier 3] +0",
                   "1 x [Waitcnt 0,0] +0"}));
}

TEST(Streams, ReleasesInARowShareTheFirstOnesFence) {
  GpuOp rel, acq, copy = memcpyOp(128, ref(0, BufferKind::Input, 0), ref(1, BufferKind::Output, 0));
  rel.kind = GpuOpKind::SemRelease;
  acq.kind = GpuOpKind::SemAcquire;
  KernelLevel k = level({copy, rel, rel, rel, acq, rel, copy, rel}, 1);
  EXPECT_EQ(segments(k, {128, 1}, 0),
            (Lines{"1 x [Load g0.input+0/128; Waitcnt 0,-1; Store g1.output+0/128] +0",
                   "1 x [Waitcnt 0,0; SemaphoreRelease 0] +0", "1 x [SemaphoreRelease 0] +0",
                   "1 x [SemaphoreRelease 0] +0", "1 x [SemaphoreAcquire 0] +0",
                   "1 x [Waitcnt 0,0; SemaphoreRelease 0] +0",
                   "1 x [Load g0.input+0/128; Waitcnt 0,-1; Store g1.output+0/128] +0",
                   "1 x [Waitcnt 0,0; SemaphoreRelease 0] +0"}));
}

TEST(Streams, LoopsRunTheirBodyOnSlices) {
  GpuOp loop;
  loop.kind = GpuOpKind::Loop;
  loop.id = 1;
  loop.count = 3;
  loop.bytes = 16;
  // 40 bytes in slices of 16: 16, 16, 8; the scratch destination wraps every 32 bytes.
  KernelLevel k = level({loop, memcpyOp(40, ref(0, BufferKind::Input, 0),
                                        ref(0, BufferKind::Scratch, 64))}, 1, 32);
  EXPECT_EQ(segments(k, {128, 1}, 0),
            (Lines{"1 x [Load g0.input+0/16; Waitcnt 0,-1; Store g0.scratch+64/16] +0",
                   "1 x [Load g0.input+16/16; Waitcnt 0,-1; Store g0.scratch+80/16] +0",
                   "1 x [Load g0.input+32/8; Waitcnt 0,-1; Store g0.scratch+64/8] +0"}));
}

TEST(Streams, IteratorAndCountsAgreeWithTheLoops) {
  KernelLevel k = level({memcpyOp(4000, ref(0, BufferKind::Input, 0), ref(1, BufferKind::Output, 0))}, 3);
  LoadStoreParams p{128, 4};
  uint64_t total = 0;
  for (uint32_t wf = 0; wf < 3; ++wf) {
    InstructionIterator it(WavefrontStream(k, p, 0, 0, wf));
    Instruction x;
    std::vector<Instruction> flat;
    while (it.next(x))
      flat.push_back(x);
    std::vector<Instruction> expanded;
    WavefrontStream s(k, p, 0, 0, wf);
    Segment seg;
    while (s.next(seg))
      for (uint64_t i = 0; i < seg.iterations; ++i)
        for (size_t j = 0; j < seg.body.size(); ++j)
          expanded.push_back(seg.at(i, j));
    EXPECT_TRUE(flat == expanded) << wf;
    InstructionCounts c = countInstructions(WavefrontStream(k, p, 0, 0, wf));
    EXPECT_EQ(c.total(), flat.size());
    total += c.byKind[unsigned(InstrKind::Load)];
  }
  EXPECT_EQ(total, 32u);   // ceil(4000 / 128) lines, each loaded once
}

} // namespace
} // namespace infracc::test
