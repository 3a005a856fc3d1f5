#include "backends/gpu/GpuMachine.h"

#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <deque>
#include <functional>
#include <tuple>

namespace infracc::gpu {

llvm::Expected<std::unique_ptr<GpuMachine>> GpuMachine::build(const FabricGraph &g,
                                                              const std::string &source) {
  std::unique_ptr<GpuMachine> m(new GpuMachine(g));
  const Infrastructure &defs = g.definitions();
  m->gpuOfNode_.assign(g.numNodes(), ~0u);
  std::vector<uint8_t> isPort(g.numNodes(), 0);

  // A device copy is a GPU when it holds compute units (xpu), memory channels and
  // ports itself; otherwise the devices composed into it are looked at.
  std::function<void(uint32_t, NodeId)> scan = [&](uint32_t device, NodeId first) {
    const FabricGraph::DeviceLayout &lay = g.layout(device);
    const DeviceDef &def = defs.devices[device];
    NocGpu gpu;
    gpu.firstNode = first;
    gpu.numNodes = lay.numNodes;
    gpu.kind = device;   // the definition for now; numbered as kinds below
    for (const FabricGraph::Group &grp : lay.groups) {
      if (grp.childDevice >= 0)
        continue;
      ComponentKind k = def.components[grp.component].kind;
      std::vector<NodeId> *into = k == ComponentKind::Xpu      ? &gpu.cus
                                  : k == ComponentKind::Memory ? &gpu.memories
                                  : k == ComponentKind::Port   ? &gpu.ports
                                                               : nullptr;
      for (uint32_t i = 0; into && i < grp.count; ++i)
        into->push_back(first + grp.offset + i);
    }
    if (!gpu.cus.empty() && !gpu.memories.empty() && !gpu.ports.empty()) {
      uint32_t index = static_cast<uint32_t>(m->gpus_.size());
      for (NodeId n = first; n < first + lay.numNodes; ++n)
        m->gpuOfNode_[n] = index;
      for (NodeId n : gpu.ports)
        isPort[n] = 1;
      m->gpus_.push_back(std::move(gpu));
      return;
    }
    for (const FabricGraph::Group &grp : lay.groups)
      if (grp.childDevice >= 0)
        for (uint32_t i = 0; i < grp.count; ++i)
          scan(static_cast<uint32_t>(grp.childDevice), first + grp.offset + i * grp.nodesPerCopy);
  };
  for (const FabricGraph::InstanceInfo &inst : g.instances())
    for (uint64_t c = 0; c < inst.count; ++c)
      scan(inst.device, static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy));
  if (m->gpus_.empty())
    return inputError(fmt::format(
        "-sim-model=gpu: the fabric '{}' has no GPU modelled at network-on-chip level (a device "
        "with compute units (xpu), memory channels (memory) and I/O ports (port), e.g. "
        "host=gpu_noc); without a fabric the model uses the paper's generic GPUs",
        source));
  m->isPort_ = std::move(isPort);

  // GPU kinds and each GPU's links to its own nodes, ordered by (node, neighbour).
  llvm::DenseMap<uint32_t, uint32_t> kindOf;
  for (NocGpu &G : m->gpus_) {
    auto [it, fresh] = kindOf.try_emplace(G.kind, static_cast<uint32_t>(kindOf.size()));
    G.kind = it->second;
    G.adjBase = static_cast<uint32_t>(m->localLinks_.size());
    std::vector<uint32_t> start{0};
    for (NodeId n = G.firstNode; n < G.firstNode + G.numNodes; ++n) {
      std::vector<std::pair<NodeId, uint32_t>> own;
      for (const FabricGraph::Adjacent &a : g.neighbours(n))
        if (a.node >= G.firstNode && a.node < G.firstNode + G.numNodes)
          own.push_back({a.node, g.directedLink(a.edge, n)});
      std::sort(own.begin(), own.end());
      if (own.size() >= NoSlot)
        return inputError(fmt::format("-sim-model=gpu: '{}' has {} links inside its GPU; at "
                                      "most {} are supported",
                                      g.name(n), own.size(), NoSlot - 1));
      for (auto &[node, link] : own)
        m->localLinks_.push_back(link);
      start.push_back(static_cast<uint32_t>(m->localLinks_.size()) - G.adjBase);
    }
    if (fresh) {
      m->adjStart_.push_back(std::move(start));
      m->inside_.emplace_back(G.numNodes);
    }
  }

