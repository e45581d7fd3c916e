#include "step/stepcost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::engine {

bool fp8ParamGathers(const TrainingConfig &t, const GpuSpec &gpu)
{
    return t.optimizer.fp8ParamGather && t.precision == Precision::Fp8 && gpu.fp8Tflops > 0;
}

// All-to-alls per MoE layer and micro-batch: dispatch and combine, forward and backward, and
// the forward's two again where the layer's forward runs again: selective recomputation of
// the whole MoE layer (Megatron's --recompute-modules moe), or full recomputation of the
// layers it takes (the checkpointed layer reruns its token dispatcher).
double epAllToAllsPerLayer(const TrainingConfig &t, int layers, int pp)
{
    const double again = t.recompute == Recompute::Full ? fullRecomputeShare(t, layers, pp)
                         : (t.recompute == Recompute::Selective
                            && (t.recomputeModules & kRecomputeMoe))
                                 ? 1.0
                                 : 0.0;
    return 4.0 + 2.0 * again;
}

// All-gathers a layer's backward runs for its column-parallel GEMMs' weight gradients, with
// sequence parallelism: Megatron's two (one for each block's shard kept), or, where the
// stack's matmuls keep the gathered input (PyTorch's TP), the two its per-op selective
// recomputation runs again, none otherwise (full recomputation regathers in its recomputed
// forward, recomputeTp).
double tpWgradGathers(const StepSetting &s)
{
    if (!s.stack || s.stack->tpWgradGatherHidden)
        return 2.0;
    return s.training->recompute == Recompute::Selective && s.stack->selectiveEveryOtherMatmul
                   ? 2.0
                   : 0.0;
}

int stageRuns(const ModelDims &m, int pp, std::array<StageRun, 16> &out)
{
    int runs = 0;
    bool full = false;
    forEachStage(m, pp, [&](int s, int nd, int nm) {
        // The first and last stages are runs of their own (embedding, output layer).
        if (runs > 0 && s != pp - 1) {
            StageRun &r = out[static_cast<std::size_t>(runs - 1)];
            if (r.first != 0 && r.dense == nd && r.moe == nm) {
                ++r.count;
                return;
            }
        }
        if (runs == static_cast<int>(out.size())) {
            full = true;
            return;
        }
        out[static_cast<std::size_t>(runs++)] = {s, 1, nd, nm, 1.0};
    });
    return full ? 0 : runs;
}

CollectiveCost groupsCost(CollectiveOp op,
                          int n,
                          double bytes,
                          double linkS,
                          double worstLatencyS,
                          double worstEfficiency,
                          double capBusGBps,
                          Algorithm algorithm)
{
    CollectiveCost out;
    out.bwTimeS = linkS / worstEfficiency;
    if (capBusGBps > 0)
        out.bwTimeS = std::max(out.bwTimeS, busBandwidthFactor(op, n) * bytes / (capBusGBps * 1e9));
    out.latencyS = worstLatencyS;
    out.timeS = worstLatencyS + out.bwTimeS;
    out.bytes = bytes;
    out.algorithm = algorithm;
    return out;
}

CollectiveCost samePatternCost(const CollectiveCost &like, double bytes)
{
    CollectiveCost out = like;
    if (like.bytes <= 0)
        return out;
    const double scale = bytes / like.bytes;
    out.bytes = bytes;
    out.bwTimeS = like.bwTimeS * scale;
    out.timeS = like.latencyS + out.bwTimeS;
    out.nvlinkBusyS = like.nvlinkBusyS * scale;
    out.networkBusyS = like.networkBusyS * scale;
    return out;
}

double deepEpDispatchScale(const ModelDims &m, int N)
{
    // With experts spread evenly over the N nodes of an EP group, a node holds none of a
    // token's top-k with probability C(E - E/N, k) / C(E, k).
    if (N <= 1)
        return 1.0;
    const double perNode = double(m.experts) / N;
    double miss = 1;
    for (int i = 0; i < m.topK; ++i)
        miss *= std::max(0.0, (m.experts - perNode - i) / (m.experts - i));
    const double remoteNodes = (N - 1) * (1 - miss);
    const double remoteCopies = double(m.topK) * (N - 1) / N;
    return std::min(1.0, remoteNodes / remoteCopies);
}

