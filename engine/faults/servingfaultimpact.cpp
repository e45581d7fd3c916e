#include "faults/servingfaultimpact.h"

#include "base/units.h"
#include "serving/servinggroups.h"
#include "serving/servingsetup.h"
#include "step/evaluationdiff.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

namespace railyard::engine {

namespace {

// Faults that cost less of the throughput than this have nothing worth recovering.
constexpr double kNothingToRecover = 0.005;

std::string listText(const std::vector<int> &v)
{
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 4; ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    if (v.size() > 4)
        s += ", ...";
    return s;
}

ServingOptions fastOptions()
{
    ServingOptions o;
    o.linkLoads = false;
    o.timeline = false;
    o.details = false;
    return o;
}

struct Search
{
    const Topology &t;
    const ServingEvaluation &healthy;
    const ServingEvaluation &faulted;
    EvaluationWorkspace workspace;
    std::vector<Recovery> out;
    std::set<std::vector<int>> placed; // mappings already priced (a server swap may be a replica's)

    void price(Recovery r)
    {
        if (!r.layout.mapping.empty() && !placed.insert(r.layout.mapping).second)
            return;
        const ServingEvaluation e = evaluateServing(r.layout, t, workspace, fastOptions());
        if (!e.ok || e.outputTokensPerS <= faulted.outputTokensPerS * 1.001)
            return;
        r.stepTimeS = e.tpotS;
        r.ttftS = e.ttftS;
        r.tokensPerS = e.outputTokensPerS;
        r.costPerMillionTokens = e.costPerMillionOutputTokens;
        const double lost = healthy.outputTokensPerS - faulted.outputTokensPerS;
        r.recovered = lost > 0 ? (e.outputTokensPerS - faulted.outputTokensPerS) / lost : 0;
        if (r.idleGpus > 0) {
            r.price = std::to_string(r.idleGpus) + " GPU" + (r.idleGpus == 1 ? "" : "s") + " idle";
            if (faulted.costPerMillionOutputTokens > 0 && e.costPerMillionOutputTokens > 0)
                r.price += "; $" + formatNumber(faulted.costPerMillionOutputTokens, 3) + " -> $"
                           + formatNumber(e.costPerMillionOutputTokens, 3)
                           + " per million output tokens";
        } else {
            r.price = "none: the same GPUs, ranks placed differently (one edit of the mapping)";
        }
        r.price += "; TPOT " + formatNumber(faulted.tpotS * 1e3, 3) + " -> "
                   + formatNumber(e.tpotS * 1e3, 3) + " ms, TTFT "
                   + formatNumber(faulted.ttftS * 1e3, 3) + " -> " + formatNumber(e.ttftS * 1e3, 3)
                   + " ms";
        out.push_back(std::move(r));
    }
};

int idleGpus(const ServingGpuGroups &g, const Topology &t)
{
    int n = 0;
    for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
        if (g.rank[static_cast<std::size_t>(gpu)] < 0 && !t.gpuDown(gpu))
            ++n;
    return n;
}

// "decode replica 2" (disaggregated, numbered inside its pool) or "replica 2".
std::string replicaName(bool disaggregated, int prefillReplicas, int r)
{
    if (!disaggregated)
        return "replica " + std::to_string(r);
    return r < prefillReplicas ? "prefill replica " + std::to_string(r)
                               : "decode replica " + std::to_string(r - prefillReplicas);
}

std::string gpuRange(const std::vector<int> &gpus)
{
    const bool run = !gpus.empty() && gpus.back() - gpus.front() + 1 == int(gpus.size());
    return run && gpus.size() > 1
                   ? "GPUs " + std::to_string(gpus.front()) + "-" + std::to_string(gpus.back())
                   : std::string(gpus.size() > 1 ? "GPUs " : "GPU ") + listText(gpus);
}

// A different placement of the replicas: the ranks of a replica on a faulted element (a slow
// GPU, a GPU whose NIC or switch is gone, a server a fault touches) swapped, rank for rank,
// with another replica's of the same size (first of each pool: a replica of the other pool
// may feel the fault less, a disaggregated prefill replica's slack against a decode replica's
// TPOT, or the reverse), or moved onto idle healthy GPUs. One edit of the mapping.
void swapReplicas(const Layout &layout,
                  const Topology &t,
                  const ServingGpuGroups &g,
                  int prefillReplicas,
                  Search &search)
{
    const std::size_t kReplica = ServingGpuGroups::Replica;
    const int replicas = g.count[kReplica];
    if (replicas < 1)
        return;
    // Each replica's GPUs in rank order, and whether a fault touches it or took it out.
    std::vector<std::vector<std::pair<int, int>>> byRank(static_cast<std::size_t>(replicas));
    std::vector<char> touched(static_cast<std::size_t>(replicas), 0), out(touched);
    const std::vector<int> servers = affectedServers(t);
    int ranks = 0;
    for (int gpu = 0; gpu < t.gpuCount(); ++gpu) {
        const int r = g.group[kReplica][static_cast<std::size_t>(gpu)];
        const int rank = g.rank[static_cast<std::size_t>(gpu)];
        if (r < 0 || rank < 0)
            continue;
        ranks = std::max(ranks, rank + 1);
        const std::size_t k = static_cast<std::size_t>(r);
        byRank[k].push_back({rank, gpu});
        if (t.gpuDown(gpu))
            out[k] = 1;
        if (t.gpuSlowdown(gpu) > 1 || t.gpuNetPath(gpu) != NetPath::Direct
            || std::binary_search(servers.begin(), servers.end(), t.nodeOfGpu(gpu)))
            touched[k] = 1;
    }
    std::vector<int> mapping(static_cast<std::size_t>(ranks), -1);
    for (auto &list : byRank) {
        std::sort(list.begin(), list.end());
        for (const auto &[rank, gpu] : list)
            mapping[static_cast<std::size_t>(rank)] = gpu;
    }
    const auto gpusOf = [&](int r) {
        std::vector<int> v;
        for (const auto &e : byRank[static_cast<std::size_t>(r)])
            v.push_back(e.second);
        return v;
    };
    const int idle = idleGpus(g, t);
    // Partners: the first few healthy replicas of each pool.
    std::vector<int> partners;
    int perPool[2] = {0, 0};
    for (int r = 0; r < replicas; ++r) {
        const int pool = g.disaggregated && r >= prefillReplicas ? 1 : 0;
        if (!touched[static_cast<std::size_t>(r)] && !out[static_cast<std::size_t>(r)]
            && perPool[pool] < 3) {
            partners.push_back(r);
            ++perPool[pool];
        }
    }
    // Idle healthy GPUs on servers no fault touches.
    std::vector<int> spare;
    for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
        if (g.rank[static_cast<std::size_t>(gpu)] < 0 && !t.gpuDown(gpu) && t.gpuSlowdown(gpu) <= 1
            && t.gpuNetPath(gpu) == NetPath::Direct
            && !std::binary_search(servers.begin(), servers.end(), t.nodeOfGpu(gpu)))
            spare.push_back(gpu);
    int tried = 0;
    for (int a = 0; a < replicas && tried < 4; ++a) {
        const std::size_t ka = static_cast<std::size_t>(a);
        if (!touched[ka] || out[ka])
            continue;
        ++tried;
        const std::string nameA = replicaName(g.disaggregated, prefillReplicas, a);
        const std::vector<int> gpusA = gpusOf(a);
        for (int b : partners) {
            const std::size_t kb = static_cast<std::size_t>(b);
            if (byRank[kb].size() != byRank[ka].size())
                continue;
            std::vector<int> m = mapping;
            for (std::size_t i = 0; i < byRank[ka].size(); ++i) {
                m[static_cast<std::size_t>(byRank[ka][i].first)] = byRank[kb][i].second;
                m[static_cast<std::size_t>(byRank[kb][i].first)] = byRank[ka][i].second;
            }
            Recovery r;
            r.kind = "swap-replicas";
            r.summary = "swap the GPUs of " + nameA + " (" + gpuRange(gpusA) + ") and "
                        + replicaName(g.disaggregated, prefillReplicas, b) + " ("
                        + gpuRange(gpusOf(b)) + "): " + nameA + " off the faulted GPUs";
            r.layout = layout;
            r.layout.mapping = std::move(m);
            r.idleGpus = idle;
            const std::size_t priced = search.out.size();
            search.price(std::move(r));
            // A partner like one already tried (the same pool, placed alike) adds nothing.
            for (std::size_t i = 0; i < priced && search.out.size() > priced; ++i)
                if (search.out[i].kind == "swap-replicas"
                    && std::fabs(search.out[i].tokensPerS - search.out.back().tokensPerS)
                               <= 1e-9 * search.out.back().tokensPerS
                    && std::fabs(search.out[i].ttftS - search.out.back().ttftS)
                               <= 1e-9 * search.out.back().ttftS)
                    search.out.pop_back();
        }
        if (spare.size() >= gpusA.size()) {
            std::vector<int> m = mapping;
            const std::vector<int> onto(spare.begin(),
                                        spare.begin() + static_cast<std::ptrdiff_t>(gpusA.size()));
            for (std::size_t i = 0; i < byRank[ka].size(); ++i)
                m[static_cast<std::size_t>(byRank[ka][i].first)] = onto[i];
            Recovery r;
            r.kind = "move-replica";
            r.summary = "move " + nameA + " from " + gpuRange(gpusA) + " onto idle "
                        + gpuRange(onto);
            r.layout = layout;
            r.layout.mapping = std::move(m);
            r.idleGpus = idle;
            search.price(std::move(r));
        }
    }
}

// How the replicas run when they differ, and what the layout's latencies then mean.
std::string replicaClassesText(const ServingEvaluation &e)
{
    std::size_t replicas = 0;
    for (const ServingEvaluation::ReplicaClass &k : e.replicaClasses)
        replicas += k.replicas.size();
    std::string s = "the replicas run at different speeds (each timed on its own links and "
                    "GPUs):";
    for (std::size_t i = 0; i < e.replicaClasses.size() && i < 4; ++i) {
        const ServingEvaluation::ReplicaClass &k = e.replicaClasses[i];
        s += std::string(i ? ";" : "") + (k.replicas.size() > 1 ? " replicas " : " replica ")
             + listText(k.replicas) + " TPOT " + formatNumber(k.tpotS * 1e3, 4) + " ms, TTFT "
             + formatNumber(k.ttftS * 1e3, 4) + " ms";
    }
    if (e.replicaClasses.size() > 4)
        s += "; ...";
    s += ". Requests are spread evenly over the " + std::to_string(replicas)
         + " replicas: TPOT and TTFT are the mean a request sees, and every percentile above the "
           "faster replicas' share of the requests is the slowest's (the slowest replica's TPOT "
           "and TTFT)";
    return s;
}

} // namespace

std::vector<ImpactMetric> servingImpactMetrics(const ServingEvaluation &a,
                                               const ServingEvaluation &b)
{
    std::vector<ImpactMetric> m
            = {{"tpot_s", a.tpotS, b.tpotS},
               {"ttft_s", a.ttftS, b.ttftS},
               {"output_tokens_per_s_per_gpu", a.outputTokensPerSPerGpu, b.outputTokensPerSPerGpu},
               {"tokens_per_s_per_user", a.tokensPerSPerUser, b.tokensPerSPerUser},
               {"output_tokens_per_s", a.outputTokensPerS, b.outputTokensPerS},
               {"requests_per_s", a.requestsPerS, b.requestsPerS}};
    if (std::fabs(b.slowestTpotS - b.tpotS) > 1e-9 * b.tpotS)
        m.push_back({"slowest_tpot_s", a.slowestTpotS, b.slowestTpotS});
    if (std::fabs(b.slowestTtftS - b.ttftS) > 1e-9 * b.ttftS)
        m.push_back({"slowest_ttft_s", a.slowestTtftS, b.slowestTtftS});
    if (a.costPerMillionOutputTokens > 0)
        m.push_back({"cost_per_million_output_tokens",
                     a.costPerMillionOutputTokens,
                     b.costPerMillionOutputTokens});
    return m;
}

std::vector<BreakdownChange> servingImpactBreakdown(const ServingEvaluation &a,
                                                    const ServingEvaluation &b)
{
    std::vector<BreakdownChange> out;
    const auto add =
            [&](const std::string &pass, const ServingBreakdown &x, const ServingBreakdown &y) {
                out.push_back({pass + ".compute", x.compute, y.compute});
                out.push_back({pass + ".weights_read", x.weightsRead, y.weightsRead});
                out.push_back({pass + ".attention", x.attention, y.attention});
                out.push_back({pass + ".tp", x.tp, y.tp});
                out.push_back({pass + ".ep", x.ep, y.ep});
                out.push_back({pass + ".pp", x.pp, y.pp});
                out.push_back({pass + ".kv_transfer", x.kvTransfer, y.kvTransfer});
                out.push_back({pass + ".overhead", x.overhead, y.overhead});
            };
    add("decode", a.decode, b.decode);
    add("prefill", a.prefill, b.prefill);
    return out;
}

ServingWithout servingWithoutReplicas(const Layout &layout, bool decode, const std::vector<int> &out)
{
    ServingWithout r;
    ServingSetup s;
    r.error = resolveServing(layout, INT_MAX, s);
    if (!r.error.empty())
        return r;
    const ServingPoolShape &pool = decode ? s.decode : s.prefill;
    std::vector<int> drop = out;
    std::sort(drop.begin(), drop.end());
    drop.erase(std::unique(drop.begin(), drop.end()), drop.end());
    std::erase_if(drop, [&](int k) { return k < 0 || k >= pool.replicas; });
    const int left = pool.replicas - static_cast<int>(drop.size());
    if (drop.empty()) {
        r.error = "no replica to drop";
        return r;
    }
    if (left < 1) {
        r.error = "it would drop every replica";
        return r;
    }
    const auto gpuOf = [&](int rank) {
        return layout.mapping.empty() ? rank : layout.mapping[static_cast<std::size_t>(rank)];
    };
    r.layout = layout;
    std::vector<int> mapping;
    mapping.reserve(static_cast<std::size_t>(s.gpus));
    const int gpr = pool.gpusPerReplica();
    for (int rank = 0; rank < s.gpus; ++rank) {
        const int inPool = rank - pool.firstRank;
        const bool dropped = inPool >= 0 && inPool < pool.gpus()
                             && std::binary_search(drop.begin(), drop.end(), inPool / gpr);
        if (!dropped)
            mapping.push_back(gpuOf(rank));
    }
    r.layout.mapping = std::move(mapping);
    ServingConfig &c = *r.layout.serving;
    std::string what = s.disaggregated ? std::string(pool.role) + " replica" : "replica";
    if (s.disaggregated) {
        (decode ? c.disaggregated->decode : c.disaggregated->prefill).replicas = left;
    } else {
        r.layout.parallel.dp = left;
    }
    r.summary = "serve without " + what + (drop.size() > 1 ? "s " : " ") + listText(drop) + ": "
                + std::to_string(pool.replicas) + " -> " + std::to_string(left) + " " + what + "s";
    // Closed loop: the other replicas take the dropped ones' requests.
    if (decode && c.concurrency) {
        const int before = *c.concurrency;
        c.concurrency = std::max(1,
                                 static_cast<int>(
                                         std::lround(double(before) * pool.replicas / left)));
        r.summary += ", " + std::to_string(before) + " -> " + std::to_string(*c.concurrency)
                     + " requests in flight each (the same load)";
    }
    return r;
}

std::vector<Recovery> findServingRecoveries(const Layout &layout,
                                            const Topology &t,
                                            const ServingEvaluation &healthy,
                                            const ServingEvaluation &faulted)
{
    Search search{t, healthy, faulted, {}, {}, {}};
    if (!healthy.ok || !faulted.ok)
        return {};
    const ServingGpuGroups g = servingGpuGroups(layout, t.gpuCount());
    if (!g.ok())
        return {};
    const std::size_t kPool = ServingGpuGroups::Pool, kReplica = ServingGpuGroups::Replica;
    const int gpn = t.shape().gpusPerNode;
    const std::vector<int> servers = affectedServers(t);
    // Replica numbers run through the prefill pool, then the decode pool: the prefill pool's
    // count, to number a decode replica inside its pool.
    int prefillReplicas = 0;
    if (g.disaggregated)
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
            if (g.group[kPool][static_cast<std::size_t>(gpu)] == 0)
                prefillReplicas = std::max(prefillReplicas,
                                           g.group[kReplica][static_cast<std::size_t>(gpu)] + 1);

    // Drop the replicas on affected servers' GPUs (a straggler, a GPU whose NIC or switch is
    // gone) that are still in service (a replica with a GPU out is already out).
    {
        std::set<int> touched, out;
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu) {
            const int r = g.group[kReplica][static_cast<std::size_t>(gpu)];
            if (r < 0)
                continue;
            if (t.gpuDown(gpu))
                out.insert(r);
            else if (std::binary_search(servers.begin(), servers.end(), t.nodeOfGpu(gpu)))
                touched.insert(r);
        }
        std::vector<int> prefill, decode;
        for (int r : touched)
            if (!out.count(r))
                (g.disaggregated && r < prefillReplicas ? prefill : decode)
                        .push_back(g.disaggregated && r >= prefillReplicas ? r - prefillReplicas
                                                                           : r);
        for (const auto &[isDecode, list] : {std::pair{true, decode}, std::pair{false, prefill}}) {
            if (list.empty())
                continue;
            ServingWithout w = servingWithoutReplicas(layout, isDecode, list);
            if (!w.error.empty())
                continue;
            Recovery r;
            r.kind = "drop-replicas";
            r.summary = w.summary + "; " + (list.size() > 1 ? "they hold" : "it holds")
                        + " the failed or slow GPUs";
            r.layout = std::move(w.layout);
            const ServingGpuGroups after = servingGpuGroups(r.layout, t.gpuCount());
            r.idleGpus = after.ok() ? idleGpus(after, t) : 0;
            search.price(std::move(r));
        }
    }

