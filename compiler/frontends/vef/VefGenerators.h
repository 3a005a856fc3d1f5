// Extended VEF traces (VEF for data centres, ../shared/papers/vef-dcn.md §3): a header
// `EXT <model>` and the model's parameters instead of recorded messages; each model is a
// generator of a schedule, deterministic under -seed (docs/workloads.md).
#pragma once

#include "compiler/frontends/vef/VefText.h"
#include "ir/Schedule.h"

#include <optional>

namespace infracc::vef {

/// The schedule the extended trace's model generates; `ext` is the `EXT <model>` line.
/// `timed`: its messages start at generated times (Module::Job::timed). Nullopt after a
/// located error.
std::optional<Schedule> generateExtended(VefText &in, const ExtendedHeader &h,
                                         const Tokens &ext, bool &timed);

} // namespace infracc::vef
