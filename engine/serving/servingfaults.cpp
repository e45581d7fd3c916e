// The serving evaluation on a cluster with faults (cluster.faults). Links, NICs and switches down
// or degraded: the topology routes around them (ECMP over the working uplinks, PXN through a
// neighbour's NIC) and rates degraded links at what is left; here each replica's collectives
// are timed on the links its own traffic crosses (every replica's traffic loading them), so the
// replica whose traffic crosses the faulted or detoured link slows and the others do not. The
// GPUs: a GPU out takes its replica (its TP, EP and attention-DP groups, every stage) out of
// service, and the other replicas serve the same load, as a load balancer that stops routing
// to a dead instance does; a straggler sets the pace of every synchronous collective of its
// groups, so its whole pipeline stage runs at its pace, and with it its replica's decode steps
// and prefills (a disaggregated prefill replica's: the TTFT of the requests it serves).
// Replicas that run alike form a class; the cluster serves the sum of its classes. Requests are
// spread evenly over the replicas (a router's round robin, each replica as many in flight), so
// the mean latency weights each class by the requests it serves and the slow class's latency
// is every percentile above the others' share of the requests (slowestTpotS, slowestTtftS).

#include "serving/servingmodel_p.h"

#include "base/units.h"
#include "serving/servingcomm.h"

#include <algorithm>
#include <map>
#include <numeric>

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

std::vector<PoolComm> ServingModel::replicaComm(const PoolGroups &groups,
                                                const ServingPoolShape &pool,
                                                const PoolComm &comm) const
{
    bool links = false;
    for (const ResolvedFault &f : m_topo.faults())
        links = links || !f.links.empty();
    if (!links || pool.replicas < 2)
        return {};
    std::vector<PoolComm> out(static_cast<std::size_t>(pool.replicas), comm);
    LinkTraffic &scratch = m_workspace.planning();
    const int perReplica = pool.gpusPerReplica();
    const auto bySet = [&](const GroupList &list, const CollectivePricer &all, auto member) {
        if (!all.valid() || list.empty())
            return;
        // Every list holds each replica's GPUs in one block (poolGroups' order).
        std::vector<int> setOf(list.count());
        for (std::size_t i = 0; i < setOf.size(); ++i)
            setOf[i] = static_cast<int>(i * static_cast<std::size_t>(list.size)) / perReplica;
        std::vector<CollectivePricer> each
                = priceCollectiveBySet(m_topo, list, setOf, pool.replicas, all, scratch);
        for (std::size_t r = 0; r < out.size(); ++r)
            out[r].*member = std::move(each[r]);
    };
    bySet(groups.attention, comm.attentionAr, &PoolComm::attentionAr);
    bySet(groups.tp, comm.tpAr, &PoolComm::tpAr);
    bySet(groups.ep, comm.dispatch, &PoolComm::dispatch);
    bySet(groups.pipeline, comm.pipeline, &PoolComm::pipeline);
    return out;
}

namespace {
// What a replica's collectives cost per byte, every kind and method: replicas with the same
// key run alike.
void appendPrices(std::vector<double> &key, const PoolComm &c)
{
    for (const CollectivePricer *p : {&c.attentionAr, &c.tpAr, &c.dispatch, &c.pipeline}) {
        key.insert(key.end(),
                   p->curve.bwPerByte.begin(),
                   p->curve.bwPerByte.begin() + std::max(0, p->curve.algorithms));
        key.push_back(p->oneShotPerByteS);
        key.push_back(p->twoShotPerByteS);
    }
}
} // namespace

