// Binary GOAL (.bin) as LogGOPSim's txt2bin writes it and LogGOPSim and htsim read
// it (spcl/LogGOPSim src/LogGOPSim/Parser.hpp, Graph::serialize_mmap). Everything is
// little-endian and packed:
//
//   u64 magic (4223) | u32 num_ranks | u8 max_cpu | u8 max_nic
//   u64 jump[2*num_ranks]   (start, end) per rank, relative to byte 8
//   per rank: u32 num_nodes | u32 num_roots | u32 roots[num_roots]
//             node[num_nodes] (39 bytes, below) | u32 appendix[]
//
// A node's successors sit in the rank's appendix: its requires-successors, then its
// irequires-successors, nodes in order, so succ_first is a running count.
// The reader (frontend) and the writer (backend) share this description. The node
// record is the IR's packed op record (ir/Schedule.h), so a mapped file is a Schedule.
#pragma once

#include "ir/Schedule.h"

#include <cstddef>
#include <cstdint>

namespace infracc::goal::bin {

inline constexpr uint64_t Magic = 4223;
/// Written over the magic by `LogGOPSim --save-mem`, which consumes the file.
inline constexpr uint64_t MagicInvalidated = 2342;

/// Jump-table offsets count from here (just after the magic).
inline constexpr size_t OffsetBase = 8;
inline constexpr size_t NumRanksAt = 8, MaxCpuAt = 12, MaxNicAt = 13, JumpTableAt = 14;
inline constexpr size_t JumpEntrySize = 16;
inline constexpr size_t RankHeaderSize = 8;   // num_nodes, num_roots

/// A node record and its fields' offsets: the IR's packed op record.
inline constexpr size_t NodeSize = packed::RecordSize;
namespace node = packed::field;

inline constexpr uint8_t TypeSend = 1, TypeRecv = 2, TypeCalc = 3;
/// The largest cpu or nic index a node record can hold.
inline constexpr uint32_t MaxIndex = packed::MaxIndex;

/// Where rank 0's data starts, relative to OffsetBase.
inline constexpr uint64_t firstRankStart(uint64_t numRanks) {
  return 4 + 1 + 1 + JumpEntrySize * numRanks;
}

} // namespace infracc::goal::bin
