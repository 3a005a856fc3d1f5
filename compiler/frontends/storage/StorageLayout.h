// The storage service a block-I/O trace runs on: a Direct-Drive-like service as ATLAHS
// models it (../shared/papers/atlahs.md §3.1.3): hosts issuing the trace's requests,
// software load balancers (SLB), gateway services (GS) and metadata services (MDS) that
// serve each host's mount, change coordinators (CCS) that own slices of the disk, and
// block storage servers (BSS) that keep the slices' replicas. Read from the YAML file of
// -storage-layout (every key optional; docs/workloads.md "Storage traces"); the defaults
// are ATLAHS's.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

enum class StorageRole : uint8_t { Host, Slb, Gs, Mds, Ccs, Bss };
inline constexpr size_t NumStorageRoles = 6;
const char *storageRoleName(StorageRole r);   // "hosts", "slb", ...

struct StorageLayout {
  /// Instances per role; hosts 0 = one per ASU the trace uses.
  std::array<uint32_t, NumStorageRoles> count{0, 1, 1, 1, 8, 64};
  /// Ranks in all (0 = the sum of the roles); ranks no role takes stay idle.
  uint32_t ranks = 0;
  llvm::SMLoc ranksLoc;
  enum class Placement { Grouped, Spread } placement = Placement::Grouped;
  /// Explicit ranks of a role's instances (empty = placed by `placement`).
  std::array<std::vector<uint32_t>, NumStorageRoles> at;
  std::array<std::vector<llvm::SMLoc>, NumStorageRoles> atLoc;   // where each was written

  uint64_t sectorBytes = 512;          // LBA unit
  uint64_t sliceBytes = 1 << 20;       // the disk is cut into slices this large
  uint32_t replicas = 0;               // BSS per slice (0 = bss / ccs)
  enum class Issue { Trace, Closed } issue = Issue::Trace;
  bool mount = true;
  double readBytesPerNs = 6;           // 6000 MB/s
  double writeBytesPerNs = 1.5;        // 1500 MB/s
  uint64_t lookupNs = 683, mountNs = 683;
  uint64_t lookupRequestBytes = 1024, lookupReplyBytes = 4096, mountBytes = 4096,
           ackBytes = 1024, completionBytes = 4096;
};

/// The layout in `path` (YAML or JSON), or ATLAHS's defaults when `path` is empty.
std::optional<StorageLayout> readStorageLayout(llvm::StringRef path, DiagEngine &diags);

/// The ranks the service takes: `ranks:` when given, else one per role instance.
uint64_t storageRankCount(const StorageLayout &layout);

/// The rank of every instance of every role (role-major), by the layout's placement:
/// grouped = hosts, then SLB, GS, MDS, CCS, BSS on consecutive ranks; spread = the i-th of
/// n instances of a role near rank round((i+1) * ranks / (n+1)), the nearest free one
/// (ATLAHS's fat-tree strategy). Explicit ranks are taken first. `what` names the input
/// for messages; nullopt after an error (too few ranks, a rank taken twice or out of
/// range, located in the layout).
std::optional<std::array<std::vector<uint32_t>, NumStorageRoles>>
placeStorageRoles(const StorageLayout &layout, uint32_t &numRanks, DiagEngine &diags,
                  llvm::StringRef what);

} // namespace infracc
