#include "serving/servingplacement.h"

#include <algorithm>
#include <numeric>

namespace railyard::engine {

namespace {

using K = ServingGpuGroups::Kind;

int at(const std::vector<int> &v, int gpu)
{
    return gpu >= 0 && static_cast<std::size_t>(gpu) < v.size() ? v[static_cast<std::size_t>(gpu)]
                                                                : -1;
}

// The plan a new mapping gives: no change, or the mapping to store (normalized).
PlacementPlan settle(const Layout &l, std::vector<int> mapping, std::vector<int> targets)
{
    PlacementPlan plan;
    plan.targets = std::move(targets);
    mapping = normalizedMapping(std::move(mapping));
    if (mapping == normalizedMapping(l.mapping))
        plan.noChange = true;
    else
        plan.mapping = std::move(mapping);
    return plan;
}

std::string poolName(const ServingGpuGroups &g, int gpu)
{
    if (!g.disaggregated || gpu < 0) // no pool for a group that does not exist
        return {};
    return at(g.group[K::Pool], gpu) == 1 ? "decode pool" : "prefill pool";
}

// The serving ranks `members` (ascending) move onto `targets` (distinct GPUs of the cluster, one
// per member, in order); the ranks that were there move to the GPUs the members leave.
PlacementPlan moveRanks(const Layout &l,
                        const ServingGpuGroups &g,
                        const std::vector<int> &members,
                        std::vector<int> targets)
{
    const int count = static_cast<int>(g.rank.size());
    std::vector<int> mapping = currentServingMapping(l, g);
    std::vector<bool> isTarget(static_cast<std::size_t>(count), false);
    for (int gpu : targets)
        isTarget[static_cast<std::size_t>(gpu)] = true;
    std::vector<bool> isMember(mapping.size(), false);
    for (int r : members)
        isMember[static_cast<std::size_t>(r)] = true;
    // The GPUs the group leaves that it does not take again, for the ranks it displaces.
    std::vector<int> freed;
    for (int r : members)
        if (const int gpu = mapping[static_cast<std::size_t>(r)];
            gpu >= 0 && gpu < count && !isTarget[static_cast<std::size_t>(gpu)])
            freed.push_back(gpu);
    std::size_t next = 0;
    for (std::size_t r = 0; r < mapping.size(); ++r) {
        const int gpu = mapping[r];
        if (isMember[r] || gpu < 0 || gpu >= count || !isTarget[static_cast<std::size_t>(gpu)])
            continue;
        // As many GPUs are freed as the group takes that other ranks held (with a mapping
        // that names each GPU once).
        if (next >= freed.size())
            return PlacementPlan::refused(PlacementPlan::Refusal::Refused,
                                          "the layout's mapping names GPU " + std::to_string(gpu)
                                                  + " for more than one rank");
        mapping[r] = freed[next++];
    }
    for (std::size_t i = 0; i < members.size(); ++i)
        mapping[static_cast<std::size_t>(members[i])] = targets[i];
    return settle(l, std::move(mapping), std::move(targets));
}

// Pools the cluster cannot hold (the groups are empty): said for every edit.
PlacementPlan unplaced(const ServingGpuGroups &g)
{
    return PlacementPlan::refused(PlacementPlan::Refusal::NoRanks,
                                  "the serving pools cannot be placed: " + g.error);
}

const char *kindNoun(K kind)
{
    switch (kind) {
    case K::Tp: return "TP group";
    case K::Ep: return "EP group";
    case K::Stage: return "PP stage group";
    case K::Replica: return "replica";
    case K::Pool: return "pool";
    default: return "group";
    }
}

} // namespace

std::vector<int> servingGroupRanks(const ServingGpuGroups &g, K kind, int index)
{
    std::vector<int> ranks;
    if (!g.ok() || static_cast<int>(kind) < 0 || static_cast<int>(kind) >= K::KindCount || index < 0
        || index >= g.count[kind])
        return ranks;
    const std::vector<int> &of = g.group[kind];
    for (std::size_t gpu = 0; gpu < of.size() && gpu < g.rank.size(); ++gpu)
        if (of[gpu] == index && g.rank[gpu] >= 0)
            ranks.push_back(g.rank[gpu]);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

std::vector<int> servingGroupGpus(const ServingGpuGroups &g, K kind, int index)
{
    const std::vector<int> ranks = servingGroupRanks(g, kind, index);
    std::vector<int> gpuOfRank(g.rank.size(), -1);
    for (std::size_t gpu = 0; gpu < g.rank.size(); ++gpu)
        if (const int r = g.rank[gpu]; r >= 0 && static_cast<std::size_t>(r) < gpuOfRank.size())
            gpuOfRank[static_cast<std::size_t>(r)] = static_cast<int>(gpu);
    std::vector<int> gpus;
    gpus.reserve(ranks.size());
    for (int r : ranks)
        gpus.push_back(gpuOfRank[static_cast<std::size_t>(r)]);
    return gpus;
}

std::string describeServingGroup(const ServingGpuGroups &g, K kind, int index)
{
    const std::string n = std::to_string(index);
    if (kind == K::Pool)
        return !g.disaggregated ? "serving pool" : index == 1 ? "decode pool" : "prefill pool";
    const std::vector<int> gpus = servingGroupGpus(g, kind, index);
    const int first = gpus.empty() ? -1 : gpus.front();
    if (static_cast<int>(kind) < 0 || static_cast<int>(kind) >= K::KindCount)
        return "group " + n;
    std::string name = std::string(kindNoun(kind)) + " " + n;
    // A TP group names its replica (EP groups and stages span the pool's replicas).
    if (kind == K::Tp && first >= 0 && g.count[K::Replica] > 1)
        name += " of replica " + std::to_string(at(g.group[K::Replica], first));
    if (const std::string pool = poolName(g, first); !pool.empty())
        name += " (" + pool + ")";
    return name;
}

std::vector<int> currentServingMapping(const Layout &l, const ServingGpuGroups &g)
{
    if (!l.mapping.empty())
        return l.mapping;
    const auto ranks = std::count_if(g.rank.begin(), g.rank.end(), [](int r) { return r >= 0; });
    std::vector<int> m(static_cast<std::size_t>(ranks));
    std::iota(m.begin(), m.end(), 0);
    return m;
}

PlacementPlan planServingGroupDrop(const Layout &l,
                                   const ServingGpuGroups &g,
                                   K kind,
                                   int index,
                                   const std::optional<DropSite> &site)
{
    using Refusal = PlacementPlan::Refusal;
    if (!g.ok())
        return unplaced(g);
    const std::vector<int> members = servingGroupRanks(g, kind, index);
    const std::string name = describeServingGroup(g, kind, index);
    if (members.empty())
        return PlacementPlan::refused(Refusal::NoSuchGroup,
                                      (kind == K::Pool ? "pool " + std::to_string(index) : name)
                                              + " does not exist in this deployment");
    if (!site)
        return PlacementPlan::refused(Refusal::NoSite,
                                      "drop " + name + " on a GPU, a server or a rack");
    const int count = static_cast<int>(g.rank.size());
    const int size = static_cast<int>(members.size());
    const int first = site->firstGpu;
    if (auto refused = siteRefusal(name, size, count, *site))
        return std::move(*refused);
    std::vector<int> targets(static_cast<std::size_t>(size));
    std::iota(targets.begin(), targets.end(), first);
    return moveRanks(l, g, members, std::move(targets));
}

std::optional<int> servingGroupAtGpu(const ServingGpuGroups &g, K kind, int gpu)
{
    if (!g.ok() || static_cast<int>(kind) < 0 || static_cast<int>(kind) >= K::KindCount
        || at(g.rank, gpu) < 0)
        return std::nullopt;
    const int index = at(g.group[kind], gpu);
    if (index < 0)
        return std::nullopt;
    return index;
}

PlacementPlan planServingMakeGroup(const Layout &l,
                                   const ServingGpuGroups &g,
                                   K kind,
                                   const std::vector<int> &selected)
{
    using Refusal = PlacementPlan::Refusal;
    if (!g.ok())
        return unplaced(g);
    if (selected.empty())
        return PlacementPlan::refused(Refusal::Refused, "select the GPUs first");
    const int count = static_cast<int>(g.rank.size());
    std::vector<bool> seen(static_cast<std::size_t>(count), false);
    for (int gpu : selected) {
        if (gpu < 0 || gpu >= count)
            return PlacementPlan::refused(Refusal::DoesNotFit,
                                          "GPU " + std::to_string(gpu) + " is not in the cluster");
        if (seen[static_cast<std::size_t>(gpu)])
            return PlacementPlan::refused(Refusal::Refused,
                                          "GPU " + std::to_string(gpu) + " is selected twice");
        seen[static_cast<std::size_t>(gpu)] = true;
    }
    const int first = selected.front();
    const std::optional<int> index = servingGroupAtGpu(g, kind, first);
    if (!index)
        return PlacementPlan::refused(Refusal::Refused,
                                      at(g.rank, first) < 0
                                              ? "GPU " + std::to_string(first) + " serves no rank"
                                              : "GPU " + std::to_string(first) + " is in no "
                                                        + kindNoun(kind));
    const std::vector<int> members = servingGroupRanks(g, kind, *index);
    const std::string name = describeServingGroup(g, kind, *index);
    if (members.size() != selected.size())
        return PlacementPlan::refused(Refusal::Refused,
                                      name + " has " + std::to_string(members.size())
                                              + (members.size() == 1 ? " GPU; " : " GPUs; ")
                                              + std::to_string(selected.size())
                                              + (selected.size() == 1 ? " is" : " are")
                                              + " selected");
    return moveRanks(l, g, members, selected);
}

PlacementPlan planServingGpuSwap(const Layout &l, const ServingGpuGroups &g, int fromGpu, int toGpu)
{
    using Refusal = PlacementPlan::Refusal;
    if (!g.ok())
        return unplaced(g);
    const int count = static_cast<int>(g.rank.size());
    for (int gpu : {fromGpu, toGpu})
        if (gpu < 0 || gpu >= count)
            return PlacementPlan::refused(Refusal::DoesNotFit,
                                          "GPU " + std::to_string(gpu) + " is not in the cluster");
    std::vector<int> mapping = currentServingMapping(l, g);
    for (int &gpu : mapping) {
        if (gpu == fromGpu)
            gpu = toGpu;
        else if (gpu == toGpu)
            gpu = fromGpu;
    }
    return settle(l, std::move(mapping), {fromGpu, toGpu});
}

} // namespace railyard::engine
