#include "passes/collectives/Algorithms.h"

#include <llvm/ADT/SmallVector.h>

#include <algorithm>

namespace infracc::coll {

uint64_t Layout::extent() const {
  switch (kind) {
  case CollectiveKind::Allreduce:
  case CollectiveKind::Bcast:
  case CollectiveKind::Reduce:
    return bytes;
  case CollectiveKind::Alltoall:
    return uint64_t(members) * members * bytes;
  case CollectiveKind::Alltoallv:
    return pairOffset.empty() ? 0 : pairOffset.back();
  case CollectiveKind::Barrier:
    return members;
  default:
    return uint64_t(members) * bytes;
  }
}

namespace {

using K = CollectiveKind;
using A = CollAlgorithm;
constexpr uint32_t None = Emitter::None;

uint64_t len(Interval i) { return i.hi - i.lo; }
uint32_t mod(int64_t a, uint32_t p) { return uint32_t(((a % int64_t(p)) + p) % p); }
bool isPow2(uint32_t x) { return x && !(x & (x - 1)); }
uint32_t floorPow2(uint32_t x) {
  uint32_t p = 1;
  while (p * 2 <= x && p * 2 != 0)
    p *= 2;
  return p;
}
uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
// Schedgen's virtual ranks for rooted trees: root and 0 swap places.
uint32_t swapRoot(uint32_t r, uint32_t root) { return r == 0 ? root : (r == root ? 0 : r); }

// A sub-interval of `w`: piece i of n.
Interval piece(Interval w, uint64_t n, uint64_t i) {
  uint64_t off = pieceOffset(len(w), n, i);
  return {w.lo + off, w.lo + off + pieceSize(len(w), n, i)};
}

using Intervals = llvm::SmallVector<Interval, 4>;
uint64_t total(const Intervals &v) {
  uint64_t t = 0;
  for (Interval i : v)
    t += len(i);
  return t;
}

// Ops that move a list of intervals.
struct Ops {
  Emitter &e;
  const Group &g;
  uint32_t send(uint32_t member, Interval iv) {
    return e.send(g.ranks[member], len(iv), [&](DataOut &d) { d.add(iv); });
  }
  uint32_t send(uint32_t member, const Intervals &v) {
    return e.send(g.ranks[member], total(v), [&](DataOut &d) {
      for (Interval i : v)
        d.add(i);
    });
  }
  uint32_t recv(uint32_t member, Interval iv, bool reduce) {
    return e.recv(g.ranks[member], len(iv), reduce, [&](DataOut &d) { d.add(iv); });
  }
  uint32_t recv(uint32_t member, const Intervals &v, bool reduce) {
    return e.recv(g.ranks[member], total(v), reduce, [&](DataOut &d) {
      for (Interval i : v)
        d.add(i);
    });
  }
  // `bytes` known without the intervals, which are made only when the data is recorded
  // (-verify-collectives): making them for every message cost O(P) per message.
  using MakeIntervals = llvm::function_ref<Intervals()>;
  uint32_t send(uint32_t member, uint64_t bytes, MakeIntervals make) {
    return e.send(g.ranks[member], bytes, [&](DataOut &d) {
      for (Interval i : make())
        d.add(i);
    });
  }
  uint32_t recv(uint32_t member, uint64_t bytes, MakeIntervals make, bool reduce) {
    return e.recv(g.ranks[member], bytes, reduce, [&](DataOut &d) {
      for (Interval i : make())
        d.add(i);
    });
  }
};

// Members' blocks all have one length (Layout::block): a run of them is that many.
uint64_t blocksBytes(const Layout &L, uint64_t count) { return count * len(L.block(0)); }

// --- Ring -------------------------------------------------------------------------------

// NCCL's Simple protocol moves a step's data as up to `count` slices (AlgoParams::slicing);
// without slicing, one message.
llvm::SmallVector<Interval, 4> slicesOf(Interval iv, const Slicing &s) {
  uint64_t n = len(iv);
  if (s.count <= 1 || n == 0)
    return {iv};
  uint64_t size = std::max(ceilDiv(n, uint64_t(s.count) * s.align) * s.align, s.minBytes);
  size = std::max<uint64_t>(size, 1);
  llvm::SmallVector<Interval, 4> v;
  for (uint64_t off = 0; off < n && v.size() < s.count; off += size)
    v.push_back({iv.lo + off, iv.lo + std::min(n, off + size)});
  v.back().hi = iv.hi;   // the rule leaves nothing over; keep every byte regardless
  return v;
}

/// One ring step, slice by slice: slice k is sent after slice k of the previous step was
/// received (the data it forwards; all of it when the slice counts differ), then slice k
/// of this step is received. `last` holds the previous step's recvs, this step's after.
void ringStep(Emitter &e, Ops &o, uint32_t next, uint32_t prev, Interval sendIv, Interval recvIv,
              bool reduce, const Slicing &s, llvm::SmallVectorImpl<uint32_t> &last) {
  auto sv = slicesOf(sendIv, s), rv = slicesOf(recvIv, s);
  for (size_t k = 0; k < sv.size(); ++k) {
    uint32_t snd = o.send(next, sv[k]);
    if (last.size() == sv.size())
      e.req(snd, last[k]);
    else
      for (uint32_t l : last)
        e.req(snd, l);
  }
  last.clear();
  for (Interval r : rv)
    last.push_back(o.recv(prev, r, reduce));
}

// Schedgen's allreduce_ring per pipeline loop: 2(P-1) steps of send to the next rank
// and recv from the previous one, each send after the previous recv.
void ringAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  Interval w = L.whole();
  uint64_t loops = p.chunkBytes ? std::max<uint64_t>(1, ceilDiv(len(w), p.chunkBytes * P)) : 1;
  uint32_t next = (me + 1) % P, prev = (me + P - 1) % P;
  for (uint64_t l = 0; l < loops; ++l) {
    Interval lw = piece(w, loops, l);
    llvm::SmallVector<uint32_t, 4> last;
    for (int phase = 0; phase < 2; ++phase)
      for (uint32_t s = 0; s + 1 < P; ++s) {
        uint32_t sb = phase == 0 ? mod(int64_t(me) - s, P) : mod(int64_t(me) + 1 - s, P);
        uint32_t rb = phase == 0 ? mod(int64_t(me) - s - 1, P) : mod(int64_t(me) - s, P);
        ringStep(e, o, next, prev, piece(lw, P, sb), piece(lw, P, rb), phase == 0, p.slicing,
                 last);
      }
  }
}

// Allgather (reduce = false) and reduce-scatter (true) on a ring: P-1 steps.
void ringBlocks(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p, bool reduce) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  uint64_t blockLen = len(L.block(0));
  uint64_t loops = p.chunkBytes ? std::max<uint64_t>(1, ceilDiv(blockLen, p.chunkBytes)) : 1;
  uint32_t next = (me + 1) % P, prev = (me + P - 1) % P;
  int64_t shift = reduce ? -1 : 0;
  for (uint64_t l = 0; l < loops; ++l) {
    llvm::SmallVector<uint32_t, 4> last;
    for (uint32_t s = 0; s + 1 < P; ++s) {
      uint32_t sb = mod(int64_t(me) - s + shift, P), rb = mod(int64_t(me) - s - 1 + shift, P);
      ringStep(e, o, next, prev, piece(L.block(sb), loops, l), piece(L.block(rb), loops, l),
               reduce, p.slicing, last);
    }
  }
}

