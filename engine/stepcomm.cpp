#include "stepmodel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine::detail {

void StepModel::buildGroups()
{
    const int world = ranks->worldSize();
    const auto collect = [&](Dim d, Groups &out) {
        out.size = ranks->size(d);
        out.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r)
            out.gpus[static_cast<std::size_t>(ranks->groupOf(r, d)) * out.size
                     + static_cast<std::size_t>(ranks->coord(r, d))]
                    = ranks->gpuOfRank(r);
    };
    if (tp > 1)
        collect(Dim::TP, tpGroups);
    if (cp > 1)
        collect(Dim::CP, cpGroups);
    if (pp > 1)
        collect(Dim::PP, ppGroups);
    if (ep > 1 && m.isMoe())
        collect(Dim::EP, epGroups);
    m_stageOfGpu.assign(static_cast<std::size_t>(topo.gpuCount()), -1);
    for (int r = 0; r < world; ++r)
        m_stageOfGpu[static_cast<std::size_t>(ranks->gpuOfRank(r))] = ranks->coord(r, Dim::PP);
    // Gradients are reduced over DP x CP (the ranks that hold the same weights): one group per
    // (TP, PP) position, members in (DP, CP) order.
    if (dp * cp > 1) {
        dpGroups.size = dp * cp;
        dpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int key = ranks->coord(r, Dim::PP) * tp + ranks->coord(r, Dim::TP);
            const int at = ranks->coord(r, Dim::DP) * cp + ranks->coord(r, Dim::CP);
            dpGroups.gpus[static_cast<std::size_t>(key) * dpGroups.size
                          + static_cast<std::size_t>(at)]
                    = ranks->gpuOfRank(r);
        }
    }
    // Expert weights are reduced over the expert-data-parallel ranks: those of one pipeline
    // stage with the same expert-TP and EP coordinates.
    const int edp = (tp * cp * dp) / std::max(1, ep * etp);
    if (m.isMoe() && edp > 1) {
        edpGroups.size = edp;
        edpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int s = ranks->coord(r, Dim::TP)
                          + tp * (ranks->coord(r, Dim::CP) + cp * ranks->coord(r, Dim::DP));
            const int e = (s / etp) % ep;
            const int key = (ranks->coord(r, Dim::PP) * ep + e) * etp + s % etp;
            edpGroups.gpus[static_cast<std::size_t>(key) * edp
                           + static_cast<std::size_t>(s / (etp * ep))]
                    = ranks->gpuOfRank(r);
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
    traffic.beginPhase(perStep);
    double nvScale = 1, worstEff = 1, worstLat = 0, cap = 0;
    out.bestGroupS = std::numeric_limits<double>::infinity();
    int firstPlan = -1;
    GroupShape &g = m_shape;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        analyzeGroup(topo, groups[i], g);
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
        while (k < planCache.size() && !(planCache[k].first == key))
            ++k;
        if (k == planCache.size())
            planCache.emplace_back(
                    key,
                    planCollective(topo, g, op, bytes, Algorithm::Auto, planning, m_dispatchScale));
        const CollectivePlan &p = planCache[k].second;
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
        addCollectiveTraffic(traffic, topo, g, op, p.algorithm, bytes, m_dispatchScale);
    }
    traffic.setKindScale(LinkKind::NvLink, nvScale);
    traffic.phaseTime();
    int maxDomains = 0;
    for (int d : out.groupDomains)
        maxDomains = std::max(maxDomains, d);
    const double bw = stageTime(traffic,
                                planCache[static_cast<std::size_t>(firstPlan)].second.algorithm,
                                maxDomains);
    const int n = static_cast<int>(groups.front().size());
    out.bwTimeS = bw / worstEff;
    if (cap > 0)
        out.bwTimeS = std::max(out.bwTimeS, busBandwidthFactor(op, n) * bytes / (cap * 1e9));
    out.latencyS = worstLat;
    out.timeS = worstLat + out.bwTimeS;
    out.bytes = bytes;
    out.algorithm = planCache[static_cast<std::size_t>(firstPlan)].second.algorithm;
    if (options.timeline) {
        out.perStep = perStep;
        recordStages(groups, op, bytes, &groups == &ppGroups, out);
    }
    return out;
}

