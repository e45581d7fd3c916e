#include "step/reformjob.h"

#include "base/inputerror.h"
#include "layout/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

namespace railyard::engine {

namespace {

std::string gpuList(const std::vector<int> &gpus)
{
    std::string out;
    for (std::size_t i = 0; i < gpus.size() && i < 4; ++i)
        out += (i == 0 ? "" : ", ") + std::to_string(gpus[i]);
    if (gpus.size() > 4)
        out += " and " + std::to_string(gpus.size() - 4) + " more";
    return out;
}

// Drops the DP replicas `dropped` (and, if EP needs it, the last healthy ones) from `out`'s
// layout, keeping the global batch. out.policy gets "(DP a -> b, ...), keeping ...".
void shrink(ReformedJob &out, const RankLayout &ranks, std::set<int> dropped, const Topology &t)
{
    const int world = ranks.worldSize();
    const int dp = ranks.size(Dim::DP);
    // Expert parallelism is carved out of TP x CP x DP: the replicas left must still hold
    // whole EP x expert-TP groups. Drop further healthy replicas (the last ones) until they do.
    const int tp = ranks.size(Dim::TP), cp = ranks.size(Dim::CP);
    const int expert = ranks.size(Dim::EP) * ranks.expertTensorParallel();
    int keep = dp - static_cast<int>(dropped.size());
    std::vector<int> extra;
    for (int d = dp - 1; keep > 0 && (1LL * tp * cp * keep) % expert != 0 && d >= 0; --d)
        if (!dropped.count(d)) {
            dropped.insert(d);
            extra.push_back(d);
            --keep;
        }
    if (keep <= 0) {
        out.error = "no smaller number of data-parallel replicas keeps EP x expert TP = "
                    + std::to_string(expert) + " dividing TP x CP x DP";
        return;
    }
    // The ranks left, in rank order, are the re-formed job's ranks: with the DP coordinates
    // renumbered in order, rank order is kept.
    std::vector<int> mapping;
    mapping.reserve(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
        if (dropped.count(ranks.coord(r, Dim::DP)))
            out.idleGpus.push_back(ranks.gpuOfRank(r));
        else
            mapping.push_back(ranks.gpuOfRank(r));
    }
    std::erase_if(out.idleGpus, [&](int g) { return t.gpuDown(g); });
    out.droppedReplicas.assign(dropped.begin(), dropped.end());
    out.layout.mapping = std::move(mapping);
    out.layout.parallel.dp = keep;
    // The global batch is kept: each replica left runs more micro-batches (the next whole
    // number where they do not divide it).
    TrainingConfig &tr = out.layout.training;
    const long long perRound = 1LL * tr.microBatch * keep;
    const long long micro = (tr.globalBatch + perRound - 1) / perRound;
    const long long batch = micro * perRound;
    std::string batchText = "keeping the global batch of " + std::to_string(tr.globalBatch) + " ("
                            + std::to_string(micro) + " micro-batches per replica)";
    if (batch != tr.globalBatch) {
        batchText = "with the global batch rounded from " + std::to_string(tr.globalBatch)
                    + " up to " + std::to_string(batch) + " (" + std::to_string(micro)
                    + " micro-batches per replica)";
        tr.globalBatch = static_cast<int>(std::min<long long>(batch, 1 << 26));
    }
    std::string replicas;
    for (std::size_t i = 0; i < out.droppedReplicas.size() && i < 4; ++i)
        replicas += (i == 0 ? "" : ", ") + std::to_string(out.droppedReplicas[i]);
    if (out.droppedReplicas.size() > 4)
        replicas += ", ...";
    out.changed = true;
    out.ok = true;
    out.policy = "(DP " + std::to_string(dp) + " -> " + std::to_string(keep) + ", replica"
                 + (out.droppedReplicas.size() == 1 ? " " : "s ") + replicas
                 + (extra.empty() ? std::string()
                                  : " (" + std::to_string(extra.size())
                                            + " more so that EP still divides the ranks)")
                 + "; " + std::to_string(out.idleGpus.size()) + " healthy GPUs idle), " + batchText;
}

} // namespace

ReformedJob reformJob(const Layout &layout, const Topology &t)
{
    ReformedJob out;
    out.layout = layout;
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(layout);
    } catch (const InputError &e) {
        out.error = e.what();
        return out;
    }
    const int world = ranks->worldSize();
    std::vector<int> lostRanks;
    for (int r = 0; r < world; ++r)
        if (t.gpuDown(ranks->gpuOfRank(r))) {
            lostRanks.push_back(r);
            out.lostGpus.push_back(ranks->gpuOfRank(r));
        }
    if (lostRanks.empty()) {
        out.ok = true;
        return out;
    }
    const std::string lost = std::string(out.lostGpus.size() == 1 ? "GPU " : "GPUs ")
                             + gpuList(out.lostGpus) + (out.lostGpus.size() == 1 ? " is" : " are")
                             + " out";
    std::vector<int> spares;
    for (int g = 0; g < t.gpuCount(); ++g)
        if (ranks->rankOfGpu(g) < 0 && !t.gpuDown(g))
            spares.push_back(g);