// Bcast and reduce along a chain (the ring without its closing edge), pipelined in
// chunks: bcast runs root, root+1, ...; reduce runs root+1, ..., root.
void ringChain(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p, bool reduce) {
  uint32_t P = g.size();
  if (P == 1)
    return;
  Ops o{e, g};
  Interval w = L.whole();
  uint64_t chunks = p.chunkBytes ? std::max<uint64_t>(1, ceilDiv(len(w), p.chunkBytes)) : 1;
  uint32_t first = reduce ? (p.root + 1) % P : p.root;
  uint32_t pos = mod(int64_t(g.me) - first, P);
  uint32_t next = (g.me + 1) % P, prev = (g.me + P - 1) % P;
  for (uint64_t c = 0; c < chunks; ++c) {
    auto slices = slicesOf(piece(w, chunks, c), p.slicing);
    for (Interval iv : slices) {
      uint32_t r = pos > 0 ? o.recv(prev, iv, reduce) : None;
      if (pos + 1 < P)
        e.req(o.send(next, iv), r);
    }
  }
}

// --- Recursive doubling and halving ----------------------------------------------------

// MPICH's fold for non-powers of two: of the first 2*rem ranks, the even ones hand
// their data to the odd ones and sit out; `newrank` is the position among the pof2
// ranks that take part (-1 for those sitting out).
struct Fold {
  uint32_t pof2, rem;
  int64_t newrank;
  uint32_t real(uint32_t nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
  // The first block (in group order) that newrank nr is responsible for.
  uint32_t firstBlock(uint32_t nr) const { return nr < rem ? nr * 2 : nr + rem; }
};
Fold fold(uint32_t P, uint32_t me) {
  Fold f;
  f.pof2 = floorPow2(P);
  f.rem = P - f.pof2;
  if (me < 2 * f.rem)
    f.newrank = (me % 2 == 0) ? int64_t(-1) : int64_t(me / 2);
  else
    f.newrank = int64_t(me) - int64_t(f.rem);
  return f;
}

void recDoubAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  Interval w = L.whole();
  Fold f = fold(P, me);
  uint32_t last = None;
  if (me < 2 * f.rem) {
    if (me % 2 == 0)
      last = o.send(me + 1, w);
    else
      last = o.recv(me - 1, w, true);
  }
  if (f.newrank >= 0) {
    for (uint32_t mask = 1; mask < f.pof2; mask <<= 1) {
      uint32_t dst = f.real(uint32_t(f.newrank) ^ mask);
      uint32_t snd = o.send(dst, w);
      e.req(snd, last);
      last = o.recv(dst, w, true);
      // The recv combines into the buffer the send reads: it must not land first.
      e.ireq(e.lastRecvOp(), snd);
    }
  }
  if (me < 2 * f.rem) {
    if (me % 2 == 1)
      e.req(o.send(me - 1, w), last);
    else
      o.recv(me + 1, w, false);
  }
}

// Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling allgather
// (Schedgen's allreduce_recdoub for powers of two), with the fold for the others.
void rabenseifnerAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  Interval w = L.whole();
  Fold f = fold(P, me);
  auto range = [&](uint32_t lo, uint32_t hi) {
    return Interval{w.lo + pieceOffset(len(w), f.pof2, lo), w.lo + pieceOffset(len(w), f.pof2, hi)};
  };
  uint32_t last = None;
  std::vector<uint32_t> recvs;   // every recv so far: later sends forward their data
  auto dataDeps = [&](uint32_t snd) {
    e.req(snd, last);
    if (!p.schedgenDeps)
      for (uint32_t r : recvs)
        if (r != last)
          e.req(snd, r);
  };
  if (me < 2 * f.rem) {
    if (me % 2 == 0)
      o.send(me + 1, w);
    else
      recvs.push_back(last = o.recv(me - 1, w, true));
  }
  if (f.newrank >= 0) {
    uint32_t nr = uint32_t(f.newrank);
    uint32_t lo = 0, hi = f.pof2;
    std::vector<std::pair<uint32_t, uint32_t>> stack;
    for (uint32_t mask = 1; mask < f.pof2; mask <<= 1) {
      uint32_t dst = f.real(nr ^ mask), half = (hi - lo) / 2;
      bool keepLow = !(nr & mask);
      Interval keep = keepLow ? range(lo, lo + half) : range(lo + half, hi);
      Interval give = keepLow ? range(lo + half, hi) : range(lo, lo + half);
      uint32_t snd = o.send(dst, give);
      dataDeps(snd);
      recvs.push_back(last = o.recv(dst, keep, true));
      stack.push_back({lo, hi});
      if (keepLow)
        hi = lo + half;
      else
        lo = lo + half;
    }
    for (uint32_t mask = f.pof2 >> 1; mask >= 1; mask >>= 1) {
      uint32_t dst = f.real(nr ^ mask);
      auto [plo, phi] = stack.back();
      stack.pop_back();
      uint32_t olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo;
      uint32_t snd = o.send(dst, range(lo, hi));
      dataDeps(snd);
      recvs.push_back(last = o.recv(dst, range(olo, ohi), false));
      lo = plo;
      hi = phi;
    }
  }
  if (me < 2 * f.rem) {
    if (me % 2 == 1)
      dataDeps(o.send(me - 1, w));
    else
      o.recv(me + 1, w, false);
  }
}

