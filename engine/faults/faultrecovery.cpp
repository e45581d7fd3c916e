#include "faults/faultrecovery.h"

#include "base/jsoncursor.h"
#include "base/units.h"
#include "layout/parallel.h"
#include "step/reformjob.h"

#include <algorithm>
#include <memory>
#include <set>

namespace railyard::engine {

std::vector<int> affectedServers(const Topology &t)
{
    std::set<int> servers;
    const auto &devices = t.devices();
    const auto addDevice = [&](int dev) {
        const Device &d = devices[static_cast<std::size_t>(dev)];
        if (d.node >= 0) {
            servers.insert(d.node);
        } else if (d.kind == DeviceKind::Leaf) {
            // A leaf serves the servers whose NICs it holds.
            for (int nic = 0; nic < t.nicCount(); ++nic)
                if (t.leafOfNic(nic) == d.index)
                    servers.insert(devices[static_cast<std::size_t>(t.nicDevice(nic))].node);
        } else if (d.kind == DeviceKind::NvSwitch && d.domain >= 0 && t.shape().domainSize > 0) {
            const int first = d.domain * t.shape().domainSize;
            for (int g = first; g < first + t.shape().domainSize; ++g)
                servers.insert(t.nodeOfGpu(g));
        }
    };
    for (const ResolvedFault &f : t.faults()) {
        for (int g : f.gpus)
            servers.insert(t.nodeOfGpu(g));
        for (int dev : f.devices)
            addDevice(dev);
        for (int l : f.links) {
            const Link &k = t.links()[static_cast<std::size_t>(l)];
            // The end nearer the GPUs (a spine's links move no server's traffic off it).
            addDevice(k.a);
        }
    }
    return {servers.begin(), servers.end()};
}

namespace {

struct Search
{
    const Layout &layout;
    const Topology &t;
    const Evaluation &healthy;
    const Evaluation &faulted;
    EvaluationWorkspace workspace;
    std::vector<Recovery> out;

    void price(Recovery r)
    {
        EvaluateOptions options;
        options.linkLoads = false;
        options.timeline = false;
        const Evaluation e = evaluate(r.layout, t, workspace, options);
        if (!e.ok || e.tokensPerS <= faulted.tokensPerS * 1.001)
            return;
        r.stepTimeS = e.stepTimeS;
        r.tokensPerS = e.tokensPerS;
        r.costPerMillionTokens = e.costPerMillionTokens;
        const double lost = healthy.tokensPerS - faulted.tokensPerS;
        r.recovered = lost > 0 ? (e.tokensPerS - faulted.tokensPerS) / lost : 0;
        if (r.idleGpus > 0) {
            r.price = std::to_string(r.idleGpus) + " GPU" + (r.idleGpus == 1 ? "" : "s") + " idle";
            if (faulted.costPerMillionTokens > 0 && e.costPerMillionTokens > 0)
                r.price += "; $" + formatNumber(faulted.costPerMillionTokens, 3) + " -> $"
                           + formatNumber(e.costPerMillionTokens, 3) + " per million tokens";
        } else {
            r.price = r.kind == "rank-order"
                              ? "none: the same GPUs in another rank order (one edit of "
                                "parallel.order)"
                              : "none: the same GPUs, ranks placed differently (one edit of "
                                "the mapping)";
        }
        out.push_back(std::move(r));
    }
};

std::string replicaText(const std::vector<int> &replicas)
{
    std::string s;
    for (std::size_t i = 0; i < replicas.size() && i < 4; ++i)
        s += (i == 0 ? "" : ", ") + std::to_string(replicas[i]);
    if (replicas.size() > 4)
        s += ", ...";
    return s;
}

} // namespace

std::vector<Recovery> findRecoveries(const Layout &layout,
                                     const Topology &t,
                                     const Evaluation &healthy,
                                     const Evaluation &faulted)
{
    Search search{layout, t, healthy, faulted, {}, {}};
    if (!faulted.ok || !healthy.ok || !layout.model)
        return {};
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(layout);
    } catch (const InputError &) {
        return {};
    }
    const int gpn = t.shape().gpusPerNode;
    const std::vector<int> servers = affectedServers(t);
    std::set<int> affectedGpus;
    for (int s : servers)
        for (int k = 0; k < gpn; ++k)
            affectedGpus.insert(s * gpn + k);