    // Swap an affected server's ranks with a spare server's or another replica's (whole
    // servers, where a server is its own NVLink domain).
    if (t.shape().nodesPerDomain == 1 && t.shape().nodes > 1 && gpn > 0) {
        std::vector<int> mapping(g.rank.size(), -1);
        int ranks = 0;
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
            ranks = std::max(ranks, g.rank[static_cast<std::size_t>(gpu)] + 1);
        mapping.assign(static_cast<std::size_t>(ranks), -1);
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
            if (const int r = g.rank[static_cast<std::size_t>(gpu)]; r >= 0)
                mapping[static_cast<std::size_t>(r)] = gpu;
        std::vector<int> partners;
        std::set<int> replicasSeen;
        for (int n = 0; n < t.shape().nodes && partners.size() < 24; ++n) {
            if (std::binary_search(servers.begin(), servers.end(), n))
                continue;
            bool fine = true;
            for (int k = 0; k < gpn; ++k)
                fine = fine && !t.gpuDown(n * gpn + k) && t.gpuSlowdown(n * gpn + k) <= 1;
            const int replica = g.group[kReplica][static_cast<std::size_t>(n * gpn)];
            if (fine && (replica < 0 || replicasSeen.insert(replica).second))
                partners.push_back(n);
        }
        const int idle = idleGpus(g, t);
        for (std::size_t i = 0; i < servers.size() && i < 4; ++i) {
            const int a = servers[i];
            const int replicaA = g.group[kReplica][static_cast<std::size_t>(a * gpn)];
            for (int b : partners) {
                const int replicaB = g.group[kReplica][static_cast<std::size_t>(b * gpn)];
                if (replicaA == replicaB)
                    continue; // the same replica's servers: the same job
                std::vector<int> m = mapping;
                for (int k = 0; k < gpn; ++k) {
                    const int ga = a * gpn + k, gb = b * gpn + k;
                    const int ra = g.rank[static_cast<std::size_t>(ga)];
                    const int rb = g.rank[static_cast<std::size_t>(gb)];
                    if (ra >= 0)
                        m[static_cast<std::size_t>(ra)] = gb;
                    if (rb >= 0)
                        m[static_cast<std::size_t>(rb)] = ga;
                }
                Recovery r;
                r.kind = "swap-servers";
                r.summary = replicaB < 0
                                    ? "move server " + std::to_string(a)
                                              + "'s ranks onto spare server " + std::to_string(b)
                                    : "swap the ranks of server " + std::to_string(a)
                                              + " and server " + std::to_string(b);
                r.layout = layout;
                r.layout.mapping = std::move(m);
                r.idleGpus = idle;
                search.price(std::move(r));
            }
        }
    }
    swapReplicas(layout, t, g, prefillReplicas, search);
    std::stable_sort(search.out.begin(), search.out.end(), [](const Recovery &a, const Recovery &b) {
        return a.tokensPerS > b.tokensPerS;
    });
    return std::move(search.out);
}

