// Where each rank runs, for simulators that run one rank per fabric endpoint (ASTRA-sim's
// NPUs, TraceR's servers): the index into FabricGraph::endpoints() of the rank's placed
// endpoint, or rank r on endpoint r when the ranks are not placed.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace infracc {

struct Module;

/// Nullopt after reporting (against the workload) what such a simulator cannot run:
/// ranks grouped onto one endpoint (remap-gpus, multi-tenant jobs), two ranks on one
/// endpoint, a rank on a node that is no endpoint, more ranks than endpoints. `unit` is
/// the simulator's word for an endpoint ("NPU", "server"), `tool` its name.
std::optional<std::vector<uint32_t>> endpointOfEachRank(const Module &m, llvm::StringRef unit,
                                                        llvm::StringRef tool);

} // namespace infracc