// Reduce-scatter by recursive halving (block i ends on member i), with the fold.
void halvingReduceScatter(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  Fold f = fold(P, me);
  auto blocks = [&](uint32_t firstBlock, uint32_t endBlock) {
    Intervals v;
    for (uint32_t b = firstBlock; b < endBlock; ++b)
      v.push_back(L.block(b));
    return v;
  };
  auto newBlocks = [&](uint32_t lo, uint32_t hi) {
    return blocks(f.firstBlock(lo), hi == f.pof2 ? P : f.firstBlock(hi));
  };
  std::vector<uint32_t> recvs;
  auto after = [&](uint32_t snd) {
    for (uint32_t r : recvs)
      e.req(snd, r);
  };
  if (me < 2 * f.rem) {
    if (me % 2 == 0)
      o.send(me + 1, blocks(0, P));
    else
      recvs.push_back(o.recv(me - 1, blocks(0, P), true));
  }
  if (f.newrank >= 0) {
    uint32_t nr = uint32_t(f.newrank), lo = 0, hi = f.pof2;
    for (uint32_t mask = f.pof2 >> 1; mask >= 1; mask >>= 1) {
      uint32_t dst = f.real(nr ^ mask), half = (hi - lo) / 2;
      bool keepLow = !(nr & mask);
      Intervals keep = keepLow ? newBlocks(lo, lo + half) : newBlocks(lo + half, hi);
      Intervals give = keepLow ? newBlocks(lo + half, hi) : newBlocks(lo, lo + half);
      after(o.send(dst, give));
      recvs.push_back(o.recv(dst, keep, true));
      if (keepLow)
        hi = lo + half;
      else
        lo += half;
    }
  }
  if (me < 2 * f.rem) {
    if (me % 2 == 1)
      after(o.send(me - 1, L.block(me - 1)));
    else
      o.recv(me + 1, L.block(me), false);
  }
}

// Allgather by recursive doubling, with the fold.
void recDoubAllgather(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  if (P == 1)
    return;
  Ops o{e, g};
  Fold f = fold(P, me);
  auto newBlocks = [&](uint32_t lo, uint32_t hi) {
    Intervals v;
    uint32_t end = hi >= f.pof2 ? P : f.firstBlock(hi);
    for (uint32_t b = f.firstBlock(lo); b < end; ++b)
      v.push_back(L.block(b));
    return v;
  };
  std::vector<uint32_t> recvs;
  auto after = [&](uint32_t snd) {
    for (uint32_t r : recvs)
      e.req(snd, r);
  };
  if (me < 2 * f.rem) {
    if (me % 2 == 0)
      o.send(me + 1, L.block(me));
    else
      recvs.push_back(o.recv(me - 1, L.block(me - 1), false));
  }
  if (f.newrank >= 0) {
    uint32_t nr = uint32_t(f.newrank);
    for (uint32_t mask = 1; mask < f.pof2; mask <<= 1) {
      uint32_t dst = f.real(nr ^ mask);
      uint32_t mine = nr & ~(mask - 1), theirs = (nr ^ mask) & ~(mask - 1);
      after(o.send(dst, newBlocks(mine, mine + mask)));
      recvs.push_back(o.recv(dst, newBlocks(theirs, theirs + mask), false));
    }
  }
  if (me < 2 * f.rem) {
    if (me % 2 == 1)
      after(o.send(me - 1, newBlocks(0, f.pof2)));
    else
      o.recv(me + 1, newBlocks(0, f.pof2), false);
  }
}

// --- Trees -------------------------------------------------------------------------

// Binomial trees moving `w` (an interval or a list of them) from or to member `root`.
// Schedgen's binomialtreebcast (virtual ranks swap root and 0).
template <class Data>
void binomialBcastOf(Emitter &e, const Group &g, uint32_t root, const Data &w) {
  uint32_t P = g.size();
  Ops o{e, g};
  uint32_t v = swapRoot(g.me, root), recv = None;
  for (uint64_t bit = 1; bit < P; bit <<= 1) {
    if (v < bit && v + bit < P) {
      uint32_t snd = o.send(swapRoot(uint32_t(v + bit), root), w);
      e.req(snd, recv);
    }
    if (v >= bit && v < 2 * bit)
      recv = o.recv(swapRoot(uint32_t(v - bit), root), w, false);
  }
}

// Schedgen's binomialtreereduce: the send to the parent comes first in op order and
// requires every recv from the children.
template <class Data>
void binomialReduceOf(Emitter &e, const Group &g, uint32_t root, const Data &w) {
  uint32_t P = g.size();
  Ops o{e, g};
  uint32_t v = swapRoot(g.me, root), send = None;
  for (uint64_t bit = 1; bit < P; bit <<= 1) {
    if (v < bit && v + bit < P)
      e.req(send, o.recv(swapRoot(uint32_t(v + bit), root), w, true));
    if (v >= bit && v < 2 * bit)
      send = o.send(swapRoot(uint32_t(v - bit), root), w);
  }
}

