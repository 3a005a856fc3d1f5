// Chakra execution traces (.et) as a workload: one file per rank, `<prefix>.<n>.et`,
// given as any one of them, as a directory holding them, or as a single file (one
// rank). Each node becomes an op of its rank (docs/astra-sim.md, "Reading Chakra"):
//
//   COMP_NODE       calc of duration_micros x 1000 ns
//   COMM_SEND_NODE  send of comm_size bytes to comm_dst, tag comm_tag (default 0)
//   COMM_RECV_NODE  recv of comm_size bytes from comm_src, tag comm_tag
//   COMM_COLL_NODE  a collective: comm_type, comm_size in ASTRA-sim's meaning (the
//                   whole buffer; all-gather: the block each rank brings; for
//                   reduce-scatter and all-to-all a block is comm_size / ranks), pg_name
//                   ("" or "0": all ranks) resolved through -chakra-comm-groups
//   METADATA, MEM_LOAD, MEM_STORE and the other node types: zero-time calcs, counted in
//                   a warning (so the dependencies through them hold)
//
// data_deps and ctrl_deps are both `requires`. Integer attributes are read whatever
// integer type the generator chose.
#include "formats/ChakraEt.h"
#include "ir/InputRegistry.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/InputFile.h"
#include "support/Options.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>

namespace infracc::chakra {
namespace {
namespace cl = llvm::cl;

cl::opt<std::string> CommGroups(
    "chakra-comm-groups", cl::value_desc("file"),
    cl::desc("Chakra traces: the communicator groups their pg_name attributes refer to, as "
             "ASTRA-sim's --comm-group-configuration JSON ({\"name\": [ranks...], ...})"),
    cl::cat(opts::generalCategory()));

// "<prefix>.<n>.et" -> (prefix, n).
std::optional<std::pair<std::string, uint32_t>> splitName(llvm::StringRef file) {
  llvm::StringRef name = llvm::sys::path::filename(file);
  if (!name.consume_back(".et"))
    return std::nullopt;
  size_t dot = name.rfind('.');
  if (dot == llvm::StringRef::npos)
    return std::nullopt;
  uint32_t n = 0;
  if (name.substr(dot + 1).getAsInteger(10, n))
    return std::nullopt;
  return std::pair(name.substr(0, dot).str(), n);
}

// The files of all ranks, rank order.
std::optional<std::vector<std::string>> rankFiles(DiagEngine &diags, const std::string &path) {
  std::string dir, prefix;
  if (llvm::sys::fs::is_directory(path)) {
    dir = path;
    std::set<std::string> prefixes;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec))
      if (auto s = splitName(it->path()))
        prefixes.insert(s->first);
    if (prefixes.size() != 1) {
      diags.error(path, prefixes.empty()
                            ? "no Chakra trace in this directory (files named <prefix>.<n>.et)"
                            : fmt::format("traces of several workloads ({}); name one file of "
                                          "the one to read",
                                          llvm::join(prefixes, ", ")));
      return std::nullopt;
    }
    prefix = *prefixes.begin();
  } else {
    auto s = splitName(path);
    if (!s)
      return std::vector<std::string>{path};   // one rank
    dir = llvm::sys::path::parent_path(path).str();
    prefix = s->first;
  }
  std::map<uint32_t, std::string> byRank;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (auto s = splitName(it->path()); s && s->first == prefix)
      byRank[s->second] = it->path();
  std::vector<std::string> files;
  for (auto &[n, f] : byRank) {
    if (n != files.size()) {
      diags.error(path, fmt::format("the traces of '{}' stop at {}.{}.et: no {}.{}.et (one "
                                    "file per rank, numbered from 0)",
                                    prefix, prefix, files.size() - 1, prefix, files.size()));
      return std::nullopt;
    }
    files.push_back(dir.empty() ? llvm::sys::path::filename(f).str() : f);
  }
  if (files.empty()) {
    diags.error(path, "no Chakra trace found");
    return std::nullopt;
  }
  return files;
}

struct Reader {
  DiagEngine &diags;
  uint32_t P;
  ScheduleBuilder b;
  uint32_t world = ~0u;
  std::map<std::string, uint32_t> groupIndex;   // pg_name -> communicator index
  std::optional<nlohmann::json> groups;
  std::map<int, uint64_t> zeroTime;             // node type -> count read as 0-time calcs
  uint64_t rooflineOnly = 0;

  Reader(DiagEngine &d, uint32_t ranks) : diags(d), P(ranks), b(ranks) {}

  bool fail(const std::string &file, uint64_t offset, const std::string &msg) {
    diags.error(fmt::format("{}:offset {}", file, offset), msg);
    return false;
  }

