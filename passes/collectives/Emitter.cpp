#include "passes/collectives/Emitter.h"

#include <cassert>
#include <cmath>

namespace infracc::coll {

uint32_t Emitter::addOp(OpKind k, uint32_t peer, uint64_t size, uint32_t tag) {
  if (f_.ops.size() >= budget_)
    throw OutOfBudget{};
  uint32_t idx = static_cast<uint32_t>(f_.ops.size());
  f_.ops.push_back({k, peer, size, tag, static_cast<uint16_t>(cpu_), static_cast<uint16_t>(nic_)});
  if (opts_.record)
    f_.records.push_back(OpRecord{static_cast<uint32_t>(instance_), DataMode::None, ~0u, 0, 0, 0});
  return idx;
}

void Emitter::record(uint32_t op, DataMode mode, uint64_t payload, DataFn data) {
  OpRecord &r = f_.records[op];
  r.mode = mode;
  r.payload = payload;
  scratch_.clear();
  data(scratch_);
  r.intervalsBegin = static_cast<uint32_t>(f_.intervals.size());
  r.intervalsCount = static_cast<uint32_t>(scratch_.intervals().size());
  f_.intervals.insert(f_.intervals.end(), scratch_.intervals().begin(),
                      scratch_.intervals().end());
}

uint32_t Emitter::send(uint32_t peer, uint64_t payload, DataFn data) {
  uint32_t seq = sendSeq_[peer]++;
  uint64_t wire = barrier_ ? 1 : protocolWireBytes(protocol_, payload);
  uint32_t op = addOp(OpKind::Send, peer, wire, collectiveTag(instance_, seq));
  if (opts_.record)
    record(op, DataMode::Read, payload, data);
  return op;
}

uint32_t Emitter::recv(uint32_t peer, uint64_t payload, bool reduce, DataFn data) {
  uint32_t seq = recvSeq_[peer]++;
  uint64_t wire = barrier_ ? 1 : protocolWireBytes(protocol_, payload);
  uint32_t op = addOp(OpKind::Recv, peer, wire, collectiveTag(instance_, seq));
  lastRecv_ = op;
  uint32_t ready = op;
  if (reduce && opts_.reduceNsPerByte > 0) {
    ready = calc(static_cast<uint64_t>(std::llround(double(payload) * opts_.reduceNsPerByte)));
    req(ready, op);
  }
  if (opts_.record) {
    record(op, reduce ? DataMode::Reduce : DataMode::Copy, payload, data);
    f_.records[op].applyAt = ready;   // fragment-local; rebased when appended
  }
  return ready;
}

uint32_t Emitter::calc(uint64_t ns) { return addOp(OpKind::Calc, 0, ns, 0); }

void Emitter::sequence(uint32_t prevFrom, uint32_t from) {
  uint32_t end = numOps();
  if (prevFrom >= from || from >= end)
    return;
  std::vector<uint8_t> hasPred(end - from, 0), hasSucc(from - prevFrom, 0);
  for (auto [succ, predRaw] : f_.deps) {
    uint32_t pred = predRaw & ~Schedule::IRequiresBit;
    if (succ >= from && pred >= from)
      hasPred[succ - from] = 1;
    if (succ >= prevFrom && succ < from && pred >= prevFrom && pred < from)
      hasSucc[pred - prevFrom] = 1;
  }
  for (uint32_t s = from; s < end; ++s)
    if (!hasPred[s - from])
      for (uint32_t p = prevFrom; p < from; ++p)
        if (!hasSucc[p - prevFrom])
          req(s, p);
}

} // namespace infracc::coll
