#include "ir/LoadStore.h"

#include <cassert>

namespace infracc {

llvm::StringRef instrKindName(InstrKind k) {
  switch (k) {
  case InstrKind::Load: return "Load";
  case InstrKind::Store: return "Store";
  case InstrKind::SemaphoreAcquire: return "SemaphoreAcquire";
  case InstrKind::SemaphoreRelease: return "SemaphoreRelease";
  case InstrKind::Reduce: return "Reduce";
  case InstrKind::Waitcnt: return "Waitcnt";
  case InstrKind::Nop: return "Nop";
  case InstrKind::Barrier: return "Barrier";
  }
  return "?";
}

WavefrontStream::WavefrontStream(const KernelLevel &k, const LoadStoreParams &params,
                                 uint32_t kernel, uint32_t workgroup, uint32_t wavefront)
    : k_(k), p_(params) {
  const Kernel &K = k.kernels[kernel];
  const Workgroup &wg = k.workgroups[K.firstWorkgroup + workgroup];
  ops_ = k.opsOf(wg);
  firstOp_ = wg.firstOp;
  gpu_ = K.gpu;
  wavefront_ = wavefront;
  wavefronts_ = K.wavefronts;
  scratchWrap_ = K.scratchWrap;
  assert(wavefronts_ > 0 && wavefront < wavefronts_ && p_.cacheLine >= 2 && p_.unroll > 0);
}

bool WavefrontStream::next(Segment &seg) {
  for (;;) {
    if (loopEnd_ && pc_ == loopEnd_) {
      phase_ = 0;
      if (++loopIter_ < loopCount_) {
        pc_ = loopBegin_;
      } else {
        loopEnd_ = 0;
        loopIter_ = 0;
      }
      continue;
    }
    if (pc_ >= ops_.size())
      return false;
    const GpuOp &op = ops_[pc_];
    if (op.kind == GpuOpKind::Loop) {
      loopBegin_ = pc_ + 1;
      loopEnd_ = pc_ + 1 + op.id;
      loopCount_ = op.count;
      loopUnit_ = op.bytes;
      loopIter_ = 0;
      pc_ = loopBegin_;
      continue;
    }
    if (isDataOp(op.kind)) {
      if (dataSegment(seg)) {
        fenced_ = false;
        return true;
      }
      continue;
    }
    bool got = controlSegment(op, seg);
    ++pc_;
    if (got) {
      fenced_ = op.kind == GpuOpKind::SemRelease;
      return true;
    }
  }
}

static Instruction waitAll() {
  Instruction w;
  w.kind = InstrKind::Waitcnt;
  return w;   // arg = arg2 = 0: nothing in flight
}

bool WavefrontStream::controlSegment(const GpuOp &op, Segment &seg) {
  seg.body.clear();
  seg.iterations = 1;
  seg.op = firstOp_ + pc_;
  seg.loopIteration = loopEnd_ ? loopIter_ : 0;
  auto add = [&](const Instruction &x) { seg.body.push_back(x); };
  Instruction x;
  x.gpu = gpu_;
  switch (op.kind) {
  case GpuOpKind::SemAcquire:
  case GpuOpKind::SemRelease:
    if (wavefront_ != 0)
      break;
    // The fence: the wavefront's requests so far complete first. A release right after
    // a release needs none of its own (nothing but that release was issued since).
    if (op.kind == GpuOpKind::SemRelease && !fenced_)
      add(waitAll());
    x.kind = op.kind == GpuOpKind::SemAcquire ? InstrKind::SemaphoreAcquire
                                              : InstrKind::SemaphoreRelease;
    x.gpu = k_.semaphores[op.id].gpu;
    x.arg = op.id;
    x.bytes = p_.cacheLine;
    x.flags = (op.flags & gpuop::Proxy) ? instr::Proxy : 0;
    add(x);
    break;
  case GpuOpKind::Nop:
  case GpuOpKind::Barrier:
    add(waitAll());
    x.kind = op.kind == GpuOpKind::Nop ? InstrKind::Nop : InstrKind::Barrier;
    if (op.kind == GpuOpKind::Barrier) {
      x.arg = op.id;
      x.arg2 = op.count;
    }
    add(x);
    break;
  case GpuOpKind::Flush:
    add(waitAll());
    break;
  default:
    break;
  }
  seg.stride.assign(seg.body.size(), 0);
  return !seg.body.empty();
}

bool WavefrontStream::dataSegment(Segment &seg) {
  uint32_t end = pc_;
  while (ops_[end].fusedWithNext())
    ++end;
  ++end;
  llvm::ArrayRef<GpuOp> group = ops_.slice(pc_, end - pc_);
  bool inLoop = loopEnd_ != 0;
  uint64_t shift = inLoop ? loopIter_ * loopUnit_ : 0;
  uint64_t n = inLoop ? loopSliceBytes(group[0].bytes, loopUnit_, loopIter_) : group[0].bytes;
  bool packet = false;
  for (const GpuOp &o : group)
    packet |= (o.readsMemory() && o.src.packet) || (o.writesMemory() && o.dst.packet);
  uint64_t p = packet ? p_.cacheLine / 2 : p_.cacheLine;   // payload per line
  uint64_t lines = (n + p - 1) / p;
  uint64_t lo = lines / wavefronts_ * wavefront_ + std::min<uint64_t>(wavefront_, lines % wavefronts_);
  uint64_t cnt = lines / wavefronts_ + (wavefront_ < lines % wavefronts_ ? 1 : 0);
  bool partial = cnt && n % p && lo + cnt == lines;
  uint64_t full = cnt - (partial ? 1 : 0);
  uint64_t U = p_.unroll, mainIters = full / U, tail = full % U + (partial ? 1 : 0);

  uint64_t first, u, iterations;
  if (phase_ == 0) {
    phase_ = 1;
    if (mainIters == 0)
      return false;
    first = lo;
    u = U;
    iterations = mainIters;
  } else {
    phase_ = 0;
    pc_ = end;
    if (tail == 0)
      return false;
    first = lo + mainIters * U;
    u = tail;
    iterations = 1;
  }
  seg.body.clear();
  seg.stride.clear();
  seg.iterations = iterations;
  seg.op = firstOp_ + uint32_t(group.data() - ops_.data());
  seg.loopIteration = inLoop ? loopIter_ : 0;
  auto payload = [&](uint64_t line) { return line + 1 == lines && n % p ? n % p : p; };
  auto access = [&](InstrKind kind, const GpuOp &o, const BufferRef &r) {
    for (uint64_t j = 0; j < u; ++j) {
      Instruction x;
      x.kind = kind;
      x.buffer = r.buffer;
      x.gpu = r.gpu;
      x.flags = (r.multicast ? instr::Multicast : 0) | (r.packet ? instr::Packet : 0) |
                ((o.flags & gpuop::Proxy) ? instr::Proxy : 0);
      x.address = sliceOffset(r, shift, scratchWrap_) + r.footprint((first + j) * p);
      x.bytes = uint32_t(r.footprint(payload(first + j)));
      seg.body.push_back(x);
      seg.stride.push_back(iterations > 1 ? r.footprint(U * p) : 0);
    }
  };
  bool loads = false;
  for (const GpuOp &o : group)
    if (o.readsMemory()) {
      access(InstrKind::Load, o, o.src);
      loads = true;
    }
  if (loads) {
    seg.body.push_back(waitAll());
    seg.body.back().arg2 = instr::Unlimited;   // loads done; stores may stay in flight
    seg.stride.push_back(0);
  }
  for (const GpuOp &o : group)
    if (o.kind == GpuOpKind::Reduce)
      for (uint64_t j = 0; j < u; ++j) {
        Instruction x;
        x.kind = InstrKind::Reduce;
        x.gpu = gpu_;
        x.bytes = uint32_t(payload(first + j));
        x.arg = o.id;
        seg.body.push_back(x);
        seg.stride.push_back(0);
      }
  for (const GpuOp &o : group)
    if (o.writesMemory())
      access(InstrKind::Store, o, o.dst);
  return true;
}

bool InstructionIterator::next(Instruction &out) {
  while (!started_ || i_ >= seg_.iterations) {
    if (!s_.next(seg_))
      return false;
    started_ = true;
    i_ = 0;
    j_ = 0;
  }
  out = seg_.at(i_, j_);
  if (++j_ == seg_.body.size()) {
    j_ = 0;
    ++i_;
  }
  return true;
}

uint64_t InstructionCounts::total() const {
  uint64_t t = 0;
  for (uint64_t v : byKind)
    t += v;
  return t;
}

InstructionCounts &InstructionCounts::operator+=(const InstructionCounts &o) {
  for (unsigned i = 0; i < 8; ++i)
    byKind[i] += o.byKind[i];
  segments += o.segments;
  return *this;
}

InstructionCounts countInstructions(WavefrontStream s) {
  InstructionCounts c;
  Segment seg;
  while (s.next(seg)) {
    ++c.segments;
    for (const Instruction &x : seg.body)
      c.byKind[unsigned(x.kind)] += seg.iterations;
  }
  return c;
}

} // namespace infracc
