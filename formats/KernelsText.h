// The kernel level as text (-emit=kernels writes it, .kernels files are read back):
// the words the writer (backends/kernels) and the reader (compiler/frontends/kernels)
// share. One statement per line, `#` starts a comment, indentation is for reading:
//
//   gpus 2
//   name "ring"                     collective "allgather"     inplace
//   loadstore cache-line 128 unroll 1
//   multicast mc0 instance 0 input gpus 0 1
//   semaphore s0 gpu 1 instance 0 channel from 0 index 0 init 0
//   semaphore s1 gpu 0 instance 0 device index 0 init 1
//   kernel 0 gpu 0 instance 0 wavefronts 4 input 1024 output 2048 scratch 0 [wrap 512]
//     workgroup 0
//       memcpy 1024 input+0 -> gpu1.output+0 proxy
//       sem_release s0
//       loop 4 unit 256 ops 1
//         load 256 mc0.input+0 fused
//       reduce 256 inputs 2 fused
//       store 256 gpu1.scratch+512:ll
//
// A buffer reference is [gpu<N>. | mc<N>.]<buffer>+<offset>[:ll]: another GPU's buffer,
// a multicast group's, or (no prefix) the kernel's own GPU's; `:ll` marks LL packets.
// Op flags, in this order: fused, proxy, relaxed.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace infracc::kerneltext::kw {

inline constexpr llvm::StringLiteral Gpus = "gpus", Name = "name", Collective = "collective",
                                     InPlace = "inplace", LoadStore = "loadstore",
                                     CacheLine = "cache-line", Unroll = "unroll",
                                     Multicast = "multicast", Semaphore = "semaphore",
                                     Kernel = "kernel", Workgroup = "workgroup",
                                     Instance = "instance", Wavefronts = "wavefronts",
                                     Gpu = "gpu", From = "from", Index = "index", Init = "init",
                                     Inputs = "inputs", Arrow = "->", UnitWord = "unit",
                                     Ops = "ops", WorkgroupsWord = "workgroups", Wrap = "wrap";
inline constexpr llvm::StringLiteral Fused = "fused", Proxy = "proxy", Relaxed = "relaxed";
inline constexpr llvm::StringLiteral GpuPrefix = "gpu", GroupPrefix = "mc", SemPrefix = "s",
                                     PacketSuffix = ":ll";

} // namespace infracc::kerneltext::kw
