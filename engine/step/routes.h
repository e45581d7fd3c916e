#pragma once

#include "layout/parallel.h"
#include "topology/topology.h"

#include <span>
#include <vector>

namespace railyard::engine {

struct LinkLoads;
struct StepTimeline;

// The links a group's collectives cross, routed as the cost engine routes their bytes: the
// members' NVLinks (or PCIe); when the group leaves one NVLink domain, each member's path to
// its NICs and the NICs' uplinks; when it spans leaves, the leaves' uplinks to the spine; when
// it spans pods of a three-tier fabric, the spines' uplinks to the core. With `loads`, links
// that carry nothing in the step are left out. Sorted, no repeats.
std::vector<int> groupTrafficLinks(const Topology &topology,
                                   std::span<const int> gpus,
                                   const LinkLoads *loads = nullptr);

// The groups of one parallel dimension whose collectives cross a link.
struct LinkCrossing
{
    Dim dim = Dim::TP;
    std::vector<int> groups; // RankLayout group indices of `dim`, ascending
};

// Which groups' traffic crosses `link`, routed as groupTrafficLinks routes it, per dimension
// that splits the job (TP, CP, EP, DP, then PP), with no entry for a dimension none of whose
// groups cross it. With `timeline`, only dimensions whose communication the step puts on the
// link are listed (a DP group's route may pass an NVLink its reduction never uses); with
// `loads`, an idle link is crossed by nothing. Only groups with a GPU below the link (under its
// lower end: the server, NVLink domain, leaf or pod it serves) are routed, so asking about one
// link costs a few groups, not the whole job.
std::vector<LinkCrossing> groupsCrossingLink(const Topology &topology,
                                             const RankLayout &ranks,
                                             int link,
                                             const StepTimeline *timeline = nullptr,
                                             const LinkLoads *loads = nullptr);

} // namespace railyard::engine
