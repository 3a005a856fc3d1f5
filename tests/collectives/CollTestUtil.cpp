#include "tests/collectives/CollTestUtil.h"

#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

namespace infracc::test {

std::string CollCase::name() const {
  std::string n = collectiveKindName(kind).str() + "_" + collAlgorithmName(algo).str() + "_P" +
                  std::to_string(members) + "_" + std::to_string(bytes) + "b";
  if (root)
    n += "_root" + std::to_string(root);
  if (channels > 1)
    n += "_ch" + std::to_string(channels);
  if (chunk)
    n += "_chunk" + std::to_string(chunk);
  if (subCommunicator)
    n += "_sub";
  if (ranksPerHost)
    n += "_hosts" + std::to_string(ranksPerHost) + (scatterHosts ? "s" : "");
  if (slices)
    n += "_slices" + std::to_string(slices) + "x" + std::to_string(sliceAlign) + "min" +
         std::to_string(sliceMin);
  return n;
}

uint64_t alltoallvSize(uint32_t s, uint32_t d) { return (7 * uint64_t(s) + 3 * d) % 11 * 13; }

Schedule makeCollectiveSchedule(const CollCase &c) {
  uint32_t world = c.subCommunicator ? 2 * c.members : c.members;
  ScheduleBuilder b(world);
  Communicator comm;
  comm.id = c.subCommunicator ? 5 : 0;
  for (uint32_t i = 0; i < c.members; ++i)
    comm.ranks.push_back(c.subCommunicator ? 2 * (c.members - 1 - i) + 1 : i);
  if (c.algo == CollAlgorithm::Tree) {
    // A 4-ary tree (more children than NCCL's three) rooted at member P/2: the k-th
    // member from the root hangs below the (k-1)/4-th.
    auto at = [&](uint32_t k) { return (k + c.members / 2) % c.members; };
    comm.treeUp.assign(c.members, -1);
    for (uint32_t k = 1; k < c.members; ++k)
      comm.treeUp[at(k)] = int32_t(at((k - 1) / 4));
  }
  uint32_t commIndex = b.addCommunicator(comm);
  std::vector<uint32_t> memberOf(world, ~0u);
  for (uint32_t i = 0; i < c.members; ++i)
    memberOf[comm.ranks[i]] = i;
  for (uint32_t r = 0; r < world; ++r) {
    b.beginRank(r);
    if (memberOf[r] != ~0u) {
      CollectiveInfo info;
      info.kind = c.kind;
      info.communicator = commIndex;
      info.root = c.root;
      info.algorithm = uint32_t(c.algo);
      info.bytes = c.kind == CollectiveKind::Barrier ? 0 : c.bytes;
      info.slices = c.slices;
      info.sliceAlign = c.sliceAlign;
      info.sliceMin = c.sliceMin;
      if (c.kind == CollectiveKind::Alltoallv) {
        std::vector<uint64_t> v;
        for (uint32_t d = 0; d < c.members; ++d)
          v.push_back(alltoallvSize(memberOf[r], d));
        info.vsizesBegin = b.addVSizes(v);
        info.vsizesCount = c.members;
        info.bytes = 0;
        for (uint64_t x : v)
          info.bytes += x;
      }
      b.addOp(OpKind::Collective, b.addCollective(info), info.bytes);
    }
    b.endRank();
  }
  return b.finish();
}

std::string Lowered::checkText() const {
  std::string t = diags;
  for (const std::string &e : check.errors)
    t += e + "\n";
  return t;
}

Lowered lowerAndCheck(const CollCase &c) {
  Lowered out;
  Schedule s = makeCollectiveSchedule(c);
  coll::LoweringOptions o;
  o.channels = c.channels;
  o.chunkBytes = c.chunk;
  o.protocol = c.protocol;
  o.reduceNsPerByte = c.reduceNsPerByte;
  o.schedgenDeps = c.schedgenDeps;
  std::vector<uint32_t> hosts;
  if (c.ranksPerHost) {
    hosts.assign(s.numRanks(), 0);
    uint32_t numHosts = (c.members + c.ranksPerHost - 1) / c.ranksPerHost;
    const Communicator &comm = s.communicators()[0];
    for (uint32_t i = 0; i < c.members; ++i)
      hosts[comm.ranks[i]] = c.scatterHosts ? i % numHosts : i / c.ranksPerHost;
  }
  llvm::raw_string_ostream os(out.diags);
  DiagEngine diags(os);
  out.schedule = coll::lowerCollectives(s, o, hosts, diags, "test", &out.rec);
  os.flush();
  if (out.schedule)
    out.check = coll::checkCollectives(*out.schedule, out.rec, s.communicators());
  return out;
}

Traffic traffic(const Schedule &s) {
  Traffic t;
  uint32_t P = s.numRanks();
  t.sends.assign(P, 0);
  t.sendBytes.assign(P, 0);
  t.recvs.assign(P, 0);
  t.recvBytes.assign(P, 0);
  for (uint32_t r = 0; r < P; ++r)
    for (uint32_t g = s.rankBegin(r), e = g + s.numOps(r); g < e; ++g) {
      if (s.kind(g) == OpKind::Send) {
        ++t.sends[r];
        t.sendBytes[r] += s.size(g);
      } else if (s.kind(g) == OpKind::Recv) {
        ++t.recvs[r];
        t.recvBytes[r] += s.size(g);
      }
    }
  return t;
}

} // namespace infracc::test
