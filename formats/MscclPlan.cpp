#include "formats/MscclPlan.h"

#include <llvm/ADT/StringSwitch.h>

namespace infracc::msccl {

static constexpr OpInfo Ops[] = {
    {Op::Nop, "nop", "the threadblock's threads meet"},
    {Op::Barrier, "barrier", "threadblocks of the GPU meet"},
    {Op::Put, "put", "write local chunks to peers"},
    {Op::PutWithSignal, "pws", "put, then signal the peer (port channels)"},
    {Op::PutWithSignalAndFlush, "pwsf", "put, signal, flush (port channels)"},
    {Op::Get, "get", "read peers' chunks into local ones"},
    {Op::Copy, "copy", "copy a local chunk"},
    {Op::Signal, "signal", "release the peer's semaphore of a channel"},
    {Op::Wait, "wait", "acquire the own semaphore of a channel"},
    {Op::Flush, "flush", "wait for a port channel's transfers"},
    {Op::Reduce, "re", "reduce local chunks into a local chunk"},
    {Op::ReduceSend, "res", "reduce local chunks, store locally and at peers"},
    {Op::ReadReduce, "rre", "reduce a local chunk with peers' chunks"},
    {Op::ReadReduceSend, "rres", "read-reduce, store locally and at peers"},
    {Op::PutPackets, "ppkt", "write local data to peers as LL packets"},
    {Op::ReadPutPackets, "rppkt", "forward received LL packets to peers"},
    {Op::ReduceSendPackets, "respkt", "reduce received LL packets, store, send as packets"},
    {Op::CopyPackets, "cpkt", "copy local data into LL packets"},
    {Op::UnpackPackets, "upkt", "copy LL packets' data out"},
    {Op::ReducePackets, "repkt", "reduce received LL packets into local data"},
    {Op::ReduceCopyPackets, "recpkt", "reduce received LL packets, keep a packet copy"},
    {Op::ReduceCopySendPackets, "recspkt", "reduce packets, keep a packet copy, send packets"},
    {Op::MultiLoadReduceStore, "glres", "NVLS: load-reduce from a switch group, store to it"},
    {Op::MultiStore, "gstore", "NVLS: store local data to every member of a switch group"},
    {Op::MultiStorePackets, "gstorepkt", "NVLS: store LL packets to a switch group"},
    {Op::RelaxedSignal, "rlxsignal", "signal without a memory fence"},
    {Op::RelaxedWait, "rlxwait", "wait without a memory fence"},
    {Op::Pipeline, "pipeline", "repeat the inner ops over unit_size slices"},
    {Op::SemAcquire, "sem_acquire", "acquire the GPU's own semaphores"},
    {Op::SemRelease, "sem_release", "release the GPU's own semaphores"},
};

llvm::ArrayRef<OpInfo> allOps() { return Ops; }

llvm::StringRef opName(Op op) { return Ops[unsigned(op)].name; }

std::optional<Op> parseOp(llvm::StringRef name) {
  for (const OpInfo &i : Ops)
    if (name == i.name)
      return i.op;
  return std::nullopt;
}

std::string supportedOpList() {
  std::string s;
  for (const OpInfo &i : Ops)
    s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

bool isPacketOp(Op op) {
  switch (op) {
  case Op::PutPackets:
  case Op::ReadPutPackets:
  case Op::ReduceSendPackets:
  case Op::CopyPackets:
  case Op::UnpackPackets:
  case Op::ReducePackets:
  case Op::ReduceCopyPackets:
  case Op::ReduceCopySendPackets:
  case Op::MultiStorePackets:
    return true;
  default:
    return false;
  }
}

llvm::StringRef channelTypeName(ChannelType t) {
  switch (t) {
  case ChannelType::None: return "none";
  case ChannelType::Memory: return "memory";
  case ChannelType::Port: return "port";
  case ChannelType::Switch: return "switch";
  }
  return "?";
}

std::optional<ChannelType> parseChannelType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ChannelType>>(name)
      .Case("none", ChannelType::None)
      .Case("memory", ChannelType::Memory)
      .Case("port", ChannelType::Port)
      .Case("switch", ChannelType::Switch)
      .Default(std::nullopt);
}

llvm::StringRef bufferLetter(BufferKind b) {
  switch (b) {
  case BufferKind::Input: return "i";
  case BufferKind::Output: return "o";
  case BufferKind::Scratch: return "s";
  }
  return "?";
}

std::optional<BufferKind> parseBufferLetter(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<BufferKind>>(s)
      .Case("i", BufferKind::Input)
      .Case("o", BufferKind::Output)
      .Case("s", BufferKind::Scratch)
      .Default(std::nullopt);
}

} // namespace infracc::msccl
