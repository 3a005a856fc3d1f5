// Shared look of every picture: fonts, colours per link and per component kind,
// and how quantities are written in labels.
#pragma once

#include "ir/Topology.h"
#include "support/Units.h"
#include "visualize/Graphviz.h"

#include <optional>
#include <string>

namespace infracc::viz {

inline constexpr const char *FontName = "Helvetica,Arial,sans-serif";

/// Colour i of the link palette (colour-blind friendly, cycles after 9).
const char *linkColour(size_t i);
/// Whether colour slot i is drawn dashed: after the palette's first cycle, so that
/// links sharing a colour still differ.
bool linkDashed(size_t i);

/// Node attributes (shape, fill) for a component kind.
Attrs componentStyle(ComponentKind k);

/// "400 Gb/s", "1.6 Tb/s", "800 Mb/s".
std::string formatBandwidth(Bandwidth b);
/// "100 ns", "1.5 µs", "2 ms", "1.25 s".
std::string formatDuration(Duration d);
/// "1024b" style sizes as GOAL writes them are produced by the schedule view;
/// this one is for readers: "512 B", "4 KiB", "1.5 MiB".
std::string formatBytes(uint64_t bytes);
/// A link's physical description: "400 Gb/s, 100 ns" (whatever is known).
std::string formatLinkPhysics(const std::optional<Bandwidth> &bw,
                              const std::optional<Duration> &lat);
/// A number with a short form for large values: 950, 12k, 3.4M.
std::string formatCount(uint64_t n);

} // namespace infracc::viz
