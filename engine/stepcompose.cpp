#include "stepmodel.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine::detail {

void StepModel::composeStep()
{
    const TrainingConfig &t = layout.training;
    const double microBatches = micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;

    // ---- One micro-batch on the slowest stage.
    double slowest = 0, sumStages = 0;
    double stageTp = 0, stageCp = 0, stageEp = 0, stageZero = 0;
    for (int s = 0; s < pp; ++s) {
        const double nd = stageDense[static_cast<std::size_t>(s)];
        const double nm = stageMoe[static_cast<std::size_t>(s)];
        double compute = nd * (dense.forward + dense.backward) + nm * (moe.forward + moe.backward);
        if (s == pp - 1)
            compute += out.forward + out.backward;
        // Exposed communication: TP collectives overlap with the GEMMs next to them when TP
        // overlap is on; CP ring steps hide behind attention; EP behind expert compute with
        // all-to-all overlap.
        const double layers = nd + nm;
        double tpExposed = layers * c.tpPerLayerS;
        if (t.overlap.tp && sp && tp > 1) {
            // Transformer Engine's ring exchange: each collective moves in TP chunks, each
            // beside the GEMM of the chunk before (forward, and the data- and weight-gradient
            // GEMMs backward); only the first chunk's transfer waits, and what the GEMMs cannot
            // cover.
            const double gemm = 3.0 * (nd * dense.tpGemmForward + nm * moe.tpGemmForward);
            const double comm = layers * c.tpPerLayerS;
            tpExposed = comm / tp + std::max(0.0, comm - gemm) * (tp - 1) / tp;
        } else if (t.overlap.tp) {
            // Without sequence parallelism Megatron overlaps only the backward all-reduces
            // with the weight-gradient GEMMs.
            const double gemm = nd * dense.tpGemmForward + nm * moe.tpGemmForward;
            const double comm = layers * c.tpPerLayerS;
            tpExposed = comm - std::min(comm / 2, gemm);
        }
        const double attention = 3.5 * (nd * dense.attentionForward + nm * moe.attentionForward);
        const double cpExposed = std::max(layers * c.cpPerLayerS - attention,
                                          0.05 * layers * c.cpPerLayerS);
        double epExposed = nm * c.epPerMoeLayerS;
        if (t.overlap.ep) {
            // Megatron's combined 1F1B schedule runs one micro-batch's forward beside another's
            // backward: the forward dispatch and combine hide behind backward compute, the
            // backward ones wait on gradients and stay exposed; while they overlap, the
            // dispatcher's kernels take about 18% of the SMs from compute (DeepEP: 24 of 132).
            const double forwardA2a = 0.5 * epExposed;
            const double hidden = std::min(forwardA2a, nm * 2.0 * moe.backward / 3.0);
            epExposed = epExposed - hidden + 0.18 * hidden;
        }
        // ZeRO-3 / FSDP: each layer's gathers and reduce-scatters, prefetched and run
        // asynchronously behind the compute of this micro-batch only; the first gather of the
        // micro-batch waits.
        double zeroExposed = 0;
        if (c.zero3) {
            double fwd = nd * dense.forward + nm * moe.forward;
            double bwd = nd * dense.backward + nm * moe.backward;
            double commFwd = layers * c.zeroFwdPerLayerS, commBwd = layers * c.zeroBwdPerLayerS;
            if (s == 0 || s == pp - 1) {
                commFwd += c.zeroEmbedS / 3;
                commBwd += 2 * c.zeroEmbedS / 3;
            }
            if (s == pp - 1) {
                fwd += out.forward;
                bwd += out.backward;
            }
            if (t.overlap.dp && stack->zeroPrefetch)
                zeroExposed = std::max(0.0, commFwd + commBwd - fwd - bwd)
                              + std::min(c.zeroFwdPerLayerS, commFwd);
            else
                zeroExposed = commFwd + commBwd;
        }
        const double total = compute + tpExposed + cpExposed + epExposed + zeroExposed;
        sumStages += total;
        if (total > slowest) {
            slowest = total;
            stageCompute = compute;
            stageTp = tpExposed;
            stageCp = cpExposed;
            stageEp = epExposed;
            stageZero = zeroExposed;
        }
    }
    const double avgStage = sumStages / pp;

    // ---- The step: micro-batches through the slowest stage, the pipeline bubble, P2P on the
    // critical path, then the data-parallel gradient traffic and the optimizer.
    StepBreakdown x; // exposed
    x.compute = microBatches * stageCompute;
    x.tp = microBatches * stageTp;
    x.cp = microBatches * stageCp;
    x.ep = microBatches * stageEp;
    if (pp > 1) {
        x.ppBubble = double(pp - 1) / vp * avgStage;
        const double p2p = c.ppP2p.timeS;
        x.ppP2p = t.overlap.pp ? 2.0 * (pp - 1) * p2p : 2.0 * vp * microBatches * p2p;
    }
    // DP without ZeRO-3: with overlap on, the gradient buckets reduce under the backward pass
    // of the last micro-batch as they fill, and the parameters gather under the forward of
    // the first; the last bucket always waits for the end of the backward. Without overlap
    // everything runs after the backward.
    double dpExposed = c.dpGradS + c.dpParamS;
    if (c.zero3) {
        dpExposed = microBatches * stageZero;
    } else if (c.zero2) {
        // Each micro-batch's gradients reduce-scatter on the communication stream while the
        // pipeline goes on (nothing waits for them until the optimizer): they are exposed only
        // where they outlast the rest of the step after the first forward, and the last
        // layer's always waits. The parameters gather under the first forward.
        const double busy = x.compute + x.tp + x.cp + x.ep + x.ppBubble + x.ppP2p;
        const double lastUnit = c.dpOps > 0 ? c.dpGradS / (microBatches * c.dpOps) : 0.0;
        if (t.overlap.dp)
            dpExposed = std::max(lastUnit, c.dpGradS - (busy - stageCompute / 3.0))
                        + std::max(0.0, c.dpParamS - stageCompute / 3.0);
    } else if (t.overlap.dp) {
        const double lastBackward = stageCompute * 2.0 / 3.0;
        const double firstForward = stageCompute / 3.0;
        const double lastBucket = (c.dpOps > 0 ? c.dpGradS / std::max(1.0, c.dpOps) : 0);
        dpExposed = std::max(dpExposed - lastBackward - firstForward, lastBucket);
    }
    x.dp = dpExposed;
    // Optimizer: Adam over this GPU's shard of FP32 master weights and moments, memory bound.
    const double paramsGpu = c.denseParamsGpu + c.expertParamsGpu;
    const int shardWays = c.shardedGrads ? std::max(1, dp * cp) : 1;
    // Gradient norm (read every FP32 gradient) and the Adam update of this GPU's shard (read and
    // write master weights and two moments, read the gradient, write the BF16 weights).
    x.optimizer = cm->memory(paramsGpu * 4.0 + paramsGpu / shardWays * (4 * 6 + 4 + 2));
    e.exposed = x;
    e.stepTimeS = x.sum();

    StepBreakdown tot;
    tot.compute = x.compute;
    tot.tp = microBatches * layersPerStage * (c.tpPerLayerS + c.tpHiddenPerLayerS);
    tot.cp = microBatches * layersPerStage * c.cpPerLayerS;
    tot.ep = microBatches * moePerStage * c.epPerMoeLayerS;
    tot.ppBubble = x.ppBubble;
    tot.ppP2p = pp > 1 ? 2.0 * vp * microBatches * c.ppP2p.timeS : 0;
    tot.dp = c.dpGradS + c.dpParamS;
    tot.optimizer = x.optimizer;
    e.total = tot;
}