    // A smaller DP: without the replicas that hold an affected GPU (a straggler, a GPU whose
    // NIC or switch is gone).
    {
        std::set<int> replicas;
        for (int g : affectedGpus)
            if (const int r = ranks->rankOfGpu(g); r >= 0 && !t.gpuDown(g))
                replicas.insert(ranks->coord(r, Dim::DP));
        const std::vector<int> list(replicas.begin(), replicas.end());
        if (!list.empty() && static_cast<int>(list.size()) < ranks->size(Dim::DP)) {
            const ReformedJob job = withoutReplicas(layout, list, t);
            if (job.ok) {
                Recovery r;
                r.kind = "smaller-dp";
                r.summary = "run without DP replica" + std::string(list.size() == 1 ? " " : "s ")
                            + replicaText(job.droppedReplicas) + " (the one"
                            + (list.size() == 1 ? "" : "s") + " on the failed or slow GPUs): DP "
                            + std::to_string(ranks->size(Dim::DP)) + " -> "
                            + std::to_string(*job.layout.parallel.dp) + ", global batch "
                            + std::to_string(job.layout.training.globalBatch);
                r.layout = job.layout;
                r.idleGpus = static_cast<int>(job.idleGpus.size());
                for (int g = 0; g < t.gpuCount(); ++g)
                    if (ranks->rankOfGpu(g) < 0 && !t.gpuDown(g))
                        ++r.idleGpus;
                search.price(std::move(r));
            }
        }
    }

    // Swap an affected server's ranks with another server's: a spare, or one in another
    // pipeline stage or scalable unit (whole NVLink domains only: a server of a rack-scale
    // domain takes its domain's NVLink with it).
    if (t.shape().nodesPerDomain == 1 && t.shape().nodes > 1) {
        const int nodes = t.shape().nodes;
        std::vector<int> partners;
        std::set<int> stagesSeen;
        std::set<int> unitsSeen;
        const int perUnit = std::max(1, t.shape().nodesPerLeafGroup);
        for (int n = 0; n < nodes && partners.size() < 24; ++n) {
            if (std::binary_search(servers.begin(), servers.end(), n))
                continue;
            const int r = ranks->rankOfGpu(n * gpn);
            bool healthyServer = true;
            for (int k = 0; k < gpn; ++k)
                healthyServer = healthyServer && !t.gpuDown(n * gpn + k)
                                && t.gpuSlowdown(n * gpn + k) <= 1;
            if (!healthyServer)
                continue;
            const int stage = r >= 0 ? ranks->coord(r, Dim::PP) : -1;
            const bool newStage = stagesSeen.insert(stage).second;
            const bool newUnit = unitsSeen.insert(n / perUnit).second;
            if (r < 0 || newStage || newUnit)
                partners.push_back(n);
        }
        std::vector<int> mapping = ranks->mapping();
        for (std::size_t i = 0; i < servers.size() && i < 4; ++i) {
            const int a = servers[i];
            for (int b : partners) {
                std::vector<int> m = mapping;
                for (int k = 0; k < gpn; ++k) {
                    const int ga = a * gpn + k, gb = b * gpn + k;
                    const int ra = ranks->rankOfGpu(ga), rb = ranks->rankOfGpu(gb);
                    if (ra >= 0)
                        m[static_cast<std::size_t>(ra)] = gb;
                    if (rb >= 0)
                        m[static_cast<std::size_t>(rb)] = ga;
                }
                Recovery r;
                r.kind = "swap-servers";
                const bool spare = ranks->rankOfGpu(b * gpn) < 0;
                r.summary = spare ? "move server " + std::to_string(a)
                                            + "'s ranks onto spare server " + std::to_string(b)
                                  : "swap the ranks of server " + std::to_string(a) + " and server "
                                            + std::to_string(b);
                r.layout = layout;
                r.layout.mapping = std::move(m);
                for (int g = 0; g < t.gpuCount(); ++g)
                    if (ranks->rankOfGpu(g) < 0 && !t.gpuDown(g))
                        ++r.idleGpus;
                search.price(std::move(r));
            }
        }
    }

    // Another rank order (only where the order alone places the ranks).
    if (layout.mapping.empty()) {
        for (const char *order : {"tp-cp-ep-dp-pp",
                                  "tp-cp-ep-pp-dp",
                                  "tp-dp-cp-ep-pp",
                                  "tp-pp-cp-ep-dp",
                                  "tp-dp-pp-cp-ep",
                                  "tp-pp-dp-cp-ep"}) {
            if (layout.parallel.order == order)
                continue;
            Recovery r;
            r.kind = "rank-order";
            r.summary = std::string("rank order ") + order + " instead of " + layout.parallel.order;
            r.layout = layout;
            r.layout.parallel.order = order;
            search.price(std::move(r));
        }
    }

    std::stable_sort(search.out.begin(), search.out.end(), [](const Recovery &a, const Recovery &b) {
        return a.tokensPerS > b.tokensPerS;
    });
    return std::move(search.out);
}

} // namespace railyard::engine
