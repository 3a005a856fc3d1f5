// Schedules built like LogGOPSim's schedgen builds them (spcl/LogGOPSim
// src/Schedgen/schedgen.cpp, root 0): the same ops in the same order, the same
// requires edges in the same order (duplicates included), tag 0 everywhere. The
// simulator tests use them with numbers measured by running the real LogGOPSim on
// schedgen's output, and bench/bench_sim.cpp uses them for large inputs.
#pragma once

#include "ir/Schedule.h"

#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

namespace infracc::test::schedgen {

/// schedgen's Goal class: labels are 1-based ids per rank; Requires(tail, head) means
/// tail requires head (dependsOn), tail irequires head (startsWith).
class Goal {
public:
  explicit Goal(uint32_t ranks) : b_(ranks) {}
  void startRank(uint32_t r) { b_.beginRank(r); }
  void endRank() { b_.endRank(); }
  int send(uint64_t bytes, uint32_t dest) { return int(b_.addSend(bytes, dest)) + 1; }
  int recv(uint64_t bytes, uint32_t src) { return int(b_.addRecv(bytes, src)) + 1; }
  int exec(uint64_t ns) { return int(b_.addCalc(ns)) + 1; }
  void dependsOn(int tail, int head) { b_.addDependency(tail - 1, head - 1, DepKind::Requires); }
  void startsWith(int tail, int head) { b_.addDependency(tail - 1, head - 1, DepKind::IRequires); }
  Schedule finish() { return b_.finish(); }

private:
  ScheduleBuilder b_;
};

inline int rounds(int n) { return int(std::ceil(std::log2(n))); }

inline Schedule binomialTreeBcast(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int recv = -1, send = -1;
    for (int r = 0; r < rounds(n); ++r) {
      int p = 1 << r;
      if (rank + p < n && rank < p)
        send = g.send(d, rank + p);
      if (send >= 0 && recv >= 0)
        g.dependsOn(send, recv);
      if (rank >= p && rank < 2 * p)
        recv = g.recv(d, rank - p);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule binomialTreeReduce(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int send = -1, recv = -1;
    for (int r = 0; r < rounds(n); ++r) {
      int p = 1 << r;
      if (rank + p < n && rank < p)
        recv = g.recv(d, rank + p);
      if (send >= 0 && recv >= 0)
        g.dependsOn(send, recv);
      if (rank >= p && rank < 2 * p)
        send = g.send(d, rank - p);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule binaryTreeBcast(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    std::queue<int> q;
    int cnt = 0;
    q.push(0);
    int recv = -1, send[2] = {-1, -1};
    auto step = [&](int src, int tgt) {
      if (tgt >= n)
        return;
      if (rank == src)
        (send[0] == -1 ? send[0] : send[1]) = g.send(d, tgt);
      if (rank == tgt)
        recv = g.recv(d, src);
      q.push(tgt);
    };
    while (cnt < n) {
      int src = q.front();
      q.pop();
      step(src, ++cnt);
      step(src, ++cnt);
    }
    if (rank > 0 && recv != -1) {
      if (send[0] != -1)
        g.dependsOn(send[0], recv);
      if (send[1] != -1)
        g.dependsOn(send[1], recv);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule dissemination(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int recv = -1;
    for (int dist = 1; dist < n; dist <<= 1) {
      int send = g.send(d, (rank + dist + n) % n);
      if (recv != -1)
        g.dependsOn(send, recv);
      recv = g.recv(d, (rank - dist + n) % n);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule nwayDissemination(int n, int nway, uint64_t d) {
  Goal g(n);
  auto mod = [](int a, int b) {
    while (a < 0)
      a += b;
    return a % b;
  };
  int numRounds = int(std::ceil(std::log(double(n)) / std::log(double(nway + 1))));
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    std::vector<int> recv(nway, -1), send(nway, -1);
    for (int r = 0; r < numRounds; ++r) {
      int step = int(std::pow(nway + 1, r));
      for (int w = 1; w <= nway; ++w)
        send[w - 1] = g.send(d, mod(rank + w * step, n));
      if (r > 0) {
        int prev = recv[0];
        for (int w = 1; w < nway; ++w) {
          int red = g.exec(d);
          g.dependsOn(red, recv[w]);
          g.dependsOn(red, prev);
          prev = red;
        }
        int red = g.exec(d);
        g.dependsOn(red, recv[0]);
        g.dependsOn(send[nway - 1], prev);
        for (int w = 1; w <= nway; ++w)
          g.dependsOn(send[w - 1], red);
      }
      for (int w = 1; w <= nway; ++w)
        recv[w - 1] = g.recv(d, mod(rank - w * step, n));
    }
    g.endRank();
  }
  return g.finish();
}

/// pipelinedring (dep = false) and pipelinedringdep (dep = true).
inline Schedule pipelinedRing(int n, uint64_t d, uint64_t segment, bool dep) {
  Goal g(n);
  int numRounds = int(std::ceil(double(d) / double(segment)));
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    std::vector<int> send(numRounds, -1), recv(numRounds, -1);
    for (int r = 0; r < numRounds; ++r) {
      uint64_t psize = r == numRounds - 1 ? d - segment * r : segment;
      if (rank - 1 >= 0)
        recv[r] = g.recv(psize, rank - 1);
      if (rank + 1 < n)
        send[r] = g.send(psize, rank + 1);
      if (send[r] > 0 && recv[r] > 0)
        g.dependsOn(send[r], recv[r]);
      if (dep && r > 0 && send[r - 1] > 0 && recv[r] > 0)
        g.dependsOn(recv[r], send[r - 1]);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule doubleRing(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int send = g.send(d, (rank + 1) % n);
    int recv = g.recv(d, (rank - 1 + n) % n);
    if (rank > 0)
      g.dependsOn(send, recv);
    send = g.send(d, (rank - 1 + n) % n);
    recv = g.recv(d, (rank + 1) % n);
    if (rank > 0)
      g.dependsOn(send, recv);
    g.endRank();
  }
  return g.finish();
}

inline Schedule scatter(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    if (rank == 0)
      for (int i = 1; i < n; ++i)
        g.send(d, i);
    else
      g.recv(d, 0);
    g.endRank();
  }
  return g.finish();
}

inline Schedule gather(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    if (rank == 0)
      for (int i = 1; i < n; ++i)
        g.recv(d, i);
    else
      g.send(d, 0);
    g.endRank();
  }
  return g.finish();
}

inline Schedule linBarrier(int n) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    if (rank == 0) {
      int dummy = g.exec(0);
      for (int i = 1; i < n; ++i) {
        int recv = g.recv(1, i);
        int send = g.send(1, i);
        g.dependsOn(dummy, recv);
        g.dependsOn(send, dummy);
      }
    } else {
      g.send(1, 0);
      g.recv(1, 0);
    }
    g.endRank();
  }
  return g.finish();
}

inline Schedule linearAlltoall(int n, uint64_t d) {
  Goal g(n);
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    for (int step = 1; step < n; ++step) {
      g.send(d, (rank + step) % n);
      g.recv(d, ((rank - step) % n + n) % n);
    }
    g.endRank();
  }
  return g.finish();
}

/// allreduce_recdoub: recursive-halving reduce-scatter, then recursive-doubling
/// allgather (n a power of two). `gapCalc` >= 0 is --rpl-dep-cmp.
inline Schedule allreduceRecDoub(int n, uint64_t d, int64_t gapCalc = -1) {
  Goal g(n);
  int steps = int(std::log2(n));
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int mask = 1;
    uint64_t size = d;
    int lastRecv = -1;
    for (int step = 0; step < steps; ++step) {
      int dest = rank ^ mask;
      size /= 2;
      int send = g.send(size, dest);
      if (lastRecv != -1)
        g.dependsOn(send, lastRecv);
      lastRecv = g.recv(size, dest);
      if (gapCalc != -1)
        lastRecv = g.exec(uint64_t(gapCalc));
      mask <<= 1;
    }
    mask >>= 1;
    for (int step = 0; step < steps; ++step) {
      int dest = rank ^ mask;
      int send = g.send(size, dest);
      if (lastRecv != -1)
        g.dependsOn(send, lastRecv);
      lastRecv = g.recv(size, dest);
      if (gapCalc != -1 && step != steps - 1)
        lastRecv = g.exec(uint64_t(gapCalc));
      size *= 2;
      mask >>= 1;
    }
    g.endRank();
  }
  return g.finish();
}

/// allreduce_ring: 2(n-1) steps of chunk d/n to rank+1, each send requiring the
/// previous recv. Deadlocks in LogGOPSim for n >= 9 (its unstable sort of the roots).
inline Schedule allreduceRing(int n, uint64_t d) {
  Goal g(n);
  uint64_t chunk = d / n;
  for (int rank = 0; rank < n; ++rank) {
    g.startRank(rank);
    int lastRecv = -1;
    for (int phase = 0; phase < 2; ++phase)
      for (int step = 0; step < n - 1; ++step) {
        int send = g.send(chunk, (rank + 1) % n);
        if (lastRecv != -1)
          g.dependsOn(send, lastRecv);
        lastRecv = g.recv(chunk, ((rank - 1) % n + n) % n);
      }
    g.endRank();
  }
  return g.finish();
}

} // namespace infracc::test::schedgen
