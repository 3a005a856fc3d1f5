// The NCCL calls of one traced run, as the NVTX-annotated NCCL 2.20 that ATLAHS uses
// (goal_gen/ai/nccl_nvtx_v2.20.5) reports them: per GPU process, its communicators
// (rank, size, the ring and tree of every channel) and its kernel launches, each with
// the collectives (algorithm, protocol, chunking, one work element per channel) and
// point-to-point transfers it runs, timed by the CUDA kernel table.
#pragma once

#include "compiler/frontends/nccl/NsysExport.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace infracc::nccl {

/// ncclFunc_t of NCCL 2.20, as `collType` prints it.
enum class NcclFunc : uint8_t { Broadcast = 0, Reduce, AllGather, ReduceScatter, AllReduce };
/// NCCL_ALGO_* and NCCL_PROTO_* of NCCL 2.20.
enum class NcclAlgo : uint8_t { Tree = 0, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree };
enum class NcclProto : uint8_t { LL = 0, LL128, Simple };
llvm::StringRef ncclFuncName(NcclFunc f);
llvm::StringRef ncclAlgoName(uint32_t a);
llvm::StringRef ncclProtoName(uint32_t p);

struct WorkElem {   // one channel's share of a collective, in elements
  uint64_t workCount = 0, chunkCount = 0;
};

struct CollCall {
  NcclFunc func = NcclFunc::AllReduce;
  uint64_t commHash = 0;
  uint64_t dataSize = 0, typeSize = 0;
  uint32_t root = 0;
  bool described = false;   // the `collType ...` line was seen
  uint32_t algo = 0, proto = 0;
  uint64_t chunkSteps = 0, sliceSteps = 0, stepSize = 0;   // stepSize in bytes
  std::vector<WorkElem> elems;   // element k runs on channel k
  uint64_t row = 0;              // NVTX row of the API call, for messages
};

struct P2PCall {
  bool send = true;
  uint64_t commHash = 0;
  uint64_t dataSize = 0;
  uint32_t peer = 0;   // rank in the communicator
};

struct P2PElem {   // one piece of a send or recv, as the kernel runs it
  bool send = true;
  uint64_t commHash = 0;
  uint32_t peer = 0;
  uint32_t proto = 0;
  uint64_t bytes = 0;
  uint64_t row = 0;
};

struct Launch {
  std::string stream;           // as NCCL printed the cudaStream_t
  std::vector<CollCall> colls;
  std::vector<P2PCall> p2pCalls;
  std::vector<P2PElem> p2p;
  int64_t kernelStart = 0, kernelEnd = 0;   // from the kernel table
};

struct CommMember {
  uint64_t commId = 0;
  uint32_t rank = 0, nranks = 0;
  std::map<uint32_t, std::pair<int32_t, int32_t>> ring;   // channel -> (prev, next)
  std::map<uint32_t, std::array<int32_t, 4>> tree;         // channel -> down0..2, up
};

struct GpuProcess {
  std::string file, host;
  uint32_t pid = 0;
  uint32_t device = 0;          // CUDA device of its kernels
  int64_t profileStart = -1;    // "nsys profiling start" mark, if any
  std::map<uint64_t, CommMember> comms;   // by commHash
  std::vector<Launch> launches;
};

/// Reads the NCCL calls of one export, appending one GpuProcess per process that
/// initialised a communicator. Errors name the NVTX row or the kernel.
llvm::Error parseNcclCalls(const NsysExport &x, std::vector<GpuProcess> &out);

} // namespace infracc::nccl
