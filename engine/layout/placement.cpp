#include "layout/placement.h"

#include "base/inputerror.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace railyard::engine {

std::vector<int> currentMapping(const Layout &l)
{
    if (!l.mapping.empty())
        return l.mapping;
    std::vector<int> m(static_cast<std::size_t>(l.cluster.gpuCount()));
    std::iota(m.begin(), m.end(), 0);
    return m;
}

namespace {

MappingEdit fail(std::string why)
{
    MappingEdit e;
    e.error = std::move(why);
    return e;
}

// The layout's ranks, or the reason there are none (in `error`).
std::optional<RankLayout> ranksOf(const Layout &l, MappingEdit &error)
{
    try {
        return RankLayout(l);
    } catch (const InputError &e) {
        error = fail(e.what());
    }
    return std::nullopt;
}

} // namespace

MappingEdit placeRanks(const RankLayout &ranks,
                       const std::vector<int> &members,
                       const std::vector<int> &targets,
                       const std::string &name)
{
    if (targets.size() != members.size())
        return fail(name + " has " + std::to_string(members.size()) + " GPUs; "
                    + std::to_string(targets.size()) + " were given");
    // The sizes fill the cluster (RankLayout checks it): a GPU per rank.
    const int gpus = ranks.worldSize();
    std::vector<bool> seen(static_cast<std::size_t>(gpus), false);
    for (int g : targets) {
        if (g < 0 || g >= gpus)
            return fail("GPU " + std::to_string(g) + " is not in the cluster");
        if (seen[static_cast<std::size_t>(g)])
            return fail("GPU " + std::to_string(g) + " is named twice");
        seen[static_cast<std::size_t>(g)] = true;
    }
    std::vector<int> mapping = ranks.mapping();
    // GPUs the moved ranks leave, and that are not targets, take the displaced ranks in order.
    std::vector<int> freed;
    for (int r : members) {
        const int g = mapping[static_cast<std::size_t>(r)];
        if (!seen[static_cast<std::size_t>(g)])
            freed.push_back(g);
    }
    std::vector<bool> isMember(static_cast<std::size_t>(ranks.worldSize()), false);
    for (int r : members)
        isMember[static_cast<std::size_t>(r)] = true;
    std::size_t next = 0;
    for (int g : targets) {
        const int displaced = ranks.rankOfGpu(g);
        if (displaced >= 0 && !isMember[static_cast<std::size_t>(displaced)])
            mapping[static_cast<std::size_t>(displaced)] = freed[next++];
    }
    for (std::size_t i = 0; i < members.size(); ++i)
        mapping[static_cast<std::size_t>(members[i])] = targets[i];
    MappingEdit out;
    out.mapping = std::move(mapping);
    return out;
}

MappingEdit placeRanks(const Layout &l,
                       const std::vector<int> &members,
                       const std::vector<int> &targets,
                       const std::string &name)
{
    MappingEdit error;
    const std::optional<RankLayout> ranks = ranksOf(l, error);
    return ranks ? placeRanks(*ranks, members, targets, name) : error;
}

MappingEdit placeGroup(const RankLayout &ranks, Dim dim, int group, const std::vector<int> &targets)
{
    const std::string name = std::string(groupNoun(dim)) + " " + std::to_string(group);
    if (group < 0 || group >= ranks.groupCount(dim))
        return fail(name + " does not exist (there are " + std::to_string(ranks.groupCount(dim))
                    + ")");
    return placeRanks(ranks, ranks.groupRanks(dim, group), targets, name);
}

MappingEdit placeGroup(const Layout &l, Dim dim, int group, const std::vector<int> &targets)
{
    MappingEdit error;
    const std::optional<RankLayout> ranks = ranksOf(l, error);
    return ranks ? placeGroup(*ranks, dim, group, targets) : error;
}

MappingEdit placeCoordinate(const RankLayout &ranks,
                            Dim dim,
                            int value,
                            const std::vector<int> &targets)
{
    const std::string name = std::string(dim == Dim::PP ? "PP stage " : "DP replica ")
                             + std::to_string(value);
    if (value < 0 || value >= ranks.size(dim))
        return fail(name + " does not exist");
    return placeRanks(ranks, ranks.ranksAt(dim, value), targets, name);
}

MappingEdit placeCoordinate(const Layout &l, Dim dim, int value, const std::vector<int> &targets)
{
    MappingEdit error;
    const std::optional<RankLayout> ranks = ranksOf(l, error);
    return ranks ? placeCoordinate(*ranks, dim, value, targets) : error;
}

MappingEdit swapGpus(const Layout &l, int a, int b)
{
    const int gpus = l.cluster.gpuCount();
    if (a < 0 || a >= gpus || b < 0 || b >= gpus)
        return fail("GPU " + std::to_string(a < 0 || a >= gpus ? a : b) + " is not in the cluster");
    if (a == b)
        return fail("a GPU cannot swap with itself");
    std::vector<int> mapping = currentMapping(l);
    for (int &g : mapping) {
        if (g == a)
            g = b;
        else if (g == b)
            g = a;
    }
    MappingEdit out;
    out.mapping = std::move(mapping);
    return out;
}

MappingEdit makeGroupHere(const RankLayout &ranks, Dim dim, const std::vector<int> &selected)
{
    if (selected.empty())
        return fail("select the GPUs first");
    const int size = ranks.size(dim);
    if (static_cast<int>(selected.size()) != size)
        return fail(std::string("a ") + groupNoun(dim) + " has " + std::to_string(size) + " GPUs; "
                    + std::to_string(selected.size()) + " are selected");
    const int rank = ranks.rankOfGpu(selected.front());
    if (rank < 0)
        return fail("GPU " + std::to_string(selected.front()) + " runs no rank");
    return placeGroup(ranks, dim, ranks.groupOf(rank, dim), selected);
}

MappingEdit makeGroupHere(const Layout &l, Dim dim, const std::vector<int> &selected)
{
    if (selected.empty())
        return fail("select the GPUs first");
    MappingEdit error;
    const std::optional<RankLayout> ranks = ranksOf(l, error);
    return ranks ? makeGroupHere(*ranks, dim, selected) : error;
}

} // namespace railyard::engine
