#include "base/inputerror.h"
#include "base/units.h"
#include "step/evaluationdiff.h"
#include "step/offload.h"
#include "step/stepmodel_p.h"

#include <algorithm>

namespace railyard::engine::detail {

std::string pct(double x)
{
    return (x >= 0 ? "+" : "") + formatNumber(100 * x, 2) + "%";
}

bool StepModel::validate()
{
    if (m_layout.serving) {
        m_result.error = "the layout describes a serving workload (\"serving\"), not a training "
                         "step: it is priced by the serving model (TTFT, TPOT, tokens/s), "
                         "not as a training step";
        return false;
    }
    if (!m_layout.model) {
        m_result.error
                = "the layout has no model: add \"model\": {\"preset\": ...} to price a step";
        return false;
    }
    const ResolvedModel r = resolveModel(*m_layout.model);
    if (!r.error.empty()) {
        m_result.error = r.error;
        return false;
    }
    m_dims = r.dims;
    m_stack = findStack(m_layout.training.stack);
    if (!m_stack) {
        m_result.error = "training: unknown stack \"" + m_layout.training.stack
                         + "\" (known: " + stackList() + ")";
        return false;
    }
    const ParallelConfig &p = m_layout.parallel;
    m_tp = p.tp;
    m_cp = p.cp;
    m_pp = p.pp;
    m_vp = p.vp;
    m_ep = p.ep;
    m_etp = p.etp.value_or(1);
    m_dp = m_layout.dataParallel();
    m_sp = m_layout.sequenceParallelOn() && m_tp > 1;
    try {
        m_ranks = std::make_unique<RankLayout>(m_layout);
    } catch (const InputError &err) {
        m_result.error = err.what();
        return false;
    }
    const TrainingConfig &t = m_layout.training;
    if (m_pp > m_dims.layers) {
        m_result.error = "parallel: PP (" + std::to_string(m_pp) + ") is more than the model's "
                         + std::to_string(m_dims.layers) + " layers";
        return false;
    }
    if (m_dims.isMoe() && m_ep > m_dims.experts) {
        m_result.error = "parallel: EP (" + std::to_string(m_ep) + ") is more than the model's "
                         + std::to_string(m_dims.experts) + " experts";
        return false;
    }
    if (!m_dims.isMoe() && m_ep > 1)
        warn(Severity::Warning,
             "ep-without-moe",
             "EP is " + std::to_string(m_ep) + " but " + m_dims.name
                     + " has no experts: expert parallelism does nothing");
    if (const int group = t.optimizer.shardGroup; group > 0) {
        const int dataRanks = m_dp * m_cp;
        if (!shardsWeights(t.optimizer)) {
            m_result.error = "training: optimizer.shard_group (hybrid sharding) needs FSDP or "
                             "ZeRO-3: only sharded weights have a group to shard over";
            return false;
        }
        if (dataRanks % group != 0) {
            m_result.error = "training: optimizer.shard_group " + std::to_string(group)
                             + " does not divide DP x CP = " + std::to_string(dataRanks);
            return false;
        }
        if (m_dims.isMoe() && group < dataRanks) {
            m_result.error = "training: optimizer.shard_group: hybrid sharding of an MoE model's "
                             "experts is not modelled; leave it out to shard over all "
                             + std::to_string(dataRanks) + " data-parallel ranks";
            return false;
        }
    }
    const long long perReplica = 1LL * t.microBatch * m_dp;
    if (t.globalBatch < perReplica) {
        m_result.error = "training: global batch " + std::to_string(t.globalBatch)
                         + " is smaller than micro batch x DP = " + std::to_string(perReplica);
        return false;
    }
    m_micro = static_cast<int>(t.globalBatch / perReplica);
    if (t.globalBatch % perReplica != 0)
        warn(Severity::Warning,
             "batch-not-divisible",
             "global batch " + std::to_string(t.globalBatch) + " is not a multiple of micro batch "
                     + std::to_string(t.microBatch) + " x DP " + std::to_string(m_dp)
                     + "; priced with " + std::to_string(m_micro) + " micro-batches per replica");
    if (m_dims.heads % m_tp != 0)
        warn(Severity::Warning,
             "tp-heads",
             "TP " + std::to_string(m_tp) + " does not divide the " + std::to_string(m_dims.heads)
                     + " attention heads (Megatron refuses this); priced as if it did");
    else if (m_dims.kvHeads % m_tp != 0 && m_tp % m_dims.kvHeads != 0)
        warn(Severity::Warning,
             "tp-kv-heads",
             "TP " + std::to_string(m_tp) + " does not divide the " + std::to_string(m_dims.kvHeads)
                     + " key/value heads; priced as if it did");
    if (m_dims.isMoe() && m_dims.experts % m_ep != 0)
        warn(Severity::Warning,
             "ep-experts",
             "EP " + std::to_string(m_ep) + " does not divide the " + std::to_string(m_dims.experts)
                     + " experts; priced with uneven experts per GPU");
    if (m_dims.layers % m_pp != 0)
        warn(Severity::Warning,
             "pp-layers",
             std::to_string(m_dims.layers) + " layers do not split evenly over PP "
                     + std::to_string(m_pp) + "; the first and last stages get one layer fewer");
    if (m_vp > 1 && (m_dims.layers % (m_pp * m_vp) != 0))
        warn(Severity::Warning,
             "vp-layers",
             std::to_string(m_dims.layers) + " layers do not split evenly into PP x VP = "
                     + std::to_string(m_pp * m_vp) + " virtual stages");
    if (m_vp > 1 && m_pp == 1)
        warn(Severity::Info, "vp-without-pp", "VP has no effect without pipeline parallelism");
    if (m_cp > 1 && t.seqLen % (2 * m_cp) != 0)
        warn(Severity::Warning,
             "cp-seq",
             "sequence length " + std::to_string(t.seqLen) + " is not a multiple of 2 x CP = "
                     + std::to_string(2 * m_cp) + " (load-balanced ring attention needs it)");
    if (m_tp > m_topo.shape().domainSize)
        warn(Severity::Warning,
             "tp-larger-than-domain",
             "TP " + std::to_string(m_tp) + " is larger than the NVLink domain ("
                     + std::to_string(m_topo.shape().domainSize)
                     + " GPUs): every TP collective crosses the network");
    m_stageDense.assign(static_cast<std::size_t>(m_pp), 0);
    m_stageMoe.assign(static_cast<std::size_t>(m_pp), 0);
    m_runs.clear();
    forEachStage(m_dims, m_pp, [&](int s, int nd, int nm) {
        m_stageDense[static_cast<std::size_t>(s)] = nd;
        m_stageMoe[static_cast<std::size_t>(s)] = nm;
        m_runs.push_back({s, 1, nd, nm, 1.0});
    });
    // A straggler (cluster.faults) paces its stage: its TP group waits for it at every
    // collective, the pipeline at every hand-over, the other replicas at the DP reduction.
    if (m_topo.hasStragglers())
        for (int r = 0; r < m_ranks->worldSize(); ++r) {
            StageRun &run = m_runs[static_cast<std::size_t>(m_ranks->coord(r, Dim::PP))];
            run.slowdown = std::max(run.slowdown, m_topo.gpuSlowdown(m_ranks->gpuOfRank(r)));
        }
    m_setting.model = &m_dims;
    m_setting.training = &m_layout.training;
    m_setting.stack = m_stack;
    m_setting.tp = m_tp;
    m_setting.cp = m_cp;
    m_setting.pp = m_pp;
    m_setting.vp = m_vp;
    m_setting.dp = m_dp;
    m_setting.ep = m_ep;
    m_setting.etp = m_etp;
    m_setting.micro = m_micro;
    m_setting.sp = m_sp;
    m_setting.fp8Weights = fp8ParamGathers(m_layout.training, m_topo.gpuSpec());
    setOffload();
    return true;
}

void StepModel::setOffload()
{
    const TrainingConfig &t = m_layout.training;
    m_setting.offloadLayers = offloadedLayers(t, m_pp, m_dims.layers);
    if (t.offloadLayers > 0 && m_setting.offloadLayers == 0) {
        warn(Severity::Warning,
             "offload-not-applied",
             "CPU offload of " + std::to_string(t.offloadLayers)
                     + " layers is not applied: Megatron-Core offloads activations only "
                       "without pipeline parallelism and without recomputation",
             {});
        return;
    }
    if (m_setting.offloadLayers == 0)
        return;
    const LayerActivations act = layerActivations(m_dims, t, memoryShape());
    m_setting.offloadDenseBytes = act.dense;
    m_setting.offloadMoeBytes = act.moe;
    const GpuSpec &gpu = m_topo.gpuSpec();
    m_setting.hostD2hBytesPerS = gpu.hostCopyD2hGBs * 1e9;
    m_setting.hostH2dBytesPerS = gpu.hostCopyH2dGBs * 1e9;
}

StepModel::BestSpan StepModel::bestSpan(Dim dim, int n) const
{
    // TP claims the NVLink domain first (Megatron's rank order and every plan the planner
    // ranks put it fastest): a domain of D GPUs then holds D / TP members of one CP group, one
    // from each of its whole TP groups, TP apart. An EP group is carved out of a stage's ranks
    // in units of expert TP, so a domain holds D / ETP of its members. Where D is smaller than
    // the inner group, each domain holds one member.
    const int d = std::max(1, m_topo.shape().domainSize);
    const int inner = dim == Dim::CP ? m_tp : dim == Dim::EP ? m_etp : 1;
    BestSpan best;
    best.stride = std::clamp(inner, 1, d);
    const int room = std::max(1, d / best.stride);
    best.domains = (std::max(n, 1) + room - 1) / room;
    return best;
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
    const ClusterShape &s = m_topo.shape();
    // The same collective on a group of the same size over the fewest NVLink domains it can
    // span (one, unless the groups inside the domain leave it too little room): what a
    // placement that keeps as much of this traffic on NVLink as the job allows would pay. A
    // group that spans no more domains than that is placed as well as it can be: a warning
    // would price a saving no placement has (CP8 beside TP4 on 8-GPU servers spans 4 servers
    // however it is placed, and the planner's best plan was warned "+73% CP time").
    const int n = static_cast<int>(groups.front().size());
    const BestSpan best = bestSpan(dim, n);
    double ideal = 0;
    const int perDomain = (n + best.domains - 1) / best.domains;
    if (!s.pcieOnly && 1LL * best.domains * s.domainSize <= m_topo.gpuCount()) {
        std::vector<int> local;
        local.reserve(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k)
            local.push_back((k / perDomain) * s.domainSize + (k % perDomain) * best.stride);
        const GroupShape g = analyzeGroup(m_topo, local);
        ideal = planCollective(m_topo, g, op, bytes, Algorithm::Auto, m_planning).timeS;
    }
    int reported = 0;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        const int domains = p.groupDomains[i];
        const double t = p.groupTimeS[i];
        std::string where;
        double extra = 0, reference = 0; // what a well placed group pays
        const bool spread = dim == Dim::TP || dim == Dim::EP || dim == Dim::CP;
        if (spread && domains > best.domains && ideal > 0) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i) + " spans "
                    + std::to_string(domains) + " NVLink domains"
                    + (best.domains > 1 ? " where " + std::to_string(best.domains) + " would do"
                                        : "");
            reference = ideal;
        } else if (t > p.bestGroupS * 1.05) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i)
                    + " is slower than the others";
            reference = p.bestGroupS;
        }
        if (reference > 0)
            extra = t / reference - 1;
        if (where.empty() || extra < 0.02)
            continue;
        if (reported++ < 8)
            warn(Severity::Warning,
                 std::string(toString(dim)) + "-placement",
                 where + " (" + pct(extra) + " " + dimLabel(dim) + " time)",
                 std::vector<int>(groups[i].begin(), groups[i].end()),
                 (t - reference) * perStep);
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
                const auto nics = m_topo.gpuNics(gpu);
                if (nics.empty())
                    continue;
                const int nic = nics[0] - m_topo.nicDevice(0);
                const int leaf = m_topo.leafOfNic(nic);
                const int r = m_topo.devices()[static_cast<std::size_t>(nics[0])].rail;
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

