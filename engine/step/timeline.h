#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collectives/trafficpattern.h"

namespace railyard::engine {

class Topology;

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
    double duration() const { return end - start; }
};

struct StepTimeline
{
    int stages = 0;   // pipeline stages (1 without pipeline parallelism)
    double stepS = 0; // the step time: every stage's exposed phases end there
    std::vector<Phase> phases;
    std::vector<TrafficPattern> patterns;
    bool empty() const { return phases.empty(); }
    // The bytes `phase` puts on each link (its pattern's times its share), sorted by link.
    std::vector<LinkShare> phaseLinks(const Phase &phase) const;
    // The phases running at `t` (start <= t < end), in order.
    std::vector<int> runningAt(double t) const;
};

// Per link, dense by link id: the busiest direction's rate at moment `t` over the link's
// achieved rate (the phases running then, each spreading its bytes evenly over its length).
// With `reverse`: per link, 1 where more goes b -> a than a -> b at that moment, else 0.
void utilizationAt(const StepTimeline &timeline,
                   const Topology &topology,
                   double t,
                   std::vector<float> &out,
                   std::vector<std::uint8_t> *reverse = nullptr);
// Which kinds of communication cross `link` during the step (bit k: PhaseKind k).
unsigned kindsOnLink(const StepTimeline &timeline, int link);

} // namespace railyard::engine