void StepModel::throughput()
{
    const TrainingConfig &t = layout.training;
    const GpuSpec &gpu = topo.gpuSpec();
    const int gpus = topo.gpuCount();
    e.tokensPerStep = double(t.globalBatch) * t.seqLen;
    e.tokensPerS = e.tokensPerStep / e.stepTimeS;
    e.tokensPerSPerGpu = e.tokensPerS / gpus;
    const double flops = modelFlopsPerStep(m, e.tokensPerStep, t.seqLen);
    e.modelTflopsPerGpu = flops / e.stepTimeS / gpus / 1e12;
    e.mfu = e.modelTflopsPerGpu * 1e12 / cm->bf16Peak();
    e.flopConvention = "model FLOPs as Megatron/NeMo (<= 25.07) count them: 6 x active "
                       "parameters x tokens plus full s^2 attention (not halved for causal "
                       "masks), no recomputation; MFU against the dense BF16 peak ("
                       + formatNumber(gpu.bf16Tflops) + " TFLOP/s)";
    const double price = layout.cluster.pricePerGpuHour.value_or(gpu.pricePerGpuHour);
    if (price > 0) {
        e.costPerStep = price * gpus * e.stepTimeS / 3600.0;
        e.costPerMillionTokens = e.costPerStep / e.tokensPerStep * 1e6;
    }
}

void StepModel::memory()
{
    MemoryShape shape;
    shape.tp = tp;
    shape.cp = cp;
    shape.pp = pp;
    shape.vp = vp;
    shape.dp = dp;
    shape.ep = ep;
    shape.etp = etp;
    shape.sequenceParallel = sp;
    shape.microBatches = micro;
    shape.stageDense = stageDense;
    shape.stageMoe = stageMoe;
    shape.optimizerBytesPerParam = stack->optimizerBytesPerParam;
    const std::vector<MemoryBreakdown> stages = stageMemory(m, layout.training, shape);
    double worst = 0;
    e.memoryGiBPerStage.assign(stages.size(), 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        e.memoryGiBPerStage[s] = stages[s].totalGiB();
        if (stages[s].totalGiB() > worst) {
            worst = stages[s].totalGiB();
            e.memory = stages[s];
        }
    }
    e.hbmGiB = usableHbmGiB(topo.gpuSpec());
    for (int s = 0; s < pp; ++s) {
        const double used = e.memoryGiBPerStage[static_cast<std::size_t>(s)];
        if (used > e.hbmGiB) {
            std::vector<int> gpus;
            for (int r = 0; r < ranks->worldSize(); ++r)
                if (ranks->coord(r, Dim::PP) == s)
                    gpus.push_back(ranks->gpuOfRank(r));
            warn(Severity::Error,
                 "out-of-memory",
                 (pp > 1 ? "stage " + std::to_string(s) : std::string("every GPU"))
                         + " is out of memory: " + formatNumber(used, 3) + " GiB needed, "
                         + formatNumber(e.hbmGiB, 3) + " GiB of HBM",
                 gpus);
        }
    }
}

} // namespace railyard::engine::detail
