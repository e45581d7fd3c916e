#include "step/memory.h"
#include "step/offload.h"

#include <algorithm>

namespace railyard::engine {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The framework's own use of HBM beside the tensors counted here: the CUDA context and library
// workspaces (cuBLAS, Transformer Engine), NCCL's channel buffers, and what PyTorch's caching
// allocator holds but cannot hand out (fragmentation, measured at 3-10% of what is allocated).
constexpr double kFrameworkGiB = 2.0;
constexpr double kFragmentation = 0.05;

} // namespace

double usableHbmGiB(const GpuSpec &gpu)
{
    return gpu.hbmUsableGiB > 0 ? gpu.hbmUsableGiB : gpu.hbmGB * 1e9 / kGiB;
}

namespace {

double activationBytes(const ModelDims &m,
                       const TrainingConfig &t,
                       const MemoryShape &s,
                       bool moeLayer,
                       Recompute recompute)
{
    // Per layer and micro-batch, after Korthikanti et al. 2022 ("Reducing activation
    // recomputation", section 4): sbh(34 + 5as/h) bytes without parallelism, of which 10sbh
    // (the two norms' inputs 4, the attention and MLP inputs 2 + 2, two dropout masks 1 + 1)
    // are replicated over TP unless sequence parallelism splits them, 24sbh (Q and K 4, V 2,
    // the projection input 2, the MLP's fc1 and activation outputs 8 + 8) are split over TP,
    // and 5as^2b are the materialized attention scores (softmax 2, its dropout mask 1 and
    // output 2), split over TP. Generalised to GQA (K and V at the key/value width), gated
    // MLPs (fc1 is twice as wide) and models without dropout (no masks); flash attention keeps
    // no scores. Selective recomputation drops the scores; full recomputation keeps only each
    // layer's input.
    const double T = double(t.microBatch) * t.seqLen / s.cp; // tokens per CP rank
    const double h = m.hidden;
    const double tp = s.tp;
    const double shard = s.sequenceParallel ? tp : 1.0;
    if (recompute == Recompute::Full)
        return T * h * 2.0 / shard;
    const double hq = double(m.heads) * m.headDim, hkv = double(m.kvHeads) * m.headDim;
    if (recompute == Recompute::Selective && s.selectiveEveryOtherMatmul && !moeLayer) {
        // The layer's input, and what the op-level policy keeps (compute.cpp, layerTimes):
        // the outputs of Q, V, the attention kernel, the MLP's first matmul and its last (the
        // down projection's output, whole before its reduce-scatter under TP).
        return T * (2 * h / shard + (2 * hq + 2 * hkv + 2 * hq + 2.0 * m.ffn) / tp + 2 * h / shard);
    }
    const double mask = m.dropout ? 1.0 : 0.0;
    // Megatron's recompute modules (selective): what a module recomputes it does not keep.
    const unsigned modules = recompute == Recompute::Selective ? t.recomputeModules : 0u;
    const bool normsAgain = modules & kRecomputeLayernorm;
    const bool moeAgain = moeLayer && (modules & kRecomputeMoe);
    // Bytes per element of the linear layers' inputs: FP8 where the stack keeps them so; a
    // norm's output keeps its row-wise copy too where sequence parallelism gathers it.
    const double linearIn = s.fp8LinearInputs ? 1.0 : 2.0;
    const double normOut = s.fp8LinearInputs && !(s.sequenceParallel && tp > 1) ? 1.0 : 2.0;
    // Attention block: its norm's input, the QKV input (the norm's output), the
    // post-attention dropout mask.
    double replicated = 2 * h + (normsAgain ? 0.0 : normOut * h) + mask * h;
    // Q, K, V, the projection input. MLA's up-projections recomputed keep their inputs, the
    // two latents, instead of Q, K and V.
    const bool mla = m.qLoraRank > 0 || m.kvLoraRank > 0;
    double split = (mla && (modules & kRecomputeMlaUpProj))
                           ? linearIn * hq
                           : 2 * hq + 2 * hkv + 2 * hkv + linearIn * hq;
    if (mla && (modules & kRecomputeMlaUpProj))
        replicated += 2.0 * (m.qLoraRank + m.kvLoraRank + m.qkRopeDim);
    double perToken = 0;
    if (moeLayer) {
        // The MLP norm's input and the router's input (the norm's output), then each token's
        // top-k copies: the expert input, the fc1 output and the activation output
        // (expert-TP splits the widths). The whole layer recomputed keeps only its input.
        replicated += 2 * h + ((normsAgain || moeAgain) ? 0.0 : 2 * h) + mask * h;
        const double etp = std::max(1, s.etp);
        const double w = double(m.expertFfn) / etp;
        const double up = m.gatedMlp ? 2 * w : w;
        const double copies = double(m.topK) * etp / shard;
        const double act = (modules & kRecomputeMoeAct) ? 0.0 : 2 * w;
        perToken = moeAgain ? 0.0 : copies * (2 * h + 2 * up + act);
        if (m.sharedExperts > 0 && !moeAgain && !(modules & kRecomputeSharedExperts)) {
            const double sw = double(m.expertFfn) * m.sharedExperts;
            perToken += (2 * (m.gatedMlp ? 2 * sw : sw) + 2 * sw) / tp;
        }
    } else {
        // The MLP norm's input, the fc1 input (the norm's output), the dropout mask; fc1 and
        // activation outputs (the activation's output is fc2's input). The MLP recomputed
        // keeps only the norm's input.
        const bool mlpAgain = modules & kRecomputeMlp;
        replicated += 2 * h + ((normsAgain || mlpAgain) ? 0.0 : normOut * h) + mask * h;
        const double up = m.gatedMlp ? 2.0 * m.ffn : double(m.ffn);
        if (!mlpAgain)
            split += 2 * up + linearIn * m.ffn;
    }
    perToken += replicated / shard + split / tp;
    double bytes = T * perToken;
    if (t.attention == AttentionKernel::Materialized
        && (recompute == Recompute::None || !(modules & kRecomputeCoreAttn))) {
        const double scores = (2.0 + mask + 2.0) * m.heads * (double(t.seqLen) / s.cp) / tp;
        bytes += T * scores;
    }
    return bytes;
}

} // namespace

