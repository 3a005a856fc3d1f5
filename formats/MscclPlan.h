// MSCCL++ execution plans (JSON), as MSCCL++'s executor reads them
// (src/core/executor/execution_plan.cc, microsoft/mscclpp at 1f5f065): the operation
// names, channel types and buffer letters that the reader (compiler/frontends/msccl)
// and the writer (backends/msccl) share.
//
//   { "name", "collective", "protocol": "Simple"|"LL", "inplace", "reuse_resources",
//     "num_threads_per_block", "use_double_scratch_buffer", "buffer_alignment",
//     "min_message_size", "max_message_size",
//     "gpus": [ { "id", "input_chunks", "output_chunks", "scratch_chunks",
//                 "channels": [ {"channel_type": "memory"|"port", "connected_to": [rank]}
//                             | {"channel_type": "switch", "buffer_type": "i"|"o"|"s",
//                                "rank_groups": [{"size", "ranks": [rank]}]} ],
//                 "remote_buffers": [ {"rank", "type", "access_channel_types": [...]} ],
//                 "semaphores": [ {"init_value"} ],
//                 "threadblocks": [ { "id", "ops": [op],
//                                     "channels": [{"channel_type", "channel_ids"}],
//                                     "remote_buffer_refs": [{"access_channel_type",
//                                                             "remote_buffer_ids"}] } ] } ] }
//   op: { "name", "channel_type", "channel_ids", "src_buff", "dst_buff", "reduce_op",
//         "tbg_info": {"tb_id", "tbg_size"}, "barrier_id", "num_threadblocks",
//         "semaphore_ids", "iter_context": {"unit_size", "num_chunks"}, "ops" }
//   buff: {"type", "index", "size"} (local) | {"buffer_id", "index", "size"} (remote,
//         through the threadblock's remote_buffer_refs) | {"switch_channel_id", "index",
//         "size"} (NVLS multicast); index and size count chunks.
#pragma once

#include "ir/Kernels.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace infracc::msccl {

/// MSCCL++'s OperationType, in the order of its getOpType().
enum class Op : uint8_t {
  Nop, Barrier, Put, PutWithSignal, PutWithSignalAndFlush, Get, Copy, Signal, Wait, Flush,
  Reduce, ReduceSend, ReadReduce, ReadReduceSend, PutPackets, ReadPutPackets,
  ReduceSendPackets, CopyPackets, UnpackPackets, ReducePackets, ReduceCopyPackets,
  ReduceCopySendPackets, MultiLoadReduceStore, MultiStore, MultiStorePackets, RelaxedSignal,
  RelaxedWait, Pipeline, SemAcquire, SemRelease,
};

struct OpInfo {
  Op op;
  const char *name;      // as in the JSON
  const char *meaning;   // for docs and messages
};
/// Every operation MSCCL++'s executor accepts.
llvm::ArrayRef<OpInfo> allOps();
llvm::StringRef opName(Op op);
std::optional<Op> parseOp(llvm::StringRef name);
/// "nop, barrier, put, ..." for messages.
std::string supportedOpList();
/// Operations on LL packets (protocol "LL").
bool isPacketOp(Op op);

enum class ChannelType : uint8_t { None, Memory, Port, Switch };
llvm::StringRef channelTypeName(ChannelType t);   // "none", "memory", "port", "switch"
std::optional<ChannelType> parseChannelType(llvm::StringRef name);

/// Buffer types: "i", "o", "s".
llvm::StringRef bufferLetter(BufferKind b);
std::optional<BufferKind> parseBufferLetter(llvm::StringRef s);

/// LL packets: LL16Packet, the executor's default, carries 8 bytes of data and 8 of
/// flags; a packet buffer offset is twice the data offset.
inline constexpr unsigned PacketBytes = 16, PacketPayload = 8;
/// Executor defaults.
inline constexpr uint64_t DefaultBufferAlignment = 16;
inline constexpr uint64_t DefaultThreadsPerBlock = 1024;
/// reuse_resources: the scratch buffer every such plan shares (PREDFINED_SCRATCH_SIZE).
inline constexpr uint64_t PredefinedScratchBytes = 1 << 26;

} // namespace infracc::msccl
