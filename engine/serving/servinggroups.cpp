#include "serving/servinggroups.h"

#include "serving/servingsetup.h"

namespace railyard::engine {

namespace {

// Numbers the groups of `list` from `first` on the GPUs they hold.
int number(const GroupList &list, int first, std::vector<int> &group)
{
    const std::size_t n = list.count();
    for (std::size_t i = 0; i < n; ++i)
        for (int gpu : list[i])
            if (gpu >= 0 && static_cast<std::size_t>(gpu) < group.size())
                group[static_cast<std::size_t>(gpu)] = first + static_cast<int>(i);
    return first + static_cast<int>(n);
}

} // namespace

ServingGpuGroups servingGpuGroups(const Layout &layout, int clusterGpus)
{
    ServingGpuGroups out;
    if (!layout.serving) {
        out.error = "the layout does not serve";
        return out;
    }
    ServingSetup setup;
    out.error = resolveServing(layout, clusterGpus, setup);
    if (!out.ok())
        return out;
    out.disaggregated = setup.disaggregated;
    for (auto &g : out.group)
        g.assign(static_cast<std::size_t>(clusterGpus), -1);
    out.rank.assign(static_cast<std::size_t>(clusterGpus), -1);
    for (int r = 0; r < setup.gpus; ++r) {
        const int gpu = layout.mapping.empty() ? r : layout.mapping[static_cast<std::size_t>(r)];
        if (gpu >= 0 && gpu < clusterGpus)
            out.rank[static_cast<std::size_t>(gpu)] = r;
    }
    std::vector<const ServingPoolShape *> pools = {&setup.prefill};
    if (setup.disaggregated)
        pools.push_back(&setup.decode);
    using K = ServingGpuGroups;
    for (std::size_t p = 0; p < pools.size(); ++p) {
        const PoolGroups g = poolGroups(layout, *pools[p]);
        out.count[K::Tp] = number(g.tp, out.count[K::Tp], out.group[K::Tp]);
        out.count[K::Ep] = number(g.ep, out.count[K::Ep], out.group[K::Ep]);
        out.count[K::Replica] = number(g.replicas, out.count[K::Replica], out.group[K::Replica]);
        // A stage is every GPU of the pool with one pipeline coordinate.
        const GroupList &pipe = g.pipeline;
        for (std::size_t i = 0; i < pipe.count(); ++i) {
            const auto ranks = pipe[i];
            for (std::size_t s = 0; s < ranks.size(); ++s)
                if (const int gpu = ranks[s]; gpu >= 0 && gpu < clusterGpus)
                    out.group[K::Stage][static_cast<std::size_t>(gpu)] = out.count[K::Stage]
                                                                         + static_cast<int>(s);
        }
        out.count[K::Stage] += pools[p]->pp;
        for (int gpu : g.replicas.gpus)
            if (gpu >= 0 && gpu < clusterGpus)
                out.group[K::Pool][static_cast<std::size_t>(gpu)] = static_cast<int>(p);
        out.count[K::Pool] += 1;
    }
    return out;
}

} // namespace railyard::engine
