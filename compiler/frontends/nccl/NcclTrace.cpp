#include "compiler/frontends/nccl/NcclTrace.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

namespace infracc::nccl {

llvm::StringRef ncclFuncName(NcclFunc f) {
  static constexpr llvm::StringRef Names[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                              "AllReduce"};
  return Names[uint8_t(f)];
}
llvm::StringRef ncclAlgoName(uint32_t a) {
  static constexpr llvm::StringRef Names[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                              "NVLS", "NVLSTree"};
  return a < std::size(Names) ? Names[a] : "unknown";
}
llvm::StringRef ncclProtoName(uint32_t p) {
  static constexpr llvm::StringRef Names[] = {"LL", "LL128", "Simple"};
  return p < std::size(Names) ? Names[p] : "unknown";
}

namespace {

/// Reads one NVTX string against its printf format, piece by piece.
class Scan {
public:
  explicit Scan(llvm::StringRef s) : s_(s) {}
  Scan &lit(llvm::StringRef l) {
    ok_ = ok_ && s_.consume_front(l);
    return *this;
  }
  Scan &u(uint64_t &v) {
    size_t n = 0;
    while (n < s_.size() && std::isdigit(static_cast<unsigned char>(s_[n])))
      ++n;
    ok_ = ok_ && n > 0 && !s_.take_front(n).getAsInteger(10, v);
    s_ = s_.drop_front(n);
    return *this;
  }
  Scan &u32(uint32_t &v) {
    uint64_t x = 0;
    u(x);
    ok_ = ok_ && x <= UINT32_MAX;
    v = uint32_t(x);
    return *this;
  }
  Scan &i32(int32_t &v) {
    bool neg = s_.consume_front("-");
    uint64_t x = 0;
    u(x);
    ok_ = ok_ && x <= (neg ? 0x80000000ull : 0x7FFFFFFFull);
    v = neg ? int32_t(-int64_t(x)) : int32_t(x);
    return *this;
  }
  Scan &hex(uint64_t &v) {
    ok_ = ok_ && s_.consume_front("0x");
    size_t n = 0;
    while (n < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[n])))
      ++n;
    ok_ = ok_ && n > 0 && !s_.take_front(n).getAsInteger(16, v);
    s_ = s_.drop_front(n);
    return *this;
  }
  /// A word up to the next ',' or blank (a pointer as %p prints it, "(nil)" included).
  Scan &word(std::string &w) {
    size_t n = s_.find_first_of(", ");
    ok_ = ok_ && n != 0 && n != llvm::StringRef::npos;
    w = s_.take_front(n).str();
    s_ = s_.drop_front(std::min(n, s_.size()));
    return *this;
  }
  bool done() const { return ok_ && s_.empty(); }

private:
  llvm::StringRef s_;
  bool ok_ = true;
};

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), msg);
}

/// The pid every annotated string ends with ("... pid 1234").
bool trailingPid(llvm::StringRef text, uint32_t &pid) {
  size_t at = text.rfind(" pid ");
  return at != llvm::StringRef::npos && Scan(text.substr(at + 5)).u32(pid).done();
}

struct ProcessState {
  GpuProcess gpu;
  Launch pending;
  std::vector<uint64_t> p2pAssigned;   // bytes of pending.p2pCalls[i] covered by elements
  bool seen = false;
};

