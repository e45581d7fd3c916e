#include "step/offload.h"
#include "step/stepcost.h"

#include <algorithm>
#include <cmath>
#include <limits>

// composeStep(): one configuration's step time from its stages' layer times and the
// communication requestStepComm() and finishStepComm() priced (the pipeline's schedule, what each
// overlap hides, ZeRO-3's per-layer waits), and the wait of the first forwards on the
// parameter gathers. The communication itself is in stepcost.cpp.
namespace railyard::engine {

double persistentGemmOverlapLoss(const ComputeModel &compute, double hiddenS, double gemmShare)
{
    // Of each second of GEMM time beside a collective, half is lost to the second wave.
    constexpr double kSecondWave = 0.5;
    if (!compute.persistentGemms() || hiddenS <= 0)
        return 0;
    return kSecondWave * hiddenS * std::clamp(gemmShare, 0.0, 1.0);
}

double parameterGatherWait(double gatherS, int chunks, double group, double unitForward, double lead)
{
    double wait = 0;
    const int n = std::max(1, chunks);
    for (int k = 0; k < n; ++k)
        wait = std::max(wait, (k + 1) * gatherS / n - lead - (k * group + 1) * unitForward);
    return wait;
}

double overlappedTpPerLayer(
        const LayerTimes &l, const StepComm &c, int tp, double slow, double blocks)
{
    // Transformer Engine's ring exchange and PyTorch's async TP: each collective moves in TP
    // chunks, each beside the GEMM of the chunk before; only the first chunk's transfer waits,
    // and what its own GEMM cannot cover (a block's all-gather beside its input projections,
    // its reduce-scatter beside its output projection: one GEMM's spare time does not hide
    // another's collective).
    const auto exposed = [tp](double comm, double gemm) {
        return comm / tp + std::max(0.0, comm - gemm) * (tp - 1) / tp;
    };
    // Backward, the mirror collective beside the data- and weight-gradient GEMMs; a stack that
    // cannot fuse the input-gradient reduce-scatters (after the input projections) leaves them
    // exposed, and fuses only with the data gradient (StackProfile::
    // tpOverlapBackwardReduceScatter).
    const bool fused = c.tpUnfusedPerLayerS <= 0;
    const double backwardGemms = fused ? 2.0 : 1.0;
    double e = 0;
    for (int i = 0; i < l.tpOps; ++i) {
        const double g = l.tpOpGemmForward[static_cast<std::size_t>(i)] * slow;
        if (i % 2 == 0) {
            e += (1.0 + c.tpRecomputeShare + c.tpRegathersPerInput) * exposed(c.tpAgS, g);
            e += fused ? exposed(c.tpRsS, backwardGemms * g) : c.tpRsS;
        } else {
            e += (1.0 + c.tpRecomputeShare) * exposed(c.tpRsS, g);
            e += exposed(c.tpAgS, backwardGemms * g);
        }
    }
    // Blocks with TP collectives and no GEMM of their own beside them (experts split over TP,
    // whose dispatcher gathers and scatters): exposed.
    const double bare = std::max(0.0, blocks - l.tpOps / 2.0);
    e += bare / 2.0 * c.tpPerLayerS;
    return e;
}

StepTimes composeStep(const StepSetting &s,
                      const StageRun *runs,
                      int nRuns,
                      const LayerTimes &dense,
                      const LayerTimes &moe,
                      const LayerTimes &out,
                      const StepComm &c,
                      const ComputeModel &cm)
{
    const ModelDims &m = *s.model;
    const TrainingConfig &t = *s.training;
    const int tp = s.tp, pp = s.pp, vp = s.vp;
    const double microBatches = s.micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;
    StepTimes r;

    // ---- One micro-batch on the slowest stage.
    double slowest = 0, sumStages = 0;
    double stageTp = 0, stageCp = 0, stageEp = 0, stageZero = 0;
    // ZeRO-3 / FSDP holding the stage's parameters (c.zeroHolds): what its once-a-step gathers
    // and reduce-scatters expose, for the stage last priced and for the slowest.
    double zeroOnce = 0, stageZeroOnce = 0;
    double offloadWait = 0; // the stage last priced: its waits for activation copies
    double stageGemm = 0;   // the stage last priced: its GEMMs' seconds, one micro-batch
    double slowestGemm = 0; // the same for the slowest stage
    // The stage last priced and the slowest: the compute its hidden ZeRO-3 collectives slowed,
    // one micro-batch (persistentGemmOverlapLoss()).
    double zeroLoss = 0, stageZeroLoss = 0;
    // A stage's time depends on its layers and on whether it is the first or the last.
    const auto stageTotal = [&](int st,
                                double nd,
                                double nm,
                                double slow,
                                double &compute,
                                double &tpExposed,
                                double &cpExposed,
                                double &epExposed,
                                double &zeroExposed) {
        // A straggler's kernels run `slow` times as long, and its TP group waits for it at
        // every collective: the whole stage's layers take that much longer.
        compute = nd * (dense.forward + dense.backward) + nm * (moe.forward + moe.backward);
        if (st == pp - 1)
            compute += out.forward + out.backward;
        // A stack that adds each micro-batch's BF16 gradients into FP32 accumulators after its
        // backward reads and writes the parameters' worth of them through HBM (the largest
        // stage's, for every stage: they differ by an embedding or a layer).
        if (s.stack && s.stack->gradAccumBytesPerParam > 0)
            compute += cm.memory(s.stack->gradAccumBytesPerParam
                                 * (c.denseParamsGpu + c.expertParamsGpu));
        compute *= slow;
        stageGemm = (nd * dense.gemm + nm * moe.gemm + (st == pp - 1 ? out.gemm : 0.0)) * slow;
        // Activation offload: the copies hide behind their windows' layers; the rest waits.
        const double layers = nd + nm;
        offloadWait = 0;
        if (s.offloadLayers > 0 && layers > 0 && s.hostD2hBytesPerS > 0 && s.hostH2dBytesPerS > 0) {
            const double bytes = (nd * s.offloadDenseBytes + nm * s.offloadMoeBytes) / layers;
            offloadWait = offloadStall(static_cast<int>(layers),
                                       s.offloadLayers,
                                       bytes / s.hostD2hBytesPerS,
                                       bytes / s.hostH2dBytesPerS,
                                       (nd * dense.forward + nm * moe.forward) * slow / layers,
                                       (nd * dense.backward + nm * moe.backward) * slow / layers)
                                  .totalS();
            compute += offloadWait;
        }
        // Exposed communication: TP collectives overlap with the GEMMs next to them when TP
        // overlap is on; CP ring steps hide behind attention; EP behind expert compute with
        // all-to-all overlap.
        tpExposed = c.tpLayers(nd, nm) * c.tpPerLayerS;
        if (t.overlap.tp && s.sp && tp > 1) {
            tpExposed = nd * overlappedTpPerLayer(dense, c, tp, slow, 2.0)
                        + nm * overlappedTpPerLayer(moe, c, tp, slow, c.tpBlocksPerMoeLayer);
        } else if (t.overlap.tp) {
            // Without sequence parallelism Megatron overlaps only the backward all-reduces
            // with the weight-gradient GEMMs.
            const double gemm = (nd * dense.tpGemmForward + nm * moe.tpGemmForward) * slow;
            const double comm = c.tpLayers(nd, nm) * c.tpPerLayerS;
            tpExposed = comm - std::min(comm / 2, gemm);
        }
        const double attention = 3.5 * (nd * dense.attentionForward + nm * moe.attentionForward)
                                 * slow;
        if (c.cpGatherPasses <= 0) {
            cpExposed = std::max(layers * c.cpPerLayerS - attention, 0.05 * layers * c.cpPerLayerS);
        } else {
            // PyTorch's context parallel: each pass's gather starts with the diagonal step's
            // attention and is waited for at the next step, so only that step (a cp-th of the
            // pass's attention) hides it. Backward, each step's gradient send runs beside the
            // next step's attention; the last one has nothing beside it.
            const double forward = attention / 3.5, backward = attention - forward;
            const double gather = layers * c.cpGatherS, grad = layers * c.cpGradStepS;
            cpExposed = (c.cpGatherPasses - 1) * std::max(0.0, gather - forward / s.cp)
                        + std::max(0.0, gather - backward / s.cp) + grad
                        + (s.cp - 1) * std::max(0.0, grad - backward / s.cp);
        }
        epExposed = nm * c.epPerMoeLayerS;
        // Where the GPU waits for the host's launches after the dispatcher's wait
        // (step/hostlaunch.h), the forward's dispatch and combine run in that wait.
        const double forwardA2a = 0.5 * epExposed;
        const double inHostWait = std::min(forwardA2a, nm * moe.hostWaitForward);
        epExposed -= inHostWait;
        if (t.overlap.ep) {
            // Megatron's combined 1F1B schedule runs one micro-batch's forward beside another's
            // backward: the forward dispatch and combine hide behind backward compute, the
            // backward ones wait on gradients and stay exposed; while they overlap, the
            // dispatcher's kernels take about 18% of the SMs from compute (DeepEP: 24 of 132).
            const double hidden = std::min(forwardA2a - inHostWait,
                                           nm * 2.0 * moe.backward / 3.0 * slow);
            epExposed = epExposed - hidden + 0.18 * hidden;
        }
        // ZeRO-3 / FSDP: each layer's gathers and reduce-scatters, prefetched and run
        // asynchronously behind the compute of this micro-batch only; the first gather of the
        // micro-batch waits.
        zeroExposed = 0;
        zeroOnce = 0;
        zeroLoss = 0;
        if (c.zero3) {
            double fwd = (nd * dense.forward + nm * moe.forward) * slow;
            double bwd = (nd * dense.backward + nm * moe.backward) * slow;
            double commFwd = layers * c.zeroFwdPerLayerS, commBwd = layers * c.zeroBwdPerLayerS;
            if (st == 0 || st == pp - 1) {
                commFwd += c.zeroEmbedS / 3;
                commBwd += 2 * c.zeroEmbedS / 3;
            }
            if (st == pp - 1) {
                fwd += out.forward * slow;
                bwd += out.backward * slow;
            }
            if (c.zeroHolds) {
                // Gathered once, under the first micro-batch's forward (prefetched: the first
                // unit waits); reduce-scattered once, after the stage's last backward, when the
                // stage has nothing left to hide them behind (1F1B's first stage ends the step
                // with its last backward).
                const bool ends = st == 0 || st == pp - 1;
                const double gather = layers * c.zeroGatherPerLayerS
                                      + (ends ? c.zeroEmbedS / 3 : 0.0);
                const double reduce = layers * c.zeroReducePerLayerS
                                      + (ends ? c.zeroEmbedS / 3 : 0.0);
                zeroOnce = t.overlap.dp && s.stack->zeroPrefetch
                                   ? std::max(0.0, gather - fwd)
                                             + std::min(c.zeroFwdPerLayerS, gather) + reduce
                                   : gather + reduce;
                return compute + tpExposed + cpExposed + epExposed;
            }
            // FSDP1's BACKWARD_POST: the backward's gathers are issued after the gradients
            // they should hide behind, so they wait; the rest overlaps as prefetched.
            const double waitingGathers = s.stack->zeroBackwardPrefetch
                                                  ? 0.0
                                                  : layers * c.zeroBackwardGathers
                                                            * c.zeroGatherPerLayerS;
            if (t.overlap.dp && s.stack->zeroPrefetch) {
                zeroExposed = waitingGathers
                              + std::max(0.0, commFwd + commBwd - waitingGathers - fwd - bwd)
                              + std::min(c.zeroFwdPerLayerS, commFwd);
                // What the hidden gathers and reduce-scatters cost the compute beside them.
                if (fwd + bwd > 0)
                    zeroLoss = persistentGemmOverlapLoss(cm,
                                                         commFwd + commBwd - zeroExposed,
                                                         stageGemm / (fwd + bwd));
                zeroExposed += zeroLoss;
            } else {
                zeroExposed = commFwd + commBwd;
            }
        }
        return compute + tpExposed + cpExposed + epExposed + zeroExposed;
    };
    double slowestGpu = 1; // the slowest GPU's slowdown (a straggler's), for the optimizer
    for (int i = 0; i < nRuns; ++i) {
        // The stages of a run are alike (the first and the last stage are runs of their own).
        const StageRun &run = runs[i];
        slowestGpu = std::max(slowestGpu, run.slowdown);
        double compute, tpX, cpX, epX, zeroX;
        const double total = stageTotal(run.first,
                                        run.dense,
                                        run.moe,
                                        run.slowdown,
                                        compute,
                                        tpX,
                                        cpX,
                                        epX,
                                        zeroX);
        sumStages += run.count * total;
        if (total > slowest) {
            slowest = total;
            r.stageCompute = compute;
            r.offloadStallS = offloadWait;
            slowestGemm = stageGemm;
            stageZeroLoss = zeroLoss;
            stageTp = tpX;
            stageCp = cpX;
            stageEp = epX;
            stageZero = zeroX;
            stageZeroOnce = zeroOnce;
        }
    }
    const double avgStage = sumStages / pp;

    // ---- The step: micro-batches through the slowest stage, the pipeline bubble, P2P on the
    // critical path, then the data-parallel gradient traffic and the optimizer.
    StepBreakdown &x = r.exposed;
    x.compute = microBatches * r.stageCompute;
    x.tp = microBatches * stageTp;
    x.cp = microBatches * stageCp;
    x.ep = microBatches * stageEp;
    const double p2p = c.ppTransferS;
    if (pp > 1) {
        // Interleaving (VP) fills the pipeline with other micro-batches' virtual stages: with
        // fewer micro-batches than stages it cannot, and one micro-batch's chunks still run
        // one stage after another ((p - m) stages idle, then the interleaved tail).
        x.ppBubble = std::max(double(pp - 1) / vp, (pp - microBatches) + (microBatches - 1) / vp)
                     * avgStage;
        x.ppP2p = t.overlap.pp ? 2.0 * (pp - 1) * p2p : 2.0 * vp * microBatches * p2p;
    }
    // DP without ZeRO-3: with overlap on, the gradient buckets reduce under the backward pass
    // of the last micro-batch as they fill, and the parameters gather under the forward of
    // the first; the last bucket always waits for the end of the backward. Without overlap
    // everything runs after the backward.
    const double stageCompute = r.stageCompute;
    double dpExposed = c.dpGradS + c.dpParamS;
    r.dpGradExposed = c.dpGradS;
    r.dpParamExposed = c.dpParamS;
    if (c.zero3) {
        dpExposed = microBatches * stageZero + stageZeroOnce;
        r.dpGradExposed = r.dpParamExposed = 0;
    } else if (c.zero2) {
        // Each micro-batch's gradients reduce-scatter on the communication stream while the
        // pipeline goes on (nothing waits for them until the optimizer): they are exposed only
        // where they outlast the rest of the step after the first forward, and the last
        // layer's always waits. The parameters gather under the first forward.
        const double busy = x.compute + x.tp + x.cp + x.ep + x.ppBubble + x.ppP2p;
        const double lastUnit = c.dpOps > 0 ? c.dpGradS / (microBatches * c.dpOps) : 0.0;
        if (t.overlap.dp) {
            r.paramUnitForward = stageCompute / 3.0;
            r.dpGradExposed = std::max(lastUnit, c.dpGradS - (busy - stageCompute / 3.0));
            r.dpParamExposed = parameterGatherWait(c.dpParamS, 1, 1, r.paramUnitForward, 0);
            dpExposed = r.dpGradExposed + r.dpParamExposed;
        }
    } else if (t.overlap.dp) {
        // Megatron-Core reduces each model chunk's gradients when its last micro-batch's
        // backward fills them, bucket by bucket. With interleaving the last group of
        // g = min(m, pp) micro-batches runs its backward chunk by chunk, from the last chunk to
        // the first: after chunk k's last backward, k x g backward units of the chunks before it
        // remain, and the chunks' reduce-scatters queue on the DP stream under them. The
        // parameter gathers for the step run ahead of each chunk's first forward the same way
        // (chunk k's first forward comes after k x g forward units). Without interleaving this
        // is the last micro-batch's backward and the first one's forward.
        const double unitBackward = stageCompute * 2.0 / 3.0 / vp; // one chunk, one micro-batch
        const double unitForward = stageCompute / 3.0 / vp;
        const double group = vp > 1 ? std::min(microBatches, double(pp)) : 1.0;
        const double lastBucket = (c.dpOps > 0 ? c.dpGradS / std::max(1.0, c.dpOps) : 0);
        const double chunkGrad = c.dpGradS / vp;
        // Time from the end of the backward (0) at which the last chunk's reduction ends.
        double gradDone = -std::numeric_limits<double>::infinity();
        for (int k = vp - 1; k >= 0; --k)
            gradDone = std::max(gradDone, -(k * group + 1) * unitBackward) + chunkGrad;
        // How long the first forwards wait for the gathers (from the step's start).
        r.paramChunks = vp;
        r.paramGroup = group;
        r.paramUnitForward = unitForward;
        r.dpGradExposed = std::max(gradDone, lastBucket);
        r.dpParamExposed = parameterGatherWait(c.dpParamS, vp, group, unitForward, 0);
        dpExposed = r.dpGradExposed + r.dpParamExposed;
    }
    if (!c.zero3 && !c.zero2 && t.overlap.dp && stageCompute > 0) {
        // What the hidden reductions and gathers cost the compute beside them. (Not charged
        // under ZeRO-2, whose only published runs, Meta's Llama 3 405B at 8-16k GPUs, would
        // price 28% slow with it: their per-micro-batch FP32 reductions keep the network busy
        // for most of the step as the engine prices them, which says those reductions are more
        // than Meta's stack ran; tests/data/throughput/README.md.)
        r.dpOverlapLoss = persistentGemmOverlapLoss(cm,
                                                    c.dpGradS - r.dpGradExposed + c.dpParamS
                                                            - r.dpParamExposed,
                                                    slowestGemm / stageCompute);
        dpExposed += r.dpOverlapLoss;
    }
    r.zeroOverlapLoss = microBatches * stageZeroLoss;
    x.dp = dpExposed;
    // Optimizer: Adam over this GPU's shard of FP32 master weights and moments, memory bound.
    const double paramsGpu = c.denseParamsGpu + c.expertParamsGpu;
    const int shardWays = !c.shardedGrads ? 1
                          : c.zero3       ? std::max(1, c.zeroShardRanks)
                                          : std::max(1, s.dp * s.cp);
    // Zero the gradient buffer, norm, Adam and the weights' copy (optimizerTraffic). A
    // straggler's update is as slow as its other kernels, and the next step waits for it.
    x.optimizer = cm.memory(optimizerTraffic(paramsGpu,
                                             shardWays,
                                             c.gradBytes,
                                             s.stack->optimizerBytesPerParam,
                                             !c.zero2 && !c.zero3)
                                    .total())
                  * slowestGpu;

    StepBreakdown &tot = r.total;
    tot.compute = x.compute;
    tot.tp = microBatches * c.tpLayers(layersPerStage - moePerStage, moePerStage)
             * (c.tpPerLayerS + c.tpHiddenPerLayerS);
    tot.cp = microBatches * layersPerStage * c.cpPerLayerS;
    tot.ep = microBatches * moePerStage * c.epPerMoeLayerS;
    tot.ppBubble = x.ppBubble;
    tot.ppP2p = pp > 1 ? 2.0 * vp * microBatches * p2p : 0;
    tot.dp = c.dpGradS + c.dpParamS;
    tot.optimizer = x.optimizer;
    return r;
}

} // namespace railyard::engine
