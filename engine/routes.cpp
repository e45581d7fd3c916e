#include "routes.h"

#include "collective.h"
#include "evaluate.h"
#include "traffic.h"

#include <algorithm>

namespace railyard::engine {

std::vector<int> groupTrafficLinks(const Topology &t,
                                   std::span<const int> gpus,
                                   const LinkLoads *loads)
{
    std::vector<int> out;
    if (gpus.size() < 2)
        return out;
    GroupShape g;
    analyzeGroup(t, gpus, g);
    // One all-reduce's bytes: in one domain a ring (every member's NVLinks or PCIe path);
    // across domains hierarchically, so that every member's NIC carries its share.
    const Algorithm algo = g.domains > 1 && !g.pcieOnly ? Algorithm::Hierarchical : Algorithm::Ring;
    LinkTraffic traffic(t);
    traffic.beginPhase();
    addCollectiveTraffic(traffic, t, g, CollectiveOp::AllReduce, algo, 1e9);
    traffic.phaseTime();
    out = traffic.phaseLinks();
    if (loads)
        std::erase_if(out, [&](int l) {
            const std::size_t i = static_cast<std::size_t>(l);
            return i < loads->size() && loads->utilization[i] <= 0;
        });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace railyard::engine
