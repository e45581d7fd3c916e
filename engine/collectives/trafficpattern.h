#pragma once

#include <vector>

namespace railyard::engine {

// What a pipeline stage is doing during one phase of the step.
enum class PhaseKind { Compute, Tp, Cp, Ep, PpP2p, Dp, Optimizer, Bubble };
const char *toString(PhaseKind kind); // "compute", "tp", "cp", "ep", "pp_p2p", "dp", ...
constexpr int kPhaseKinds = 8;

// Bytes on one link, in each direction (a -> b is "up").
struct LinkShare
{
    int link = 0;
    float up = 0;
    float down = 0;
};

// Every byte one kind of communication puts on the links in one step, for one pipeline stage's
// groups (the pipeline's send/recv: the bytes on the stage's own GPUs' and NICs' links, and its
// part of the links the stages share). Sorted by link, no repeats.
struct TrafficPattern
{
    PhaseKind kind = PhaseKind::Tp;
    int stage = -1;
    std::vector<LinkShare> links;
};

} // namespace railyard::engine
