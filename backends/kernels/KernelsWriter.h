// The kernel level as text (formats/KernelsText.h): -emit=kernels, and the pieces
// -emit=loadstore reuses to name operations.
#pragma once

#include "ir/Kernels.h"

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace infracc::kerneltext {

/// `input+0`, `gpu1.output+256`, `mc0.input+0`, `gpu2.scratch+512:ll` (`self`: the
/// kernel's own GPU, written without a prefix).
std::string formatRef(const BufferRef &r, uint32_t self);
/// One op's statement, e.g. `memcpy 1024 input+0 -> gpu1.output+0 proxy`.
std::string formatOp(const GpuOp &op, uint32_t self);
/// The whole kernel level.
void printKernels(const KernelLevel &k, llvm::raw_ostream &os);

} // namespace infracc::kerneltext