namespace {

// A send split over TP is all-gathered on arrival: once forward, twice backward (the
// activation's gradient, and the stage's own output restored), per micro-batch and virtual
// stage, against the two transfers a micro-batch Megatron's schedule puts on the critical path.
constexpr double kSplitSendGathers = 3;
constexpr double kPipelineTransfers = 2;

void add(StepComm &c, CommSlot slot, CommGroups g, CollectiveOp op, double bytes, double perStep)
{
    c.request[static_cast<std::size_t>(c.requests++)] = {slot, g, op, bytes, perStep, false, false};
}

void addSame(StepComm &c, CommSlot slot, CommGroups g, CollectiveOp op, double bytes, double perStep)
{
    c.request[static_cast<std::size_t>(c.requests++)] = {slot, g, op, bytes, perStep, true, false};
}

// ZeRO-3 / FSDP: parameters per collective (one layer, a whole block, or one tensor).
double zeroUnitsOf(const StepSetting &s, const StepComm &c)
{
    const ModelDims &m = *s.model;
    const double gather = s.stack->zeroGatherParams;
    const double layerParams = (c.denseParamsGpu + c.expertParamsGpu)
                               / std::max(1.0, double(m.layers) / s.pp);
    return gather < 0   ? m.weightTensorsPerLayer()
           : gather > 0 ? std::max(1.0, std::ceil(layerParams / gather))
                        : 1.0;
}

} // namespace