class Parser {
public:
  Parser(const NsysExport &x) : x_(x) {}
  llvm::Error run(std::vector<GpuProcess> &out);

private:
  llvm::Error line(const NvtxEvent &e);
  llvm::Error bad(const NvtxEvent &e, llvm::StringRef format) {
    return fail(fmt::format("NVTX event {} ('{}') does not read as NCCL's annotation '{}' (the "
                            "NVTX-annotated NCCL 2.20.5 of ATLAHS)",
                            e.row, e.text, format.str()));
  }
  llvm::Error badProto(const NvtxEvent &e, uint32_t proto) {
    return fail(fmt::format("NVTX event {} ('{}'): protocol {}, which NCCL 2.20 does not have "
                            "(0 LL, 1 LL128, 2 Simple)",
                            e.row, e.text, proto));
  }
  ProcessState &proc(uint32_t pid) {
    ProcessState &p = procs_[pid];
    if (!p.seen) {
      p.seen = true;
      p.gpu.file = x_.path;
      p.gpu.host = x_.host;
      p.gpu.pid = pid;
      order_.push_back(pid);
    }
    return p;
  }
  llvm::Expected<CommMember *> comm(ProcessState &p, uint64_t hash, const NvtxEvent &e) {
    auto it = p.gpu.comms.find(hash);
    if (it == p.gpu.comms.end())
      return fail(fmt::format("NVTX event {} ('{}') uses communicator 0x{:x}, which no "
                              "'commHash ... commId ... rank ... nranks' event of process {} "
                              "introduced (was the trace started after ncclCommInitRank?)",
                              e.row, e.text, hash, p.gpu.pid));
    return &it->second;
  }
  /// A new top-level call while calls that never launched a kernel (empty ones,
  /// single-rank communicators) are pending: they ran nothing; forget them.
  void dropUnlaunched(ProcessState &p) {
    p.pending = Launch();
    p.p2pAssigned.clear();
  }

  const NsysExport &x_;
  std::map<uint32_t, ProcessState> procs_;
  std::vector<uint32_t> order_;
  std::map<uint32_t, int> groupDepth_;
};

