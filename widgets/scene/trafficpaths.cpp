#include "trafficpaths.h"

#include <algorithm>
#include <set>

namespace railyard {

std::vector<int> groupTrafficLinks(const engine::Topology &t,
                                   const std::vector<int> &gpus,
                                   const engine::LinkLoads *loads)
{
    std::vector<int> out;
    if (gpus.size() < 2)
        return out;
    const auto busy = [&](int link) {
        return link >= 0
               && (!loads || static_cast<std::size_t>(link) >= loads->size()
                   || loads->utilization[static_cast<std::size_t>(link)] > 0);
    };
    const auto add = [&](int link) {
        if (busy(link))
            out.push_back(link);
    };
    std::set<int> domains;
    for (int g : gpus)
        domains.insert(t.localDomainOfGpu(g));
    const bool pcieOnly = t.shape().pcieOnly;
    for (int g : gpus) {
        if (pcieOnly)
            add(t.gpuHostLink(g));
        else
            for (int l : t.gpuNvlinks(g))
                add(l);
    }
    if (domains.size() < 2)
        return out;
    std::set<int> leaves;
    for (int g : gpus) {
        if (!pcieOnly)
            add(t.gpuHostLink(g));
        for (int nicDevice : t.gpuNics(g)) {
            const int nic = t.devices()[static_cast<std::size_t>(nicDevice)].index;
            add(t.nicHostLink(nic));
            add(t.nicUplink(nic));
            if (const int leaf = t.leafOfNic(nic); leaf >= 0)
                leaves.insert(leaf);
        }
    }
    if (leaves.size() > 1)
        for (int leaf : leaves)
            for (int l : t.leafUplinks(leaf))
                add(l);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace railyard
