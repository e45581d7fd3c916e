#include "layout/placement.h"

#include "base/inputerror.h"
#include "layout/transformer.h"

#include <algorithm>
#include <memory>
#include <numeric>

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

} // namespace

MappingEdit placeRanks(const Layout &l,
                       const std::vector<int> &members,
                       const std::vector<int> &targets,
                       const std::string &name)
{
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(l);
    } catch (const InputError &e) {
        return fail(e.what());
    }
    if (targets.size() != members.size())
        return fail(name + " has " + std::to_string(members.size()) + " GPUs; "
                    + std::to_string(targets.size()) + " were given");
    const int gpus = l.cluster.gpuCount();
    std::vector<bool> seen(static_cast<std::size_t>(gpus), false);
    for (int g : targets) {
        if (g < 0 || g >= gpus)
            return fail("GPU " + std::to_string(g) + " is not in the cluster");
        if (seen[static_cast<std::size_t>(g)])
            return fail("GPU " + std::to_string(g) + " is named twice");
        seen[static_cast<std::size_t>(g)] = true;
    }
    std::vector<int> mapping = ranks->mapping();
    // GPUs the moved ranks leave, and that are not targets, take the displaced ranks in order.
    std::vector<int> freed;
    for (int r : members) {
        const int g = mapping[static_cast<std::size_t>(r)];
        if (!seen[static_cast<std::size_t>(g)])
            freed.push_back(g);
    }
    std::vector<bool> isMember(static_cast<std::size_t>(ranks->worldSize()), false);
    for (int r : members)
        isMember[static_cast<std::size_t>(r)] = true;
    std::size_t next = 0;
    for (int g : targets) {
        const int displaced = ranks->rankOfGpu(g);
        if (displaced >= 0 && !isMember[static_cast<std::size_t>(displaced)])
            mapping[static_cast<std::size_t>(displaced)] = freed[next++];
    }
    for (std::size_t i = 0; i < members.size(); ++i)
        mapping[static_cast<std::size_t>(members[i])] = targets[i];
    MappingEdit out;
    out.mapping = std::move(mapping);
    return out;
}

MappingEdit placeGroup(const Layout &l, Dim dim, int group, const std::vector<int> &targets)
{
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(l);
    } catch (const InputError &e) {
        return fail(e.what());
    }
    const std::string name = std::string(groupNoun(dim)) + " " + std::to_string(group);
    if (group < 0 || group >= ranks->groupCount(dim))
        return fail(name + " does not exist (there are " + std::to_string(ranks->groupCount(dim))
                    + ")");
    return placeRanks(l, ranks->groupRanks(dim, group), targets, name);
}

MappingEdit placeCoordinate(const Layout &l, Dim dim, int value, const std::vector<int> &targets)
{
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(l);
    } catch (const InputError &e) {
        return fail(e.what());
    }
    const std::string name = std::string(dim == Dim::PP ? "PP stage " : "DP replica ")
                             + std::to_string(value);
    if (value < 0 || value >= ranks->size(dim))
        return fail(name + " does not exist");
    return placeRanks(l, ranks->ranksAt(dim, value), targets, name);
}

MappingEdit placeGroupWithin(const Layout &l, Dim dim, int group, const std::vector<int> &gpus)
{
    int size = 0;
    try {
        size = RankLayout(l).size(dim);
    } catch (const InputError &e) {
        return fail(e.what());
    }
    const std::string name = std::string(groupNoun(dim)) + " " + std::to_string(group);
    if (static_cast<int>(gpus.size()) < size)
        return fail(name + " needs " + std::to_string(size) + " GPUs; the drop target has "
                    + std::to_string(gpus.size()));
    // Prefer the run of GPUs that already holds most of the group, else the first ones.
    std::vector<int> targets(gpus.begin(), gpus.begin() + size);
    return placeGroup(l, dim, group, targets);
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

MappingEdit makeGroupHere(const Layout &l, Dim dim, const std::vector<int> &selected)
{
    if (selected.empty())
        return fail("select the GPUs first");
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(l);
    } catch (const InputError &e) {
        return fail(e.what());
    }
    const int size = ranks->size(dim);
    if (static_cast<int>(selected.size()) != size)
        return fail(std::string("a ") + groupNoun(dim) + " has " + std::to_string(size) + " GPUs; "
                    + std::to_string(selected.size()) + " are selected");
    const int rank = ranks->rankOfGpu(selected.front());
    if (rank < 0)
        return fail("GPU " + std::to_string(selected.front()) + " runs no rank");
    return placeGroup(l, dim, ranks->groupOf(rank, dim), selected);
}