void binomialBcast(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  binomialBcastOf(e, g, p.root, L.whole());
}
void binomialReduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  binomialReduceOf(e, g, p.root, L.whole());
}

// Members [a, b) of the rotated order (vrank = member - root) as blocks.
Intervals rotatedBlocks(const Layout &L, uint32_t P, uint32_t root, uint32_t a, uint32_t b) {
  Intervals v;
  for (uint32_t i = a; i < b; ++i)
    v.push_back(L.block((i + root) % P));
  return v;
}

void binomialGather(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  Ops o{e, g};
  uint32_t v = mod(int64_t(g.me) - p.root, P);
  std::vector<uint32_t> recvs;
  for (uint64_t mask = 1; mask < P; mask <<= 1) {
    if (v & mask) {
      uint32_t snd = o.send((v - uint32_t(mask) + p.root) % P,
                            rotatedBlocks(L, P, p.root, v, uint32_t(std::min<uint64_t>(v + mask, P))));
      for (uint32_t r : recvs)
        e.req(snd, r);
      break;
    }
    if (v + mask < P)
      recvs.push_back(o.recv((v + uint32_t(mask) + p.root) % P,
                             rotatedBlocks(L, P, p.root, v + uint32_t(mask),
                                           uint32_t(std::min<uint64_t>(v + 2 * mask, P))),
                             false));
  }
}

void binomialScatter(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  Ops o{e, g};
  uint32_t v = mod(int64_t(g.me) - p.root, P);
  uint64_t top = 1;
  while (top < P)
    top <<= 1;
  uint32_t recv = None;
  uint64_t mask = top;
  if (v) {
    mask = v & (~v + 1);   // lowest set bit
    recv = o.recv((v - uint32_t(mask) + p.root) % P,
                  rotatedBlocks(L, P, p.root, v, uint32_t(std::min<uint64_t>(v + mask, P))),
                  false);
  }
  for (mask >>= 1; mask >= 1; mask >>= 1)
    if (v + mask < P)
      e.req(o.send((v + uint32_t(mask) + p.root) % P,
                   rotatedBlocks(L, P, p.root, v + uint32_t(mask),
                                 uint32_t(std::min<uint64_t>(v + 2 * mask, P)))),
            recv);
}

// Schedgen's binarytreebcast: breadth-first numbering, children 2v+1 and 2v+2.
void binaryBcast(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  Ops o{e, g};
  Interval w = L.whole();
  uint64_t v = swapRoot(g.me, p.root);
  uint32_t recv = None;
  if (v > 0)
    recv = o.recv(swapRoot(uint32_t((v - 1) / 2), p.root), w, false);
  for (uint64_t c = 2 * v + 1; c <= 2 * v + 2 && c < P; ++c)
    e.req(o.send(swapRoot(uint32_t(c), p.root), w), recv);
}

void binaryReduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  Ops o{e, g};
  Interval w = L.whole();
  uint64_t v = swapRoot(g.me, p.root);
  llvm::SmallVector<uint32_t, 2> recvs;
  for (uint64_t c = 2 * v + 1; c <= 2 * v + 2 && c < P; ++c)
    recvs.push_back(o.recv(swapRoot(uint32_t(c), p.root), w, true));
  if (v > 0) {
    uint32_t snd = o.send(swapRoot(uint32_t((v - 1) / 2), p.root), w);
    for (uint32_t r : recvs)
      e.req(snd, r);
  }
}

// A rank's place in a tree: its parent and its children (-1: none).
struct TreeLinks {
  int64_t up = -1;
  llvm::SmallVector<int64_t, 3> down{-1, -1};
};
// NCCL's binary tree (ncclGetBtree): parent and up to two children of `rank`.
TreeLinks btree(int64_t P, int64_t rank) {
  TreeLinks t;
  int64_t bit = 1;
  while (bit < P && !(bit & rank))
    bit <<= 1;
  if (rank == 0) {
    t.down[1] = P > 1 ? bit >> 1 : -1;
    return t;
  }
  int64_t up = (rank ^ bit) | (bit << 1);
  if (up >= P)
    up = rank ^ bit;
  t.up = up;
  int64_t low = bit >> 1;
  t.down[0] = low == 0 ? -1 : rank - low;
  int64_t d1 = low == 0 ? -1 : rank + low;
  while (d1 >= P) {
    low >>= 1;
    d1 = low == 0 ? -1 : rank + low;
  }
  t.down[1] = d1;
  return t;
}
// NCCL's second tree: the first one shifted by one rank (odd P) or mirrored (even P).
TreeLinks dtree(int64_t P, int64_t rank, int tree) {
  if (tree == 0)
    return btree(P, rank);
  TreeLinks t, b;
  auto map = [&](int64_t x, bool shift) {
    return x < 0 ? -1 : (shift ? (x + 1) % P : P - 1 - x);
  };
  bool shift = P % 2 == 1;
  b = btree(P, shift ? (rank - 1 + P) % P : P - 1 - rank);
  t.up = map(b.up, shift);
  t.down[0] = map(b.down[0], shift);
  t.down[1] = map(b.down[1], shift);
  return t;
}

