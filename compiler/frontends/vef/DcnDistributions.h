// The message-size distributions of published data-centre workloads that VEF's DCNW
// model names (../shared/papers/vef-dcn.md §3.1), as the HOMA simulator's workloads give
// them: a step CDF of sizes, in bytes or in packets, and for Facebook's key-value store a
// generalized Pareto tail beyond the table. The sources are cited in DcnDistributions.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace infracc::vef {

struct SizePoint {
  uint64_t size;       // in the model's unit (below)
  double cumulative;   // P(size <= this)
};

/// Sizes beyond the table: offset + ((1 - p0)/(1 - u))^k - 1) * sigma / k for a draw u above
/// the table's last probability p0, rounded, at most `cap` bytes.
struct ParetoTail {
  double k;
  double sigma;
  uint64_t cap;
};

struct DcnModel {
  const char *name;                 // the DCNW keyword
  const char *alias;                // the HOMA simulator's name for it
  const char *description;
  std::span<const SizePoint> table;
  uint64_t bytesPerUnit;            // 1, or the payload of a packet for tables in packets
  std::optional<ParetoTail> tail;
  double statedMean;                // the source's mean, in bytes
};

/// The seven models, in the order the VEF paper lists them.
std::span<const DcnModel> dcnModels();

/// The model called `name` (its keyword or its HOMA name), or null.
const DcnModel *findDcnModel(std::string_view name);

} // namespace infracc::vef
