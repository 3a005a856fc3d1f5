#include "tests/loadstore/KernelExec.h"

#include <map>
#include <set>

namespace infracc::test {

Elems ExecResult::elems(uint32_t gpu, uint64_t from, uint64_t count) const {
  Elems e;
  for (uint64_t x = 0; x < count; ++x)
    e.set(gpu * inputBytes + from + x);
  return e;
}

namespace {

struct Wg {
  uint32_t kernel, index;
  llvm::ArrayRef<GpuOp> ops;
  uint32_t pc = 0;
  uint32_t loopBegin = 0, loopEnd = 0;
  uint64_t loopIter = 0, loopCount = 0, loopUnit = 0;
  std::map<uint32_t, uint32_t> barrierSeen;   // barrier id -> times passed
  std::set<uint32_t> arrived;                 // barriers waited at now
  bool done() const { return pc >= ops.size() && !loopEnd; }
};

class Exec {
public:
  explicit Exec(const KernelLevel &k) : k_(k) {}
  ExecResult run();

private:
  std::vector<Elems> &buf(uint32_t gpu, BufferKind b) { return r_.mem[gpu][unsigned(b)]; }
  bool step(Wg &w);   // false: blocked
  bool group(Wg &w, llvm::ArrayRef<GpuOp> g, uint64_t shift, uint64_t n);
  bool fail(const std::string &msg) {
    if (r_.error.empty())
      r_.error = msg;
    return false;
  }
  /// Memory bytes of a range: (gpu, buffer, address) per payload byte.
  std::vector<std::pair<uint32_t, uint64_t>> where(const Wg &w, const BufferRef &r,
                                                   uint64_t shift, uint64_t x) {
    std::vector<std::pair<uint32_t, uint64_t>> out;
    uint64_t addr = sliceOffset(r, shift, k_.kernels[w.kernel].scratchWrap) + (r.packet ? 2 * x : x);
    if (r.multicast)
      for (uint32_t m : k_.groups[r.gpu].gpus)
        out.push_back({m, addr});
    else
      out.push_back({r.gpu, addr});
    (void)w;
    return out;
  }

