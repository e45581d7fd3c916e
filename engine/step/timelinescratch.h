#pragma once

#include "collectives/trafficpattern.h"

#include <cstdint>
#include <vector>

namespace railyard::engine {

// The step timeline's scratch (steptimeline.cpp), kept in the evaluation workspace so an
// evaluation neither allocates nor zeroes a per-link buffer (a million links at 131k GPUs).
struct TimelineScratch
{
    // A pattern's bytes, dense by link: all zero between patterns (`dirty` while one is summed,
    // so a pattern cut short by an exception is not summed into the next).
    std::vector<LinkShare> sums;
    std::vector<int> touched;
    bool dirty = false;
    // Which pipeline stage owns each link (its GPUs' and NICs' links; -1 none, -2 more than
    // one), for the topology build and stage placement it was found for (build 0: none).
    std::uint64_t ownersBuild = 0;
    std::vector<int> ownersStageOfGpu;
    std::vector<int> ownerOfLink;
};

} // namespace railyard::engine