void StepModel::warnStragglers()
{
    if (!m_topo.hasStragglers())
        return;
    // What the stragglers cost: the step composed again with every GPU at its own pace.
    std::vector<StageRun> even = m_runs;
    for (StageRun &r : even)
        r.slowdown = 1;
    const StepTimes evenTimes = engine::composeStep(m_setting,
                                                    even.data(),
                                                    static_cast<int>(even.size()),
                                                    m_dense,
                                                    m_moe,
                                                    m_out,
                                                    m_comm,
                                                    *m_compute);
    // As it runs, with the links shared as in the step priced (stepschedule.h).
    StepSchedule healthy;
    m_scheduler.run(m_setting, m_comm, evenTimes, healthy, false, m_options.shareLinks);
    const double cost = m_result.stepTimeS - healthy.stepS;
    int reported = 0;
    for (int r = 0; r < m_ranks->worldSize(); ++r) {
        const int gpu = m_ranks->gpuOfRank(r);
        const double slow = m_topo.gpuSlowdown(gpu);
        if (slow <= 1)
            continue;
        if (reported++ >= 4)
            continue;
        const int stage = m_ranks->coord(r, Dim::PP);
        const StageRun &run = m_runs[static_cast<std::size_t>(stage)];
        // One layer's forward and backward for one micro-batch: what every TP collective of
        // the layer waits for, in sum.
        const LayerTimes &layer = run.moe > 0 && run.dense == 0 ? m_moe : m_dense;
        const double perLayer = (slow - 1) * (layer.forward + layer.backward);
        std::string text = "GPU " + std::to_string(gpu) + " runs " + formatNumber(slow, 3)
                           + "x slower (a straggler): ";
        if (m_tp > 1)
            text += "TP group " + std::to_string(m_ranks->groupOf(r, Dim::TP))
                    + " waits for it at every collective (+" + formatSeconds(perLayer)
                    + " per layer and micro-batch), so ";
        const double extra = m_result.exposed.compute - healthy.exposed.compute;
        text += (m_pp > 1 ? "stage " + std::to_string(stage) : std::string("the job"))
                + " computes at its pace (+" + formatSeconds(extra) + " per step)";
        if (m_pp > 1 || m_dp * m_cp > 1)
            text += std::string("; ") + (m_pp > 1 ? "the pipeline" : "")
                    + (m_pp > 1 && m_dp * m_cp > 1 ? " and " : "")
                    + (m_dp * m_cp > 1 ? "every replica" : "") + " wait"
                    + (m_pp > 1 && m_dp * m_cp <= 1 ? "s" : "") + " for it";
        // Where the step waits on data-parallel traffic anyway, the slower compute hides under
        // it.
        const double stepDelta = m_result.stepTimeS - healthy.stepS;
        if (extra > 0 && stepDelta < 0.5 * extra && m_result.exposed.dp < healthy.exposed.dp)
            text += ", but the step was waiting on its data-parallel traffic anyway (DP exposed "
                    + formatSeconds(healthy.exposed.dp) + " -> "
                    + formatSeconds(m_result.exposed.dp) + ")";
        text += ": " + describeChange(healthy.stepS, m_result.stepTimeS, "step time");
        std::vector<int> gpus = {gpu};
        if (m_tp > 1)
            gpus = m_ranks->groupGpus(Dim::TP, m_ranks->groupOf(r, Dim::TP));
        warn(Severity::Warning, "straggler", text, gpus, reported == 1 ? cost : 0);
    }
    if (reported > 4)
        warn(Severity::Info,
             "straggler-more",
             std::to_string(reported - 4)
                     + " more straggling GPUs (the slowest in each stage "
                       "sets its pace)");
}

