#include "backends/astra/ChakraWriter.h"

#include "formats/ChakraEt.h"
#include "support/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>

namespace infracc::astra {

std::string chakraFileName(const std::string &prefix, uint32_t npu) {
  return fmt::format("{}.{}.et", prefix, npu);
}

namespace {

std::optional<chakra::CollectiveCommType> commTypeOf(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::Allreduce: return chakra::ALL_REDUCE;
  case CollectiveKind::Allgather: return chakra::ALL_GATHER;
  case CollectiveKind::Reducescatter: return chakra::REDUCE_SCATTER;
  case CollectiveKind::Alltoall: return chakra::ALL_TO_ALL;
  default: return std::nullopt;   // ASTRA-sim's system layer has no generator for it
  }
}

// Per op of one rank: the ops it must wait to finish (requires; irequires resolved to
// the predecessor's own requires, recursively).
class Deps {
public:
  Deps(const Schedule &s, uint32_t rank) {
    const uint32_t base = s.rankBegin(rank);
    const uint32_t n = s.numOps(rank);
    req_.resize(n);
    ireq_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t g = base + i;
      for (uint32_t k = 0; k < s.numSuccessors(g); ++k) {
        uint32_t succ = s.successor(g, k);
        (s.successorKind(g, k) == DepKind::Requires ? req_ : ireq_)[succ].push_back(i);
      }
    }
    resolved_.assign(n, 0);
    finish_.resize(n);
  }
  const std::vector<uint32_t> &of(uint32_t i) {
    // Iterative: chains of irequires can be long.
    std::vector<uint32_t> stack{i};
    while (!stack.empty()) {
      uint32_t x = stack.back();
      if (resolved_[x] == 2) {
        stack.pop_back();
        continue;
      }
      if (resolved_[x] == 0) {
        resolved_[x] = 1;
        for (uint32_t p : ireq_[x])
          if (resolved_[p] == 0)
            stack.push_back(p);
        continue;
      }
      std::vector<uint32_t> &f = finish_[x];
      f = req_[x];
      for (uint32_t p : ireq_[x])
        f.insert(f.end(), finish_[p].begin(), finish_[p].end());
      std::sort(f.begin(), f.end());
      f.erase(std::unique(f.begin(), f.end()), f.end());
      resolved_[x] = 2;
      stack.pop_back();
    }
    return finish_[i];
  }

private:
  std::vector<std::vector<uint32_t>> req_, ireq_, finish_;
  std::vector<uint8_t> resolved_;
};

} // namespace