void requestStepComm(const StepSetting &s, const StageRun *runs, int nRuns, StepComm &c)
{
    const ModelDims &m = *s.model;
    const TrainingConfig &t = *s.training;
    const int tp = s.tp, cp = s.cp, pp = s.pp, ep = s.ep, etp = s.etp;
    c = StepComm{};
    // ---- Communication sizes (bytes, nccl-tests semantics) and counts per step.
    const double T = double(t.microBatch) * t.seqLen / cp; // tokens per CP rank
    c.act = T * m.hidden * 2.0;                            // one activation tensor, BF16
    const double act = c.act;
    const double microBatches = s.micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;
    // TP per layer and micro-batch. Without sequence parallelism: two all-reduces forward (after
    // the attention and MLP blocks) and two backward. With it: forward, an all-gather before and
    // a reduce-scatter after each block; backward, the mirror image plus an all-gather of each
    // column-parallel GEMM's input for its weight gradient, which Megatron overlaps with the
    // data-gradient GEMM. Full recomputation repeats the forward's collectives.
    const double recomputeTp = 2.0 * fullRecomputeShare(t, m.layers, s.pp);
    const double wgradGathers = tpWgradGathers(s);
    if (m.isMoe() && etp == 1)
        c.tpBlocksPerMoeLayer = m.sharedExperts > 0 ? 2.0 : 1.0;
    if (tp > 1) {
        const double per = c.tpLayers(layersPerStage - moePerStage, moePerStage) * microBatches;
        if (s.sp) {
            const bool fp8Gathers = (!s.stack || s.stack->tpFloat8AllGather)
                                    && t.precision == Precision::Fp8;
            add(c,
                CommSlot::TpAg,
                CommGroups::Tp,
                CollectiveOp::AllGather,
                fp8Gathers ? act / 2.0 : act,
                (4.0 + wgradGathers + recomputeTp) * per);
            addSame(c,
                    CommSlot::TpRs,
                    CommGroups::Tp,
                    CollectiveOp::ReduceScatter,
                    act,
                    (4.0 + recomputeTp) * per);
        } else {
            add(c,
                CommSlot::TpAr,
                CommGroups::Tp,
                CollectiveOp::AllReduce,
                act,
                (4.0 + recomputeTp) * per);
        }
    }
    // CP: ring attention passes each rank's keys and values around the ring, forward; keys,
    // values and their gradients backward. PyTorch's context parallel works on them expanded
    // to the query heads.
    const bool torchCp = s.stack && s.stack->torchContextParallel;
    c.cpKvBytes = T * 2.0 * (torchCp ? m.heads : m.kvHeads) * m.headDim / std::max(1, tp) * 2.0;
    if (cp > 1 && torchCp) {
        // PyTorch's context parallel: the keys and values all-gathered once a pass (forward,
        // recomputed forward, backward); backward, their gradients sent on in FP32 at each of
        // the cp steps.
        c.cpGatherPasses = 2.0 + fullRecomputeShare(t, m.layers, s.pp);
        add(c,
            CommSlot::CpAg,
            CommGroups::Cp,
            CollectiveOp::AllGather,
            cp * c.cpKvBytes,
            c.cpGatherPasses * layersPerStage * microBatches);
        add(c,
            CommSlot::CpRing,
            CommGroups::Cp,
            CollectiveOp::SendRecv,
            2.0 * c.cpKvBytes,
            cp * layersPerStage * microBatches);
    } else if (cp > 1)
        add(c,
            CommSlot::CpRing,
            CommGroups::Cp,
            CollectiveOp::SendRecv,
            c.cpKvBytes,
            3.0 * (cp - 1) * layersPerStage * microBatches);
    // EP: all-to-all dispatch and combine, forward and backward, per MoE layer.
    if (ep > 1 && m.isMoe()) {
        const double tokensHere = s.sp ? T / tp : T;
        c.a2aBytes = tokensHere * m.topK * m.hidden * 2.0;
        add(c,
            CommSlot::EpA2a,
            CommGroups::Ep,
            CollectiveOp::AllToAll,
            c.a2aBytes,
            epAllToAllsPerLayer(t, m.layers, s.pp) * moePerStage * microBatches);
        c.request[static_cast<std::size_t>(c.requests - 1)].deepEp = t.moeDispatcher
                                                                     == MoeDispatcher::DeepEP;
    }
    // PP: activations to the next stage forward, gradients back, per micro-batch and virtual
    // stage (scattered over TP with sequence parallelism, or split over TP and all-gathered
    // on arrival: once forward, twice backward).
    const bool splitSends = s.stack && s.stack->pipeSendsSplitOverTp && tp > 1;
    if (pp > 1) {
        add(c,
            CommSlot::PpP2p,
            CommGroups::Pp,
            CollectiveOp::SendRecv,
            (s.sp || splitSends) ? act / tp : act,
            kPipelineTransfers * s.vp * microBatches);
        if (splitSends && !s.sp)
            add(c,
                CommSlot::PpGather,
                CommGroups::Tp,
                CollectiveOp::AllGather,
                act,
                kSplitSendGathers * s.vp * microBatches);
    }

    // ---- Data parallelism: what the ranks that hold the same weights exchange. Without ZeRO-3
    // the gradients are reduced once a step (all-reduced, or reduce-scattered with a sharded
    // optimizer, the parameters then all-gathered back), in buckets: each bucket is one
    // collective and pays its latency once. With ZeRO-3 / FSDP the weights themselves are
    // sharded: every micro-batch gathers each layer's parameters before its forward and again
    // before its backward, and reduce-scatters its gradients after, in units of one layer (FSDP)
    // or one tensor (DeepSpeed).
    const ModelDims::LayerParams lp = m.layerParams();
    // The largest stage's parameters per GPU (first or last stage holds an embedding).
    // The MoE router's weights (hidden x experts a layer) are counted with the dense ones.
    const double router = m.isMoe() ? double(m.hidden) * m.experts : 0;
    double bf16Gpu = 0; // the part of denseParamsGpu that no FP8 GEMM reads
    for (int r = 0; r < nRuns; ++r) {
        const StageRun &run = runs[r];
        const int st = run.first; // a run's stages are alike
        const double embedding = (st == 0 || st == pp - 1) ? lp.embedding : 0;
        const double d = run.dense * (lp.attention + lp.denseMlp)
                         + run.moe * (lp.attention + lp.sharedMlp) + embedding;
        const double x = run.moe * lp.expertMlp;
        if (d / tp + x / (ep * etp) > c.denseParamsGpu + c.expertParamsGpu) {
            c.denseParamsGpu = d / tp;
            c.expertParamsGpu = x / (ep * etp);
            bf16Gpu = (embedding + run.moe * router) / tp;
        }
    }
    // FP8 primary weights (fp8ParamGathers()): the optimizer casts its FP32 shard of each
    // linear layer's weight to FP8 and the parameter all-gathers move one byte per element
    // (NeMo's MegatronDistributedFusedAdam syncs FP8 parameters as uint8:
    // github.com/NVIDIA/NeMo, nemo/core/optim/distributed_adam.py, `init_params_bucket`;
    // Megatron-Core's distributed optimizer with --fp8-param-gather likewise). The embedding,
    // the output layer and the router stay BF16 (norms and biases, which stay BF16 too, are
    // not among the engine's parameters). Gradients keep their type.
    if (s.fp8Weights) {
        c.expertParamBytes = 1.0;
        c.denseParamBytes = c.denseParamsGpu > 0 ? (c.denseParamsGpu + bf16Gpu) / c.denseParamsGpu
                                                 : 1.0;
    }
    const OptimizerConfig &opt = t.optimizer;
    c.shardedGrads = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    c.zero3 = shardsWeights(opt);
    c.zero2 = !c.zero3 && opt.zeroStage == 2;
    // Gradients travel in their buffer's type (BF16, or FP32), parameters in BF16.
    c.gradBytes = opt.gradReduceFp32 ? 4.0 : 2.0;
    const double units = zeroUnitsOf(s, c);
    const bool dpGroups = s.dp * cp > 1;
    const bool edpGroups = m.isMoe() && (tp * cp * s.dp) / std::max(1, ep * etp) > 1;

    if (!c.zero3) {
        // Gradients reduce-scattered and parameters gathered (sharded optimizer), or
        // all-reduced, once a step, bucket by bucket. ZeRO-2 shards the gradients too: each
        // micro-batch's are reduce-scattered as its backward produces them, layer by layer,
        // into this rank's shard.
        const auto data = [&](bool has,
                              CommGroups g,
                              double params,
                              double paramBytes,
                              CommSlot rs,
                              CommSlot ag,
                              CommSlot ar) {
            if (!has || params <= 0)
                return 0.0;
            const double bucket = dpBucketParams(*s.stack, opt, s.dp);
            double ops = bucket > 0 ? std::max(1.0, std::ceil(params / bucket)) : 1.0;
            if (c.zero2) {
                ops = layersPerStage * units;
                add(c,
                    rs,
                    g,
                    CollectiveOp::ReduceScatter,
                    params / ops * c.gradBytes,
                    ops * microBatches);
                addSame(c, ag, g, CollectiveOp::AllGather, params / ops * paramBytes, ops);
            } else if (c.shardedGrads && s.stack->dpAllReduceThenGather) {
                add(c, ar, g, CollectiveOp::AllReduce, params / ops * c.gradBytes, ops);
                add(c, ag, g, CollectiveOp::AllGather, params / ops * paramBytes, ops);
            } else if (c.shardedGrads) {
                add(c, rs, g, CollectiveOp::ReduceScatter, params / ops * c.gradBytes, ops);
                addSame(c, ag, g, CollectiveOp::AllGather, params / ops * paramBytes, ops);
            } else {
                add(c, ar, g, CollectiveOp::AllReduce, params / ops * c.gradBytes, ops);
            }
            return ops;
        };
        c.dpOps = data(dpGroups,
                       CommGroups::Dp,
                       c.denseParamsGpu,
                       c.denseParamBytes,
                       CommSlot::DpRs,
                       CommSlot::DpAg,
                       CommSlot::DpAr);
        c.edpOps = data(edpGroups,
                        CommGroups::Edp,
                        c.expertParamsGpu,
                        c.expertParamBytes,
                        CommSlot::EdpRs,
                        CommSlot::EdpAg,
                        CommSlot::EdpAr);
        return;
    }

    // ZeRO-3 / FSDP: one layer's parameters per GPU (after TP and EP), gathered in `units`
    // collectives: a whole layer (FSDP wraps each block), or each weight tensor (DeepSpeed).
    const double denseLayer = (m.isMoe() ? (m.denseLayers() * (lp.attention + lp.denseMlp)
                                            + m.moeLayers * (lp.attention + lp.sharedMlp))
                                                   / m.layers
                                         : lp.attention + lp.denseMlp)
                              / tp;
    const double expertLayer = m.isMoe() ? lp.expertMlp * m.moeLayers / m.layers / (ep * etp) : 0;
    // A stack that holds each stage's parameters unsharded under PP gathers them and reduces
    // their gradients once a step (one gather: the backward reuses the forward's).
    c.zeroHolds = s.stack->fsdpPipelineHoldsUnsharded && pp > 1;
    const double perStep = units * layersPerStage * (c.zeroHolds ? 1.0 : microBatches);
    const double gathersPerUnit = c.zeroHolds ? 1.0 : 2.0;
    c.zeroUnits = units;
    // A layer's gathers with FP8 weights: one byte per linear weight, the router's two.
    if (s.fp8Weights && denseLayer > 0) {
        const double routerLayer = router * m.moeLayers / m.layers / tp;
        c.zeroDenseParamBytes = (denseLayer + routerLayer) / denseLayer;
    }
    // Hybrid sharding: the gathers and reduce-scatters stay inside each shard group; each
    // unit's gradient shard is then all-reduced across the groups that hold the same shard
    // (FSDP's HYBRID_SHARD: _post_backward_hook reduce-scatters within the shard group, then
    // all-reduces over the replicate group).
    c.zeroShardRanks = zeroShardRanks(t.optimizer, s.dp * cp);
    const bool hybrid = c.zeroShardRanks < s.dp * cp;
    const CommGroups shardGroups = hybrid ? CommGroups::DpShard : CommGroups::Dp;
    if (dpGroups && denseLayer > 0 && c.zeroShardRanks > 1) {
        add(c,
            CommSlot::DpAg,
            shardGroups,
            CollectiveOp::AllGather,
            denseLayer * c.zeroDenseParamBytes / units,
            gathersPerUnit * perStep);
        addSame(c,
                CommSlot::DpRs,
                shardGroups,
                CollectiveOp::ReduceScatter,
                denseLayer * c.gradBytes / units,
                perStep);
    }
    if (dpGroups && denseLayer > 0 && hybrid)
        add(c,
            CommSlot::DpAr,
            CommGroups::DpReplica,
            CollectiveOp::AllReduce,
            denseLayer * c.gradBytes / units / c.zeroShardRanks,
            perStep);
    if (edpGroups && expertLayer > 0) {
        add(c,
            CommSlot::EdpAg,
            CommGroups::Edp,
            CollectiveOp::AllGather,
            expertLayer * c.expertParamBytes / units,
            gathersPerUnit * perStep);
        addSame(c,
                CommSlot::EdpRs,
                CommGroups::Edp,
                CollectiveOp::ReduceScatter,
                expertLayer * c.gradBytes / units,
                perStep);
    }
}