llvm::Error Parser::line(const NvtxEvent &e) {
  llvm::StringRef t = e.text;
  uint32_t pid = 0;
  if (t.starts_with("nsys profiling start, pid: ")) {
    if (!Scan(t).lit("nsys profiling start, pid: ").u32(pid).done())
      return bad(e, "nsys profiling start, pid: %d");
    proc(pid).gpu.profileStart = e.start;
    return llvm::Error::success();
  }
  // Everything else NCCL annotates ends with its pid; other strings are the program's.
  if (!trailingPid(t, pid))
    return llvm::Error::success();

  if (t.starts_with("commHash ")) {
    uint64_t hash = 0;
    if (t.contains(" commId ")) {
      uint64_t id = 0;
      uint32_t rank = 0, nranks = 0, p = 0;
      if (!Scan(t).lit("commHash ").hex(hash).lit(" commId ").hex(id).lit(" rank ").u32(rank)
               .lit(" nranks ").u32(nranks).lit(" pid ").u32(p).done())
        return bad(e, "commHash 0x%llx commId 0x%llx rank %d nranks %d pid %d");
      if (nranks == 0 || rank >= nranks)
        return fail(fmt::format("NVTX event {} ('{}'): rank {} of a communicator of {} ranks", e.row,
                                e.text, rank, nranks));
      CommMember &m = proc(pid).gpu.comms[hash];
      m.commId = id;
      m.rank = rank;
      m.nranks = nranks;
      return llvm::Error::success();
    }
    if (t.contains(" Rings [")) {
      uint32_t ch = 0, p = 0;
      int32_t prev = 0, me = 0, next = 0;
      if (!Scan(t).lit("commHash ").hex(hash).lit(" Rings [").u32(ch).lit("] ").i32(prev).lit("->")
               .i32(me).lit("->").i32(next).lit(" pid ").u32(p).done())
        return bad(e, "commHash 0x%llx Rings [%d] %d->%d->%d pid %d");
      auto c = comm(proc(pid), hash, e);
      if (!c)
        return c.takeError();
      CommMember &m = **c;
      if (prev < 0 || next < 0 || uint32_t(prev) >= m.nranks || uint32_t(next) >= m.nranks ||
          uint32_t(me) != m.rank)
        return fail(fmt::format("NVTX event {} ('{}'): the ring of channel {} does not pass through "
                                "rank {} between ranks of its communicator of {}",
                                e.row, e.text, ch, m.rank, m.nranks));
      m.ring[ch] = {prev, next};
      return llvm::Error::success();
    }
    if (t.contains(" Trees [")) {
      uint32_t ch = 0, p = 0;
      std::array<int32_t, 4> tr{};
      int32_t me = 0;
      if (!Scan(t).lit("commHash ").hex(hash).lit(" Trees [").u32(ch).lit("] ").i32(tr[0]).lit("/")
               .i32(tr[1]).lit("/").i32(tr[2]).lit("->").i32(me).lit("->").i32(tr[3]).lit(" pid ")
               .u32(p).done())
        return bad(e, "commHash 0x%llx Trees [%d] %d/%d/%d->%d->%d pid %d");
      auto c = comm(proc(pid), hash, e);
      if (!c)
        return c.takeError();
      (*c)->tree[ch] = tr;
      return llvm::Error::success();
    }
    return bad(e, "commHash 0x%llx ...");
  }

  ProcessState &p = proc(pid);
  struct Api {
    llvm::StringRef name;
    NcclFunc func;
    bool redOp, root;
  };
  static constexpr Api Colls[] = {{"ncclAllReduce(): ", NcclFunc::AllReduce, true, false},
                                  {"ncclBroadcast(): ", NcclFunc::Broadcast, false, true},
                                  {"ncclReduce(): ", NcclFunc::Reduce, true, true},
                                  {"ncclAllGather(): ", NcclFunc::AllGather, false, false},
                                  {"ncclReduceScatter(): ", NcclFunc::ReduceScatter, true, false}};
  for (const Api &a : Colls) {
    if (!t.starts_with(a.name))
      continue;
    CollCall c;
    c.func = a.func;
    c.row = e.row;
    std::string stream;
    uint64_t redOp = 0, root = 0;
    Scan sc(t);
    sc.lit(a.name).lit("commHash ").hex(c.commHash).lit(", stream ").word(stream)
        .lit(", data_size ").u(c.dataSize).lit(", type_size ").u(c.typeSize);
    if (a.redOp)
      sc.lit(", red_op ").u(redOp);
    if (a.root)
      sc.lit(", root ").u(root);
    sc.lit(", pid ").u32(pid);
    if (!sc.done() || root > UINT32_MAX)
      return bad(e, (a.name + "commHash 0x%llx, stream %p, data_size %zu, type_size %d, ...").str());
    c.root = uint32_t(root);
    auto m = comm(p, c.commHash, e);
    if (!m)
      return m.takeError();
    if (groupDepth_[pid] == 0)
      dropUnlaunched(p);
    if ((*m)->nranks > 1 && c.dataSize > 0) {
      if (c.typeSize == 0 || c.typeSize > 64)
        return fail(fmt::format("NVTX event {} ('{}'): an element size of {} bytes (NCCL's types "
                                "have 1 to 8)", e.row, e.text, c.typeSize));
      if (c.dataSize % c.typeSize)
        return fail(fmt::format("NVTX event {} ('{}'): {} bytes are not a whole number of {}-byte "
                                "elements", e.row, e.text, c.dataSize, c.typeSize));
      if (c.root >= (*m)->nranks)
        return fail(fmt::format("NVTX event {} ('{}'): root {} is not a rank of the communicator "
                                "of {} ranks", e.row, e.text, c.root, (*m)->nranks));
      p.pending.stream = stream;
      p.pending.colls.push_back(c);
    }
    return llvm::Error::success();
  }

  if (t.starts_with("ncclSend(): ") || t.starts_with("ncclRecv(): ")) {
    P2PCall c;
    c.send = t.starts_with("ncclSend");
    std::string stream;
    uint64_t typeSize = 0, peer = 0;
    if (!Scan(t).lit(c.send ? "ncclSend(): " : "ncclRecv(): ").lit("commHash ").hex(c.commHash)
             .lit(", stream ").word(stream).lit(", data_size ").u(c.dataSize).lit(", type_size ")
             .u(typeSize).lit(c.send ? ", receiver_rank " : ", sender_rank ").u(peer).lit(", pid ")
             .u32(pid).done() || peer > UINT32_MAX)
      return bad(e, c.send ? "ncclSend(): commHash 0x%llx, stream %p, data_size %zu, type_size "
                             "%d, receiver_rank %d, pid %d"
                           : "ncclRecv(): commHash 0x%llx, stream %p, data_size %zu, type_size "
                             "%d, sender_rank %d, pid %d");
    c.peer = uint32_t(peer);
    auto m = comm(p, c.commHash, e);
    if (!m)
      return m.takeError();
    if (c.peer >= (*m)->nranks)
      return fail(fmt::format("NVTX event {} ('{}'): peer {} is not a rank of the communicator of "
                              "{} ranks", e.row, e.text, c.peer, (*m)->nranks));
    if (groupDepth_[pid] == 0)
      dropUnlaunched(p);
    if ((*m)->nranks > 1 && c.dataSize > 0) {
      p.pending.stream = stream;
      p.pending.p2pCalls.push_back(c);
      p.p2pAssigned.push_back(0);
    }
    return llvm::Error::success();
  }

  if (t.starts_with("collType ")) {
    uint64_t type = 0, root = 0, redOp = 0, hash = 0, dataSize = 0, typeSize = 0;
    uint32_t algo = 0, proto = 0;
    uint64_t chunkSize = 0, chunkCount = 0, chunkSteps = 0, sliceSteps = 0, stepSize = 0;
    std::string stream;
    if (!Scan(t).lit("collType ").u(type).lit(" root ").u(root).lit(" redOp ").u(redOp)
             .lit(" algo ").u32(algo).lit(" proto ").u32(proto).lit(" commHash ").hex(hash)
             .lit(" stream ").word(stream).lit(" data_size ").u(dataSize).lit(" type_size ")
             .u(typeSize).lit(" chunkSize ").u(chunkSize).lit(" chunkCount ").u(chunkCount)
             .lit(" chunkSteps ").u(chunkSteps).lit(" sliceSteps ").u(sliceSteps)
             .lit(" stepSize ").u(stepSize).lit(" pid ").u32(pid).done())
      return bad(e, "collType %d root %d redOp %d algo %d proto %d commHash 0x%llx stream %p "
                    "data_size %zu type_size %d chunkSize %d chunkCount %d chunkSteps %d "
                    "sliceSteps %d stepSize %d pid %d");
    if (proto > uint32_t(NcclProto::Simple))
      return badProto(e, proto);
    // NCCL's steps count slots of an 8-slot buffer; anything far beyond is not NCCL's.
    if (chunkSteps > 1024 || sliceSteps > 1024 || stepSize > (uint64_t(1) << 40))
      return fail(fmt::format("NVTX event {} ('{}'): chunkSteps {}, sliceSteps {} and stepSize {} "
                              "are beyond any NCCL buffer", e.row, e.text, chunkSteps, sliceSteps,
                              stepSize));
    for (CollCall &c : p.pending.colls)
      if (!c.described && uint64_t(c.func) == type && c.commHash == hash &&
          c.dataSize == dataSize) {
        c.described = true;
        c.algo = algo;
        c.proto = proto;
        c.chunkSteps = chunkSteps;
        c.sliceSteps = sliceSteps;
        c.stepSize = stepSize;
        return llvm::Error::success();
      }
    return fail(fmt::format("NVTX event {} ('{}') describes a collective (type {}, {} bytes on "
                            "communicator 0x{:x}) that process {} has not called since its last "
                            "kernel launch",
                            e.row, e.text, type, dataSize, hash, pid));
  }

  if (t.starts_with("nWarps ")) {
    WorkElem w;
    uint64_t nWarps = 0, count = 0, lastChunkCount = 0, workOffset = 0, sendbuff = 0, recvbuff = 0;
    if (!Scan(t).lit("nWarps ").u(nWarps).lit(" count ").u(count).lit(" chunkCount ")
             .u(w.chunkCount).lit(" workCount ").u(w.workCount).lit(" lastChunkCount ")
             .u(lastChunkCount).lit(" workOffset ").u(workOffset).lit(" sendbuff ")
             .u(sendbuff).lit(" recvbuff ").u(recvbuff).lit(" pid ").u32(pid).done())
      return bad(e, "nWarps %d count %lu chunkCount %lu workCount %lu lastChunkCount %lu "
                    "workOffset %lu sendbuff %lu recvbuff %lu pid %d");
    CollCall *last = nullptr;
    for (CollCall &c : p.pending.colls)
      if (c.described)
        last = &c;
    if (!last)
      return fail(fmt::format("NVTX event {} ('{}') is a work element, but no collective of "
                              "process {} was described ('collType ...') before it",
                              e.row, e.text, pid));
    last->elems.push_back(w);
    return llvm::Error::success();
  }

  if (t.starts_with("Bytes ")) {
    P2PElem w;
    w.row = e.row;
    uint64_t nWarps = 0, type = 0, peer = 0, hi = 0, lo = 0, chunk = 0;
    if (!Scan(t).lit("Bytes ").u(w.bytes).lit(" nWarps ").u(nWarps).lit(" p2pType ").u(type)
             .lit(" peer ").u(peer).lit(" proto ").u32(w.proto).lit(" countHi32 ").u(hi)
             .lit(" countLo32 ").u(lo).lit(" chunkSize ").u(chunk).lit(" pid ").u32(pid).done() ||
        (type != 1 && type != 2) || peer > UINT32_MAX)
      return bad(e, "Bytes %lu nWarps %d p2pType %d(1 send, 2 recv) peer %d proto %d countHi32 "
                    "%u countLo32 %u chunkSize %d pid %d");
    if (w.proto > uint32_t(NcclProto::Simple))
      return badProto(e, w.proto);
    w.send = type == 1;
    w.peer = uint32_t(peer);
    // The element names no communicator: it belongs to the pending call in its direction
    // to its peer that it has not yet covered.
    int pick = -1;
    for (size_t i = 0; i < p.pending.p2pCalls.size(); ++i) {
      const P2PCall &c = p.pending.p2pCalls[i];
      if (c.send != w.send || c.peer != w.peer)
        continue;
      pick = int(i);
      if (p.p2pAssigned[i] < c.dataSize)
        break;
    }
    if (pick < 0)
      return fail(fmt::format("NVTX event {} ('{}'): process {} has no pending {} rank {}",
                              e.row, e.text, pid, w.send ? "ncclSend to" : "ncclRecv from",
                              w.peer));
    p.p2pAssigned[size_t(pick)] += w.bytes;
    w.commHash = p.pending.p2pCalls[size_t(pick)].commHash;
    if (w.bytes > 0)
      p.pending.p2p.push_back(w);
    return llvm::Error::success();
  }

  if (t.starts_with("ncclGroupStart(): ")) {
    if (groupDepth_[pid]++ == 0)
      dropUnlaunched(p);
    return llvm::Error::success();
  }
  if (t.starts_with("ncclGroupEnd(): ")) {
    if (groupDepth_[pid] > 0)
      --groupDepth_[pid];
    return llvm::Error::success();
  }
  if (t.starts_with("ncclLaunchKernel(): ")) {
    for (const CollCall &c : p.pending.colls)
      if (!c.described)
        return fail(fmt::format("NVTX event {}: process {} launches a kernel for the collective "
                                "of NVTX event {}, which no 'collType ...' event described",
                                e.row, pid, c.row));
    p.gpu.launches.push_back(std::move(p.pending));
    p.pending = Launch();
    p.p2pAssigned.clear();
    return llvm::Error::success();
  }
  return llvm::Error::success();   // other NCCL annotations (e.g. "Not executed ...")
}