FaultImpact analyzeServingFaults(const Layout &layout,
                                 const Topology &healthy,
                                 const Topology &faulted,
                                 const ImpactOptions &options)
{
    FaultImpact out;
    out.serving = true;
    out.layout = layout;
    EvaluationWorkspace workspace;
    ServingOptions so;
    so.timeline = false;
    out.servingHealthy = evaluateServing(withoutFaults(layout), healthy, workspace, so);
    out.servingFaulted = evaluateServing(layout, faulted, workspace, so);
    out.rerouted = faulted.faultNotes();
    const ServingEvaluation &a = out.servingHealthy, &b = out.servingFaulted;
    if (!a.ok || !b.ok)
        return out;
    for (const Warning &w : b.warnings)
        if (w.code == "gpu-out")
            out.jobChanges.push_back(w.message);
    if (!b.replicaClasses.empty())
        out.jobChanges.push_back(replicaClassesText(b));
    out.metrics = servingImpactMetrics(a, b);
    out.breakdown = servingImpactBreakdown(a, b);
    if (a.links && b.links)
        out.links = linksWithChangedBytes(a.links->decodeStep, b.links->decodeStep, options.links);
    const double loss = a.outputTokensPerS > 0 ? 1 - b.outputTokensPerS / a.outputTokensPerS : 0;
    if (!options.recovery) {
        out.recoveryNote = "not searched";
    } else if (loss < kNothingToRecover) {
        out.recoveryNote = "the faults cost " + formatNumber(100 * loss, 2)
                           + "% of the output tokens/s: nothing worth recovering";
    } else {
        out.consideredRecoveries = findServingRecoveries(layout, faulted, a, b);
        if (out.consideredRecoveries.empty())
            out.recoveryNote = "none of the changes tried (dropping the replicas on the failed or "
                               "slow GPUs, moving a failed server's ranks onto a spare server or "
                               "another replica's, swapping a replica on the faulted element with "
                               "another replica or moving it onto idle GPUs) serves more than the "
                               "layout as it runs";
        else
            out.recovery = out.consideredRecoveries.front();
    }
    return out;
}

} // namespace railyard::engine