void finishStepComm(const StepSetting &s, StepComm &c)
{
    const ModelDims &m = *s.model;
    const TrainingConfig &t = *s.training;
    const int tp = s.tp, cp = s.cp;
    const double microBatches = s.micro;
    const double recomputeTp = 2.0 * fullRecomputeShare(t, m.layers, s.pp);
    // Exposed per layer (the weight-gradient all-gathers hide behind the data-gradient GEMMs).
    const CollectiveCost &ag = c.at(CommSlot::TpAg), &rs = c.at(CommSlot::TpRs);
    c.tpPerLayerS = s.sp ? ag.timeS * (4.0 + recomputeTp) + rs.timeS * (4.0 + recomputeTp)
                         : c.at(CommSlot::TpAr).timeS * (4.0 + recomputeTp);
    // The weight gradients' gathers: hidden where the stack overlaps them with the
    // data-gradient GEMMs (Megatron), exposed where the recomputation gathers again (PyTorch's
    // TP under per-op selective recomputation).
    const double wgradGathers = s.sp ? tpWgradGathers(s) : 0.0;
    const bool wgradHidden = !s.stack || s.stack->tpWgradGatherHidden;
    c.tpHiddenPerLayerS = wgradHidden ? ag.timeS * wgradGathers : 0.0;
    if (!wgradHidden)
        c.tpPerLayerS += ag.timeS * wgradGathers;
    // The backward's two input-gradient reduce-scatters (after the QKV and the FFN's first
    // GEMMs), where the stack's TP overlap does not reach them.
    c.tpUnfusedPerLayerS = s.sp && s.stack && !s.stack->tpOverlapBackwardReduceScatter
                                   ? rs.timeS * 2.0
                                   : 0.0;
    c.tpAgS = ag.timeS;
    c.tpRsS = rs.timeS;
    c.tpRecomputeShare = recomputeTp / 2.0;
    c.tpRegathersPerInput = wgradHidden ? 0.0 : wgradGathers / 2.0;
    c.cpPerLayerS = c.at(CommSlot::CpRing).timeS * 3.0 * (cp - 1);
    if (c.cpGatherPasses > 0) {
        c.cpGatherS = c.at(CommSlot::CpAg).timeS;
        c.cpGradStepS = c.at(CommSlot::CpRing).timeS;
        c.cpPerLayerS = c.cpGatherPasses * c.cpGatherS + cp * c.cpGradStepS;
    }
    c.epPerMoeLayerS = c.at(CommSlot::EpA2a).timeS * epAllToAllsPerLayer(t, m.layers, s.pp);
    c.ppTransferS = c.at(CommSlot::PpP2p).timeS
                            * (s.stack && s.stack->pipeSendsSerialized ? 2.0 : 1.0)
                    + kSplitSendGathers / kPipelineTransfers * c.at(CommSlot::PpGather).timeS;

    const CollectiveCost &dpRs = c.at(CommSlot::DpRs), &dpAg = c.at(CommSlot::DpAg),
                         &dpAr = c.at(CommSlot::DpAr);
    const CollectiveCost &edpRs = c.at(CommSlot::EdpRs), &edpAg = c.at(CommSlot::EdpAg),
                         &edpAr = c.at(CommSlot::EdpAr);
    if (!c.zero3) {
        const double gradOnce = c.dpOps * (dpRs.timeS + dpAr.timeS)
                                + c.edpOps * (edpRs.timeS + edpAr.timeS);
        c.dpGradS = (c.zero2 ? microBatches : 1.0) * gradOnce;
        c.dpParamS = c.dpOps * dpAg.timeS + c.edpOps * edpAg.timeS;
        return;
    }
    // Per layer and micro-batch: a gather before the forward; a gather and a reduce-scatter
    // around the backward. The recomputed forward reuses the backward's gather, unless the
    // stack releases each submodule's parameters after its forward (then it gathers again).
    // A stack whose collectives move at most `zeroCollectiveGBps` per GPU takes at least
    // bytes / rate for each.
    const double layers = double(m.layers) / s.pp;
    const double units = c.zeroUnits;
    const double rate = s.stack->zeroCollectiveGBps * 1e9;
    const auto timed = [&](const CollectiveCost &p) {
        return p.bytes > 0 && rate > 0 ? std::max(p.timeS, p.bytes / rate) : p.timeS;
    };
    const double agS = timed(dpAg) + timed(edpAg);
    // Under hybrid sharding each reduce-scatter is followed, on the same stream, by its shard's
    // all-reduce across the replicas.
    const double rsS = timed(dpRs) + timed(edpRs) + timed(dpAr);
    const double gathers = s.stack->zeroRegatherForRecompute
                                   ? 1.0 + fullRecomputeShare(t, m.layers, s.pp)
                                   : 1.0;
    c.zeroFwdPerLayerS = units * agS;
    c.zeroBwdPerLayerS = units * (gathers * agS + rsS);
    c.zeroGatherPerLayerS = units * agS;
    c.zeroReducePerLayerS = units * rsS;
    c.zeroBackwardGathers = gathers;
    // The embedding and output layer go the same way, on the first and last stages.
    if (s.dp * cp > 1 && dpAg.bytes > 0) {
        // The embedding's BF16 parameters at the gathers' seconds per byte (a gather unit's
        // bytes are its parameters times zeroDenseParamBytes), its gradients at the
        // reduce-scatters' time per unit (whose bytes already carry the gradient type), scaled
        // by embedding / unit. (Until 2026-12-06 the gradients' time was multiplied by
        // gradBytes / 2 again: FP32 gradients counted twice.)
        const double embed = m.layerParams().embedding / tp;
        const double unitParams = dpAg.bytes / c.zeroDenseParamBytes;
        c.zeroEmbedS = (2 * dpAg.latencyS + dpRs.latencyS + dpAr.latencyS)
                       + embed / unitParams
                                 * (2 * 2.0 / c.zeroDenseParamBytes * dpAg.bwTimeS + dpRs.bwTimeS
                                    + dpAr.bwTimeS);
        if (rate > 0)
            c.zeroEmbedS = std::max(c.zeroEmbedS, embed * (2 * 2.0 + c.gradBytes) / rate);
    }
    if (c.zeroHolds) {
        c.dpGradS = layers * units * rsS;
        c.dpParamS = layers * units * agS;
        return;
    }
    c.dpGradS = microBatches * layers * units * rsS;
    c.dpParamS = microBatches * layers * units * (1 + gathers) * agS;
}