  m->links_.resize(2 * size_t(g.numEdges()));
  for (EdgeId e = 0; e < g.numEdges(); ++e) {
    const FabricGraph::EdgeRec &er = g.edge(e);
    const FabricGraph::LinkInfo &li = g.link(er.link);
    DirectedLink d;
    if (li.bandwidth && li.bandwidth->bitsPerSecond > 0)
      d.bitsPerSecond = std::max<uint64_t>(1, std::llround(li.bandwidth->bitsPerSecond));
    else
      d.bare = g.instances()[g.instanceOf(er.u)].role != InstanceRole::Switch ||
               g.deviceCopyOf(er.u) != g.deviceCopyOf(er.v);
    if (li.latency)
      d.latencyPs = static_cast<uint64_t>(std::llround(li.latency->inPicoseconds()));
    m->links_[2 * e] = m->links_[2 * e + 1] = d;
  }
  return m;
}

void GpuMachine::fillInside(const NocGpu &G, uint32_t target, std::vector<uint8_t> &row) {
  // Breadth-first from the target over the GPU's own links, in slot order.
  const std::vector<uint32_t> &start = adjStart_[G.kind];
  std::vector<bool> seen(G.numNodes, false);
  row.assign(G.numNodes, NoSlot);
  std::deque<uint32_t> queue{target};
  seen[target] = true;
  while (!queue.empty()) {
    uint32_t x = queue.front();
    queue.pop_front();
    for (uint32_t slot = 0; slot < start[x + 1] - start[x]; ++slot) {
      uint32_t y = g_.directedTo(localLinks_[G.adjBase + start[x] + slot]) - G.firstNode;
      if (seen[y])
        continue;
      seen[y] = true;
      queue.push_back(y);
      // y's slot toward x: the link of y that ends at x.
      for (uint32_t back = 0; back < start[y + 1] - start[y]; ++back) {
        if (g_.directedTo(localLinks_[G.adjBase + start[y] + back]) == x + G.firstNode) {
          row[y] = static_cast<uint8_t>(back);
          break;
        }
      }
    }
  }
}

const GpuMachine::Toward &GpuMachine::toward(NodeId port) {
  auto it = outside_.find(port);
  if (it != outside_.end())
    return *it->second;
  auto t = std::make_unique<Toward>();
  std::deque<NodeId> queue{port};
  (*t)[port] = {~0u, 0};
  while (!queue.empty()) {
    NodeId x = queue.front();
    queue.pop_front();
    uint32_t h = (*t)[x].hops;
    for (const FabricGraph::Adjacent &a : g_.neighbours(x)) {
      bool inGpu = gpuOfNode_[a.node] != ~0u;
      // Inside GPUs only ports are reached (and not left): routes never cross a GPU.
      if ((inGpu && !isPort_[a.node]) || t->count(a.node))
        continue;
      (*t)[a.node] = {g_.directedLink(a.edge, a.node), h + 1};
      if (!inGpu)
        queue.push_back(a.node);
    }
  }
  return *outside_.try_emplace(port, std::move(t)).first->second;
}

uint32_t GpuMachine::nextOutside(NodeId at, NodeId target) {
  const Toward &t = toward(target);
  auto it = t.find(at);
  return it == t.end() ? ~0u : it->second.link;
}

bool GpuMachine::ports(uint32_t from, uint32_t to, uint64_t line, NodeId &out, NodeId &in) {
  uint64_t key = (uint64_t(from) << 32) | to;
  auto it = pairs_.find(key);
  if (it == pairs_.end()) {
    std::vector<std::pair<NodeId, NodeId>> best;
    uint32_t fewest = ~0u;
    for (NodeId q : gpus_[to].ports) {
      const Toward &t = toward(q);
      for (NodeId p : gpus_[from].ports) {
        auto h = t.find(p);
        if (h == t.end() || h->second.hops > fewest)
          continue;
        if (h->second.hops < fewest)
          best.clear();
        fewest = h->second.hops;
        best.push_back({p, q});
      }
    }
    it = pairs_.try_emplace(key, std::move(best)).first;
  }
  if (it->second.empty())
    return false;
  std::tie(out, in) = it->second[line % it->second.size()];
  return true;
}

} // namespace infracc::gpu
