#include "base/inputerror.h"
#include "base/units.h"
#include "step/stepmodel_p.h"

#include <algorithm>
#include <numeric>

namespace railyard::engine::detail {

std::string pct(double x)
{
    return (x >= 0 ? "+" : "") + formatNumber(100 * x, 2) + "%";
}

bool StepModel::validate()
{
    if (!layout.model) {
        e.error = "the layout has no model: add \"model\": {\"preset\": ...} to price a step";
        return false;
    }
    const ResolvedModel r = resolveModel(*layout.model);
    if (!r.error.empty()) {
        e.error = r.error;
        return false;
    }
    m = r.dims;
    stack = findStack(layout.training.stack);
    if (!stack) {
        e.error = "training: unknown stack \"" + layout.training.stack + "\" (known: " + stackList()
                  + ")";
        return false;
    }
    const ParallelConfig &p = layout.parallel;
    tp = p.tp;
    cp = p.cp;
    pp = p.pp;
    vp = p.vp;
    ep = p.ep;
    etp = p.etp.value_or(1);
    dp = layout.dataParallel();
    sp = layout.sequenceParallelOn() && tp > 1;
    try {
        ranks = std::make_unique<RankLayout>(layout);
    } catch (const InputError &err) {
        e.error = err.what();
        return false;
    }
    const TrainingConfig &t = layout.training;
    if (pp > m.layers) {
        e.error = "parallel: PP (" + std::to_string(pp) + ") is more than the model's "
                  + std::to_string(m.layers) + " layers";
        return false;
    }
    if (m.isMoe() && ep > m.experts) {
        e.error = "parallel: EP (" + std::to_string(ep) + ") is more than the model's "
                  + std::to_string(m.experts) + " experts";
        return false;
    }
    if (!m.isMoe() && ep > 1)
        warn(Severity::Warning,
             "ep-without-moe",
             "EP is " + std::to_string(ep) + " but " + m.name
                     + " has no experts: expert parallelism does nothing");
    const long long perReplica = 1LL * t.microBatch * dp;
    if (t.globalBatch < perReplica) {
        e.error = "training: global batch " + std::to_string(t.globalBatch)
                  + " is smaller than micro batch x DP = " + std::to_string(perReplica);
        return false;
    }
    micro = static_cast<int>(t.globalBatch / perReplica);
    if (t.globalBatch % perReplica != 0)
        warn(Severity::Warning,
             "batch-not-divisible",
             "global batch " + std::to_string(t.globalBatch) + " is not a multiple of micro batch "
                     + std::to_string(t.microBatch) + " x DP " + std::to_string(dp)
                     + "; priced with " + std::to_string(micro) + " micro-batches per replica");
    if (m.heads % tp != 0)
        warn(Severity::Warning,
             "tp-heads",
             "TP " + std::to_string(tp) + " does not divide the " + std::to_string(m.heads)
                     + " attention heads (Megatron refuses this); priced as if it did");
    else if (m.kvHeads % tp != 0 && tp % m.kvHeads != 0)
        warn(Severity::Warning,
             "tp-kv-heads",
             "TP " + std::to_string(tp) + " does not divide the " + std::to_string(m.kvHeads)
                     + " key/value heads; priced as if it did");
    if (m.isMoe() && m.experts % ep != 0)
        warn(Severity::Warning,
             "ep-experts",
             "EP " + std::to_string(ep) + " does not divide the " + std::to_string(m.experts)
                     + " experts; priced with uneven experts per GPU");
    if (m.layers % pp != 0)
        warn(Severity::Warning,
             "pp-layers",
             std::to_string(m.layers) + " layers do not split evenly over PP " + std::to_string(pp)
                     + "; the first and last stages get one layer fewer");
    if (vp > 1 && (m.layers % (pp * vp) != 0))
        warn(Severity::Warning,
             "vp-layers",
             std::to_string(m.layers) + " layers do not split evenly into PP x VP = "
                     + std::to_string(pp * vp) + " virtual stages");
    if (vp > 1 && pp == 1)
        warn(Severity::Info, "vp-without-pp", "VP has no effect without pipeline parallelism");
    if (cp > 1 && t.seqLen % (2 * cp) != 0)
        warn(Severity::Warning,
             "cp-seq",
             "sequence length " + std::to_string(t.seqLen) + " is not a multiple of 2 x CP = "
                     + std::to_string(2 * cp) + " (load-balanced ring attention needs it)");
    if (tp > topo.shape().domainSize)
        warn(Severity::Warning,
             "tp-larger-than-domain",
             "TP " + std::to_string(tp) + " is larger than the NVLink domain ("
                     + std::to_string(topo.shape().domainSize)
                     + " GPUs): every TP collective crosses the network");
    stageDense.assign(static_cast<std::size_t>(pp), 0);
    stageMoe.assign(static_cast<std::size_t>(pp), 0);
    runs.clear();
    forEachStage(m, pp, [&](int s, int nd, int nm) {
        stageDense[static_cast<std::size_t>(s)] = nd;
        stageMoe[static_cast<std::size_t>(s)] = nm;
        runs.push_back({s, 1, nd, nm});
    });
    setting.model = &m;
    setting.training = &layout.training;
    setting.stack = stack;
    setting.tp = tp;
    setting.cp = cp;
    setting.pp = pp;
    setting.vp = vp;
    setting.dp = dp;
    setting.ep = ep;
    setting.etp = etp;
    setting.micro = micro;
    setting.sp = sp;
    return true;
}

void StepModel::warnPlacement(const Groups &groups,
                              const DimPrice &p,
                              Dim dim,
                              CollectiveOp op,
                              double bytes,
                              double perStep)
{
    if (groups.empty() || p.groupTimeS.empty())
        return;
    const ClusterShape &s = topo.shape();
    // The same collective on a group of the same size inside one NVLink domain: what a
    // placement that keeps this traffic on NVLink would pay.
    const int n = static_cast<int>(groups.front().size());
    double ideal = 0;
    if (n <= s.domainSize && !s.pcieOnly) {
        std::vector<int> local(static_cast<std::size_t>(n));
        std::iota(local.begin(), local.end(), 0);
        const GroupShape g = analyzeGroup(topo, local);
        ideal = planCollective(topo, g, op, bytes, Algorithm::Auto, planning).timeS;
    }
    int reported = 0;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        const int domains = p.groupDomains[i];
        const double t = p.groupTimeS[i];
        std::string where;
        double extra = 0;
        if ((dim == Dim::TP || dim == Dim::EP || dim == Dim::CP) && domains > 1 && ideal > 0) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i) + " spans "
                    + std::to_string(domains) + " NVLink domains";
            extra = t / ideal - 1;
        } else if (t > p.bestGroupS * 1.05) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i)
                    + " is slower than the others";
            extra = t / p.bestGroupS - 1;
        }
        if (where.empty() || extra < 0.02)
            continue;
        if (reported++ < 8)
            warn(Severity::Warning,
                 std::string(toString(dim)) + "-placement",
                 where + " (" + pct(extra) + " " + dimLabel(dim) + " time)",
                 std::vector<int>(groups[i].begin(), groups[i].end()),
                 (t - (ideal > 0 && domains > 1 ? ideal : p.bestGroupS)) * perStep);
    }
    if (reported > 8)
        warn(Severity::Info,
             std::string(toString(dim)) + "-placement-more",
             std::to_string(reported - 8) + " more " + groupNoun(dim) + "s are placed the same way");
    // Traffic through the spine, and rings that change rail.
    if (s.hasFabric && s.fabric == FabricKind::RailOptimized && (dim == Dim::EP || dim == Dim::DP)) {
        int spineGroups = 0, railGroups = 0;
        std::vector<int> example;
        for (std::size_t gi = 0; gi < groups.count(); ++gi) {
            const auto grp = groups[gi];
            const int domains = p.groupDomains[gi];
            bool spine = false, rail = false;
            int firstLeaf = -2, firstRail = -1;
            for (int gpu : grp) {
                const auto nics = topo.gpuNics(gpu);
                if (nics.empty())
                    continue;
                const int nic = nics[0] - topo.nicDevice(0);
                const int leaf = topo.leafOfNic(nic);
                const int r = topo.devices()[static_cast<std::size_t>(nics[0])].rail;
                if (firstLeaf == -2) {
                    firstLeaf = leaf;
                    firstRail = r;
                }
                spine = spine || leaf / std::max(1, s.rails) != firstLeaf / std::max(1, s.rails);
                rail = rail || r != firstRail;
            }
            if (domains < 2)
                continue;
            if (spine) {
                ++spineGroups;
                if (example.empty())
                    example.assign(grp.begin(), grp.end());
            }
            if (rail && domains == static_cast<int>(grp.size()))
                ++railGroups;
        }
        if (dim == Dim::EP && spineGroups > 0)
            warn(Severity::Warning,
                 "ep-crosses-spine",
                 "EP all-to-all crosses the spine (" + std::to_string(spineGroups) + " of "
                         + std::to_string(groups.count()) + " EP groups span scalable units)",
                 example);
        if (dim == Dim::DP && railGroups > 0)
            warn(Severity::Warning,
                 "dp-changes-rail",
                 "DP ring changes rail in " + std::to_string(railGroups) + " of "
                         + std::to_string(groups.count())
                         + " DP groups: their GPUs sit on different NIC rails, so the traffic "
                           "crosses the spine");
    }
}

