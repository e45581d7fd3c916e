#pragma once

#include "evaluate.h"
#include "topology.h"

#include <vector>

namespace railyard {

// The links a group's collectives can cross, for showing them on the canvas (the cost engine
// decides how much goes where; this only finds the way): the GPUs' NVLinks; when the group
// leaves one NVLink domain, also their paths to their NICs and the NICs' uplinks; when it spans
// leaves, the leaves' uplinks to the spine. With `loads`, links that carry nothing in the step
// are left out, so an idle spine path is not drawn as if the group used it.
std::vector<int> groupTrafficLinks(const engine::Topology &topology,
                                   const std::vector<int> &gpus,
                                   const engine::LinkLoads *loads = nullptr);

} // namespace railyard