void ServingModel::formClasses()
{
    m_classes.clear();
    // Classes by the stages' slowdown, then (on a cluster with links down or degraded) by the
    // price of the replica's own collectives: a replica whose traffic crosses a detoured or
    // degraded link is slowed by it, the others are not.
    std::map<std::pair<std::vector<double>, std::vector<double>>, std::size_t> byKey;
    const int replicas = m_setup.decode.replicas;
    const std::vector<PoolComm> comms = replicaComm(m_decodeGroups, m_setup.decode, m_decodeComm);
    const bool alike = comms.empty() && !m_topo.hasStragglers();
    if (alike) {
        // Every replica alike (no straggler, no link fault): one class, without a key per
        // replica (a plan forms classes at every configuration).
        ReplicaClass all;
        all.comm = m_decodeComm;
        all.replicas.resize(static_cast<std::size_t>(replicas));
        std::iota(all.replicas.begin(), all.replicas.end(), 0);
        m_classes.push_back(std::move(all));
    }
    for (int r = 0; !alike && r < replicas; ++r) {
        std::vector<double> slow = stageSlowdown(m_decodeGroups, m_setup.decode, r);
        std::vector<double> prices;
        if (!comms.empty())
            appendPrices(prices, comms[static_cast<std::size_t>(r)]);
        const auto [it, fresh] = byKey.try_emplace({slow, prices}, m_classes.size());
        if (fresh) {
            ReplicaClass c;
            c.slowdown = std::move(slow);
            c.comm = comms.empty() ? m_decodeComm : comms[static_cast<std::size_t>(r)];
            m_classes.push_back(std::move(c));
        }
        m_classes[it->second].replicas.push_back(r);
    }
    const ServingConfig &c = m_setup.config;
    // Disaggregated: a straggler in the prefill pool, or a faulted link only some prefill
    // replicas cross, paces those replicas' prefills (the TTFT of the requests they serve) and,
    // through the KV transfer, nothing else: the prefill replicas in classes by pace, each
    // serving its share of the requests (spread evenly over them); every decode class draws
    // on all of them.
    m_prefillPace.clear();
    m_slowPrefill = m_prefill;
    if (m_setup.disaggregated) {
        const std::vector<PoolComm> prefillComms = replicaComm(m_prefillGroups,
                                                               m_setup.prefill,
                                                               m_prefillComm);
        std::map<std::pair<std::vector<double>, std::vector<double>>, std::size_t> byPace;
        // Every prefill replica alike: one pace, the pool's (no classes).
        const int n = prefillComms.empty() && !m_topo.hasStragglers() ? 0
                                                                      : m_setup.prefill.replicas;
        for (int r = 0; r < n; ++r) {
            std::vector<double> slow = stageSlowdown(m_prefillGroups, m_setup.prefill, r);
            std::vector<double> prices;
            if (!prefillComms.empty())
                appendPrices(prices, prefillComms[static_cast<std::size_t>(r)]);
            const bool healthy = slow.empty() && prefillComms.empty();
            const auto [it, fresh] = byPace.try_emplace({slow, prices}, m_prefillPace.size());
            if (fresh) {
                const PassCost cost
                        = healthy ? m_prefill
                                  : prefillRequest(m_setup,
                                                   m_setup.prefill,
                                                   prefillComms.empty()
                                                           ? m_prefillComm
                                                           : prefillComms[static_cast<std::size_t>(
                                                                   r)],
                                                   *m_compute,
                                                   c.inputTokens,
                                                   m_setup.prefill.attentionDp,
                                                   slow);
                m_prefillPace.push_back({0.0, cost.total()});
                if (cost.total() > m_slowPrefill.total())
                    m_slowPrefill = cost;
            }
            m_prefillPace[it->second].share += 1.0 / n;
        }
        if (m_prefillPace.size() < 2)
            m_prefillPace.clear();
    }
    const PassCost &poolPrefill = m_prefill;
    // Aggregated: a class's prefills run on its own replicas, at their pace and on their links.
    for (ReplicaClass &k : m_classes)
        k.prefill = m_setup.disaggregated || (k.slowdown.empty() && comms.empty())
                            ? poolPrefill
                            : prefillRequest(m_setup,
                                             m_setup.prefill,
                                             k.comm,
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
        out.slowTtftS = std::max(out.slowTtftS, t.slowTtftS);
        replicas += double(k.replicas.size());
    }
    for (const ReplicaClass &k : m_classes) {
        const ThroughputResult &t = k.throughput;
        // Latencies: the mean a request sees (weighted by the requests each class serves:
        // spread evenly over the replicas, each holding as many in flight, a slower replica
        // serves fewer per second); the slowest class's are slowestTpotS / slowestTtftS, every
        // percentile above the faster classes' share of requests. Per-replica quantities: the
        // mean replica's.
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
