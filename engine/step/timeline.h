#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collectives/trafficpattern.h"

namespace railyard::engine {

class Topology;

// A stretch of a phase's collective at one rate: one that shares its links with others for part
// of its length runs slower there. `fraction` of the phase's bytes move in [start, end).
struct PhaseSegment
{
    double start = 0, end = 0;
    double fraction = 0;
};

// One phase of the step on one pipeline stage. Compute, bubble, optimizer and exposed waits are
// "exposed" (the stage's critical path: they tile [0, step time] without gaps or overlap);
// communication that runs under compute is not, and overlaps the compute it hides behind. A
// phase's bytes are `share` of its pattern's: the shares of one pattern over all phases add up
// to 1, so the bytes of all phases on a link add up to the link's bytes per step.
struct Phase
{
    std::string name; // "forward, micro-batch 3", "TP all-reduce", "DP gradient reduce", ...
    PhaseKind kind = PhaseKind::Compute;
    int stage = 0;
    bool exposed = false;
    double start = 0; // seconds from the start of the step
    double end = 0;
    int pattern = -1; // into StepTimeline::patterns; -1: no link traffic
    double share = 0;
    // Into StepTimeline::segments, in time order; none: the bytes spread evenly over the phase.
    int firstSegment = -1, segments = 0;
    double duration() const { return end - start; }
};

struct StepTimeline
{
    int stages = 0;   // pipeline stages (1 without pipeline parallelism)
    double stepS = 0; // the step time: every stage's exposed phases end there
    std::vector<Phase> phases;
    std::vector<TrafficPattern> patterns;
    std::vector<PhaseSegment> segments;
    bool empty() const { return phases.empty(); }
    // The stretch of `phase` at `t` (into segments; past its last, the last), or -1 when the
    // phase keeps one rate.
    int segmentAt(const Phase &phase, double t) const;
    // The share of its pattern's bytes `phase` moves per second at `t` (inside the phase).
    double shareRateAt(const Phase &phase, double t) const;
    // The bytes `phase` puts on each link (its pattern's times its share), sorted by link.
    std::vector<LinkShare> phaseLinks(const Phase &phase) const;
    // The phases running at `t` (start <= t < end), in order.
    std::vector<int> runningAt(double t) const;
    // The stretches (into segments) the `running` phases are in at `t`, in their order; phases
    // that keep one rate have none.
    std::vector<int> segmentsAt(const std::vector<int> &running, double t) const;
};

// Per link, dense by link id: the busiest direction's rate at moment `t` over the link's
// achieved rate (the phases running then, each at its rate then: shareRateAt).
// With `reverse`: per link, 1 where more goes b -> a than a -> b at that moment, else 0.
void utilizationAt(const StepTimeline &timeline,
                   const Topology &topology,
                   double t,
                   std::vector<float> &out,
                   std::vector<std::uint8_t> *reverse = nullptr);
// Which kinds of communication cross `link` during the step (bit k: PhaseKind k).
unsigned kindsOnLink(const StepTimeline &timeline, int link);

} // namespace railyard::engine
