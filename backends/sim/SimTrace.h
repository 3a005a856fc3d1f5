// What the simulator records for a timeline when asked (SimOptions::trace): every
// interval during which a resource was busy, and every message from the start of
// its send to the completion of its receive. Nothing is recorded when no trace is
// requested, so the plain simulation pays nothing for it.
#pragma once

#include <cstdint>
#include <vector>

namespace infracc::sim {

enum class Resource : uint8_t {
  Cpu,       // a compute stream (`cpu N`): its o clock
  NicSend,   // a NIC's send gap clock (g, G on the sending side)
  NicRecv,   // a NIC's receive gap clock (g, G on the receiving side)
};

enum class IntervalKind : uint8_t {
  Compute,        // calc
  SendOverhead,   // o + (s-1)O of a send on its CPU
  SendGap,        // g + (s-1)G of a send on its NIC
  RecvOverhead,   // receive overhead of a message on the receiver's CPU
  RecvGap,        // receive gap of a message on the receiver's NIC
};

struct TraceInterval {
  uint64_t start = 0, end = 0;   // ns; end may be < start only for LogGOPSim's 0-byte wrap
  uint32_t rank = 0;
  uint32_t op = 0;               // global op index (for messages: the send op)
  uint32_t unit = 0;             // cpu or nic index
  Resource resource = Resource::Cpu;
  IntervalKind kind = IntervalKind::Compute;
};

struct TraceMessage {
  uint32_t sendOp = 0;           // global op index of the send
  uint32_t recvOp = ~0u;         // global op index of the matching recv (~0u: none)
  uint32_t src = 0, dst = 0;     // ranks
  uint64_t bytes = 0;
  uint64_t sendStart = 0;        // the send acquired its CPU and NIC
  uint64_t arrival = 0;          // first byte at the receiver (LogGOPSim: start + o + L)
  uint64_t received = 0;         // the receiver started processing it (o, g charged)
  uint64_t completed = 0;        // the matching recv completed (its dependents may start)
  bool rendezvous = false;
};

struct SimTrace {
  std::vector<TraceInterval> intervals;   // in simulation order
  std::vector<TraceMessage> messages;     // in send order
};

} // namespace infracc::sim