OptimizerTraffic optimizerTraffic(double params,
                                  int shardWays,
                                  double gradBytes,
                                  double optimizerBytesPerParam,
                                  bool fullGradBuffer)
{
    OptimizerTraffic t;
    const double shard = params / std::max(1, shardWays);
    t.zeroGrads = (fullGradBuffer ? params : shard) * gradBytes;
    t.castGrads = gradBytes < 4 ? shard * (gradBytes + 4) : 0;
    t.gradNorm = shard * 4;
    t.update = shard * adamUpdateBytes(4, 4, optimizerBytesPerParam - 4);
    t.paramCopy = shard * (4 + 2);
    return t;
}

StepThroughput stepThroughput(double tokensPerStep,
                              double modelFlopsPerStep,
                              double stepTimeS,
                              int gpus,
                              double bf16PeakFlops,
                              double pricePerGpuHour)
{
    StepThroughput t;
    t.tokensPerS = tokensPerStep / stepTimeS;
    t.tokensPerSPerGpu = t.tokensPerS / gpus;
    t.modelTflopsPerGpu = modelFlopsPerStep / stepTimeS / gpus / 1e12;
    t.mfu = t.modelTflopsPerGpu * 1e12 / bf16PeakFlops;
    t.costPerStep = stepCost(pricePerGpuHour, gpus, stepTimeS);
    if (t.costPerStep > 0) {
        t.costPerMillionTokens = t.costPerStep / tokensPerStep * 1e6;
        t.tokensPerDollar = tokensPerStep / t.costPerStep;
    }
    return t;
}

Regime trainingRegime(const GpuSpec &gpu,
                      Precision precision,
                      int gpus,
                      bool moe,
                      bool zero3,
                      bool contextParallel,
                      const std::string &stack)
{
    Regime r;
    r.architecture = gpu.architecture;
    r.precision = precision == Precision::Fp8 && gpu.fp8Tflops > 0 ? "fp8" : "bf16";
    r.gpus = gpus;
    r.moe = moe;
    r.zero3 = zero3;
    r.contextParallel = contextParallel;
    r.stack = stack;
    return r;
}

} // namespace railyard::engine
