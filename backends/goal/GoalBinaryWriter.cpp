#include "backends/goal/GoalWriter.h"

#include "formats/GoalBinaryFormat.h"
#include "support/Diagnostics.h"

#include <llvm/Support/Endian.h>

#include <vector>

namespace infracc::goal {

namespace {

using llvm::support::endian::write32le;
using llvm::support::endian::write64le;

// Per rank: in-degrees (a node's dep_count) and the number of roots.
uint32_t countIndegrees(const Schedule &s, uint32_t r, std::vector<uint32_t> &indegree) {
  uint32_t first = s.rankBegin(r), n = s.numOps(r);
  indegree.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : s.successorsRaw(first + i))
      ++indegree[raw & ~Schedule::IRequiresBit];
  uint32_t roots = 0;
  for (uint32_t d : indegree)
    roots += d == 0;
  return roots;
}

class ByteBuffer {
public:
  explicit ByteBuffer(llvm::raw_ostream &os) : os_(os) { buf_.resize(1 << 20); }
  ~ByteBuffer() { flush(); }
  /// Room for `n` more bytes, returned as a pointer to fill.
  uint8_t *take(size_t n) {
    if (pos_ + n > buf_.size()) {
      flush();
      if (n > buf_.size())
        buf_.resize(n);
    }
    uint8_t *p = buf_.data() + pos_;
    pos_ += n;
    return p;
  }
  void u32(uint32_t v) { write32le(take(4), v); }
  void u64(uint64_t v) { write64le(take(8), v); }
  void flush() {
    os_.write(reinterpret_cast<const char *>(buf_.data()), pos_);
    pos_ = 0;
  }

private:
  llvm::raw_ostream &os_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
};

} // namespace

llvm::Error checkBinary(const Schedule &s, DiagEngine &diags, llvm::StringRef where) {
  unsigned before = diags.errorCount();
  bool cpuTooBig = s.maxCpu() > bin::MaxIndex, nicTooBig = s.maxNic() > bin::MaxIndex;
  uint64_t collectives = 0;
  for (uint32_t r = 0; r < s.numRanks() && !diags.shouldStop(); ++r) {
    uint32_t end = s.rankBegin(r) + s.numOps(r);
    for (uint32_t g = s.rankBegin(r); g < end && !diags.shouldStop(); ++g) {
      auto op = [&] { return "rank " + std::to_string(r) + " operation " + s.opName(g); };
      OpKind k = s.kind(g);
      if (k == OpKind::Collective) {
        if (!collectives++)
          diags.error(where, op() + " is a collective, which binary GOAL cannot hold; lower "
                                    "it to sends, recvs and calcs with "
                                    "-passes=lower-collectives");
        continue;
      }
      if (!isGoalCoreKind(k)) {
        diags.error(where, op() + " is a " + opKindName(k) +
                               ", which binary GOAL cannot hold; lower it first (binary GOAL "
                               "has send, recv and calc)");
        continue;
      }
      if (k == OpKind::Send && s.peer(g) == AnySource)
        diags.error(where, op() + " is a send to any rank (-1), which GOAL cannot express");
      if (cpuTooBig && s.cpu(g) > bin::MaxIndex)
        diags.error(where, op() + " uses cpu " + std::to_string(s.cpu(g)) +
                               "; binary GOAL stores the cpu index in one byte (0..255), "
                               "so this schedule can only be written as text (-emit=goal)");
      if (nicTooBig && s.nic(g) > bin::MaxIndex)
        diags.error(where, op() + " uses nic " + std::to_string(s.nic(g)) +
                               "; binary GOAL stores the nic index in one byte (0..255), "
                               "so this schedule can only be written as text (-emit=goal)");
    }
  }
  if (collectives > 1)
    diags.note(where, llvm::Twine(collectives - 1) + " more collective operations are not lowered");
  return diags.errorCount() != before ? reportedError() : llvm::Error::success();
}

void writeBinary(const Schedule &s, llvm::raw_ostream &os) {
  uint32_t numRanks = s.numRanks();
  std::vector<uint32_t> indegree;
  ByteBuffer out(os);
  out.u64(bin::Magic);
  out.u32(numRanks);
  *out.take(1) = static_cast<uint8_t>(s.maxCpu());
  *out.take(1) = static_cast<uint8_t>(s.maxNic());
  // The jump table needs every rank's size first, and that needs its root count.
  uint64_t start = bin::firstRankStart(numRanks);
  for (uint32_t r = 0; r < numRanks; ++r) {
    uint64_t n = s.numOps(r);
    uint64_t deps = 0;
    for (uint32_t g = s.rankBegin(r), e = g + s.numOps(r); g < e; ++g)
      deps += s.numSuccessors(g);
    uint64_t roots = countIndegrees(s, r, indegree);
    uint64_t end = start + bin::RankHeaderSize + 4 * roots + bin::NodeSize * n + 4 * deps;
    out.u64(start);
    out.u64(end);
    start = end;
  }
  for (uint32_t r = 0; r < numRanks; ++r) {
    uint32_t first = s.rankBegin(r), n = s.numOps(r);
    uint32_t roots = countIndegrees(s, r, indegree);
    out.u32(n);
    out.u32(roots);
    for (uint32_t i = 0; i < n; ++i)
      if (indegree[i] == 0)
        out.u32(i);
    uint32_t running = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t g = first + i;
      llvm::ArrayRef<uint32_t> succ = s.successorsRaw(g);
      uint32_t numReq = 0;
      while (numReq < succ.size() && !(succ[numReq] & Schedule::IRequiresBit))
        ++numReq;
      uint32_t numIReq = static_cast<uint32_t>(succ.size()) - numReq;
      uint8_t *rec = out.take(bin::NodeSize);
      write32le(rec + bin::node::DepCount, indegree[i]);
      rec[bin::node::Type] = static_cast<uint8_t>(s.kind(g));   // OpKind values are GOAL's
      write32le(rec + bin::node::Peer, s.peer(g));
      write64le(rec + bin::node::Size, s.size(g));
      write32le(rec + bin::node::Tag, s.tag(g));
      rec[bin::node::Cpu] = static_cast<uint8_t>(s.cpu(g));
      rec[bin::node::Nic] = static_cast<uint8_t>(s.nic(g));
      write32le(rec + bin::node::NumSucc, numReq);
      write32le(rec + bin::node::SuccFirst, running);
      write32le(rec + bin::node::NumISucc, numIReq);
      write32le(rec + bin::node::ISuccFirst, running + numReq);
      running += static_cast<uint32_t>(succ.size());
    }
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t raw : s.successorsRaw(first + i))
        out.u32(raw & ~Schedule::IRequiresBit);
  }
}

} // namespace infracc::goal