llvm::Expected<ChakraStats> writeChakra(const Schedule &s, const std::vector<uint32_t> &npuOfRank,
                                        uint32_t numNpus, OutputManager &out,
                                        const std::string &prefix, DiagEngine &diags,
                                        llvm::StringRef where) {
  ChakraStats st;
  const uint32_t P = s.numRanks();
  // Communicators other than the whole world become process groups.
  std::vector<std::string> pgName(s.communicators().size());
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (size_t c = 0; c < s.communicators().size(); ++c) {
    const Communicator &comm = s.communicators()[c];
    if (comm.ranks.size() == P) {
      bool world = true;
      for (uint32_t i = 0; i < P && world; ++i)
        world = comm.ranks[i] == i;
      if (world)
        continue;
    }
    pgName[c] = std::to_string(comm.id);
    nlohmann::json members = nlohmann::json::array();
    for (uint32_t r : comm.ranks)
      members.push_back(npuOfRank[r]);
    groups[pgName[c]] = members;
  }
  std::vector<int32_t> rankOfNpu(numNpus, -1);
  for (uint32_t r = 0; r < P; ++r)
    rankOfNpu[npuOfRank[r]] = int32_t(r);

  for (uint32_t npu = 0; npu < numNpus; ++npu) {
    auto os = out.file(chakraFileName(prefix, npu));
    if (!os)
      return os.takeError();
    chakra::GlobalMetadata meta;
    meta.set_version(chakra::Version);
    chakra::writeDelimited(*os, meta);
    // ASTRA-sim's feeder aborts on a trace without nodes ("No dependancy free nodes
    // found"): an NPU with nothing to do gets one empty compute node (it runs 1 ns).
    if (rankOfNpu[npu] < 0 || s.numOps(uint32_t(rankOfNpu[npu])) == 0) {
      chakra::Node idle;
      idle.set_id(0);
      idle.set_name(chakra::IdleNodeName);
      idle.set_type(chakra::COMP_NODE);
      chakra::addBool(idle, chakra::attr::IsCpuOp, false);
      chakra::writeDelimited(*os, idle);
      continue;
    }
    const uint32_t r = uint32_t(rankOfNpu[npu]);
    Deps deps(s, r);
    chakra::Node node;
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      const uint32_t g = s.globalIndex(r, i);
      node.Clear();
      node.set_id(i);
      for (uint32_t p : deps.of(i))
        node.add_data_deps(p);
      const OpKind kind = s.kind(g);
      switch (kind) {
      case OpKind::Calc: {
        const uint64_t ns = s.size(g);
        const uint64_t us = (ns + 500) / 1000;
        if (us * 1000 != ns) {
          ++st.roundedCalcs;
          int64_t diff = int64_t(us * 1000) - int64_t(ns);
          if (std::llabs(diff) > std::llabs(st.largestRoundingNs))
            st.largestRoundingNs = diff;
        }
        node.set_name(fmt::format("calc {}", i));
        node.set_type(chakra::COMP_NODE);
        node.set_duration_micros(us);
        chakra::addBool(node, chakra::attr::IsCpuOp, false);
        break;
      }
      case OpKind::Send:
      case OpKind::Recv: {
        const bool send = kind == OpKind::Send;
        if (s.peer(g) == AnySource || s.tag(g) == AnyTag || s.peer(g) >= P) {
          diags.error(where, fmt::format("rank {} op {}: a receive from any source or with any "
                                         "tag: Chakra's RECV names its source and tag",
                                         r, i));
          return reportedError();
        }
        if (s.size(g) > uint64_t(INT64_MAX)) {
          diags.error(where, fmt::format("rank {} op {}: size {} does not fit Chakra's "
                                         "comm_size (int64)",
                                         r, i, s.size(g)));
          return reportedError();
        }
        const uint32_t me = npu, other = npuOfRank[s.peer(g)];
        node.set_name(fmt::format("{} {} {}", send ? "send to" : "recv from", other, i));
        node.set_type(send ? chakra::COMM_SEND_NODE : chakra::COMM_RECV_NODE);
        chakra::addBool(node, chakra::attr::IsCpuOp, false);
        chakra::addInt32(node, chakra::attr::CommSrc, int32_t(send ? me : other));
        chakra::addInt32(node, chakra::attr::CommDst, int32_t(send ? other : me));
        chakra::addInt64(node, chakra::attr::CommSize, int64_t(s.size(g)));
        // int32 as ASTRA-sim's own generators write it; tags beyond (lowered
        // collectives use 2^31 and up) as uint32, which its feeder converts alike.
        if (s.tag(g) <= uint32_t(INT32_MAX))
          chakra::addInt32(node, chakra::attr::CommTag, int32_t(s.tag(g)));
        else
          chakra::addUint32(node, chakra::attr::CommTag, s.tag(g));
        break;
      }
      case OpKind::Collective: {
        const CollectiveInfo &c = s.collectives()[s.peer(g)];
        auto type = commTypeOf(c.kind);
        if (!type) {
          diags.error(where, fmt::format("rank {} op {}: ASTRA-sim has no {} collective; lower "
                                         "it to sends and receives with "
                                         "-passes=lower-collectives",
                                         r, i, collectiveKindName(c.kind).str()));
          return reportedError();
        }
        const uint64_t members = s.communicators()[c.communicator].ranks.size();
        // ASTRA-sim's sizes (measured with its ring all-gather, which sends comm_size
        // at every step): all-gather the block each rank brings, the others the buffer.
        uint64_t bytes = c.bytes;
        if (c.kind == CollectiveKind::Reducescatter || c.kind == CollectiveKind::Alltoall)
          bytes *= members;
        node.set_name(fmt::format("{} {}", collectiveKindName(c.kind).str(), i));
        node.set_type(chakra::COMM_COLL_NODE);
        chakra::addBool(node, chakra::attr::IsCpuOp, false);
        chakra::addInt64(node, chakra::attr::CommType, int64_t(*type));
        chakra::addInt64(node, chakra::attr::CommSize, int64_t(bytes));
        if (!pgName[c.communicator].empty())
          chakra::addString(node, chakra::attr::PgName, pgName[c.communicator]);
        break;
      }
      default:
        diags.error(where, fmt::format("rank {} op {}: a {} op; lower it first "
                                       "(-passes={})",
                                       r, i, opKindName(kind).str(),
                                       loweringPassFor(kind).str()));
        return reportedError();
      }
      chakra::writeDelimited(*os, node);
    }
  }
  if (!groups.empty()) {
    auto os = out.file(prefix + ".comm_groups.json");
    if (!os)
      return os.takeError();
    *os << groups.dump(2) << "\n";
    st.communicators = groups.size();
  }
  return st;
}

} // namespace infracc::astra
