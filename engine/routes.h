#pragma once

#include "topology.h"

#include <span>
#include <vector>

namespace railyard::engine {

struct LinkLoads;

// The links a group's collectives cross, routed as the cost engine routes their bytes: the
// members' NVLinks (or PCIe); when the group leaves one NVLink domain, each member's path to
// its NICs and the NICs' uplinks; when it spans leaves, the leaves' uplinks to the spine; when
// it spans pods of a three-tier fabric, the spines' uplinks to the core. With `loads`, links
// that carry nothing in the step are left out. Sorted, no repeats.
std::vector<int> groupTrafficLinks(const Topology &topology,
                                   std::span<const int> gpus,
                                   const LinkLoads *loads = nullptr);

} // namespace railyard::engine