void StepModel::warnPlacements()
{
    // Placement warnings, with what each costs per step: a group's extra time per collective
    // times how often the collective runs in a step.
    const TrainingConfig &t = m_layout.training;
    const double T = double(t.microBatch) * t.seqLen / m_cp;
    const double microBatches = m_micro;
    const double layersPerStage = double(m_dims.layers) / m_pp;
    const double moePerStage = m_dims.isMoe() ? double(m_dims.moeLayers) / m_pp : 0;
    const double recomputeTp = 2.0 * fullRecomputeShare(t, m_dims.layers, m_pp);
    const double perMicroLayer = layersPerStage * microBatches;
    warnPlacement(m_tpGroups,
                  m_sp ? m_comm.tpAg : m_comm.tpAr,
                  Dim::TP,
                  m_sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce,
                  m_comm.act,
                  (m_sp ? 2.0 : 1.0) * (4.0 + recomputeTp) * perMicroLayer);
    warnPlacement(m_epGroups,
                  m_comm.epA2a,
                  Dim::EP,
                  CollectiveOp::AllToAll,
                  (m_sp ? T / m_tp : T) * m_dims.topK * m_dims.hidden * 2.0,
                  4.0 * moePerStage * microBatches);
    // The ring's sends as priced: keys and values (Transformer Engine: 3 (cp - 1) a layer), or
    // PyTorch's FP32 key and value gradients (cp a layer; its gathers are not checked apart).
    warnPlacement(m_cpGroups,
                  m_comm.cpRing,
                  Dim::CP,
                  CollectiveOp::SendRecv,
                  m_comm.cpRing.bytes,
                  (m_comm.cpGatherPasses > 0 ? m_cp : 3.0 * (m_cp - 1)) * perMicroLayer);
    warnPlacement(m_dpGroups,
                  m_comm.shardedGrads ? m_comm.dpRs : m_comm.dpAr,
                  Dim::DP,
                  m_comm.shardedGrads ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                  m_comm.denseParamsGpu * m_comm.gradBytes,
                  m_comm.shardedGrads ? 2.0 : 1.0);
}

} // namespace railyard::engine::detail
