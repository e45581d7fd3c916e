// What a serving layout's placement and load cost, in words and seconds: TP or EP groups that
// leave an NVLink domain, KV-cache transfers over the NICs, requests queueing past what the KV
// cache holds, an offered rate above capacity, idle GPUs, decode batches outside CUDA graphs,
// replicas a fault makes slower than the others.
#include "base/units.h"
#include "serving/servingmodel_p.h"

#include <algorithm>
#include <numeric>

namespace railyard::engine::detail {

namespace {

std::string ms(double s)
{
    return formatNumber(s * 1e3, 3) + " ms";
}

std::string us(double s)
{
    return formatNumber(s * 1e6, 3) + " us";
}

// The first group of `groups` that spans more than one NVLink domain; empty if none.
std::vector<int> spanningGroup(const Topology &t, const GroupList &groups)
{
    for (std::size_t i = 0; i < groups.count(); ++i) {
        const auto g = groups[i];
        for (int gpu : g)
            if (t.domainOfGpu(gpu) != t.domainOfGpu(g[0]))
                return {g.begin(), g.end()};
    }
    return {};
}

std::string gpuList(const std::vector<int> &g)
{
    if (g.empty())
        return {};
    std::vector<int> s = g;
    std::sort(s.begin(), s.end());
    if (s.back() - s.front() + 1 == static_cast<int>(s.size()))
        return "GPUs " + std::to_string(s.front()) + "-" + std::to_string(s.back());
    return "GPUs " + std::to_string(s.front()) + ", " + std::to_string(s[1]) + ", ...";
}

} // namespace

void ServingModel::warnPlacement()
{
    const ServingStackProfile &stack = *m_setup.stack;
    LinkTraffic &scratch = m_workspace.planning();
    const int domain = m_topo.shape().domainSize;
    // The same collective on a group of as many GPUs (at most one domain's) inside one domain.
    const auto inside = [&](const CollectivePricer &p, CollectiveOp op) {
        std::vector<int> g(static_cast<std::size_t>(std::min(p.n, domain)));
        std::iota(g.begin(), g.end(), 0);
        return priceCollective(m_topo,
                               std::span<const int>(g),
                               op,
                               stack,
                               m_setup.cudaGraphs,
                               p.deepEp,
                               scratch);
    };
    const double perToken = 1.0 / m_accepted;
    const bool decoding = m_setup.config.phase != ServingPhase::Prefill;
    const PassCollectives &k = m_step.collectives;
    if (decoding && m_decodeComm.attentionAr.valid() && m_decodeComm.attentionAr.domains > 1) {
        const CollectivePricer &p = m_decodeComm.attentionAr;
        const CollectivePricer in = inside(p, CollectiveOp::AllReduce);
        const double across = p.timeS(k.attentionArBytes), within = in.timeS(k.attentionArBytes);
        const double cost = k.attentionAr * (across - within) * perToken;
        const std::vector<int> g = spanningGroup(m_topo, m_decodeGroups.attention);
        warn(Severity::Warning,
             "tp-spans-domains",
             "TP group crosses NVLink domains (" + gpuList(g) + ", " + std::to_string(p.domains)
                     + " domains): +" + ms(cost) + " per token ("
                     + formatNumber(k.attentionAr * perToken, 4) + " all-reduces of "
                     + formatBytes(k.attentionArBytes) + " at " + us(across) + " ("
                     + p.describe(k.attentionArBytes) + ") instead of " + us(within) + " ("
                     + in.describe(k.attentionArBytes) + ") for " + std::to_string(in.n)
                     + " GPUs inside one)",
             g,
             cost);
    }
    if (decoding && m_decodeComm.dispatch.valid() && m_decodeComm.dispatch.domains > 1) {
        const CollectivePricer &p = m_decodeComm.dispatch;
        const CollectivePricer in = inside(p, CollectiveOp::AllToAll);
        const double across = p.timeS(k.dispatchBytes) + p.timeS(k.combineBytes);
        const double within = in.timeS(k.dispatchBytes) + in.timeS(k.combineBytes);
        const double cost = k.dispatch * (across - within) * perToken;
        const std::vector<int> g = spanningGroup(m_topo, m_decodeGroups.ep);
        warn(Severity::Warning,
             "ep-spans-domains",
             "EP group crosses NVLink domains (" + gpuList(g) + ", " + std::to_string(p.domains)
                     + " domains): MoE dispatch and combine take " + us(across) + " per layer ("
                     + p.describe(k.dispatchBytes) + "), +" + ms(cost) + " per token against "
                     + std::to_string(in.n) + " GPUs inside one NVLink domain",
             g,
             cost);
    }
    if (m_setup.disaggregated && m_prefillComm.attentionAr.valid()
        && m_prefillComm.attentionAr.domains > 1) {
        const CollectivePricer &p = m_prefillComm.attentionAr;
        const CollectivePricer in = inside(p, CollectiveOp::AllReduce);
        const PassCollectives &pk = m_prefill.collectives;
        const double cost = pk.attentionAr
                            * (p.timeS(pk.attentionArBytes) - in.timeS(pk.attentionArBytes));
        warn(Severity::Warning,
             "prefill-tp-spans-domains",
             "prefill TP group crosses NVLink domains ("
                     + gpuList(spanningGroup(m_topo, m_prefillGroups.attention)) + "): +" + ms(cost)
                     + " TTFT",
             spanningGroup(m_topo, m_prefillGroups.attention),
             cost);
    }
    if (!m_kv->empty()) {
        const double kv = m_throughput.kvTransferS;
        const double share = m_throughput.ttftS > 0 ? kv / m_throughput.ttftS : 0;
        if (m_kv->crossesDomains)
            warn(Severity::Info,
                 "kv-over-network",
                 "KV cache leaves the NVLink domain over the NICs: "
                         + formatBytes(m_kv->bytesPerRequest) + " per request in " + ms(kv)
                         + " exposed (" + formatNumber(100 * share, 3) + "% of TTFT)",
                 {},
                 kv);
        int link = -1;
        const double load = m_kv->peakLoad(m_throughput.requestsPerS, &link);
        if (load > 0.8)
            warn(Severity::Warning,
                 "kv-link-busy",
                 "KV-cache transfers keep " + m_topo.linkName(link) + " "
                         + formatNumber(100 * load, 3) + "% busy: transfers queue on it ("
                         + ms(m_kv->timeS(m_throughput.requestsPerS)) + " per request instead of "
                         + ms(m_kv->timeS(0)) + " alone)",
                 {},
                 m_kv->timeS(m_throughput.requestsPerS) - m_kv->timeS(0));
    }
}

void ServingModel::warnLoad()
{
    const ServingConfig &c = m_setup.config;
    const ThroughputResult &t = m_throughput;
    const std::string key = m_setup.disaggregated ? "serving.disaggregated.decode" : "parallel";
    if (t.queued > 0)
        warn(Severity::Warning,
             "queueing",
             "concurrency " + formatNumber(t.concurrency, 6)
                     + " per replica is past what the KV cache holds ("
                     + std::to_string(m_decodeMemory.maxConcurrency) + " requests of "
                     + std::to_string(c.inputTokens + c.outputTokens)
                     + " tokens): " + formatNumber(t.queued, 6) + " wait for a slot, +"
                     + formatSeconds(t.waitS) + " TTFT",
             {},
             t.waitS);
    if (t.overloaded)
        warn(Severity::Error,
             "overloaded",
             "request_rate " + formatNumber(c.requestRate.value_or(0), 4)
                     + "/s is more than the deployment serves (" + formatNumber(t.capacity, 4)
                     + "/s): the queue grows without bound; priced at capacity");
    if (m_setup.gpus < m_setup.clusterGpus && c.phase == ServingPhase::Both)
        warn(Severity::Info,
             "idle-gpus",
             std::to_string(m_setup.clusterGpus - m_setup.gpus) + " of the cluster's "
                     + std::to_string(m_setup.clusterGpus) + " GPUs serve nothing (" + key
                     + " sizes use " + std::to_string(m_setup.gpus) + ")");
    const int draft = c.speculative ? c.speculative->draftTokens : 0;
    const double micro = std::max(1.0,
                                  t.decodeBatch / m_setup.decode.pp / m_setup.decode.attentionDp)
                         * (1 + draft);
    if (m_step.overhead > m_setup.stack->stepOverheadS * 1.0001 && c.phase != ServingPhase::Prefill)
        warn(Severity::Warning,
             "decode-eager",
             std::string(m_setup.cudaGraphs
                                 ? "the decode batch on each GPU (" + formatNumber(micro, 4)
                                           + " tokens) is past the stack's largest CUDA graph ("
                                           + std::to_string(m_setup.stack->cudaGraphMaxBatch) + ")"
                                 : "CUDA graphs are off")
                     + ": kernel launches add " + ms(m_step.overhead / m_accepted) + " per token",
             {},
             m_step.overhead / m_accepted);
    if (m_classes.size() > 1) {
        // Replicas at different speeds (a straggler, a faulted link that one replica's traffic
        // crosses): the slowest's requests pay its TPOT; the others run at the fastest's.
        const ReplicaClass &slow = m_classes[m_slowestClass];
        double fastest = slow.throughput.tpotS;
        std::size_t replicas = 0;
        for (const ReplicaClass &k : m_classes) {
            fastest = std::min(fastest, k.throughput.tpotS);
            replicas += k.replicas.size();
        }
        const double extra = slow.throughput.tpotS - fastest;
        std::vector<int> gpus;
        for (int r : slow.replicas)
            if (static_cast<std::size_t>(r) < m_decodeGroups.replicas.count())
                for (int gpu : m_decodeGroups.replicas[static_cast<std::size_t>(r)])
                    gpus.push_back(gpu);
        const bool one = slow.replicas.size() == 1;
        if (extra > 1e-9 * fastest && !gpus.empty())
            warn(Severity::Warning,
                 "slow-replica",
                 std::string(one ? "decode replica " : "decode replicas ")
                         + std::to_string(slow.replicas.front()) + (one ? "" : ", ...") + " ("
                         + gpuList(gpus) + ", " + std::to_string(slow.replicas.size()) + " of "
                         + std::to_string(replicas) + ") "
                         + (slow.slowdown.empty()
                                    ? std::string(one ? "runs" : "run")
                                              + " slower on faulted or detoured links"
                                    : std::string(one ? "runs" : "run") + " at a straggler's pace")
                         + ": TPOT " + ms(slow.throughput.tpotS) + " against " + ms(fastest) + ", +"
                         + ms(extra) + " per token for the requests "
                         + (one ? "it serves" : "they serve"),
                 gpus,
                 extra);
    }
    const ModelDims &m = m_setup.model;
    if (!m.isMla() && m_setup.decode.attentionTp() > m.kvHeads)
        warn(Severity::Info,
             "kv-heads-replicated",
             "attention TP " + std::to_string(m_setup.decode.attentionTp()) + " is more than the "
                     + std::to_string(m.kvHeads) + " KV heads: each KV head is kept on "
                     + std::to_string(m_setup.decode.attentionTp() / m.kvHeads)
                     + " GPUs, so the KV cache holds fewer requests");
    if (m.isMla() && m_setup.decode.attentionTp() > 1)
        warn(Severity::Info,
             "mla-latent-replicated",
             "MLA keeps its latent KV cache whole on each of the "
                     + std::to_string(m_setup.decode.attentionTp())
                     + " attention-TP ranks: attention_dp holds "
                     + std::to_string(m_setup.decode.attentionTp()) + "x the requests");
}

} // namespace railyard::engine::detail
