// The exchanges follow ATLAHS's storage generator (goal_gen/storage, DirectDriveSim's
// trace_to_goal: inject_mount, inject_read, inject_write), with its defects left out:
// a request's slices are the byte ranges it really covers (ATLAHS sizes a piece from the
// smaller of the two starts, so a 4 KiB write at byte 8192 became a 12 KiB message), the
// LBA is a sector address (ATLAHS read it as a byte offset), and timestamps are kept
// (ATLAHS issues each host's requests back to back; `issue: closed` does that).
//
//   mount (once per host, before its first request):
//     host -> SLB -> GS -> MDS, mount bytes each hop; MDS computes mount_ns;
//     MDS -> GS -> SLB -> host.
//   read, per slice the request covers:
//     host -> CCS owning the slice: lookup request; CCS computes lookup_ns;
//     CCS -> host: lookup reply; host -> a replica's BSS (round robin over the slice's
//     replicas): lookup request; BSS computes the slice bytes at read_mb_per_s;
//     BSS -> host: the slice's bytes.
//   write, per slice:
//     host -> CCS: the slice's bytes; CCS computes them at write_mb_per_s;
//     CCS -> every replica's BSS: the bytes (in parallel); each BSS computes them at
//     write_mb_per_s and acknowledges (ack bytes); after all acknowledgements,
//     CCS -> host: completion.
// A request ends when all its slices have; slices run in parallel.
#include "compiler/frontends/storage/DirectDrive.h"

#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace infracc {
namespace {

// 24 bytes: a 1 M-request trace makes some 31 M of them.
struct PendingOp {
  uint64_t size;
  uint32_t peer;
  uint32_t tag;
  uint32_t request;   // the request it comes from (its line, for messages)
  OpKind kind;
  uint8_t cpu;
};

// Ops per rank, built in any order and handed to the ScheduleBuilder rank by rank.
class Ranks {
public:
  Ranks(uint32_t n, const std::vector<IoRequest> &requests)
      : requests_(requests), ops_(n), deps_(n) {}

  uint32_t op(uint32_t rank, OpKind kind, uint32_t peer, uint64_t size, uint32_t tag,
              uint32_t request, uint8_t cpu = 0) {
    ops_[rank].push_back({size, peer, tag, request, kind, cpu});
    return uint32_t(ops_[rank].size() - 1);
  }
  void requires_(uint32_t rank, uint32_t succ, uint32_t pred) {
    deps_[rank].push_back({succ, pred});
  }
  /// A message, tagged uniquely: the send on `from`, the recv on `to`; {send, recv}.
  std::pair<uint32_t, uint32_t> message(uint32_t from, uint32_t to, uint64_t bytes,
                                        uint32_t request) {
    const uint32_t tag = nextTag_++;
    return {op(from, OpKind::Send, to, bytes, tag, request),
            op(to, OpKind::Recv, from, bytes, tag, request)};
  }
  uint64_t tagsUsed() const { return nextTag_ - 1; }

  Schedule build() {
    ScheduleBuilder b(uint32_t(ops_.size()));
    b.keepSourceLocs();
    for (uint32_t r = 0; r < ops_.size(); ++r) {
      b.beginRank(r);
      for (const PendingOp &o : ops_[r]) {
        uint32_t i = b.addOp(o.kind, o.peer, o.size, o.tag, o.cpu);
        b.setSourceLoc(i, requests_[o.request].line);
      }
      for (auto [succ, pred] : deps_[r])
        b.addDependency(succ, pred, DepKind::Requires);
      b.endRank();
      ops_[r] = {};
      deps_[r] = {};
    }
    return b.finish();
  }

private:
  const std::vector<IoRequest> &requests_;
  std::vector<std::vector<PendingOp>> ops_;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> deps_;
  uint64_t nextTag_ = 1;
};

uint64_t computeNs(uint64_t bytes, double bytesPerNs) {
  return uint64_t(std::ceil(double(bytes) / bytesPerNs));
}

} // namespace

