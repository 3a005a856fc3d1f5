// Timelines of the built-in simulator's runs: turns its trace (busy intervals and
// messages) and critical path into TimelineData, and provides -emit=timeline.
#pragma once

#include "backends/sim/Simulator.h"
#include "visualize/Timeline.h"

#include <string>
#include <vector>

namespace infracc {
class Schedule;
}

namespace infracc::viz {

/// The drawing data of one run: intervals and messages from the trace (tooltips only
/// when there are few), marked critical when they are steps of r.criticalPath.
TimelineData timelineFromSimulation(const Schedule &s, const sim::SimResult &r,
                                    const sim::SimTrace &trace, std::string title,
                                    std::vector<std::string> notes);

} // namespace infracc::viz