// NCCL's tree allreduce on one or more trees: the data is split evenly between the trees;
// each part reduces up its tree and is broadcast back down, pipelined in chunks.
void treesAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p,
                    llvm::ArrayRef<TreeLinks> t) {
  Ops o{e, g};
  Interval w = L.whole();
  size_t K = t.size();
  llvm::SmallVector<Interval, 2> part;
  for (size_t k = 0; k < K; ++k)
    part.push_back(piece(w, K, k));
  uint64_t chunks = 1;
  if (p.chunkBytes)
    chunks = std::max<uint64_t>(1, ceilDiv(len(part[0]), p.chunkBytes));
  // At a tree's root, the ops after which chunk c of tree k is fully reduced.
  std::vector<llvm::SmallVector<uint32_t, 3>> reduced(chunks * K);
  for (uint64_t c = 0; c < chunks; ++c)
    for (size_t k = 0; k < K; ++k) {
      Interval iv = piece(part[k], chunks, c);
      llvm::SmallVector<uint32_t, 3> recvs;
      for (int64_t d : t[k].down)
        if (d >= 0)
          recvs.push_back(o.recv(uint32_t(d), iv, true));
      if (t[k].up >= 0) {
        uint32_t snd = o.send(uint32_t(t[k].up), iv);
        for (uint32_t r : recvs)
          e.req(snd, r);
      } else {
        reduced[c * K + k] = recvs;
      }
    }
  for (uint64_t c = 0; c < chunks; ++c)
    for (size_t k = 0; k < K; ++k) {
      Interval iv = piece(part[k], chunks, c);
      llvm::SmallVector<uint32_t, 3> ready = reduced[c * K + k];
      if (t[k].up >= 0)
        ready.push_back(o.recv(uint32_t(t[k].up), iv, false));
      for (int64_t d : t[k].down)
        if (d >= 0) {
          uint32_t snd = o.send(uint32_t(d), iv);
          for (uint32_t r : ready)
            e.req(snd, r);
        }
    }
}

// NCCL's double binary tree: half of each channel's data on each of the two trees.
void dbtreeAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  if (P == 1)
    return;
  TreeLinks t[2] = {dtree(P, g.me, 0), dtree(P, g.me, 1)};
  treesAllreduce(e, g, L, p, t);
}

// The tree the communicator declares (`tree` in its declaration; NCCL's tree of one
// channel, as a trace prints it): children in member order, any number of them.
void givenTreeAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  if (g.size() == 1)
    return;
  TreeLinks t;
  t.up = p.treeUp[g.me];
  t.down.assign(p.treeDown.begin(), p.treeDown.end());
  treesAllreduce(e, g, L, p, llvm::ArrayRef<TreeLinks>(t));
}

// --- Dissemination, linear, pairwise, Bruck, direct ------------------------------------

// Schedgen's dissemination (a barrier with 1-byte messages); what a rank forwards in
// round k is everything it learnt before, so the send needs every earlier recv.
void disseminationBarrier(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  std::vector<uint32_t> recvs;
  auto known = [&](uint32_t at, uint64_t count) {   // members at-count+1 .. at
    Intervals v;
    for (uint64_t i = 0; i < count && i < P; ++i)
      v.push_back(L.block(mod(int64_t(at) - int64_t(i), P)));
    std::sort(v.begin(), v.end(), [](Interval a, Interval b) { return a.lo < b.lo; });
    return v;
  };
  for (uint64_t dist = 1; dist < P; dist <<= 1) {
    // What the receiver does not know yet: at most P - dist members.
    uint64_t count = std::min<uint64_t>(dist, P - dist);
    const uint32_t from = mod(int64_t(me) - int64_t(dist), P);
    uint32_t snd = o.send(uint32_t((me + dist) % P), blocksBytes(L, count),
                          [&] { return known(me, count); });
    if (!recvs.empty())
      e.req(snd, recvs.back());
    if (!p.schedgenDeps)
      for (size_t i = 0; i + 1 < recvs.size(); ++i)
        e.req(snd, recvs[i]);
    recvs.push_back(o.recv(from, blocksBytes(L, count), [&] { return known(from, count); },
                           false));
  }
}

void linearRooted(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  uint32_t P = g.size();
  Ops o{e, g};
  uint32_t v = swapRoot(g.me, p.root);
  bool toRoot = L.kind == K::Reduce || L.kind == K::Gather;
  auto data = [&](uint32_t member) {
    return (L.kind == K::Gather || L.kind == K::Scatter) ? L.block(member) : L.whole();
  };
  if (v == 0) {
    for (uint32_t i = 1; i < P; ++i) {
      uint32_t peer = swapRoot(i, p.root);
      if (toRoot)
        o.recv(peer, data(peer), L.kind == K::Reduce);
      else
        o.send(peer, data(peer));
    }
  } else if (toRoot) {
    o.send(p.root, data(g.me));
  } else {
    o.recv(p.root, data(g.me), false);
  }
}

// Everyone tells member 0, which then tells everyone.
void linearBarrier(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size();
  if (P == 1)
    return;
  Ops o{e, g};
  Intervals all;
  all.push_back({L.block(0).lo, L.block(P - 1).hi});
  if (g.me == 0) {
    std::vector<uint32_t> recvs;
    for (uint32_t i = 1; i < P; ++i)
      recvs.push_back(o.recv(i, L.block(i), false));
    for (uint32_t i = 1; i < P; ++i) {
      uint32_t snd = o.send(i, all);
      for (uint32_t r : recvs)
        e.req(snd, r);
    }
  } else {
    uint32_t snd = o.send(0, L.block(g.me));
    e.req(o.recv(0, all, false), snd);
  }
}

// Schedgen's linear_alltoall: in step s, send to me+s and recv from me-s, no order.
void linearAlltoall(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t to = (me + s) % P, from = mod(int64_t(me) - s, P);
    o.send(to, L.pair(me, to));
    o.recv(from, L.pair(from, me), false);
  }
}

// MPICH's pairwise exchange: one partner per step (XOR for powers of two), each
// step after the previous one.
void pairwiseAlltoall(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  uint32_t prev = None;
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t to = isPow2(P) ? me ^ s : (me + s) % P;
    uint32_t from = isPow2(P) ? me ^ s : mod(int64_t(me) - s, P);
    uint32_t snd = o.send(to, L.pair(me, to));
    e.req(snd, prev);
    uint32_t rcv = o.recv(from, L.pair(from, me), false);
    e.req(rcv, prev);
    prev = rcv;
  }
}