std::optional<Schedule> directDriveSchedule(const std::vector<IoRequest> &requests,
                                            StorageLayout l, DiagEngine &diags,
                                            llvm::StringRef what) {
  // Hosts: one per ASU (in increasing ASU order) unless the layout gives a count, then
  // ASU a runs on host a mod hosts.
  std::map<uint32_t, uint32_t> hostOfAsu;
  for (const IoRequest &r : requests)
    hostOfAsu.emplace(r.asu, 0);
  uint32_t k = 0;
  for (auto &[asu, host] : hostOfAsu)
    host = l.count[size_t(StorageRole::Host)] ? asu % l.count[size_t(StorageRole::Host)] : k++;
  if (!l.count[size_t(StorageRole::Host)])
    l.count[size_t(StorageRole::Host)] = k;
  const uint32_t numCcs = l.count[size_t(StorageRole::Ccs)];
  const uint32_t numBss = l.count[size_t(StorageRole::Bss)];
  const uint32_t replicas =
      l.replicas ? l.replicas : std::min(numBss, (numBss + numCcs - 1) / numCcs);

  // A rank costs its op and dependency lists here and its tables in the schedule; checked
  // before the roles are placed, which takes time and memory per rank too.
  const uint64_t wanted = storageRankCount(l);
  if (auto msg = exceedsMemory(fmt::format("the storage service's {} ranks", wanted), wanted,
                               160)) {
    diags.error(what, *msg);
    return std::nullopt;
  }
  uint32_t numRanks = 0;
  auto placed = placeStorageRoles(l, numRanks, diags, what);
  if (!placed)
    return std::nullopt;
  const auto &rankOf = *placed;
  auto rank = [&](StorageRole r, uint64_t i) { return rankOf[size_t(r)][i]; };

  // Count the ops before making them: a request's slices, 10 ops for a read slice and
  // 5 + 5 x replicas for a write slice, 14 per mount, 2 per request for the clock.
  uint64_t ops = 0;
  for (const IoRequest &r : requests) {
    const uint64_t begin = r.lba * l.sectorBytes;
    if (r.lba > UINT64_MAX / l.sectorBytes || begin > UINT64_MAX - r.bytes) {
      diags.error(r.line, fmt::format("the request's end, sector {} x {} bytes + {} bytes, is "
                                      "beyond 2^64 bytes",
                                      r.lba, l.sectorBytes, r.bytes));
      return std::nullopt;
    }
    const uint64_t slices = (begin + r.bytes - 1) / l.sliceBytes - begin / l.sliceBytes + 1;
    ops += slices * (r.write ? 5 + 5 * uint64_t(replicas) : 10);
  }
  ops += 14 * uint64_t(hostOfAsu.size()) + 2 * uint64_t(requests.size());
  if (auto msg = exceedsMemory(fmt::format("the storage schedule's {} ops", ops), ops, 80)) {
    diags.error(what, *msg);
    return std::nullopt;
  }

  // Each host's requests: in time order (issue: trace), or in file order (closed).
  std::vector<std::vector<const IoRequest *>> perHost(l.count[size_t(StorageRole::Host)]);
  for (const IoRequest &r : requests)
    perHost[hostOfAsu[r.asu]].push_back(&r);
  if (l.issue == StorageLayout::Issue::Trace)
    for (auto &v : perHost)
      std::stable_sort(v.begin(), v.end(),
                       [](const IoRequest *a, const IoRequest *b) { return a->timeNs < b->timeNs; });
  uint64_t t0 = UINT64_MAX;
  for (const IoRequest &r : requests)
    t0 = std::min(t0, r.timeNs);

  Ranks g(numRanks, requests);
  llvm::DenseMap<uint64_t, uint32_t> nextReplica;   // slice -> reads served so far
  for (uint32_t h = 0; h < perHost.size(); ++h) {
    if (perHost[h].empty())
      continue;
    const uint32_t host = rank(StorageRole::Host, h);
    // The ops a request's first sends wait for.
    std::vector<uint32_t> ready;
    if (l.mount) {
      const uint32_t at = uint32_t(perHost[h].front() - requests.data());
      const uint32_t path[] = {host, rank(StorageRole::Slb, h % l.count[size_t(StorageRole::Slb)]),
                               rank(StorageRole::Gs, h % l.count[size_t(StorageRole::Gs)]),
                               rank(StorageRole::Mds, h % l.count[size_t(StorageRole::Mds)])};
      uint32_t prev = 0, hostSend = 0;   // prev: the op the next hop's send waits for
      for (int i = 0; i < 3; ++i) {
        auto [s, r] = g.message(path[i], path[i + 1], l.mountBytes, at);
        if (i == 0)
          hostSend = s;
        else
          g.requires_(path[i], s, prev);
        prev = r;
      }
      const uint32_t calc = g.op(path[3], OpKind::Calc, 0, l.mountNs, 0, at);
      g.requires_(path[3], calc, prev);
      prev = calc;
      for (int i = 3; i > 0; --i) {
        auto [s, r] = g.message(path[i], path[i - 1], l.mountBytes, at);
        g.requires_(path[i], s, prev);
        prev = r;
      }
      g.requires_(host, prev, hostSend);
      ready = {prev};
    }
    const std::vector<uint32_t> mounted = ready;
    uint64_t clock = t0;
    uint32_t prevTick = ~0u;
    for (const IoRequest *req : perHost[h]) {
      const uint32_t at = uint32_t(req - requests.data());
      std::vector<uint32_t> start = l.issue == StorageLayout::Issue::Closed ? ready : mounted;
      if (l.issue == StorageLayout::Issue::Trace) {
        // The host's clock: calcs on cpu 1 spacing the requests' issue times, each
        // followed by a calc of 0 that the request waits for. The marker ends when the
        // gap does, so engines that carry a predecessor's finish time (atlahs) and
        // the flow model (a message never leaves before the present) start the request
        // exactly on time; LogGOPSim v1 (lgs, topo) does not carry a time to another
        // cpu (docs/workloads.md).
        const uint32_t gap = g.op(host, OpKind::Calc, 0, req->timeNs - clock, 0, at, 1);
        const uint32_t tick = g.op(host, OpKind::Calc, 0, 0, 0, at, 1);
        g.requires_(host, tick, gap);
        clock = req->timeNs;
        if (prevTick != ~0u)
          g.requires_(host, gap, prevTick);
        prevTick = tick;
        start.push_back(tick);
      }
      std::vector<uint32_t> done;
      const uint64_t begin = req->lba * l.sectorBytes, end = begin + req->bytes;
      for (uint64_t slice = begin / l.sliceBytes; slice * l.sliceBytes < end; ++slice) {
        const uint64_t bytes = std::min(end, (slice + 1) * l.sliceBytes) -
                               std::max(begin, slice * l.sliceBytes);
        const uint32_t c = uint32_t(slice % numCcs);
        const uint32_t ccs = rank(StorageRole::Ccs, c);
        const uint64_t first = uint64_t(c) * numBss / numCcs;
        auto bss = [&](uint32_t j) { return rank(StorageRole::Bss, (first + j) % numBss); };
        if (!req->write) {
          auto [s1, r1] = g.message(host, ccs, l.lookupRequestBytes, at);
          for (uint32_t op : start)
            g.requires_(host, s1, op);
          const uint32_t lookup = g.op(ccs, OpKind::Calc, 0, l.lookupNs, 0, at);
          g.requires_(ccs, lookup, r1);
          auto [s2, r2] = g.message(ccs, host, l.lookupReplyBytes, at);
          g.requires_(ccs, s2, lookup);
          g.requires_(host, r2, s1);
          const uint32_t server = bss(nextReplica[slice]++ % replicas);
          auto [s3, r3] = g.message(host, server, l.lookupRequestBytes, at);
          g.requires_(host, s3, r2);
          const uint32_t io = g.op(server, OpKind::Calc, 0, computeNs(bytes, l.readBytesPerNs), 0, at);
          g.requires_(server, io, r3);
          auto [s4, r4] = g.message(server, host, bytes, at);
          g.requires_(server, s4, io);
          g.requires_(host, r4, s3);
          done.push_back(r4);
        } else {
          auto [s1, r1] = g.message(host, ccs, bytes, at);
          for (uint32_t op : start)
            g.requires_(host, s1, op);
          const uint32_t io = g.op(ccs, OpKind::Calc, 0, computeNs(bytes, l.writeBytesPerNs), 0, at);
          g.requires_(ccs, io, r1);
          std::vector<uint32_t> acks;
          for (uint32_t j = 0; j < replicas; ++j) {
            const uint32_t server = bss(j);
            auto [s2, r2] = g.message(ccs, server, bytes, at);
            g.requires_(ccs, s2, io);
            const uint32_t store = g.op(server, OpKind::Calc, 0, computeNs(bytes, l.writeBytesPerNs), 0, at);
            g.requires_(server, store, r2);
            auto [s3, r3] = g.message(server, ccs, l.ackBytes, at);
            g.requires_(server, s3, store);
            g.requires_(ccs, r3, s2);
            acks.push_back(r3);
          }
          auto [s4, r4] = g.message(ccs, host, l.completionBytes, at);
          for (uint32_t a : acks)
            g.requires_(ccs, s4, a);
          g.requires_(host, r4, s1);
          done.push_back(r4);
        }
      }
      ready = std::move(done);
    }
  }
  if (g.tagsUsed() > 0x7FFFFFFF) {
    diags.error(what, fmt::format("the storage schedule needs {} message tags, more than GOAL's "
                                  "2^31",
                                  g.tagsUsed()));
    return std::nullopt;
  }
  return g.build();
}

} // namespace infracc
