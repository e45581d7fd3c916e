#pragma once

// Placing a serving layout's groups by dragging them onto the cluster: which serving ranks a
// group holds, its name as the serving engine places it ("TP group 3 of replica 2, decode
// pool"), which GPUs a drop takes and the mapping to store. The training ranks
// (layout/groupplacement.h) do not describe a serving layout's pools; the canvas and the Groups
// palette ask these functions for a serving layout and only draw the answer.

#include "layout/groupplacement.h"
#include "serving/servinggroups.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// The serving ranks of group `index` of `kind` in ascending order (TP fastest: a TP group's
// ranks in order), or empty when there is no such group.
std::vector<int> servingGroupRanks(const ServingGpuGroups &groups,
                                   ServingGpuGroups::Kind kind,
                                   int index);
// Their GPUs, rank by rank.
std::vector<int> servingGroupGpus(const ServingGpuGroups &groups,
                                  ServingGpuGroups::Kind kind,
                                  int index);

// "TP group 3 of replica 2 (decode pool)", "EP group 1 (prefill pool)", "replica 4",
// "PP stage 1 (decode pool)", "decode pool", "serving pool": the group as the serving engine
// places it (replicas and groups numbered through the prefill pool, then the decode pool).
std::string describeServingGroup(const ServingGpuGroups &groups,
                                 ServingGpuGroups::Kind kind,
                                 int index);

// The serving mapping in force: the layout's, or rank r on GPU r for each serving rank.
std::vector<int> currentServingMapping(const Layout &layout, const ServingGpuGroups &groups);

// A serving group dropped on a site takes the site's first GPU and the ones after it, one per
// rank in rank order; the ranks that were there (of any pool) move to the GPUs the group
// leaves, and idle GPUs stay idle. `groups` are the layout's (servingGpuGroups).
PlacementPlan planServingGroupDrop(const Layout &layout,
                                   const ServingGpuGroups &groups,
                                   ServingGpuGroups::Kind kind,
                                   int index,
                                   const std::optional<DropSite> &site);

// The group of `kind` that the serving rank on `gpu` belongs to; none when no rank serves there
// (or the pools cannot be placed, or that kind has no group there: no EP without experts).
std::optional<int> servingGroupAtGpu(const ServingGpuGroups &groups,
                                     ServingGpuGroups::Kind kind,
                                     int gpu);

// "Make a TP group here" on a serving layout: the group of `kind` that the first selected GPU
// serves (a TP group of one replica, in its pool) moves onto the selected GPUs, one per rank in
// rank order, as many as it has ranks; the ranks that were there move to the GPUs it leaves.
PlacementPlan planServingMakeGroup(const Layout &layout,
                                   const ServingGpuGroups &groups,
                                   ServingGpuGroups::Kind kind,
                                   const std::vector<int> &selected);

// A GPU of a serving layout dropped on another swaps their serving ranks (either may be idle).
PlacementPlan planServingGpuSwap(const Layout &layout,
                                 const ServingGpuGroups &groups,
                                 int fromGpu,
                                 int toGpu);

} // namespace railyard::engine
