#include "step/stepmodel_p.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine::detail {

void StepModel::buildGroups()
{
    const int world = m_ranks->worldSize();
    const auto collect = [&](Dim d, Groups &out) {
        out.size = m_ranks->size(d);
        out.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r)
            out.gpus[static_cast<std::size_t>(m_ranks->groupOf(r, d)) * out.size
                     + static_cast<std::size_t>(m_ranks->coord(r, d))]
                    = m_ranks->gpuOfRank(r);
    };
    if (m_tp > 1)
        collect(Dim::TP, m_tpGroups);
    if (m_cp > 1)
        collect(Dim::CP, m_cpGroups);
    if (m_pp > 1)
        collect(Dim::PP, m_ppGroups);
    if (m_ep > 1 && m_dims.isMoe())
        collect(Dim::EP, m_epGroups);
    m_stageOfGpu.assign(static_cast<std::size_t>(m_topo.gpuCount()), -1);
    for (int r = 0; r < world; ++r)
        m_stageOfGpu[static_cast<std::size_t>(m_ranks->gpuOfRank(r))] = m_ranks->coord(r, Dim::PP);
    // Gradients are reduced over DP x CP (the ranks that hold the same weights): one group per
    // (TP, PP) position, members in (DP, CP) order.
    if (m_dp * m_cp > 1) {
        m_dpGroups.size = m_dp * m_cp;
        m_dpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int key = m_ranks->coord(r, Dim::PP) * m_tp + m_ranks->coord(r, Dim::TP);
            const int at = m_ranks->coord(r, Dim::DP) * m_cp + m_ranks->coord(r, Dim::CP);
            m_dpGroups.gpus[static_cast<std::size_t>(key) * m_dpGroups.size
                            + static_cast<std::size_t>(at)]
                    = m_ranks->gpuOfRank(r);
        }
    }
    // Hybrid sharding: a DP group's members [k S, (k + 1) S) shard the weights between them;
    // the members at one place in every shard group hold the same shard.
    m_dpShardGroups = {};
    m_dpReplicaGroups = {};
    const int dataRanks = m_dp * m_cp;
    const int shard = zeroShardRanks(m_layout.training.optimizer, dataRanks);
    if (dataRanks > 1 && shard < dataRanks) {
        const int replicas = dataRanks / shard;
        m_dpShardGroups.size = shard;
        m_dpShardGroups.gpus = m_dpGroups.gpus; // DP groups are whole runs of shard groups
        m_dpReplicaGroups.size = replicas;
        m_dpReplicaGroups.gpus.resize(m_dpGroups.gpus.size());
        std::size_t out = 0;
        for (std::size_t g = 0; g < m_dpGroups.count(); ++g) {
            const std::span<const int> members = m_dpGroups[g];
            for (int j = 0; j < shard; ++j)
                for (int k = 0; k < replicas; ++k)
                    m_dpReplicaGroups.gpus[out++] = members[static_cast<std::size_t>(k * shard + j)];
        }
    }
    // Expert weights are reduced over the expert-data-parallel ranks: those of one pipeline
    // stage with the same expert-TP and EP coordinates.
    const int edp = (m_tp * m_cp * m_dp) / std::max(1, m_ep * m_etp);
    if (m_dims.isMoe() && edp > 1) {
        m_edpGroups.size = edp;
        m_edpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int s = m_ranks->coord(r, Dim::TP)
                          + m_tp * (m_ranks->coord(r, Dim::CP) + m_cp * m_ranks->coord(r, Dim::DP));
            const int e = (s / m_etp) % m_ep;
            const int key = (m_ranks->coord(r, Dim::PP) * m_ep + e) * m_etp + s % m_etp;
            m_edpGroups.gpus[static_cast<std::size_t>(key) * edp
                             + static_cast<std::size_t>(s / (m_etp * m_ep))]
                    = m_ranks->gpuOfRank(r);
        }
    }
}

