#include "backends/goal/GoalWriter.h"

#include "formats/GoalBinaryFormat.h"
#include "ir/TargetRegistry.h"
#include "support/Progress.h"
#include "support/Diagnostics.h"

#include <llvm/Support/Endian.h>

#include <optional>
#include <vector>

namespace infracc::goal {

namespace {

using llvm::support::endian::write32le;
using llvm::support::endian::write64le;

// Per rank: in-degrees (a node's dep_count) and the number of roots.
uint32_t countIndegrees(const RankOps &ops, std::vector<uint32_t> &indegree) {
  indegree.assign(ops.size(), 0);
  for (uint32_t i = 0; i < ops.size(); ++i)
    for (uint32_t raw : ops.successorsRaw(i))
      ++indegree[raw & ~Schedule::IRequiresBit];
  uint32_t roots = 0;
  for (uint32_t d : indegree)
    roots += d == 0;
  return roots;
}

/// Bytes of a rank's data: header, roots, nodes, appendix.
uint64_t rankBytes(const RankOps &ops, uint32_t roots) {
  uint64_t deps = 0;
  for (uint32_t i = 0; i < ops.size(); ++i)
    deps += ops.successorsRaw(i).size();
  return bin::RankHeaderSize + 4 * uint64_t(roots) + bin::NodeSize * uint64_t(ops.size()) +
         4 * deps;
}

class ByteBuffer {
public:
  explicit ByteBuffer(llvm::raw_ostream &os) : os_(os) { buf_.resize(64 << 10); }
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

namespace {

/// One rank's data; `indegree` from countIndegrees.
void writeRank(ByteBuffer &out, const RankOps &ops, uint32_t roots,
               const std::vector<uint32_t> &indegree) {
  uint32_t n = ops.size();
  out.u32(n);
  out.u32(roots);
  for (uint32_t i = 0; i < n; ++i)
    if (indegree[i] == 0)
      out.u32(i);
  uint32_t running = 0;
  for (uint32_t i = 0; i < n; ++i) {
    SuccessorRange succ = ops.successorsRaw(i);
    uint32_t numReq = 0;
    while (numReq < succ.size() && !(succ[numReq] & Schedule::IRequiresBit))
      ++numReq;
    packed::writeRecord(out.take(bin::NodeSize), ops.kind(i), ops.peer(i), ops.opSize(i),
                        ops.tag(i), ops.cpu(i), ops.nic(i), indegree[i], numReq, running,
                        succ.size() - numReq);
    running += succ.size();
  }
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : ops.successorsRaw(i))
      out.u32(raw & ~Schedule::IRequiresBit);
}

void writeHeader(ByteBuffer &out, uint32_t numRanks, uint32_t maxCpu, uint32_t maxNic) {
  out.u64(bin::Magic);
  out.u32(numRanks);
  *out.take(1) = static_cast<uint8_t>(maxCpu);
  *out.take(1) = static_cast<uint8_t>(maxNic);
}

/// Whether binary GOAL can hold every op of a rank (checkBinary reports what it cannot).
bool writable(const RankOps &ops) {
  for (uint32_t i = 0; i < ops.size(); ++i) {
    OpKind k = ops.kind(i);
    if (!isGoalCoreKind(k) || (k == OpKind::Send && ops.peer(i) == AnySource) ||
        ops.cpu(i) > bin::MaxIndex || ops.nic(i) > bin::MaxIndex)
      return false;
  }
  return true;
}

/// The jump table of a schedule whose ranks come one by one, in order, and the
/// in-degrees and root count of the last rank measured.
struct RankPlacement {
  std::vector<uint64_t> jump;
  uint64_t at;
  std::vector<uint32_t> indegree;
  uint32_t roots = 0;