void StepModel::warnPlacements()
{
    // Placement warnings, with what each costs per step: a group's extra time per collective
    // times how often the collective runs in a step.
    const TrainingConfig &t = layout.training;
    const double T = double(t.microBatch) * t.seqLen / cp;
    const double microBatches = micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;
    const double recomputeTp = t.recompute == Recompute::Full ? 2.0 : 0.0;
    const double perMicroLayer = layersPerStage * microBatches;
    warnPlacement(tpGroups,
                  sp ? c.tpAg : c.tpAr,
                  Dim::TP,
                  sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce,
                  c.act,
                  (sp ? 2.0 : 1.0) * (4.0 + recomputeTp) * perMicroLayer);
    warnPlacement(epGroups,
                  c.epA2a,
                  Dim::EP,
                  CollectiveOp::AllToAll,
                  (sp ? T / tp : T) * m.topK * m.hidden * 2.0,
                  4.0 * moePerStage * microBatches);
    warnPlacement(cpGroups,
                  c.cpRing,
                  Dim::CP,
                  CollectiveOp::SendRecv,
                  c.cpKvBytes,
                  3.0 * (cp - 1) * perMicroLayer);
    warnPlacement(dpGroups,
                  c.shardedGrads ? c.dpRs : c.dpAr,
                  Dim::DP,
                  c.shardedGrads ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                  c.denseParamsGpu * c.gradBytes,
                  c.shardedGrads ? 2.0 : 1.0);
}

} // namespace railyard::engine::detail
