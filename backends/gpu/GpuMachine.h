// The machine -sim-model=gpu runs on, read from the fully qualified graph: the GPUs
// modelled at network-on-chip level (device copies holding compute units, memory
// channels and I/O ports, like the gpu_noc blueprint), every link in both directions,
// and the routes requests take (docs/gpu-model.md, "Routes").
//
// Routes are shortest by hop count and fixed per (node, destination):
//   inside a GPU     toward a node of the same GPU, the first shortest path a
//                    breadth-first search from the destination finds (neighbours in
//                    node-id order); one table per device definition;
//   between GPUs     CU -> one of the source GPU's I/O ports -> the scale-up fabric
//                    (any nodes outside GPUs) -> one of the destination GPU's ports ->
//                    its memory channel; the port pair is one of the pairs with the
//                    fewest scale-up hops, chosen by the cache line's number so that
//                    consecutive lines spread over the ports.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace infracc::gpu {

struct NocGpu {
  NodeId firstNode = 0, numNodes = 0;   // the device copy's nodes [first, first + num)
  uint32_t kind = 0;                     // GPUs of one device definition are one kind
  uint32_t adjBase = 0;                  // its links in GpuMachine's per-GPU link table
  std::vector<NodeId> cus, memories, ports;   // compute units, memory channels, I/O ports
};

/// A link in one direction (FabricGraph::directedLink's numbering).
struct DirectedLink {
  uint64_t bitsPerSecond = 0;   // 0: does not limit (inside a switch)
  uint64_t latencyPs = 0;
  bool bare = false;            // no bandwidth outside a switch: an error when used
};

class GpuMachine {
public:
  /// Finds the GPUs and checks the links requests can use; an error names the link
  /// without a bandwidth, or says what a NoC-level GPU is when there is none.
  static llvm::Expected<std::unique_ptr<GpuMachine>> build(const FabricGraph &g,
                                                           const std::string &source);

  const FabricGraph &graph() const { return g_; }
  const std::vector<NocGpu> &gpus() const { return gpus_; }
  const DirectedLink &link(uint32_t d) const { return links_[d]; }
  uint32_t numLinks() const { return static_cast<uint32_t>(links_.size()); }
  /// Which GPU a node belongs to (~0u: none).
  uint32_t gpuOf(NodeId n) const { return gpuOfNode_[n]; }

  /// The directed link from `at` toward `target`, both in GPU `gpu`; ~0u: none.
  uint32_t nextInside(uint32_t gpu, NodeId at, NodeId target) {
    const NocGpu &G = gpus_[gpu];
    const std::vector<uint8_t> &row = insideRow(G, target - G.firstNode);
    uint32_t local = at - G.firstNode;
    uint8_t slot = row[local];
    return slot == NoSlot ? ~0u : localLinks_[G.adjBase + adjStart_[G.kind][local] + slot];
  }
  /// The directed link from `at` (a port or a node outside GPUs) toward port `target`
  /// through the scale-up fabric.
  uint32_t nextOutside(NodeId at, NodeId target);
  /// The port pair a line travels over from GPU `from` to GPU `to`; false when the
  /// fabric does not join them.
  bool ports(uint32_t from, uint32_t to, uint64_t line, NodeId &out, NodeId &in);

private:
  explicit GpuMachine(const FabricGraph &g) : g_(g) {}

  const FabricGraph &g_;
  std::vector<NocGpu> gpus_;
  std::vector<uint32_t> gpuOfNode_;
  std::vector<uint8_t> isPort_;   // per node: 1 for a GPU's I/O port
  std::vector<DirectedLink> links_;
  // Inside a GPU, routes are kept per GPU kind as, per destination and node, the slot
  // of the next hop among the node's links to its own GPU (ordered by the neighbour's
  // local number, so the same for every GPU of the kind); each GPU has its own table of
  // those links.
  static constexpr uint8_t NoSlot = 0xFF;
  const std::vector<uint8_t> &insideRow(const NocGpu &G, uint32_t target) {
    std::vector<uint8_t> &row = inside_[G.kind][target];
    if (row.empty())
      fillInside(G, target, row);
    return row;
  }
  void fillInside(const NocGpu &G, uint32_t target, std::vector<uint8_t> &row);
  std::vector<std::vector<std::vector<uint8_t>>> inside_;   // [kind][target][node]
  std::vector<std::vector<uint32_t>> adjStart_;              // [kind][node]: first slot
  std::vector<uint32_t> localLinks_;                         // per GPU: its directed links
  // Per destination port, from each node outside GPUs (and each port) that reaches it:
  // the directed link to take and the hops left.
  struct Hop {
    uint32_t link, hops;
  };
  using Toward = llvm::DenseMap<NodeId, Hop>;
  llvm::DenseMap<NodeId, std::unique_ptr<Toward>> outside_;
  const Toward &toward(NodeId port);
  llvm::DenseMap<uint64_t, std::vector<std::pair<NodeId, NodeId>>> pairs_;
};

} // namespace infracc::gpu