  explicit RankPlacement(uint32_t numRanks)
      : jump(2 * size_t(numRanks)), at(bin::firstRankStart(numRanks)) {}
  /// Bytes of the rank's data; fills `indegree` and `roots`.
  uint64_t measure(const RankOps &ops) {
    roots = countIndegrees(ops, indegree);
    return rankBytes(ops, roots);
  }
  /// Rank r's data goes next.
  void place(uint32_t r, const RankOps &ops) {
    jump[2 * size_t(r)] = at;
    at += measure(ops);
    jump[2 * size_t(r) + 1] = at;
  }
  void writeTable(ByteBuffer &out) const {
    for (uint64_t v : jump)
      out.u64(v);
  }
};

/// Binary GOAL of a streamed schedule: the header and jump table are written as
/// placeholders and filled in at the end, when every rank's place and the largest cpu
/// and nic index are known. Only what a checked schedule may hold goes this way: a
/// rank with an op binary GOAL cannot express ends it (checkBinary then reports it).
class BinaryStreamWriter final : public ScheduleStreamWriter {
public:
  BinaryStreamWriter(llvm::raw_pwrite_stream &os, uint32_t numRanks)
      : os_(os), out_(os), place_(numRanks) {
    writeHeader(out_, numRanks, 0, 0);
    place_.writeTable(out_);   // zeros for now
  }

  bool rank(uint32_t r, const RankOps &ops) override {
    if (!writable(ops))
      return false;
    place_.place(r, ops);
    writeRank(out_, ops, place_.roots, place_.indegree);
    return true;
  }

  llvm::Error finish(const Schedule &summary) override {
    out_.flush();
    std::string head;
    {
      llvm::raw_string_ostream hs(head);
      ByteBuffer b(hs);
      writeHeader(b, summary.numRanks(), summary.maxCpu(), summary.maxNic());
      place_.writeTable(b);
    }
    os_.pwrite(head.data(), head.size(), 0);
    return llvm::Error::success();
  }

private:
  llvm::raw_pwrite_stream &os_;
  ByteBuffer out_;
  RankPlacement place_;
};

/// Binary GOAL of a streamed schedule on a stream that cannot seek (a pipe): the first
/// pass over the input only measures each rank, the second writes the header and the
/// jump table, then every rank in order.
class BinaryTwoPassWriter final : public ScheduleStreamWriter {
public:
  BinaryTwoPassWriter(llvm::raw_ostream &os, uint32_t numRanks) : os_(os), place_(numRanks) {}

  bool rank(uint32_t r, const RankOps &ops) override {
    if (!out_) {
      if (!writable(ops))
        return false;
      place_.place(r, ops);
      return true;
    }
    // The same input again: a rank that does not measure as before is a changed file.
    if (place_.jump[2 * size_t(r)] + place_.measure(ops) != place_.jump[2 * size_t(r) + 1])
      return false;
    writeRank(*out_, ops, place_.roots, place_.indegree);
    return true;
  }

  bool measuring() const override { return !out_; }

  void startWriting(const Schedule &summary) override {
    out_.emplace(os_);
    writeHeader(*out_, summary.numRanks(), summary.maxCpu(), summary.maxNic());
    place_.writeTable(*out_);
  }

  llvm::Error finish(const Schedule &) override {
    out_.reset();   // flushes
    return llvm::Error::success();
  }

private:
  llvm::raw_ostream &os_;
  std::optional<ByteBuffer> out_;   // from startWriting on
  RankPlacement place_;
};

} // namespace

void writeBinary(const Schedule &s, llvm::raw_ostream &os, Progress *progress) {
  uint32_t numRanks = s.numRanks();
  ByteBuffer out(os);
  writeHeader(out, numRanks, s.maxCpu(), s.maxNic());
  // The jump table needs every rank's size first, and that needs its root count.
  RankPlacement place(numRanks);
  for (uint32_t r = 0; r < numRanks; ++r)
    place.place(r, s.ops(r));
  place.writeTable(out);
  for (uint32_t r = 0; r < numRanks; ++r) {
    if (progress)
      progress->update(s.rankBegin(r));
    RankOps ops = s.ops(r);
    place.measure(ops);
    writeRank(out, ops, place.roots, place.indegree);
  }
  if (progress)
    progress->update(s.numOps());
}

std::unique_ptr<ScheduleStreamWriter> binaryStreamWriter(llvm::raw_pwrite_stream &os,
                                                         uint32_t numRanks) {
  return std::make_unique<BinaryStreamWriter>(os, numRanks);
}

std::unique_ptr<ScheduleStreamWriter> binaryTwoPassWriter(llvm::raw_ostream &os,
                                                          uint32_t numRanks) {
  return std::make_unique<BinaryTwoPassWriter>(os, numRanks);
}

} // namespace infracc::goal