  std::optional<uint32_t> communicator(const std::string &file, uint64_t off,
                                       const std::string &pg) {
    if (pg.empty() || pg == "0") {
      if (world == ~0u) {
        Communicator c;
        c.id = 0;
        for (uint32_t r = 0; r < P; ++r)
          c.ranks.push_back(r);
        world = b.addCommunicator(std::move(c));
      }
      return world;
    }
    if (auto it = groupIndex.find(pg); it != groupIndex.end())
      return it->second;
    if (CommGroups.empty()) {
      fail(file, off, fmt::format("pg_name '{}': give the communicator groups with "
                                  "-chakra-comm-groups=FILE (ASTRA-sim's "
                                  "--comm-group-configuration JSON)",
                                  pg));
      return std::nullopt;
    }
    if (!groups) {
      auto buf = openInputFile(CommGroups, false);
      if (!buf) {
        diags.error(CommGroups, "cannot read: " + buf.getError().message());
        return std::nullopt;
      }
      groups = nlohmann::json::parse((*buf)->getBuffer().begin(), (*buf)->getBuffer().end(),
                                     nullptr, false);
      if (groups->is_discarded() || !groups->is_object()) {
        diags.error(CommGroups.getValue(), "not a JSON object of groups ({\"name\": [ranks...]})");
        return std::nullopt;
      }
    }
    auto it = groups->find(pg);
    if (it == groups->end() || !it->is_array() || it->empty()) {
      fail(file, off, fmt::format("pg_name '{}' is not a group of {}", pg, CommGroups.getValue()));
      return std::nullopt;
    }
    Communicator c;
    c.id = uint32_t(groupIndex.size() + 1);
    for (const auto &v : *it) {
      if (!v.is_number_unsigned() || v.get<uint64_t>() >= P) {
        diags.error(CommGroups.getValue(),
                    fmt::format("group '{}': {} is not a rank of the {}-rank workload", pg,
                                v.dump(), P));
        return std::nullopt;
      }
      c.ranks.push_back(v.get<uint32_t>());
    }
    uint32_t index = b.addCommunicator(std::move(c));
    groupIndex[pg] = index;
    return index;
  }

