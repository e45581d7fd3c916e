#include "layout/parallelchoices.h"

#include "layout/transformer.h"

#include <algorithm>

namespace railyard::engine {

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

int dataParallelRanks(const Layout &l)
{
    return std::max(1, l.dataParallel() * std::max(1, l.parallel.cp));
}

std::vector<SizeChoice> shardGroupChoices(const Layout &l)
{
    const int ranks = dataParallelRanks(l);
    std::vector<SizeChoice> out;
    out.push_back(SizeChoice{0, true, {}});
    // A file's group of every rank is hybrid sharding's one-replica case: full sharding.
    const int own = l.training.optimizer.shardGroup;
    if (own == ranks)
        out.push_back(SizeChoice{ranks, true, {}});
    for (int g = ranks / 2; g >= 1; --g)
        if (ranks % g == 0)
            out.push_back(SizeChoice{g, true, {}});
    if (own > 0 && zeroShardRanks(l.training.optimizer, ranks) != own)
        out.push_back(SizeChoice{own,
                                 false,
                                 std::to_string(own)
                                         + " does not divide DP x CP = " + std::to_string(ranks)});
    return out;
}

ParallelConfig withParallelSize(const ParallelConfig &parallel, int gpus, Dim dim, int value)
{
    ParallelConfig p = parallel;
    switch (dim) {
    case Dim::TP: p.tp = value; break;
    case Dim::CP: p.cp = value; break;
    case Dim::EP: p.ep = value; break;
    case Dim::PP: p.pp = value; break;
    case Dim::DP: p.dp = value; break;
    }
    if (dim != Dim::DP && dim != Dim::EP) {
        // DP follows from the GPU count: the job keeps filling the cluster.
        const long long modelParallel = 1LL * p.tp * p.cp * p.pp;
        if (p.dp && modelParallel > 0 && gpus % modelParallel == 0)
            p.dp = static_cast<int>(gpus / modelParallel);
        if (p.vp > 1 && p.pp == 1)
            p.vp = 1; // VP means nothing without a pipeline
    }
    return p;
}

} // namespace railyard::engine