std::vector<SizeChoice> sizeChoices(const Layout &l, Dim dim)
{
    std::vector<SizeChoice> out;
    const int gpus = l.cluster.gpuCount();
    ModelDims m;
    bool haveModel = false;
    if (l.model) {
        const ResolvedModel r = resolveModel(*l.model);
        haveModel = r.error.empty();
        m = r.dims;
    }
    const ParallelConfig &p = l.parallel;
    const long long others = dim == Dim::TP   ? 1LL * p.cp * p.pp
                             : dim == Dim::CP ? 1LL * p.tp * p.pp
                             : dim == Dim::PP ? 1LL * p.tp * p.cp
                                              : 1LL * p.tp * p.cp * p.pp;
    for (int v = 1; v <= gpus; v *= 2) {
        SizeChoice c;
        c.value = v;
        const auto invalid = [&](std::string why) {
            if (c.valid) {
                c.valid = false;
                c.reason = std::move(why);
            }
        };
        const std::string label = std::string(dimLabel(dim)) + " " + std::to_string(v);
        switch (dim) {
        case Dim::TP:
            if (gpus % (others * v) != 0)
                invalid(label + " x CP x PP does not divide the " + std::to_string(gpus) + " GPUs");
            if (haveModel && m.heads % v != 0)
                invalid(label + " does not divide the " + std::to_string(m.heads) + " heads");
            if (haveModel && m.kvHeads % v != 0 && v % m.kvHeads != 0)
                invalid(label + " does not divide the " + std::to_string(m.kvHeads)
                        + " key/value heads");
            break;
        case Dim::CP:
            if (gpus % (others * v) != 0)
                invalid(label + " x TP x PP does not divide the " + std::to_string(gpus) + " GPUs");
            if (l.training.seqLen % (2 * v) != 0)
                invalid("the sequence length " + std::to_string(l.training.seqLen)
                        + " does not split into 2 x " + std::to_string(v) + " chunks");
            break;
        case Dim::PP:
            if (gpus % (others * v) != 0)
                invalid(label + " x TP x CP does not divide the " + std::to_string(gpus) + " GPUs");
            if (haveModel && v > m.layers)
                invalid(label + " is more than the " + std::to_string(m.layers) + " layers");
            break;
        case Dim::EP: {
            const long long stage = gpus / std::max(1LL, 1LL * p.pp);
            if (haveModel && !m.isMoe() && v > 1)
                invalid(m.name + " has no experts");
            else if (haveModel && m.isMoe() && m.experts % v != 0)
                invalid(label + " does not divide the " + std::to_string(m.experts) + " experts");
            if (stage % (1LL * v * p.etp.value_or(1)) != 0)
                invalid(label + " does not divide the " + std::to_string(stage)
                        + " GPUs of a pipeline stage");
            break;
        }
        case Dim::DP:
            if (1LL * others * v != gpus)
                invalid("TP x CP x PP x " + label + " is not the " + std::to_string(gpus) + " GPUs");
            if (l.training.globalBatch % (v * l.training.microBatch) != 0)
                invalid("the global batch " + std::to_string(l.training.globalBatch)
                        + " does not split into " + std::to_string(v) + " replicas of micro batch "
                        + std::to_string(l.training.microBatch));
            break;
        }
        out.push_back(std::move(c));
        if (v > (1 << 20))
            break;
    }
    return out;
}

} // namespace railyard::engine

namespace railyard::engine {

std::vector<SizeChoice> vpChoices(const Layout &l)
{
    std::vector<SizeChoice> out;
    int layers = 0;
    if (l.model) {
        const ResolvedModel r = resolveModel(*l.model);
        if (r.error.empty())
            layers = r.dims.layers;
    }
    const int pp = l.parallel.pp;
    const int most = layers > 0 ? std::max(1, layers / std::max(1, pp)) : 16;
    for (int v = 1; v <= most; ++v) {
        SizeChoice c;
        c.value = v;
        if (v > 1 && pp == 1) {
            c.valid = false;
            c.reason = "VP needs pipeline parallelism (PP > 1)";
        } else if (layers > 0 && layers % (pp * v) != 0) {
            c.valid = false;
            c.reason = std::to_string(layers) + " layers do not split into PP x VP = "
                       + std::to_string(pp * v) + " virtual stages";
        }
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace railyard::engine
