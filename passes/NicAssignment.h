// Which attach point (NIC, NIC port; ir/AttachPoints.h) each rank's traffic uses: the
// one mapping remap-gpus (the nic of every op), -emit=htsim (the htsim node of every
// flow end) and any later NIC-level model share.
//
// Policies (Module::nicRequest, from -nic; default affinity):
//  * affinity: the attach point of the rank's host nearest to the endpoint it runs on
//    (AttachPoints::nearest: hops inside the host, ties shared out in index order);
//    ranks on one xpu share its NIC.
//  * round-robin: the ranks of a host, in rank order, take its attach points in node
//    order, cyclically (the k-th rank on the host uses attach point k mod count).
//  * map: the -nic=map:FILE lines `rank nic-name`; every rank needs one, naming an
//    attach point of the host it runs on.
#pragma once

#include "ir/AttachPoints.h"
#include "ir/PlacementRequests.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

/// Per rank r (running on endpointOfRank[r]): its attach point, or InvalidNode when its
/// host has none (or, by affinity, none the endpoint reaches inside the host). A bad
/// map file is reported (pointing at its lines; `workload` names the workload in
/// messages) and gives nullopt. `req` null: affinity.
std::optional<std::vector<NodeId>> assignNics(const AttachPoints &ap,
                                              llvm::ArrayRef<NodeId> endpointOfRank,
                                              const NicRequest *req, DiagEngine &diags,
                                              llvm::StringRef workload);

/// The name of the -nic policy ("affinity", "round-robin", "map:FILE") for comments.
std::string nicPolicyName(const NicRequest *req);

/// `dgx.3`: the device copy (box) that holds node n.
std::string copyNameOf(const FabricGraph &g, NodeId n);

} // namespace infracc
