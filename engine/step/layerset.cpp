#include "step/layerset.h"

namespace railyard::engine {

LayerShard layerShard(const TrainingConfig &training, const StackProfile &stack, const ShardCut &cut)
{
    LayerShard s;
    s.tp = cut.tp;
    s.cp = cut.cp;
    s.ep = cut.ep;
    s.etp = cut.etp;
    s.sequenceParallel = cut.sequenceParallel;
    s.microBatch = cut.microBatch;
    s.seqLen = training.seqLen;
    s.recompute = cut.recompute;
    s.recomputeShare = cut.recomputeShare;
    s.recomputeModules = training.recomputeModules;
    s.attention = training.attention;
    s.expertImbalance = training.moeForceBalance ? 1.0 : stack.moeDroplessImbalance;
    s.tpOverlap = training.overlap.tp;
    s.tpOverlapSeparateReduce = stack.tpOverlapSeparateReduce;
    s.selectiveEveryOtherMatmul = stack.selectiveEveryOtherMatmul;
    s.fusedCrossEntropy = stack.fusedCrossEntropy;
    return s;
}

namespace {

// The share of an MoE layer's forward (and so its host operations) that backward runs again:
// the layers full recomputation takes, or every layer where selective recomputation reruns the
// whole MoE layer (Megatron's --recompute-modules moe).
double recomputedMoeForwardShare(const TrainingConfig &training, const ShardCut &cut)
{
    if (cut.recompute == Recompute::Full)
        return cut.recomputeShare;
    if (cut.recompute == Recompute::Selective && (training.recomputeModules & kRecomputeMoe))
        return 1.0;
    return 0.0;
}

} // namespace

LayerSet priceLayers(const ModelDims &model,
                     const TrainingConfig &training,
                     const StackProfile &stack,
                     const GpuSpec &gpu,
                     const ComputeModel &compute,
                     const ShardCut &cut)
{
    const LayerShard shard = layerShard(training, stack, cut);
    LayerSet l;
    l.dense = layerTimes(model, false, shard, compute);
    if (model.isMoe()) {
        l.moe = layerTimes(model, true, shard, compute);
        l.moeHost = applyMoeHost(l.moe,
                                 stack,
                                 gpu,
                                 model,
                                 cut.ep,
                                 training.precision,
                                 recomputedMoeForwardShare(training, cut));
    }
    l.out = outputLayerTimes(model, shard, compute);
    return l;
}

} // namespace railyard::engine
