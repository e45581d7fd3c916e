// The serving evaluation on a cluster with faults (cluster.faults). Links, NICs and switches down
// or degraded need nothing here: the topology routes around them (ECMP over the working uplinks,
// PXN through a neighbour's NIC) and rates degraded links at what is left, so the collectives
// and KV transfers priced on it pay for the detour. What is here is the GPUs': a GPU out takes
// its replica (its TP, EP and attention-DP groups, every stage) out of service, and the other
// replicas serve the same load, as a load balancer that stops routing to a dead instance does;
// a straggler sets the pace of every synchronous collective of its groups, so its whole
// pipeline stage runs at its pace, and with it its replica's decode steps and prefills.

#include "serving/servingmodel_p.h"

#include "base/units.h"

#include <algorithm>
#include <map>

namespace railyard::engine::detail {

namespace {

// Removes replica blocks from a group list: every list of a pool holds each replica's GPUs in
// one block of gpusPerReplica entries (poolGroups' order), so a replica is a block.
void dropReplicas(GroupList &list, int gpusPerReplica, const std::vector<int> &out)
{
    if (out.empty() || list.gpus.empty())
        return;
    std::vector<int> kept;
    kept.reserve(list.gpus.size());
    const int replicas = static_cast<int>(list.gpus.size()) / gpusPerReplica;
    for (int r = 0; r < replicas; ++r) {
        if (std::binary_search(out.begin(), out.end(), r))
            continue;
        const auto first = list.gpus.begin() + static_cast<std::ptrdiff_t>(r) * gpusPerReplica;
        kept.insert(kept.end(), first, first + gpusPerReplica);
    }
    list.gpus = std::move(kept);
}

std::string gpuList(const std::vector<int> &gpus)
{
    std::string s;
    for (std::size_t i = 0; i < gpus.size() && i < 4; ++i)
        s += (i ? ", " : "") + std::to_string(gpus[i]);
    if (gpus.size() > 4)
        s += " and " + std::to_string(gpus.size() - 4) + " more";
    return s;
}

} // namespace

PoolGroups ServingModel::servingGroups(const ServingPoolShape &pool) const
{
    const bool prefill = std::string(pool.role) == "prefill";
    const ServingPoolShape &held = prefill ? m_heldPrefill : m_heldDecode;
    const std::vector<int> &out = prefill ? m_outPrefill : m_outDecode;
    PoolGroups g = poolGroups(m_layout, held);
    const int n = held.gpusPerReplica();
    for (GroupList *list : {&g.tp, &g.attention, &g.ep, &g.pipeline, &g.replicas})
        dropReplicas(*list, n, out);
    return g;
}

bool ServingModel::takeOutOfService()
{
    m_heldPrefill = m_setup.prefill;
    m_heldDecode = m_setup.decode;
    m_heldGpus = m_setup.gpus;
    if (m_topo.downGpuCount() == 0)
        return true;
    const auto take = [&](ServingPoolShape &pool,
                          const ServingPoolShape &held,
                          std::vector<int> &out) -> bool {
        const PoolGroups g = poolGroups(m_layout, held);
        std::vector<int> lost;
        for (int r = 0; r < held.replicas; ++r) {
            bool down = false;
            for (int gpu : g.replicas[static_cast<std::size_t>(r)])
                if (gpu >= 0 && gpu < m_topo.gpuCount() && m_topo.gpuDown(gpu)) {
                    down = true;
                    lost.push_back(gpu);
                }
            if (down)
                out.push_back(r);
        }
        if (out.empty())
            return true;
        const std::string what = m_setup.disaggregated ? std::string(held.role) + " replica"
                                                       : std::string("replica");
        const int left = held.replicas - static_cast<int>(out.size());
        if (left < 1) {
            m_result.error = "cluster.faults: every " + what + " has a GPU out (GPU "
                             + gpuList(lost) + "): nothing is left to serve";
            return false;
        }
        pool.replicas = left;
        std::string which;
        for (std::size_t i = 0; i < out.size() && i < 4; ++i)
            which += (i ? ", " : "") + std::to_string(out[i]);
        if (out.size() > 4)
            which += " and " + std::to_string(out.size() - 4) + " more";
        std::string message = "GPU " + gpuList(lost) + (lost.size() > 1 ? " are" : " is")
                              + " out: " + what + (out.size() > 1 ? "s " : " ") + which
                              + " (its TP, EP and attention-DP groups) left service, as a load "
                                "balancer stops routing to a dead instance; the other "
                              + std::to_string(left) + " serve the same load";
        std::vector<int> idle;
        for (int r : out)
            for (int gpu : g.replicas[static_cast<std::size_t>(r)])
                if (!m_topo.gpuDown(gpu))
                    idle.push_back(gpu);
        if (!idle.empty())
            message += "; " + std::to_string(idle.size()) + " healthy GPU"
                       + (idle.size() > 1 ? "s" : "") + " of "
                       + (out.size() > 1 ? "those replicas" : "that replica") + " idle";
        warn(Severity::Warning, "gpu-out", message, lost);
        return true;
    };
    if (m_setup.disaggregated && !take(m_setup.prefill, m_heldPrefill, m_outPrefill))
        return false;
    if (!take(m_setup.decode, m_heldDecode, m_outDecode))
        return false;
    if (!m_setup.disaggregated)
        m_setup.prefill = m_setup.decode;
    // Closed loop: the same requests in flight over fewer replicas.
    if (!m_outDecode.empty())
        m_loadScale = double(m_heldDecode.replicas) / m_setup.decode.replicas;
    return true;
}

std::vector<double> ServingModel::stageSlowdown(const PoolGroups &groups,
                                                const ServingPoolShape &pool,
                                                int replica) const
{
    if (!m_topo.hasStragglers() || groups.replicas.gpus.empty())
        return {};
    const std::span<const int> gpus = groups.replicas[static_cast<std::size_t>(replica)];
    std::vector<double> slow(static_cast<std::size_t>(pool.pp), 1.0);
    bool any = false;
    for (int s = 0; s < pool.pp; ++s)
        for (int t = 0; t < pool.tp; ++t) {
            const int gpu = gpus[static_cast<std::size_t>(s * pool.tp + t)];
            const double f = m_topo.gpuSlowdown(gpu);
            if (f > slow[static_cast<std::size_t>(s)]) {
                slow[static_cast<std::size_t>(s)] = f;
                any = true;
            }
        }
    return any ? slow : std::vector<double>{};
}

void ServingModel::formClasses()
{
    m_classes.clear();
    std::map<std::vector<double>, std::size_t> byKey;
    const int replicas = m_setup.decode.replicas;
    for (int r = 0; r < replicas; ++r) {
        std::vector<double> slow = stageSlowdown(m_decodeGroups, m_setup.decode, r);
        const auto [it, fresh] = byKey.try_emplace(slow, m_classes.size());
        if (fresh) {
            ReplicaClass c;
            c.slowdown = std::move(slow);
            m_classes.push_back(std::move(c));
        }
        m_classes[it->second].replicas.push_back(r);
    }
    const ServingConfig &c = m_setup.config;
    // Disaggregated: every decode class shares the prefill pool; a straggler there slows its
    // own replica's prefills, and the pool serves at the mean of its replicas' rates (requests
    // spread evenly over them).
    PassCost poolPrefill = m_prefill;
    if (m_setup.disaggregated && m_topo.hasStragglers()) {
        double rate = 0;
        bool slowed = false;
        for (int r = 0; r < m_setup.prefill.replicas; ++r) {
            const std::vector<double> slow = stageSlowdown(m_prefillGroups, m_setup.prefill, r);
            if (slow.empty()) {
                rate += 1.0 / m_prefill.total();
                continue;
            }
            slowed = true;
            rate += 1.0
                    / prefillRequest(m_setup,
                                     m_setup.prefill,
                                     m_prefillComm,
                                     *m_compute,
                                     c.inputTokens,
                                     m_setup.prefill.attentionDp,
                                     slow)
                              .total();
        }
        if (slowed && rate > 0) {
            const double f = m_setup.prefill.replicas / rate / m_prefill.total();
            poolPrefill.compute *= f;
            poolPrefill.weightsRead *= f;
            poolPrefill.attention *= f;
            poolPrefill.tp *= f;
            poolPrefill.ep *= f;
            poolPrefill.pp *= f;
            poolPrefill.overhead *= f;
        }
    }
    for (ReplicaClass &k : m_classes)
        k.prefill = m_setup.disaggregated || k.slowdown.empty()
                            ? poolPrefill
                            : prefillRequest(m_setup,
                                             m_setup.prefill,
                                             m_prefillComm,
                                             *m_compute,
                                             c.inputTokens,
                                             m_setup.prefill.attentionDp,
                                             k.slowdown);
}

ThroughputResult ServingModel::combineClasses() const
{
    if (m_classes.size() == 1)
        return m_classes.front().throughput;
    ThroughputResult out;
    double replicas = 0;
    for (const ReplicaClass &k : m_classes) {
        const ThroughputResult &t = k.throughput;
        out.requestsPerS += t.requestsPerS;
        out.capacity += t.capacity;
        out.overloaded = out.overloaded || t.overloaded;
        replicas += double(k.replicas.size());
    }
    for (const ReplicaClass &k : m_classes) {
        const ThroughputResult &t = k.throughput;
        // Latencies: the mean a request sees (weighted by the requests each class serves);
        // per-replica quantities: the mean replica's.
        const double w = out.requestsPerS > 0 ? t.requestsPerS / out.requestsPerS : 0;
        const double v = double(k.replicas.size()) / replicas;
        out.tpotS += w * t.tpotS;
        out.ttftS += w * t.ttftS;
        out.waitS += w * t.waitS;
        out.kvTransferS += w * t.kvTransferS;
        out.e2eS += w * t.e2eS;
        out.decodeBatch += v * t.decodeBatch;
        out.decodeStepS += v * t.decodeStepS;
        out.concurrency += v * t.concurrency;
        out.prefillShare += v * t.prefillShare;
        out.queued += v * t.queued;
    }
    return out;
}

} // namespace railyard::engine::detail
