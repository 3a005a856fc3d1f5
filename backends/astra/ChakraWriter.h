// Writes a schedule as Chakra execution traces for ASTRA-sim: one `<prefix>.<npu>.et`
// per NPU (GlobalMetadata, then one Node per op), and the communicators as the
// `--comm-group-configuration` JSON (docs/astra-sim.md, "Chakra traces").
//
//  * calc -> COMP_NODE, duration_micros (whole microseconds: ASTRA-sim reads the field
//    as us and multiplies by 1000; calcs that are not whole microseconds are rounded and
//    counted in ChakraStats), is_cpu_op false;
//  * send / recv -> COMM_SEND_NODE / COMM_RECV_NODE with comm_src, comm_dst (NPUs),
//    comm_size (bytes), comm_tag;
//  * a collective not lowered -> COMM_COLL_NODE with comm_type and comm_size in
//    ASTRA-sim's meaning (allreduce: the buffer; allgather: the block each rank brings;
//    reducescatter: the whole buffer, block x ranks; alltoall: what a rank sends in all,
//    block x ranks), pg_name = the communicator's id unless it holds every rank;
//  * `requires` -> data_deps (the feeder resolves only data_deps); `irequires` (start
//    after the predecessor starts) -> the predecessor's own requires, since that is
//    when it can start.
#pragma once

#include "ir/Schedule.h"
#include "support/Output.h"

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::astra {

struct ChakraStats {
  uint64_t roundedCalcs = 0;
  int64_t largestRoundingNs = 0;   // signed: written minus given
  uint64_t communicators = 0;      // groups in the comm-group JSON
};

/// `npuOfRank[r]`: the NPU (file index) of rank r; `numNpus` files are written, the
/// NPUs without a rank get a trace with no nodes. `dir` is the subfolder of the output
/// directory ("" for its top). Unsupported ops (wildcard receives, collectives
/// ASTRA-sim does not have, kernels) are reported and give an error.
llvm::Expected<ChakraStats> writeChakra(const Schedule &s, const std::vector<uint32_t> &npuOfRank,
                                        uint32_t numNpus, OutputManager &out,
                                        const std::string &prefix, DiagEngine &diags,
                                        llvm::StringRef where);

/// The file name of NPU n's trace: `<prefix>.<n>.et`.
std::string chakraFileName(const std::string &prefix, uint32_t npu);

} // namespace infracc::astra