  const KernelLevel &k_;
  ExecResult r_;
  std::vector<std::vector<std::vector<uint8_t>>> valid_;   // packet bytes written
  std::vector<int64_t> sem_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> arrivals_;
};

bool Exec::group(Wg &w, llvm::ArrayRef<GpuOp> g, uint64_t shift, uint64_t n) {
  bool reduce = false;
  for (const GpuOp &o : g)
    reduce |= o.kind == GpuOpKind::Reduce;
  // Packets must all be there before anything is read.
  for (const GpuOp &o : g)
    if (o.readsMemory() && o.src.packet)
      for (uint64_t x = 0; x < n; ++x)
        for (auto [gpu, a] : where(w, o.src, shift, x))
          if (!valid_[gpu][unsigned(o.src.buffer)][a])
            return false;
  std::vector<Elems> value(n);
  for (const GpuOp &o : g) {
    if (!o.readsMemory())
      continue;
    for (uint64_t x = 0; x < n; ++x) {
      Elems v;
      for (auto [gpu, a] : where(w, o.src, shift, x)) {
        std::vector<Elems> &b = buf(gpu, o.src.buffer);
        if (a >= b.size())
          return fail("a load past the end of a buffer");
        if (o.src.multicast && (v & b[a]).any())
          return fail("a multicast load-reduce counts a byte twice");
        v |= b[a];
      }
      if (reduce && (value[x] & v).any())
        return fail("a reduction counts an input byte twice");
      value[x] = reduce ? value[x] | v : v;
    }
  }
  for (const GpuOp &o : g) {
    if (!o.writesMemory())
      continue;
    for (uint64_t x = 0; x < n; ++x)
      for (auto [gpu, a] : where(w, o.dst, shift, x)) {
        std::vector<Elems> &b = buf(gpu, o.dst.buffer);
        if (a >= b.size())
          return fail("a store past the end of a buffer");
        b[a] = value[x];
        if (o.dst.packet)
          valid_[gpu][unsigned(o.dst.buffer)][a] = 1;
      }
  }
  return true;
}

bool Exec::step(Wg &w) {
  if (w.loopEnd && w.pc == w.loopEnd) {
    if (++w.loopIter < w.loopCount) {
      w.pc = w.loopBegin;
    } else {
      w.loopEnd = 0;
      w.loopIter = 0;
    }
    return true;
  }
  const GpuOp &o = w.ops[w.pc];
  switch (o.kind) {
  case GpuOpKind::Loop:
    w.loopBegin = w.pc + 1;
    w.loopEnd = w.pc + 1 + o.id;
    w.loopCount = o.count;
    w.loopUnit = o.bytes;
    w.loopIter = 0;
    w.pc = w.loopBegin;
    return true;
  case GpuOpKind::SemAcquire:
    if (sem_[o.id] <= 0)
      return false;
    --sem_[o.id];
    ++w.pc;
    return true;
  case GpuOpKind::SemRelease:
    ++sem_[o.id];
    ++w.pc;
    return true;
  case GpuOpKind::Barrier: {
    uint32_t &n = arrivals_[{w.kernel, o.id, w.barrierSeen[o.id]}];
    if (!w.arrived.count(o.id)) {
      ++n;
      w.arrived.insert(o.id);
    }
    if (n < o.count)
      return false;
    w.arrived.erase(o.id);
    ++w.barrierSeen[o.id];
    ++w.pc;
    return true;
  }
  case GpuOpKind::Nop:
  case GpuOpKind::Flush:
    ++w.pc;
    return true;
  default:
    break;
  }
  uint32_t end = w.pc;
  while (w.ops[end].fusedWithNext())
    ++end;
  llvm::ArrayRef<GpuOp> g = w.ops.slice(w.pc, end + 1 - w.pc);
  bool inLoop = w.loopEnd != 0;
  uint64_t n = inLoop ? loopSliceBytes(o.bytes, w.loopUnit, w.loopIter) : o.bytes;
  if (n && !group(w, g, inLoop ? w.loopIter * w.loopUnit : 0, n))
    return false;
  w.pc = end + 1;
  return true;
}

ExecResult Exec::run() {
  uint32_t P = k_.numGpus;
  r_.mem.assign(P, std::vector<std::vector<Elems>>(NumBufferKinds));
  valid_.assign(P, std::vector<std::vector<uint8_t>>(NumBufferKinds));
  std::vector<Wg> wgs;
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
    const Kernel &K = k_.kernels[kn];
    for (unsigned b = 0; b < NumBufferKinds; ++b) {
      r_.mem[K.gpu][b].assign(K.bufferBytes[b], Elems());
      valid_[K.gpu][b].assign(K.bufferBytes[b], 0);
    }
    r_.inputBytes = K.buffer(BufferKind::Input);
    for (uint32_t w = 0; w < K.numWorkgroups; ++w) {
      Wg g;
      g.kernel = kn;
      g.index = w;
      g.ops = k_.opsOf(k_.workgroups[K.firstWorkgroup + w]);
      wgs.push_back(g);
    }
  }
  if (r_.inputBytes * P > Elems().size()) {
    r_.error = "the test's inputs are too large for the executor";
    return r_;
  }
  for (const Kernel &K : k_.kernels)
    for (uint64_t x = 0; x < K.buffer(BufferKind::Input); ++x)
      r_.mem[K.gpu][0][x].set(K.gpu * r_.inputBytes + x);
  for (const Semaphore &s : k_.semaphores)
    sem_.push_back(s.init);
  for (;;) {
    bool moved = false, all = true;
    for (Wg &w : wgs) {
      if (w.done())
        continue;
      all = false;
      if (step(w))
        moved = true;
      if (!r_.error.empty())
        return r_;
    }
    if (all) {
      r_.finished = true;
      return r_;
    }
    if (!moved) {
      r_.error = "deadlock: no workgroup can move";
      return r_;
    }
  }
}

} // namespace

ExecResult execute(const KernelLevel &k) { return Exec(k).run(); }

std::string checkCollective(const ExecResult &r, const std::string &kind, uint64_t B) {
  if (!r.finished)
    return "did not finish: " + r.error;
  uint32_t P = uint32_t(r.mem.size());
  auto wrong = [&](uint32_t gpu, uint64_t byte) {
    return "gpu " + std::to_string(gpu) + " output byte " + std::to_string(byte) + " is wrong";
  };
  for (uint32_t i = 0; i < P; ++i) {
    const std::vector<Elems> &out = r.mem[i][unsigned(BufferKind::Output)];
    for (uint64_t x = 0; x < out.size(); ++x) {
      Elems want;
      if (kind == "allreduce") {
        for (uint32_t g = 0; g < P; ++g)
          want.set(g * r.inputBytes + x);
      } else if (kind == "allgather") {
        want.set((x / B) * r.inputBytes + x % B);
      } else if (kind == "reducescatter") {
        for (uint32_t g = 0; g < P; ++g)
          want.set(g * r.inputBytes + i * B + x);
      } else if (kind == "alltoall") {
        want.set((x / B) * r.inputBytes + i * B + x % B);
      } else {
        return "unknown collective " + kind;
      }
      if (out[x] != want)
        return wrong(i, x);
    }
  }
  return "";
}

} // namespace infracc::test