  bool rank(uint32_t r, const std::string &file, llvm::StringRef bytes) {
    StreamReader in(bytes);
    GlobalMetadata meta;
    if (!in.next(meta))
      return fail(file, in.offset(),
                  "not a Chakra trace: " + (in.error().empty() ? std::string("the file is empty")
                                                               : "its first message is " +
                                                                     in.error()));
    b.beginRank(r);
    llvm::DenseMap<uint64_t, uint32_t> local;
    struct PendingDeps {
      uint32_t op;
      uint64_t offset;
      std::vector<uint64_t> on;
    };
    std::vector<PendingDeps> pending;
    Node n;
    while (in.next(n)) {
      const uint64_t off = in.offset();
      auto need = [&](const char *name) -> std::optional<int64_t> {
        auto v = intAttr(n, name);
        if (!v)
          fail(file, off, fmt::format("node {} ({}): no integer attribute '{}'", n.id(),
                                      NodeType_Name(n.type()), name));
        return v;
      };
      if (n.type() == COMP_NODE && n.name() == IdleNodeName && n.duration_micros() == 0 &&
          n.data_deps().empty() && n.ctrl_deps().empty())
        continue;   // what the writer puts in an empty trace
      uint32_t op = 0;
      switch (n.type()) {
      case COMP_NODE:
        if (n.duration_micros() > UINT64_MAX / 1000)
          return fail(file, off, fmt::format("node {}: duration_micros {} overflows nanoseconds",
                                             n.id(), n.duration_micros()));
        if (n.duration_micros() == 0 && findAttr(n, attr::NumOps))
          ++rooflineOnly;
        op = b.addCalc(n.duration_micros() * 1000);
        break;
      case COMM_SEND_NODE:
      case COMM_RECV_NODE: {
        const bool send = n.type() == COMM_SEND_NODE;
        auto peer = need(send ? attr::CommDst : attr::CommSrc);
        auto size = need(attr::CommSize);
        if (!peer || !size)
          return false;
        auto self = intAttr(n, send ? attr::CommSrc : attr::CommDst);
        int64_t tag = intAttr(n, attr::CommTag).value_or(0);
        if (*peer < 0 || *peer >= int64_t(P) || *peer == int64_t(r))
          return fail(file, off, fmt::format("node {}: {} {} is not another rank of the {}-rank "
                                             "workload",
                                             n.id(), send ? "comm_dst" : "comm_src", *peer, P));
        if (self && *self != int64_t(r))
          return fail(file, off, fmt::format("node {}: {} {} in the trace of rank {}", n.id(),
                                             send ? "comm_src" : "comm_dst", *self, r));
        if (*size < 0 || tag < 0 || tag > int64_t(UINT32_MAX - 1))
          return fail(file, off, fmt::format("node {}: comm_size {} or comm_tag {} out of range",
                                             n.id(), *size, tag));
        op = send ? b.addSend(uint64_t(*size), uint32_t(*peer), uint32_t(tag))
                  : b.addRecv(uint64_t(*size), uint32_t(*peer), uint32_t(tag));
        break;
      }
      case COMM_COLL_NODE: {
        auto type = need(attr::CommType);
        auto size = need(attr::CommSize);
        if (!type || !size)
          return false;
        const AttributeProto *pg = findAttr(n, attr::PgName);
        auto comm = communicator(file, off, pg ? pg->string_val() : std::string());
        if (!comm)
          return false;
        CollectiveInfo info;
        info.communicator = *comm;
        const uint64_t members = b.communicator(*comm).ranks.size();
        bool perBlock = true;
        switch (*type) {
        case ALL_REDUCE: info.kind = CollectiveKind::Allreduce; perBlock = false; break;
        case ALL_GATHER: info.kind = CollectiveKind::Allgather; perBlock = false; break;
        case REDUCE_SCATTER: info.kind = CollectiveKind::Reducescatter; break;
        case ALL_TO_ALL: info.kind = CollectiveKind::Alltoall; break;
        case BROADCAST: info.kind = CollectiveKind::Bcast; perBlock = false; break;
        case REDUCE: info.kind = CollectiveKind::Reduce; perBlock = false; break;
        case BARRIER: info.kind = CollectiveKind::Barrier; perBlock = false; break;
        default:
          return fail(file, off, fmt::format("node {}: comm_type {} ({}) is not supported",
                                             n.id(), *type,
                                             CollectiveCommType_IsValid(int(*type))
                                                 ? CollectiveCommType_Name(CollectiveCommType(*type))
                                                 : std::string("unknown")));
        }
        if (*size < 0 || (perBlock && uint64_t(*size) % members != 0))
          return fail(file, off, fmt::format("node {}: comm_size {} of a {} over {} ranks is not "
                                             "a whole block per rank",
                                             n.id(), *size, CollectiveCommType_Name(
                                                                CollectiveCommType(*type)),
                                             members));
        info.bytes = perBlock ? uint64_t(*size) / members : uint64_t(*size);
        uint32_t index = b.addCollective(info);
        op = b.addOp(OpKind::Collective, index, info.bytes);
        break;
      }
      case INVALID_NODE:
        return fail(file, off, fmt::format("node {}: type INVALID_NODE", n.id()));
      default:
        ++zeroTime[n.type()];
        op = b.addCalc(0);
        break;
      }
      if (!local.try_emplace(n.id(), op).second)
        return fail(file, off, fmt::format("node id {} appears twice", n.id()));
      PendingDeps d{op, off, {}};
      d.on.assign(n.data_deps().begin(), n.data_deps().end());
      d.on.insert(d.on.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
      if (!d.on.empty())
        pending.push_back(std::move(d));
    }
    if (!in.error().empty())
      return fail(file, in.offset(), "damaged trace: " + in.error());
    for (const PendingDeps &d : pending) {
      std::set<uint32_t> seen;
      for (uint64_t id : d.on) {
        auto it = local.find(id);
        if (it == local.end())
          return fail(file, d.offset,
                      fmt::format("a node depends on node {}, which this trace does not have", id));
        if (it->second == d.op)
          return fail(file, d.offset, fmt::format("node {} depends on itself", id));
        if (seen.insert(it->second).second)
          b.addDependency(d.op, it->second, DepKind::Requires);
      }
    }
    b.endRank();
    return true;
  }
};

llvm::Error load(InputContext &ctx) {
  auto files = rankFiles(ctx.diags, ctx.path);
  if (!files)
    return reportedError();
  Reader rd(ctx.diags, uint32_t(files->size()));
  for (uint32_t r = 0; r < files->size(); ++r) {
    auto buf = openInputFile((*files)[r], false);
    if (!buf) {
      ctx.diags.error((*files)[r], "cannot read: " + buf.getError().message());
      return reportedError();
    }
    if (!rd.rank(r, (*files)[r], (*buf)->getBuffer()))
      return reportedError();
  }
  for (auto [type, count] : rd.zeroTime)
    ctx.diags.warning(ctx.path, fmt::format("{} {} node(s) read as zero-time calcs",
                                            count, NodeType_Name(NodeType(type))));
  if (rd.rooflineOnly)
    ctx.diags.warning(ctx.path, fmt::format("{} COMP_NODE(s) give num_ops but no "
                                            "duration_micros: read as zero-time calcs (infracc "
                                            "has no roofline model)",
                                            rd.rooflineOnly));
  ctx.module.jobs.push_back({ctx.path, rd.b.finish()});
  return llvm::Error::success();
}

// The first message of a .et file is GlobalMetadata: a varint length, then field 1
// (version, a string: key 0x0a) or field 2 (attr: 0x12), or nothing at all.
int sniff(llvm::StringRef head) {
  if (head.size() < 2)
    return 0;
  size_t i = 0;
  while (i < head.size() && i < 5 && (uint8_t(head[i]) & 0x80))
    ++i;
  if (i + 1 >= head.size())
    return 0;
  uint8_t key = uint8_t(head[i + 1]);
  return key == 0x0a || key == 0x12 ? 30 : 0;
}

RegisterInputFormat format({.name = "chakra",
                            .description = "Chakra execution traces (<prefix>.<rank>.et, one "
                                           "per rank; a file, or a directory of them)",
                            .extensions = {".et"},
                            .role = InputRole::Workload,
                            .sniff = sniff,
                            .load = load,
                            .acceptsDirectory = true});

} // namespace
} // namespace infracc::chakra