void pairwiseReduceScatter(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  uint32_t prev = None;
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t to = (me + s) % P, from = mod(int64_t(me) - s, P);
    uint32_t snd = o.send(to, L.block(to));
    e.req(snd, prev);
    uint32_t rcv = o.recv(from, L.block(me), true);
    e.req(rcv, prev);
    prev = rcv;
  }
}

// Bruck's allgather: in round k, send what I hold (blocks me .. me+2^k-1) to me-2^k.
void bruckAllgather(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  std::vector<uint32_t> recvs;
  auto blocks = [&](uint32_t from, uint64_t count) {
    Intervals v;
    for (uint64_t i = 0; i < count; ++i)
      v.push_back(L.block(uint32_t((from + i) % P)));
    std::sort(v.begin(), v.end(), [](Interval a, Interval b) { return a.lo < b.lo; });
    return v;
  };
  for (uint64_t dist = 1; dist < P; dist <<= 1) {
    uint64_t count = std::min<uint64_t>(dist, P - dist);
    const uint32_t from = uint32_t((me + dist) % P);
    uint32_t snd = o.send(mod(int64_t(me) - int64_t(dist), P), blocksBytes(L, count),
                          [&] { return blocks(me, count); });
    for (uint32_t r : recvs)
      e.req(snd, r);
    recvs.push_back(o.recv(from, blocksBytes(L, count), [&] { return blocks(from, count); },
                           false));
    e.ireq(e.lastRecvOp(), snd);
  }
}

// Bruck's alltoall: in round k, the blocks whose index (destination - source, after
// the local rotation) has bit k set travel 2^k ranks further.
void bruckAlltoall(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  std::vector<uint32_t> recvs;
  auto blocks = [&](uint32_t holder, uint64_t dist) {
    Intervals v;
    for (uint64_t i = 1; i < P; ++i)
      if (i & dist) {
        uint32_t src = mod(int64_t(holder) - int64_t(i % dist), P);
        v.push_back(L.pair(src, uint32_t((src + i) % P)));
      }
    std::sort(v.begin(), v.end(), [](Interval a, Interval b) { return a.lo < b.lo; });
    return v;
  };
  // The bytes a holder forwards in round `dist`: with equal pairs, how many indices in
  // [1, P) have that bit, times a pair; alltoallv's pairs differ and are added up.
  auto bytes = [&](uint32_t holder, uint64_t dist) {
    if (L.kind != K::Alltoallv) {
      const uint64_t withBit = (P / (2 * dist)) * dist + (P % (2 * dist) > dist ? P % (2 * dist) - dist : 0);
      return withBit * len(L.pair(0, 0));
    }
    uint64_t t = 0;
    for (uint64_t i = 1; i < P; ++i)
      if (i & dist) {
        uint32_t src = mod(int64_t(holder) - int64_t(i % dist), P);
        t += len(L.pair(src, uint32_t((src + i) % P)));
      }
    return t;
  };
  for (uint64_t dist = 1; dist < P; dist <<= 1) {
    uint32_t to = uint32_t((me + dist) % P), from = mod(int64_t(me) - int64_t(dist), P);
    uint32_t snd = o.send(to, bytes(me, dist), [&] { return blocks(me, dist); });
    for (uint32_t r : recvs)
      e.req(snd, r);
    recvs.push_back(o.recv(from, bytes(from, dist), [&] { return blocks(from, dist); }, false));
    e.ireq(e.lastRecvOp(), snd);
  }
}

void directAllgather(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  for (uint32_t s = 1; s < P; ++s)
    o.send((me + s) % P, L.block(me));
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t from = mod(int64_t(me) - s, P);
    o.recv(from, L.block(from), false);
  }
}

// Reduce-scatter by sending every block straight to its owner; for allreduce the
// owners then send the reduced blocks to everyone.
void directReduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &, bool allreduce) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  auto blk = [&](uint32_t i) { return allreduce ? piece(L.whole(), P, i) : L.block(i); };
  std::vector<uint32_t> recvs;
  for (uint32_t s = 1; s < P; ++s)
    o.send((me + s) % P, blk((me + s) % P));
  for (uint32_t s = 1; s < P; ++s)
    recvs.push_back(o.recv(mod(int64_t(me) - s, P), blk(me), true));
  if (!allreduce)
    return;
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t snd = o.send((me + s) % P, blk(me));
    for (uint32_t r : recvs)
      e.req(snd, r);
  }
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t from = mod(int64_t(me) - s, P);
    o.recv(from, blk(from), false);
  }
}

void directAlltoall(Emitter &e, const Group &g, const Layout &L, const AlgoParams &) {
  uint32_t P = g.size(), me = g.me;
  Ops o{e, g};
  for (uint32_t s = 1; s < P; ++s)
    o.send((me + s) % P, L.pair(me, (me + s) % P));
  for (uint32_t s = 1; s < P; ++s) {
    uint32_t from = mod(int64_t(me) - s, P);
    o.recv(from, L.pair(from, me), false);
  }
}

// --- Composition -------------------------------------------------------------------

// Runs `a` for `k` on a subgroup (global ranks `ranks`, this rank at `me`).
void sub(Emitter &e, CollAlgorithm a, CollectiveKind k, llvm::ArrayRef<uint32_t> ranks,
         uint32_t me, const Layout &L, const AlgoParams &p, uint32_t root) {
  Group g{ranks, me};
  Layout l = L;
  l.kind = k;
  l.members = g.size();
  AlgoParams q = p;
  q.root = root;
  q.hostOf = {};
  generate(e, a, g, l, q);
}

// Reduce to allreduce (tree reduce, then tree bcast from the same root).
void treeAllreduce(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p,
                   CollAlgorithm tree) {
  uint32_t start = e.numOps();
  sub(e, tree, K::Reduce, g.ranks, g.me, L, p, 0);
  uint32_t mid = e.numOps();
  sub(e, tree, K::Bcast, g.ranks, g.me, L, p, 0);
  e.sequence(start, mid);
}