    if (spares.size() >= lostRanks.size()) {
        // A restarted job takes spare GPUs: the nearest to each lost one (its NVLink domain,
        // then its server's neighbours).
        std::vector<int> mapping = ranks->mapping();
        std::string moves;
        for (int r : lostRanks) {
            const int from = ranks->gpuOfRank(r);
            const auto distance = [&](int g) {
                const bool sameDomain = t.localDomainOfGpu(g) == t.localDomainOfGpu(from);
                return std::make_pair(sameDomain ? 0 : 1,
                                      std::abs(t.nodeOfGpu(g) - t.nodeOfGpu(from)));
            };
            const auto best = std::min_element(spares.begin(), spares.end(), [&](int a, int b) {
                return distance(a) < distance(b);
            });
            mapping[static_cast<std::size_t>(r)] = *best;
            out.spares.emplace_back(from, *best);
            if (out.spares.size() <= 4)
                moves += (moves.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r)
                         + " to GPU " + std::to_string(*best);
            spares.erase(best);
        }
        out.layout.mapping = std::move(mapping);
        out.idleGpus = spares;
        out.changed = true;
        out.ok = true;
        out.policy = lost + ": modelled as a restart on spare GPUs (" + moves
                     + (out.spares.size() > 4 ? ", ..." : "") + "); the job keeps its shape";
        return out;
    }

    const int dp = ranks->size(Dim::DP);
    std::set<int> dropped;
    for (int r : lostRanks)
        dropped.insert(ranks->coord(r, Dim::DP));
    if (dp <= static_cast<int>(dropped.size())) {
        out.error = lost
                    + (dp == 1 ? " and the job has one data-parallel replica (DP 1): an "
                                 "elastic job cannot shrink around it, so the job needs "
                               : " in every data-parallel replica: the job needs ")
                    + std::to_string(lostRanks.size()) + " spare GPU"
                    + (lostRanks.size() == 1 ? "" : "s") + " to restart on (the cluster has "
                    + std::to_string(spares.size()) + " idle)";
        return out;
    }
    shrink(out, *ranks, dropped, t);
    if (out.ok)
        out.policy = lost + ": modelled as an elastic restart without "
                     + (out.droppedReplicas.size() == 1 ? "the data-parallel replica that held it"
                                                        : "the data-parallel replicas that held "
                                                          "them")
                     + " " + out.policy + "; no spare GPUs to restart on";
    return out;
}

ReformedJob withoutReplicas(const Layout &layout,
                            const std::vector<int> &replicas,
                            const Topology &topology)
{
    ReformedJob out;
    out.layout = layout;
    try {
        const RankLayout ranks(layout);
        std::set<int> dropped;
        for (int d : replicas)
            if (d >= 0 && d < ranks.size(Dim::DP))
                dropped.insert(d);
        if (dropped.empty() || static_cast<int>(dropped.size()) >= ranks.size(Dim::DP)) {
            out.error = "no replica to drop, or every one";
            return out;
        }
        shrink(out, ranks, dropped, topology);
        if (out.ok)
            out.policy = "without " + std::string(dropped.size() == 1 ? "replica " : "replicas ")
                         + out.policy;
    } catch (const InputError &e) {
        out.error = e.what();
    }
    return out;
}

} // namespace railyard::engine