void setStackMemory(MemoryShape &shape,
                    const StackProfile &stack,
                    const TrainingConfig &training,
                    const GpuSpec &gpu)
{
    const Precision precision = training.precision;
    const bool fp8Params = training.optimizer.fp8ParamGather;
    shape.optimizerBytesPerParam = stack.optimizerBytesPerParam;
    shape.fsdpHoldsUnsharded = stack.fsdpPipelineHoldsUnsharded;
    shape.selectiveEveryOtherMatmul = stack.selectiveEveryOtherMatmul;
    shape.lossBytesPerLogit = stack.lossBytesPerLogit;
    const bool fp8 = precision == Precision::Fp8 && gpu.fp8Tflops > 0;
    shape.fp8LinearInputs = stack.fp8SavesLinearInputs && fp8;
    // The row-wise copy, a byte per parameter: measured on Blackwell (family U). Before
    // Blackwell FP8 GEMMs take only the TN layout and TE keeps the transposed copy too; that
    // second byte is not priced: it would put NeMo's FP8 runs F2 and F8, which ran on 80 GB
    // H100s, over their memory, and no Hopper run's memory was measured to settle it. With FP8
    // parameters (fp8_param_gather) the weights themselves are the FP8 copy.
    shape.fp8WeightCacheBytes = stack.fp8WeightCache && fp8 && !fp8Params ? 1.0 : 0.0;
}

double layerActivationBytes(const ModelDims &m,
                            const TrainingConfig &t,
                            const MemoryShape &s,
                            bool moeLayer)
{
    return activationBytes(m, t, s, moeLayer, t.recompute);
}

LayerActivations layerActivations(const ModelDims &m, const TrainingConfig &t, const MemoryShape &s)
{
    LayerActivations a;
    a.dense = activationBytes(m, t, s, false, t.recompute);
    a.denseFull = t.recompute == Recompute::None ? a.dense
                                                 : activationBytes(m, t, s, false, Recompute::None);
    if (m.isMoe()) {
        a.moe = activationBytes(m, t, s, true, t.recompute);
        a.moeFull = t.recompute == Recompute::None
                            ? a.moe
                            : activationBytes(m, t, s, true, Recompute::None);
    }
    // Full recomputation of some of the layers (TrainingConfig::recomputeLayers): the others
    // keep everything; per layer, the average.
    if (t.recompute == Recompute::Full) {
        const double share = fullRecomputeShare(t, m.layers, s.pp);
        a.dense = share * a.dense + (1 - share) * a.denseFull;
        a.moe = share * a.moe + (1 - share) * a.moeFull;
    }
    return a;
}

double inFlightMicroBatches(const MemoryShape &s, int stage)
{
    // 1F1B keeps PP - stage micro-batches in flight. Megatron's interleaved schedule warms up
    // with 2 (PP - stage - 1) + (VP - 1) PP model chunks of 1/VP of the stage's layers: the
    // first stage holds PP + (PP - 1) / VP micro-batches' worth (Korthikanti et al.'s factor
    // 1 + (PP - 1) / (PP VP)), the last PP - (PP - 1) / VP. Never more than the step has.
    const int p = s.pp, v = std::max(1, s.vp), m = std::max(1, s.microBatches);
    if (v == 1 || p == 1)
        return std::min<double>(m, p - stage);
    const double chunks = std::min<double>(double(m) * v, 2.0 * (p - stage - 1) + (v - 1.0) * p + 1);
    return chunks / v;
}