llvm::Error Parser::run(std::vector<GpuProcess> &out) {
  for (const NvtxEvent &e : x_.nvtx)
    if (llvm::Error err = line(e))
      return err;
  // The k-th NCCL kernel a process ran belongs to its k-th launch.
  std::map<uint32_t, std::vector<const KernelEvent *>> kernels;
  for (const KernelEvent &k : x_.kernels)
    kernels[k.pid].push_back(&k);
  for (uint32_t pid : order_) {
    ProcessState &p = procs_[pid];
    if (p.gpu.comms.empty())
      continue;
    std::vector<const KernelEvent *> &ks = kernels[pid];
    if (ks.size() != p.gpu.launches.size())
      return fail(fmt::format("process {} launched {} NCCL kernels by its NVTX events "
                              "(ncclLaunchKernel) but the kernel table has {} NCCL kernels of "
                              "it; was the report cut short?",
                              pid, p.gpu.launches.size(), ks.size()));
    for (size_t i = 0; i < ks.size(); ++i) {
      p.gpu.launches[i].kernelStart = ks[i]->start;
      p.gpu.launches[i].kernelEnd = ks[i]->end;
    }
    if (!ks.empty())
      p.gpu.device = ks.front()->device;
    out.push_back(std::move(p.gpu));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error parseNcclCalls(const NsysExport &x, std::vector<GpuProcess> &out) {
  return Parser(x).run(out);
}

} // namespace infracc::nccl