// The hosts of a group: hosts in order of first appearance, each with its members (group
// indices, in group order) and its leader: the first member, or the root on the root's
// host.
struct Hosts {
  std::vector<std::vector<uint32_t>> members;
  std::vector<uint32_t> leader;   // per host: the leading member
  std::vector<uint32_t> hostOf;   // per member: its host
  Hosts(const Group &g, const AlgoParams &p, bool rooted) : hostOf(g.size()) {
    llvm::SmallVector<uint32_t, 16> ids;
    for (uint32_t i = 0; i < g.size(); ++i) {
      auto it = std::find(ids.begin(), ids.end(), p.hostOf[i]);
      hostOf[i] = uint32_t(it - ids.begin());
      if (it == ids.end()) {
        ids.push_back(p.hostOf[i]);
        members.emplace_back();
        leader.push_back(i);
      }
      members[hostOf[i]].push_back(i);
    }
    if (rooted)
      leader[hostOf[p.root]] = p.root;
  }
  static std::vector<uint32_t> ranks(const Group &g, llvm::ArrayRef<uint32_t> idx) {
    std::vector<uint32_t> out;
    for (uint32_t i : idx)
      out.push_back(g.ranks[i]);
    return out;
  }
  /// Where `member` is in `idx` (idx.size() when it is not).
  static uint32_t position(llvm::ArrayRef<uint32_t> idx, uint32_t member) {
    return uint32_t(std::find(idx.begin(), idx.end(), member) - idx.begin());
  }
};

// Runs phases in order: a phase's first ops wait for the previous phase's last ones.
struct Phases {
  Emitter &e;
  llvm::SmallVector<uint32_t, 4> starts;
  template <class Fn> void operator()(Fn &&run) {
    uint32_t start = e.numOps();
    run();
    if (e.numOps() == start)
      return;
    if (!starts.empty())
      e.sequence(starts.back(), start);
    starts.push_back(start);
  }
};

// Allreduce, bcast and reduce: intra-host (binomial reduce to the host's leader), across
// the hosts' leaders (the algorithm the policy picks for their number), intra-host
// again (binomial bcast).
void hierarchicalWhole(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  bool rooted = L.kind != K::Allreduce;
  Hosts H(g, p, rooted);
  uint32_t myHost = H.hostOf[g.me];
  const std::vector<uint32_t> &mine = H.members[myHost];
  std::vector<uint32_t> local = Hosts::ranks(g, mine), leaders = Hosts::ranks(g, H.leader);
  uint32_t meLocal = Hosts::position(mine, g.me);
  uint32_t leaderLocal = Hosts::position(mine, H.leader[myHost]);
  uint32_t meLeader = Hosts::position(H.leader, g.me);
  uint32_t rootLeader = rooted ? H.hostOf[p.root] : 0;
  Phases phase{e, {}};
  bool up = L.kind == K::Allreduce || L.kind == K::Reduce;
  if (up && local.size() > 1)
    phase([&] { sub(e, A::Binomial, K::Reduce, local, meLocal, L, p, leaderLocal); });
  if (meLeader < leaders.size() && leaders.size() > 1)
    phase([&] { sub(e, p.acrossHosts, L.kind, leaders, meLeader, L, p, rootLeader); });
  if (L.kind != K::Reduce && local.size() > 1)
    phase([&] { sub(e, A::Binomial, K::Bcast, local, meLocal, L, p, leaderLocal); });
}

// Allgather and reduce-scatter, whose data is one block per member: a host's blocks are
// those of its members, wherever they sit in the group. Allgather: the members send their
// blocks to the host's leader, the leaders pass the hosts' blocks round a ring, each
// leader broadcasts all blocks in its host (binomial). Reduce-scatter: a binomial reduce
// of all blocks to each leader, a reduce-scatter ring of the hosts' blocks among the
// leaders, then each leader sends every member of its host its block.
void hierarchicalBlocks(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  Hosts H(g, p, false);
  Ops o{e, g};
  const uint32_t nh = uint32_t(H.members.size()), h = H.hostOf[g.me];
  const std::vector<uint32_t> &mine = H.members[h];
  const uint32_t leader = H.leader[h];
  std::vector<uint32_t> localRanks = Hosts::ranks(g, mine);
  Group local{localRanks, Hosts::position(mine, g.me)};
  auto blocksOf = [&](uint32_t host) {
    Intervals v;
    for (uint32_t i : H.members[host])
      v.push_back(L.block(i));
    return v;
  };
  Intervals all;
  for (uint32_t i = 0; i < g.size(); ++i)
    all.push_back(L.block(i));
  const bool reduce = L.kind == K::Reducescatter;
  // The leaders' ring: step s passes on host h - s (allgather) or host h - s - 1
  // (reduce-scatter, so that leader h ends with its own host's blocks reduced).
  auto ring = [&] {
    uint32_t next = H.leader[(h + 1) % nh], prev = H.leader[(h + nh - 1) % nh], last = None;
    int64_t shift = reduce ? -1 : 0;
    for (uint32_t s = 0; s + 1 < nh; ++s) {
      uint32_t snd = o.send(next, blocksOf(mod(int64_t(h) - s + shift, nh)));
      e.req(snd, last);
      last = o.recv(prev, blocksOf(mod(int64_t(h) - s - 1 + shift, nh)), reduce);
    }
  };
  // Between each member and its leader: its own block.
  auto toLeader = [&] {
    if (g.me != leader)
      o.send(leader, L.block(g.me));
    else
      for (uint32_t i : mine)
        if (i != leader)
          o.recv(i, L.block(i), false);
  };
  auto fromLeader = [&] {
    if (g.me != leader)
      o.recv(leader, L.block(g.me), false);
    else
      for (uint32_t i : mine)
        if (i != leader)
          o.send(i, L.block(i));
  };
  Phases phase{e, {}};
  if (mine.size() > 1)
    phase([&] { reduce ? binomialReduceOf(e, local, 0, all) : toLeader(); });
  if (g.me == leader && nh > 1)
    phase(ring);
  if (mine.size() > 1)
    phase([&] { reduce ? fromLeader() : binomialBcastOf(e, local, 0, all); });
}