void StepModel::recordStages(
        const Groups &groups, CollectiveOp op, double bytes, bool wholePipeline, DimPrice &out)
{
    // The same groups' bytes again, stage by stage, in the scratch traffic (the plans are
    // cached, so `planning` is free): additive, so the stages add up to the step's phase.
    const int stages = wholePipeline ? 1 : pp;
    out.stageBytes.assign(static_cast<std::size_t>(stages), {});
    for (int s = 0; s < stages; ++s) {
        planning.beginPhase(1.0);
        bool any = false;
        for (std::size_t i = 0; i < groups.count(); ++i) {
            if (!wholePipeline && m_stageOfGpu[static_cast<std::size_t>(groups[i][0])] != s)
                continue;
            analyzeGroup(topo, groups[i], m_shape);
            addCollectiveTraffic(planning,
                                 topo,
                                 m_shape,
                                 op,
                                 planCache[static_cast<std::size_t>(m_groupPlan[i])].second.algorithm,
                                 bytes,
                                 m_dispatchScale);
            any = true;
        }
        if (!any)
            continue;
        planning.phaseTime();
        planning.phaseBytes(out.stageBytes[static_cast<std::size_t>(s)]);
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
    out.bytes = bytes;
    out.bwTimeS = like.bwTimeS * scale;
    out.timeS = like.latencyS + out.bwTimeS;
    for (double &t : out.groupTimeS)
        t = like.latencyS + (t - like.latencyS) * scale;
    traffic.repeatPhase(perStep * scale);
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
    const TrainingConfig &t = layout.training;
    // ---- Communication sizes (bytes, nccl-tests semantics) and counts per step.
    const double T = double(t.microBatch) * t.seqLen / cp; // tokens per CP rank
    c.act = T * m.hidden * 2.0;                            // one activation tensor, BF16
    const double act = c.act;
    const double microBatches = micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;
    // TP per layer and micro-batch. Without sequence parallelism: two all-reduces forward (after
    // the attention and MLP blocks) and two backward. With it: forward, an all-gather before and
    // a reduce-scatter after each block; backward, the mirror image plus an all-gather of each
    // column-parallel GEMM's input for its weight gradient, which Megatron overlaps with the
    // data-gradient GEMM. Full recomputation repeats the forward's collectives.
    const double recomputeTp = t.recompute == Recompute::Full ? 2.0 : 0.0;
    if (tp > 1) {
        const double per = layersPerStage * microBatches;
        if (sp) {
            c.tpAg = price(tpGroups, CollectiveOp::AllGather, act, (6.0 + recomputeTp) * per);
            c.tpRs = priceSamePattern(c.tpAg, act, (4.0 + recomputeTp) * per);
        } else {
            c.tpAr = price(tpGroups, CollectiveOp::AllReduce, act, (4.0 + recomputeTp) * per);
        }
    }
    // Exposed per layer (the weight-gradient all-gathers hide behind the data-gradient GEMMs).
    c.tpPerLayerS = sp ? c.tpAg.timeS * (4.0 + recomputeTp) + c.tpRs.timeS * (4.0 + recomputeTp)
                       : c.tpAr.timeS * (4.0 + recomputeTp);
    c.tpHiddenPerLayerS = sp ? c.tpAg.timeS * 2.0 : 0.0;
    // CP: ring attention passes each rank's keys and values around the ring, forward; keys,
    // values and their gradients backward.
    c.cpKvBytes = T * 2.0 * m.kvHeads * m.headDim / std::max(1, tp) * 2.0;
    if (cp > 1)
        c.cpRing = price(cpGroups,
                         CollectiveOp::SendRecv,
                         c.cpKvBytes,
                         3.0 * (cp - 1) * layersPerStage * microBatches);
    c.cpPerLayerS = c.cpRing.timeS * 3.0 * (cp - 1);
    // EP: all-to-all dispatch and combine, forward and backward, per MoE layer.
    if (ep > 1 && m.isMoe()) {
        const double tokensHere = sp ? T / tp : T;
        c.a2aBytes = tokensHere * m.topK * m.hidden * 2.0;
        if (t.moeDispatcher == MoeDispatcher::DeepEP && !epGroups.empty()) {
            // Each token crosses to a remote node once, however many of its experts live there:
            // with experts spread evenly over the N nodes of an EP group, a node holds none of
            // a token's top-k with probability C(E - E/N, k) / C(E, k).
            GroupShape g;
            analyzeGroup(topo, epGroups.front(), g);
            const int N = g.domains;
            if (N > 1) {
                const double perNode = double(m.experts) / N;
                double miss = 1;
                for (int i = 0; i < m.topK; ++i)
                    miss *= std::max(0.0, (m.experts - perNode - i) / (m.experts - i));
                const double remoteNodes = (N - 1) * (1 - miss);
                const double remoteCopies = double(m.topK) * (N - 1) / N;
                m_dispatchScale = std::min(1.0, remoteNodes / remoteCopies);
            }
        }
        c.epA2a = price(epGroups,
                        CollectiveOp::AllToAll,
                        c.a2aBytes,
                        4.0 * moePerStage * microBatches);
        m_dispatchScale = 1.0;
    }
    c.epPerMoeLayerS = c.epA2a.timeS * 4.0;
    // PP: activations to the next stage forward, gradients back, per micro-batch and virtual
    // stage (scattered over TP with sequence parallelism).
    if (pp > 1) {
        const double bytes = sp ? act / tp : act;
        c.ppP2p = price(ppGroups, CollectiveOp::SendRecv, bytes, 2.0 * vp * microBatches);
    }
    priceDataParallel();
}

} // namespace railyard::engine::detail
