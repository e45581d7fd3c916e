#pragma once

#include "collectives/collective.h"

#include <vector>

namespace railyard::engine {

// One collective run by several groups at once, as a dimension of a training step runs (every
// data-parallel group's all-gather together). Each group's algorithm and protocol are planned
// as estimateCollective plans them for the group alone; then every group's bytes go onto the
// links in one phase, so groups that share links slow each other down: NIC uplinks, spine
// uplinks, and on fabrics without adaptive routing the ECMP collisions of all the groups' flows
// (tuning.qps_per_connection queue pairs each). The result is one group's view: its time in
// that crowd, and nccl-tests' algbw and busbw from it. Throws InputError for an empty list, a
// group of fewer than two GPUs, or groups of different sizes.
CollectiveResult estimateConcurrentCollective(const Topology &topology,
                                              CollectiveOp op,
                                              double bytes,
                                              const std::vector<std::vector<int>> &groups);

} // namespace railyard::engine