void hierarchical(Emitter &e, const Group &g, const Layout &L, const AlgoParams &p) {
  if (L.kind == K::Allgather || L.kind == K::Reducescatter)
    hierarchicalBlocks(e, g, L, p);
  else
    hierarchicalWhole(e, g, L, p);
}

} // namespace

bool applies(CollAlgorithm a, CollectiveKind k) {
  switch (a) {
  case A::Auto:
    return false;
  case A::Ring:
    return k == K::Allreduce || k == K::Allgather || k == K::Reducescatter || k == K::Bcast ||
           k == K::Reduce;
  case A::RecDoub:
    return k == K::Allreduce || k == K::Allgather;
  case A::Rabenseifner:
    return k == K::Allreduce || k == K::Reducescatter;
  case A::Binomial:
    return k == K::Bcast || k == K::Reduce || k == K::Gather || k == K::Scatter ||
           k == K::Allreduce;
  case A::Binary:
    return k == K::Bcast || k == K::Reduce || k == K::Allreduce;
  case A::DBTree:
  case A::Tree:
    return k == K::Allreduce;
  case A::Dissemination:
    return k == K::Barrier;
  case A::Linear:
    return k == K::Bcast || k == K::Reduce || k == K::Gather || k == K::Scatter ||
           k == K::Alltoall || k == K::Alltoallv || k == K::Barrier;
  case A::Pairwise:
    return k == K::Alltoall || k == K::Alltoallv || k == K::Reducescatter;
  case A::Bruck:
    return k == K::Allgather || k == K::Alltoall;
  case A::Direct:
    return k == K::Allgather || k == K::Allreduce || k == K::Reducescatter ||
           k == K::Alltoall || k == K::Alltoallv;
  case A::Hierarchical:
    return k == K::Allreduce || k == K::Bcast || k == K::Reduce || k == K::Allgather ||
           k == K::Reducescatter;
  }
  return false;
}

std::vector<CollAlgorithm> algorithmsFor(CollectiveKind k) {
  std::vector<CollAlgorithm> v;
  for (uint32_t i = 1; i < NumCollAlgorithms; ++i)
    if (applies(CollAlgorithm(i), k))
      v.push_back(CollAlgorithm(i));
  return v;
}

std::string whyNot(CollAlgorithm a, CollectiveKind k, uint32_t, bool haveHosts) {
  if (!applies(a, k)) {
    std::string list;
    for (CollAlgorithm b : algorithmsFor(k))
      list += (list.empty() ? "" : ", ") + collAlgorithmName(b).str();
    return "algorithm '" + collAlgorithmName(a).str() + "' does not implement " +
           collectiveKindName(k).str() + " (" + collectiveKindName(k).str() + " has: " + list +
           ")";
  }
  if (a == A::Hierarchical && !haveHosts)
    return "algorithm 'hierarchical' needs to know which host each rank is on: give a fabric "
           "and place the ranks (-passes=place,...)";
  return "";
}

void generate(Emitter &e, CollAlgorithm a, const Group &g, const Layout &L, const AlgoParams &p) {
  switch (a) {
  case A::Ring:
    if (L.kind == K::Allreduce)
      ringAllreduce(e, g, L, p);
    else if (L.kind == K::Allgather || L.kind == K::Reducescatter)
      ringBlocks(e, g, L, p, L.kind == K::Reducescatter);
    else
      ringChain(e, g, L, p, L.kind == K::Reduce);
    return;
  case A::RecDoub:
    if (L.kind == K::Allreduce)
      recDoubAllreduce(e, g, L, p);
    else
      recDoubAllgather(e, g, L, p);
    return;
  case A::Rabenseifner:
    if (L.kind == K::Allreduce)
      rabenseifnerAllreduce(e, g, L, p);
    else
      halvingReduceScatter(e, g, L, p);
    return;
  case A::Binomial:
    switch (L.kind) {
    case K::Bcast: return binomialBcast(e, g, L, p);
    case K::Reduce: return binomialReduce(e, g, L, p);
    case K::Gather: return binomialGather(e, g, L, p);
    case K::Scatter: return binomialScatter(e, g, L, p);
    default: return treeAllreduce(e, g, L, p, A::Binomial);
    }
  case A::Binary:
    if (L.kind == K::Bcast)
      return binaryBcast(e, g, L, p);
    if (L.kind == K::Reduce)
      return binaryReduce(e, g, L, p);
    return treeAllreduce(e, g, L, p, A::Binary);
  case A::DBTree:
    return dbtreeAllreduce(e, g, L, p);
  case A::Tree:
    return givenTreeAllreduce(e, g, L, p);
  case A::Dissemination:
    return disseminationBarrier(e, g, L, p);
  case A::Linear:
    if (L.kind == K::Alltoall || L.kind == K::Alltoallv)
      return linearAlltoall(e, g, L, p);
    if (L.kind == K::Barrier)
      return linearBarrier(e, g, L, p);
    return linearRooted(e, g, L, p);
  case A::Pairwise:
    if (L.kind == K::Reducescatter)
      return pairwiseReduceScatter(e, g, L, p);
    return pairwiseAlltoall(e, g, L, p);
  case A::Bruck:
    if (L.kind == K::Allgather)
      return bruckAllgather(e, g, L, p);
    return bruckAlltoall(e, g, L, p);
  case A::Direct:
    if (L.kind == K::Allgather)
      return directAllgather(e, g, L, p);
    if (L.kind == K::Allreduce || L.kind == K::Reducescatter)
      return directReduce(e, g, L, p, L.kind == K::Allreduce);
    return directAlltoall(e, g, L, p);
  case A::Hierarchical:
    return hierarchical(e, g, L, p);
  case A::Auto:
    return;
  }
}

} // namespace infracc::coll
