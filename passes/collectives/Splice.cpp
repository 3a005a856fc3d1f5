#include "passes/collectives/Splice.h"

namespace infracc::coll {

void Splicer::rank(const Schedule &s, uint32_t r, ScheduleBuilder &b, Fragment &frag,
                   ExpandFn expand) {
  uint32_t first = s.rankBegin(r), n = s.numOps(r);
  b.beginRank(r);
  rootsBegin_.assign(size_t(n) + 1, 0);
  endsBegin_.assign(size_t(n) + 1, 0);
  roots_.clear();
  ends_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t g = first + i;
    rootsBegin_[i] = uint32_t(roots_.size());
    endsBegin_[i] = uint32_t(ends_.size());
    uint32_t base = b.opsInRank();
    frag.clear();
    bool replace = expand(g, base);
    if (!replace || frag.ops.empty()) {
      // Copied, or nothing to do here (e.g. a collective of one rank): one op keeps the
      // program's order through it.
      uint32_t op = replace ? b.addCalc(0, s.cpu(g))
                            : b.addOp(s.kind(g), s.peer(g), s.size(g), s.tag(g), s.cpu(g), s.nic(g));
      roots_.push_back(op);
      ends_.push_back(op);
      continue;
    }
    for (const Fragment::Op &op : frag.ops)
      b.addOp(op.kind, op.peer, op.size, op.tag, op.cpu, op.nic);
    flags_.assign(frag.ops.size(), 0);   // bit 0: has a predecessor, bit 1: a successor
    for (auto [succ, predRaw] : frag.deps) {
      uint32_t pred = predRaw & ~Schedule::IRequiresBit;
      b.addDependency(base + succ, base + pred,
                      (predRaw & Schedule::IRequiresBit) ? DepKind::IRequires : DepKind::Requires);
      flags_[succ] |= 1;
      flags_[pred] |= 2;
    }
    for (uint32_t k = 0; k < frag.ops.size(); ++k) {
      if (!(flags_[k] & 1))
        roots_.push_back(base + k);
      if (!(flags_[k] & 2))
        ends_.push_back(base + k);
    }
  }
  rootsBegin_[n] = uint32_t(roots_.size());
  endsBegin_[n] = uint32_t(ends_.size());
  // The program's dependencies: on an op's start (irequires) its first ops, on its end
  // (requires) its last ops.
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t raw : s.successorsRaw(first + i)) {
      uint32_t succ = raw & ~Schedule::IRequiresBit;
      bool start = raw & Schedule::IRequiresBit;
      uint32_t pb = start ? rootsBegin_[i] : endsBegin_[i];
      uint32_t pe = start ? rootsBegin_[i + 1] : endsBegin_[i + 1];
      const std::vector<uint32_t> &preds = start ? roots_ : ends_;
      for (uint32_t si = rootsBegin_[succ]; si < rootsBegin_[succ + 1]; ++si)
        for (uint32_t pi = pb; pi < pe; ++pi)
          b.addDependency(roots_[si], preds[pi], start ? DepKind::IRequires : DepKind::Requires);
    }
  b.endRank();
}

} // namespace infracc::coll
