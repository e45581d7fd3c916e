#include "stepmodel.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine::detail {

// Data parallelism: what the ranks that hold the same weights exchange. Without ZeRO-3 the
// gradients are reduced once a step (all-reduced, or reduce-scattered with a sharded optimizer,
// the parameters then all-gathered back), in buckets: each bucket is one collective and pays its
// latency once. With ZeRO-3 / FSDP the weights themselves are sharded: every micro-batch gathers
// each layer's parameters before its forward and again before its backward, and
// reduce-scatters its gradients after, in units of one layer (FSDP) or one tensor (DeepSpeed).
void StepModel::priceDataParallel()
{
    const TrainingConfig &t = layout.training;
    const double microBatches = micro;
    const ModelDims::LayerParams lp = m.layerParams();
    const double attnParams = lp.attention, denseMlp = lp.denseMlp, sharedMlp = lp.sharedMlp;
    const double expertMlp = lp.expertMlp;
    const double embedParams = lp.embedding;
    // The largest stage's parameters per GPU (first or last stage holds an embedding).
    for (int s = 0; s < pp; ++s) {
        const double d = stageDense[static_cast<std::size_t>(s)] * (attnParams + denseMlp)
                         + stageMoe[static_cast<std::size_t>(s)] * (attnParams + sharedMlp)
                         + ((s == 0 || s == pp - 1) ? embedParams : 0);
        const double x = stageMoe[static_cast<std::size_t>(s)] * expertMlp;
        if (d / tp + x / (ep * etp) > c.denseParamsGpu + c.expertParamsGpu) {
            c.denseParamsGpu = d / tp;
            c.expertParamsGpu = x / (ep * etp);
        }
    }
    const OptimizerConfig &opt = t.optimizer;
    c.shardedGrads = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    c.zero3 = opt.fsdp || opt.zeroStage >= 3;
    c.zero2 = !c.zero3 && opt.zeroStage == 2;
    // Gradients travel in their buffer's type (BF16, or FP32), parameters in BF16.
    c.gradBytes = t.optimizer.gradReduceFp32 ? 4.0 : 2.0;

    // Collectives per layer for ZeRO-2/3: a whole layer (FSDP wraps each block), or each
    // weight tensor (DeepSpeed).
    const double gather = stack->zeroGatherParams;
    const double layerParams = (c.denseParamsGpu + c.expertParamsGpu)
                               / std::max(1.0, double(m.layers) / pp);
    const double units = gather < 0   ? m.weightTensorsPerLayer()
                         : gather > 0 ? std::max(1.0, std::ceil(layerParams / gather))
                                      : 1.0;

    if (!c.zero3) {
        // Gradients reduce-scattered and parameters gathered (sharded optimizer), or
        // all-reduced, once a step, bucket by bucket. ZeRO-2 shards the gradients too: each
        // micro-batch's are reduce-scattered as its backward produces them, layer by layer,
        // into this rank's shard.
        const double layers = double(m.layers) / pp;
        const auto priceData = [&](const Groups &groups,
                                   double params,
                                   DimPrice &rs,
                                   DimPrice &ag,
                                   DimPrice &ar) {
            if (groups.empty() || params <= 0)
                return 0.0;
            const double bucket = stack->dpBucketParams;
            double ops = bucket > 0 ? std::max(1.0, std::ceil(params / bucket)) : 1.0;
            if (c.zero2) {
                ops = layers * units;
                rs = price(groups,
                           CollectiveOp::ReduceScatter,
                           params / ops * c.gradBytes,
                           ops * microBatches);
                ag = priceSamePattern(rs, params / ops * 2.0, ops / microBatches);
            } else if (c.shardedGrads) {
                rs = price(groups, CollectiveOp::ReduceScatter, params / ops * c.gradBytes, ops);
                ag = priceSamePattern(rs, params / ops * 2.0, ops);
            } else {
                ar = price(groups, CollectiveOp::AllReduce, params / ops * c.gradBytes, ops);
            }
            return ops;
        };
        c.dpOps = priceData(dpGroups, c.denseParamsGpu, c.dpRs, c.dpAg, c.dpAr);
        c.edpOps = priceData(edpGroups, c.expertParamsGpu, c.edpRs, c.edpAg, c.edpAr);
        const double gradOnce = c.dpOps * (c.dpRs.timeS + c.dpAr.timeS)
                                + c.edpOps * (c.edpRs.timeS + c.edpAr.timeS);
        c.dpGradS = (c.zero2 ? microBatches : 1.0) * gradOnce;
        c.dpParamS = c.dpOps * c.dpAg.timeS + c.edpOps * c.edpAg.timeS;
        return;
    }

    // ZeRO-3 / FSDP: one layer's parameters per GPU (after TP and EP), gathered in `units`
    // collectives: a whole layer (FSDP wraps each block), or each weight tensor (DeepSpeed).
    const double layers = double(m.layers) / pp;
    const double denseLayer = (m.isMoe() ? (m.denseLayers() * (attnParams + denseMlp)
                                            + m.moeLayers * (attnParams + sharedMlp))
                                                   / m.layers
                                         : attnParams + denseMlp)
                              / tp;
    const double expertLayer = m.isMoe() ? expertMlp * m.moeLayers / m.layers / (ep * etp) : 0;
    const double perStep = units * layers * microBatches;
    c.zeroUnits = units;
    if (!dpGroups.empty() && denseLayer > 0) {
        c.dpAg = price(dpGroups, CollectiveOp::AllGather, denseLayer * 2.0 / units, 2 * perStep);
        c.dpRs = priceSamePattern(c.dpAg, denseLayer * c.gradBytes / units, perStep);
    }
    if (!edpGroups.empty() && expertLayer > 0) {
        c.edpAg = price(edpGroups, CollectiveOp::AllGather, expertLayer * 2.0 / units, 2 * perStep);
        c.edpRs = priceSamePattern(c.edpAg, expertLayer * c.gradBytes / units, perStep);
    }
    // Per layer and micro-batch: a gather before the forward; a gather and a reduce-scatter
    // around the backward. The recomputed forward reuses the backward's gather, unless the
    // stack releases each submodule's parameters after its forward (then it gathers again).
    // A stack whose collectives move at most `zeroCollectiveGBps` per GPU takes at least
    // bytes / rate for each.
    const double rate = stack->zeroCollectiveGBps * 1e9;
    const auto timed = [&](const DimPrice &p) {
        return p.bytes > 0 && rate > 0 ? std::max(p.timeS, p.bytes / rate) : p.timeS;
    };
    const double ag = timed(c.dpAg) + timed(c.edpAg);
    const double rs = timed(c.dpRs) + timed(c.edpRs);
    const double gathers = t.recompute == Recompute::Full && stack->zeroRegatherForRecompute ? 2.0
                                                                                             : 1.0;
    c.zeroFwdPerLayerS = units * ag;
    c.zeroBwdPerLayerS = units * (gathers * ag + rs);
    // The embedding and output layer go the same way, on the first and last stages.
    if (!dpGroups.empty() && c.dpAg.bytes > 0) {
        const double embed = embedParams / tp;
        const double scale = embed * 2.0 / c.dpAg.bytes;
        c.zeroEmbedS = (2 * c.dpAg.latencyS + c.dpRs.latencyS)
                       + scale * (2 * c.dpAg.bwTimeS + c.dpRs.bwTimeS * c.gradBytes / 2.0);
        if (rate > 0)
            c.zeroEmbedS = std::max(c.zeroEmbedS, embed * (2 * 2.0 + c.gradBytes) / rate);
    }
    c.dpGradS = microBatches * layers * units * rs;
    c.dpParamS = microBatches * layers * units * (1 + gathers) * ag;
}

} // namespace railyard::engine::detail
