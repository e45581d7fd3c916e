#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"

#include <string>
#include <vector>

namespace railyard::engine {

// The rules behind editing the parallel sizes: which sizes a dimension could take, and what
// follows when one changes. The workload panel asks these and only shows the answers.

// A choice for a parallel size, and why it is invalid when it is.
struct SizeChoice
{
    int value = 1;
    bool valid = true;
    std::string reason; // empty when valid
};
// The sizes `dim` could take with the other sizes fixed (DP follows from the GPU count). TP:
// divisors of the GPU count; invalid when they do not divide the heads, or make the product
// miss the GPU count, and so on.
std::vector<SizeChoice> sizeChoices(const Layout &layout, Dim dim);
// Virtual pipeline stages per pipeline rank: 1 to the layers a pipeline rank holds; invalid
// without PP, or when the layers do not split evenly into PP x VP virtual stages.
std::vector<SizeChoice> vpChoices(const Layout &layout);
// The data-parallel ranks a ZeRO-3 / FSDP shard may span at most: DP x CP (at least 1).
int dataParallelRanks(const Layout &layout);
// The groups FSDP / ZeRO-3 may shard over (training.optimizer.shard_group): 0 first (every
// data-parallel rank, DP x CP), then every divisor of DP x CP below it, largest first (hybrid
// sharding: the shard replicated DP x CP / value times). A layout's own value that divides none
// is listed last, invalid with the reason (it is in force: the evaluation refuses it).
std::vector<SizeChoice> shardGroupChoices(const Layout &layout);

// The sizes after `dim` is set to `value` on a cluster of `gpus` GPUs. When TP, CP or PP change,
// DP follows from the GPU count (a DP written in the file is rewritten so the job keeps filling
// the cluster; an absent DP already follows), and VP falls back to 1 without a pipeline (PP 1),
// since VP means nothing without one. Setting DP or EP changes only that size.
ParallelConfig withParallelSize(const ParallelConfig &parallel, int gpus, Dim dim, int value);

} // namespace railyard::engine