DimPrice StepModel::price(const Groups &groups, CollectiveOp op, double bytes, double perStep)
{
    DimPrice out;
    if (groups.empty() || bytes <= 0)
        return out;
    // Plan each distinct group shape once (NCCL's algorithm and protocol choice, in a scratch
    // phase that does not count toward the step), then put every group's bytes on the links
    // together: groups that share links slow each other down.
    out.groupTimeS.resize(groups.count());
    out.groupDomains.resize(groups.count());
    m_groupPlan.resize(groups.count());
    m_traffic.beginPhase(perStep);
    double nvScale = 1, worstEff = 1, worstLat = 0, cap = 0;
    out.bestGroupS = std::numeric_limits<double>::infinity();
    int firstPlan = -1;
    GroupShape &g = m_shape;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        analyzeGroup(m_topo, groups[i], g);
        const PlanKey key{op,
                          bytes,
                          m_dispatchScale,
                          g.n,
                          g.domains,
                          g.ppn,
                          g.ppnMin,
                          g.nicsPerDomain,
                          g.intraGBps,
                          g.netPerDomainGBps};
        std::size_t k = 0;
        while (k < m_planCache.size() && !(m_planCache[k].first == key))
            ++k;
        if (k == m_planCache.size())
            m_planCache.emplace_back(key,
                                     planCollective(m_topo,
                                                    g,
                                                    op,
                                                    bytes,
                                                    Algorithm::Auto,
                                                    m_planning,
                                                    m_dispatchScale));
        const CollectivePlan &p = m_planCache[k].second;
        m_groupPlan[i] = static_cast<int>(k);
        if (firstPlan < 0)
            firstPlan = static_cast<int>(k);
        out.groupTimeS[i] = p.timeS;
        out.groupDomains[i] = g.domains;
        nvScale = std::min(nvScale, p.nvlinkScale);
        worstEff = std::min(worstEff, p.efficiency);
        worstLat = std::max(worstLat, p.latencyS);
        if (p.capBusGBps > 0)
            cap = cap > 0 ? std::min(cap, p.capBusGBps) : p.capBusGBps;
        out.bestGroupS = std::min(out.bestGroupS, p.timeS);
        addCollectiveTraffic(m_traffic, m_topo, g, op, p.algorithm, bytes, m_dispatchScale);
    }
    m_traffic.setKindScale(LinkKind::NvLink, nvScale);
    m_traffic.phaseTime();
    int maxDomains = 0;
    for (int d : out.groupDomains)
        maxDomains = std::max(maxDomains, d);
    const Algorithm algorithm = m_planCache[static_cast<std::size_t>(firstPlan)].second.algorithm;
    const double bw = stageTime(m_traffic, algorithm, maxDomains);
    const int n = static_cast<int>(groups.front().size());
    static_cast<CollectiveCost &>(out)
            = groupsCost(op, n, bytes, bw, worstLat, worstEff, cap, algorithm);
    out.nvlinkBusyS = m_traffic.phaseNvlinkTime() * nvScale;
    out.networkBusyS = m_traffic.phaseOtherTime();
    if (m_options.timeline) {
        out.perStep = perStep;
        recordStages(groups, op, bytes, &groups == &m_ppGroups, out);
    }
    return out;
}

void StepModel::recordStages(
        const Groups &groups, CollectiveOp op, double bytes, bool wholePipeline, DimPrice &out)
{
    // The same groups' bytes again, stage by stage, in the scratch traffic (the plans are
    // cached, so `planning` is free): additive, so the stages add up to the step's phase.
    const int stages = wholePipeline ? 1 : m_pp;
    out.stageBytes.assign(static_cast<std::size_t>(stages), {});
    for (int s = 0; s < stages; ++s) {
        m_planning.beginPhase(1.0);
        bool any = false;
        for (std::size_t i = 0; i < groups.count(); ++i) {
            if (!wholePipeline && m_stageOfGpu[static_cast<std::size_t>(groups[i][0])] != s)
                continue;
            analyzeGroup(m_topo, groups[i], m_shape);
            addCollectiveTraffic(m_planning,
                                 m_topo,
                                 m_shape,
                                 op,
                                 m_planCache[static_cast<std::size_t>(m_groupPlan[i])]
                                         .second.algorithm,
                                 bytes,
                                 m_dispatchScale);
            any = true;
        }
        if (!any)
            continue;
        m_planning.phaseTime();
        m_planning.phaseBytes(out.stageBytes[static_cast<std::size_t>(s)]);
    }
}

DimPrice StepModel::priceSamePattern(const DimPrice &like, double bytes, double perStep)
{
    // A collective whose traffic has the same shape as the last one priced (a reduce-scatter
    // after an all-gather on the same groups): its bytes scale, its latency stays.
    DimPrice out = like;
    if (like.bytes <= 0)
        return out;
    const double scale = bytes / like.bytes;
    static_cast<CollectiveCost &>(out) = samePatternCost(like, bytes);
    for (double &t : out.groupTimeS)
        t = like.latencyS + (t - like.latencyS) * scale;
    // The fastest group scales with them: the placement checks compare each group with it.
    out.bestGroupS = like.latencyS + (like.bestGroupS - like.latencyS) * scale;
    m_traffic.repeatPhase(perStep * scale);
    out.perStep = perStep;
    for (auto &stage : out.stageBytes)
        for (LinkShare &l : stage) {
            l.up = static_cast<float>(l.up * scale);
            l.down = static_cast<float>(l.down * scale);
        }
    return out;
}

void StepModel::priceCommunication()
{
    // What each dimension sends and how often (stepcost.cpp, shared with the planner), priced
    // here on every group at once.
    requestStepComm(m_setting, m_runs.data(), static_cast<int>(m_runs.size()), m_comm);
    const DimPrice *last = nullptr;
    for (int i = 0; i < m_comm.requests; ++i) {
        const CommRequest &r = m_comm.request[static_cast<std::size_t>(i)];
        DimPrice &out = m_comm[r.slot];
        if (r.samePattern && last) {
            out = priceSamePattern(*last, r.bytes, r.perStep);
        } else {
            const Groups *groups[] = {&m_tpGroups,
                                      &m_cpGroups,
                                      &m_epGroups,
                                      &m_ppGroups,
                                      &m_dpGroups,
                                      &m_edpGroups,
                                      &m_dpShardGroups,
                                      &m_dpReplicaGroups};
            const Groups &g = *groups[static_cast<int>(r.groups)];
            if (r.deepEp && !g.empty()) {
                GroupShape shape;
                analyzeGroup(m_topo, g.front(), shape);
                m_dispatchScale = deepEpDispatchScale(m_dims, shape.domains);
            }
            out = price(g, r.op, r.bytes, r.perStep);
            m_dispatchScale = 1.0;
        }
        m_comm.cost[static_cast<std::size_t>(r.slot)] = out;
        last = &out;
    }
    finishStepComm(m_setting, m_comm);
}

} // namespace railyard::engine::detail