MemoryBreakdown stageMemoryAt(const ModelDims &m,
                              const TrainingConfig &t,
                              const MemoryShape &s,
                              const LayerActivations &act,
                              int st,
                              double nd,
                              double nm)
{
    const OptimizerConfig &opt = t.optimizer;
    const int tp = s.tp, pp = s.pp;
    const ModelDims::LayerParams lp = m.layerParams();
    const double attnParams = lp.attention, denseMlp = lp.denseMlp, sharedMlp = lp.sharedMlp;
    const double expertMlp = lp.expertMlp;
    const double embed = lp.embedding;
    const double T = double(t.microBatch) * t.seqLen / s.cp;
    // Model states per parameter (Rajbhandari et al. 2020, ZeRO): BF16 weights 2 bytes, the
    // gradient buffer 2 (or 4 when gradients are kept and reduced in FP32), FP32 master weights
    // and Adam's two moments 12 (8 where the stack keeps the moments in BF16). The distributed
    // optimizer / ZeRO-1 shards the 12 over the data-parallel ranks, ZeRO-2 the gradients too,
    // ZeRO-3 / FSDP the weights as well.
    const int edp = std::max(1, (tp * s.cp * s.dp) / std::max(1, s.ep * s.etp));
    const bool distributed = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    const bool zero2 = opt.zeroStage >= 2 || opt.fsdp;
    const bool zero3 = shardsWeights(opt);
    // Hybrid sharding shards all three over its shard group only (ZeRO-3 / FSDP).
    const int dpShard = std::max(1, zero3 ? zeroShardRanks(opt, s.dp * s.cp) : s.dp * s.cp);
    const double gradBytes = opt.gradReduceFp32 ? 4.0 : 2.0;
    // Embedding on the first stage, the output layer on the last (tied weights: a copy).
    const double dense = (nd * (attnParams + denseMlp) + nm * (attnParams + sharedMlp)
                          + ((st == 0 || st == pp - 1) ? embed : 0))
                         / tp;
    const double expert = nm * expertMlp / std::max(1, s.ep * s.etp);
    MemoryBreakdown mb;
    mb.weightsGiB = (dense / (zero3 ? dpShard : 1) + expert / (zero3 ? edp : 1)) * 2 / kGiB;
    const bool holds = zero3 && s.fsdpHoldsUnsharded && pp > 1;
    if (holds) {
        // The stage's parameters stay gathered through the step, in BF16.
        mb.weightsGiB += (dense + expert) * 2 / kGiB;
    } else if (zero3 && nd + nm > 0) {
        // The layer being computed and the one prefetched, gathered in full.
        const double layer = (dense + expert) / (nd + nm);
        mb.weightsGiB += 2 * layer * 2 / kGiB;
    }
    // The FP8 copies of the weights the GPU holds, kept through the step (not under ZeRO-3 /
    // FSDP, which gathers each layer's weights as it goes).
    if (!zero3) {
        mb.fp8WeightCopiesGiB = (dense + expert) * s.fp8WeightCacheBytes / kGiB;
        mb.weightsGiB += mb.fp8WeightCopiesGiB;
    }
    mb.gradientsGiB = (dense / (zero2 ? dpShard : 1) + expert / (zero2 ? edp : 1)) * gradBytes
                      / kGiB;
    if (holds) // and their gradients accumulate unsharded, in the reduction type, until the last
        mb.gradientsGiB += (dense + expert) * gradBytes / kGiB;
    mb.optimizerGiB = (dense / (distributed ? dpShard : 1) + expert / (distributed ? edp : 1))
                      * s.optimizerBytesPerParam / kGiB;
    double layerAct = nd * act.dense + nm * act.moe;
    if (s.offloadLayers > 0 && nd + nm > 0) {
        const int layers = static_cast<int>(nd + nm);
        layerAct *= offloadResidentLayers(layers, s.offloadLayers) / (nd + nm);
    }
    mb.activationsGiB = layerAct * inFlightMicroBatches(s, st) / kGiB;
    const bool recomputes = t.recompute == Recompute::Full
                            || (t.recompute == Recompute::Selective && s.selectiveEveryOtherMatmul);
    if (recomputes && nd + nm > 0) {
        // Recomputing a layer rebuilds all of its activations at once.
        mb.activationsGiB += (nm > 0 ? act.moeFull : act.denseFull) / kGiB;
    }
    if (st == pp - 1) // the logits for the loss (FP32, and their gradient: 8 bytes; the stack's)
        mb.activationsGiB += T * double(m.vocab) / tp * s.lossBytesPerLogit / kGiB;
    mb.otherGiB = kFrameworkGiB
                  + kFragmentation
                            * (mb.weightsGiB + mb.gradientsGiB + mb.optimizerGiB
                               + mb.activationsGiB);
    return mb;
}

std::vector<MemoryBreakdown> stageMemory(const ModelDims &m,
                                         const TrainingConfig &t,
                                         const MemoryShape &s)
{
    const LayerActivations act = layerActivations(m, t, s);
    std::vector<MemoryBreakdown> out(static_cast<std::size_t>(s.pp));
    for (int st = 0; st < s.pp; ++st)
        out[static_cast<std::size_t>(st)] = stageMemoryAt(m,
                                                          t,
                                                          s,
                                                          act,
                                                          st,
                                                          s.stageDense[static_cast<std::size_t>(st)],
                                                          s.stageMoe[static_cast<std::size_t>(st)]);
    return out;
}

} // namespace railyard::engine
