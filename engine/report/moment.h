#pragma once

#include "step/timeline.h"
#include "topology/topology.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace railyard::engine {

// One moment of a step, as playback shows it: the phases running then, each link's
// utilization then (and which way its busier direction runs) and the busiest links. Computed
// once per frame for everything that shows the moment (the canvas, the Hottest Links list,
// the timeline's label).
struct StepMoment
{
    double at = -1;                    // seconds from the start of the step; < 0: no moment
    std::vector<int> running;          // StepTimeline::runningAt(at)
    std::vector<int> segments;         // StepTimeline::segmentsAt(running, at)
    std::vector<float> utilization;    // dense by link id (utilizationAt)
    std::vector<std::uint8_t> reverse; // per link, 1 where more goes b -> a than a -> b
    std::vector<int> busiest;          // busiestByUtilization(utilization, the count asked)
    bool empty() const { return at < 0; }
};

// Moves `moment` to `at` seconds into the step (clamped into it). The loads depend only on
// which phases run and at which rate (a collective that shares its links runs slower for a
// stretch of its phase), so they and the busiest links are recomputed only when that changes,
// or when `fresh` says the timeline or topology is new. Returns whether they were recomputed.
// A negative `at` or an empty timeline clears the moment (and returns whether it had loads).
bool moveMoment(StepMoment &moment,
                const StepTimeline &timeline,
                const Topology &topology,
                double at,
                std::size_t busiest,
                bool fresh = false);

} // namespace railyard::engine
