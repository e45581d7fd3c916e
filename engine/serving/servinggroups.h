#pragma once

// Which group every GPU of a serving layout belongs to, by kind (TP group, EP group, pipeline
// stage, replica, pool), for views that colour the GPUs: the serving engine's own ranks (each
// pool's instances, TP fastest, then stage, then replica, through the layout's mapping), so the
// colours are the groups the engine prices.

#include "layout/layout.h"

#include <string>
#include <vector>

namespace railyard::engine {

struct ServingGpuGroups
{
    enum Kind { Tp, Ep, Stage, Replica, Pool, KindCount };
    // Per kind: the group of each GPU (dense by GPU index, -1 where nothing serves), and how
    // many groups there are. Groups are numbered through the prefill pool, then the decode pool.
    std::vector<int> group[KindCount];
    int count[KindCount] = {};
    std::vector<int> rank; // the serving rank on each GPU (dense by GPU index), or -1
    // Pool numbers: 0 the only pool (aggregated) or the prefill pool, 1 the decode pool.
    bool disaggregated = false;
    std::string error; // why the layout's pools cannot be placed (then every group is empty)
    bool ok() const { return error.empty(); }
};

// The layout must serve (have `serving`); `clusterGpus` is its cluster's GPU count.
ServingGpuGroups servingGpuGroups(const Layout &layout, int clusterGpus);

} // namespace railyard::engine
