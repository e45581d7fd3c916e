#include "step/compute.h"

// The layers' work, priced with the GPU's kernel rates (computemodel.cpp): a transformer
// layer's GEMMs, attention and element-wise passes forward and backward, and what
// recomputation runs again.

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {
constexpr double kKernelOverheadS = ComputeModel::kKernelLaunchS;

// PyTorch's eager element-wise operations (KernelChoice::eagerElementwise), in bytes moved per
// element of the tensor they act on, each operation one kernel through HBM (BF16 activations,
// FP32 intermediates). torchtitan's RMSNorm (models/norms.py; Hugging Face's LlamaRMSNorm is the
// same): x.float() (read 2, write 4), pow (4, 4), mean (4), x * rsqrt (4, 4), type_as (4, 2),
// * weight (2, 2): 36, where a fused norm moves 4. Rotary embedding on the queries and keys
// (torchtitan's apply_rotary_emb: float, complex multiply, type_as; Hugging Face's
// rotate_half moves 18): 20. SwiGLU (silu, then the product with the gate): 10 per FFN
// element; GeLU: 4. A residual add: 6. Backward: twice the forward's bytes, as fused.
constexpr double kEagerNormBytes = 36.0;
// A LayerNorm model's norm eagerly is F.layer_norm, one kernel (read 2, write 2), as fused.
constexpr double kEagerLayerNormBytes = 4.0;
constexpr double kEagerRopeBytes = 20.0;
constexpr double kEagerSwigluBytes = 10.0;
constexpr double kEagerGeluBytes = 4.0;
constexpr double kEagerResidualBytes = 6.0;
// Kernels per layer forward: two norms of seven, rotary embedding's three on each of the
// queries and keys, the activation's two and two residual adds, 24 where the fused layer
// launches 12; about twice as many backward. Of the 12 more: each RMSNorm 4, the rotary
// embedding 2, SwiGLU 2; a LayerNorm model with learned positions and GeLU launches none more.
constexpr int kEagerRmsNormKernels = 4;
constexpr int kEagerRopeKernels = 2;
constexpr int kEagerSwigluKernels = 2;

double eagerNormBytes(const ModelDims &m)
{
    return m.layerNorm ? kEagerLayerNormBytes : kEagerNormBytes;
}

// The MLP block's kernels beyond the fused layer's: its norm's and its activation's.
int eagerMlpKernels(const ModelDims &m)
{
    return (m.layerNorm ? 0 : kEagerRmsNormKernels) + (m.gatedMlp ? kEagerSwigluKernels : 0);
}

// Megatron-Core's gpt-oss operations beyond Llama's (StackProfile::unfusedModelExtras), in bytes
// per element and kernels, forward / backward, BF16. The GLU clamp, per element of the
// activation's output (the fc1 output has two): two clamps on the halves (4 each) and the cat
// (8), 16; backward, each clamp's mask and where (8 and 14) and the cat of the two gradients
// (8), 30; 3 and 7 kernels. The experts' second bias, per element of the expert output: b * p,
// the add and the cat, 12 each way; two kernels a local expert and the cat. YaRN's rotary
// embedding unfused (rotate_half's chunk, negation and cat, the two products and their sum,
// the split and cat around the rotated part) where the fused kernel reads and writes once: 20
// more per query and key element forward, backward twice; 6 kernels for each of the queries
// and keys. The output projection's bias added on its own (bias_dropout_fusion off): 4 per
// hidden element of the attention block's output.
constexpr double kClampBytesForward = 16.0, kClampBytesBackward = 30.0;
constexpr int kClampKernelsForward = 3, kClampKernelsBackward = 7;
constexpr double kExpertBiasBytes = 12.0;
constexpr double kYarnRopeBytes = 20.0;
constexpr int kYarnRopeKernels = 12;
constexpr double kOutputBiasBytes = 4.0;

struct Pass
{
    double gemm = 0;     // GEMM seconds, forward
    double gemmBack = 0; // GEMM seconds, backward (data and weight gradients)
    double tpGemm = 0;   // forward GEMMs adjacent to TP collectives
    // LayerTimes::tpOpGemmForward: the blocks' GEMMs beside their all-gather and reduce-scatter,
    // and the input side of the block still open.
    std::array<double, LayerTimes::kMaxTpOps> tpOp{};
    int tpOps = 0;
    double tpIn = 0;
    double attention = 0; // core attention forward seconds
    double attentionBack = 0;
    double attentionFlops = 0;
    double elementBytes = 0;
    double normBytes = 0; // of elementBytes: the norms' (read and write the activation)
    double gemmFlops = 0;
    double expert = 0;
    // Selective recomputation of every other matmul: the share of the forward GEMM work the
    // backward runs again (0: Korthikanti's selective recomputation).
    double recomputedGemmShare = 0;
    // Bytes the eager element-wise kernels move, forward (KernelChoice::eagerElementwise):
    // in place of elementBytes for the same operations.
    double eagerBytes = 0;
    int eagerKernels = 0; // launched beyond the fused layer's, forward
    // The model's extra operations as kernels of their own (KernelChoice::unfusedModelExtras).
    double extraBytesForward = 0, extraBytesBackward = 0;
    int extraKernelsForward = 0, extraKernelsBackward = 0;
    // The parts Megatron's recompute modules run again (LayerShard::recomputeModules): forward
    // GEMM seconds and FLOPs, and the element-wise bytes beside them.
    struct Part
    {
        double gemm = 0, flops = 0, bytes = 0;
    };
    Part upProj;            // MLA's two up-projections
    Part mlp;               // a dense layer's MLP
    Part moe;               // the MoE layer: router, experts, permutes, activation
    Part sharedExperts;     // the shared experts
    double moeActBytes = 0; // the experts' activation function
    // Forward seconds of TP overlap's separate reductions (LayerShard::tpOverlapSeparateReduce).
    double reduceForward = 0;
};

// A pass's running totals at one point (mark()), and what it gained since (since()): the
// forward GEMM seconds and FLOPs and the element-wise bytes of one part of the layer.
Pass::Part mark(const Pass &p)
{
    return {p.gemm, p.gemmFlops, p.elementBytes + p.eagerBytes};
}

Pass::Part since(const Pass::Part &before, const Pass &p)
{
    const Pass::Part now = mark(p);
    return {now.gemm - before.gemm, now.flops - before.flops, now.bytes - before.bytes};
}

void addExtra(Pass &p, double forward, double backward, int kernelsForward, int kernelsBackward)
{
    p.extraBytesForward += forward;
    p.extraBytesBackward += backward;
    p.extraKernelsForward += kernelsForward;
    p.extraKernelsBackward += kernelsBackward;
}

// Where a GEMM sits against the TP collectives: none, a block's input projection (after its
// all-gather) or its output projection (before its reduce-scatter).
enum class TpSide { None, In, Out };

// Adds one GEMM (m x k).(k x n), forward and backward. A GEMM beside a TP collective runs as
// TP chunks of its rows when TP communication is overlapped (Transformer Engine's ring
// exchange), which costs the efficiency of smaller GEMMs.
double addGemm(Pass &p,
               const ComputeModel &c,
               const LayerShard &s,
               double m,
               double n,
               double k,
               TpSide side,
               bool fp8 = true)
{
    const bool tpAdjacent = side != TpSide::None;
    const int chunks = tpAdjacent && s.tpOverlap && s.sequenceParallel && s.tp > 1 ? s.tp : 1;
    const double fwd = chunks * c.gemm(m / chunks, n, k, fp8);
    const double bwd = chunks * c.gemmBackward(m / chunks, n, k, fp8);
    p.gemm += fwd;
    p.gemmBack += bwd;
    if (tpAdjacent)
        p.tpGemm += fwd;
    if (side == TpSide::In)
        p.tpIn += fwd;
    if (side == TpSide::Out && p.tpOps + 2 <= LayerTimes::kMaxTpOps) {
        p.tpOp[static_cast<std::size_t>(p.tpOps++)] = p.tpIn;
        p.tpOp[static_cast<std::size_t>(p.tpOps++)] = fwd;
        p.tpIn = 0;
    }
    p.gemmFlops += 2 * m * n * k;
    return fwd;
}

// The reduction after a forward reduce-scatter that TP overlap runs as PyTorch's
// fused_matmul_reduce_scatter: the TP ranks' BF16 partials of this rank's rows (the GEMM's m x n
// output, read once) summed into its shard (written once).
void addSeparateReduce(Pass &p, const ComputeModel &c, const LayerShard &s, double m, double n)
{
    if (!(s.tpOverlapSeparateReduce && s.tpOverlap && s.sequenceParallel && s.tp > 1))
        return;
    const double bytes = m * n * 2.0 * (1.0 + 1.0 / s.tp);
    p.reduceForward += c.memoryAtPeakShare(bytes, ComputeModel::kAtenOuterSumShare)
                       + kKernelOverheadS;
}

void attentionBlock(const ModelDims &m, const LayerShard &s, const ComputeModel &c, Pass &p)
{
    const double T = double(s.microBatch) * s.seqLen / s.cp; // tokens per CP rank
    const double h = m.hidden;
    const double heads = double(m.heads) / s.tp;
    const double qkDim = m.headDim + m.qkRopeDim;
    const double vDim = m.vHeadDim > 0 ? m.vHeadDim : m.headDim;
    // Projections.
    if (m.qLoraRank > 0 || m.kvLoraRank > 0) {
        // MLA: low-rank query and key/value projections (the down-projections are not split
        // by TP).
        addGemm(p, c, s, T, m.qLoraRank, h, TpSide::None);
        const Pass::Part beforeQ = mark(p);
        addGemm(p, c, s, T, heads * qkDim, m.qLoraRank, TpSide::In);
        const Pass::Part q = since(beforeQ, p);
        addGemm(p, c, s, T, m.kvLoraRank + m.qkRopeDim, h, TpSide::None);
        const Pass::Part beforeKv = mark(p);
        addGemm(p, c, s, T, heads * (m.headDim + vDim), m.kvLoraRank, TpSide::In);
        const Pass::Part kv = since(beforeKv, p);
        p.upProj = {q.gemm + kv.gemm, q.flops + kv.flops, 0};
    } else {
        const double qkv = (double(m.heads) + 2.0 * m.kvHeads) * m.headDim / s.tp;
        addGemm(p, c, s, T, qkv, h, TpSide::In);
    }
    // Core attention: QK^T and AV over the whole sequence (ring attention brings the other CP
    // ranks' keys).
    const double sq = double(s.seqLen) / s.cp, skv = s.seqLen;
    if (s.attention != AttentionKernel::Materialized) {
        // Flash attention skips the masked half of a causal mask. Without CP one causal call
        // sweeps the whole sequence; ring attention (CP, load-balanced: each rank holds two
        // chunks of S / 2cp) runs one call per ring step, each over a chunk of S / 2cp keys
        // with no mask (the diagonal step's mask is a small part).
        const double flops = 2.0 * s.microBatch * heads * sq * skv * (qkDim + vDim) * 0.5;
        const bool ring = s.cp > 1;
        const double keys = ring ? skv / (2.0 * s.cp) : skv;
        // Sliding-window layers (gpt-oss: every other layer sees the last 128 tokens): each
        // query attends to at most the window, one query tile sweeping the window's key blocks;
        // the layer times are the average over the model's layers.
        const double sliding = m.slidingWindow > 0 && m.layers > 0
                                       ? std::min(1.0, double(m.slidingLayers) / m.layers)
                                       : 0.0;
        // A query at position p sees min(p, window) keys: window - window^2 / 2S on average
        // (S / 2, causal attention's, when the window spans the sequence).
        const double window = std::min<double>(m.slidingWindow, skv);
        const double seen = window - window * window / (2.0 * skv);
        const double slidingFlops = 2.0 * s.microBatch * heads * sq * seen * (qkDim + vDim);
        const double slidingKeys = std::min(keys, window);
        // Attention dropout (a model that trains with dropout) slows the kernel where measured.
        const double keptForward = m.dropout ? c.attentionDropoutShare(false) : 1.0;
        const double keptBackward = m.dropout ? c.attentionDropoutShare(true) : 1.0;
        p.attentionFlops += (1 - sliding) * flops + sliding * slidingFlops;
        p.attention += ((1 - sliding) * c.attentionForward(flops, keys, !ring, qkDim)
                        + sliding * c.attentionForward(slidingFlops, slidingKeys, true, qkDim))
                       / keptForward;
        p.attentionBack += ((1 - sliding) * c.attentionBackward(flops, keys, !ring, qkDim)
                            + sliding * c.attentionBackward(slidingFlops, slidingKeys, true, qkDim))
                           / keptBackward;
    } else {
        // Batched GEMMs over the full s x s scores, which make three trips through HBM in FP16:
        // written by QK^T, read and written by the fused scale-mask-softmax-dropout, read by
        // the AV GEMM (6 bytes per score); backward makes twice as many.
        const double rows = s.microBatch * heads * sq;
        const double flops = 2.0 * rows * skv * (qkDim + vDim);
        const double gemms = c.gemm(rows, skv, qkDim, false) + c.gemm(rows, vDim, skv, false);
        const double scores = rows * skv;
        p.attentionFlops += flops;
        p.attention += gemms + c.memory(6.0 * scores);
        p.attentionBack += 2.0 * gemms + c.memory(12.0 * scores);
    }
    // Output projection.
    addGemm(p, c, s, T, h, heads * vDim, TpSide::Out);
    addSeparateReduce(p, c, s, T, h);
    // Element-wise: norms, rotary embedding, residual, dropout, reshapes.
    const double tokens = s.sequenceParallel ? T / s.tp : T;
    if (c.kernels().eagerElementwise) {
        const double kvHeads = std::max(1.0, double(m.kvHeads) / s.tp);
        p.eagerBytes += tokens * h * (eagerNormBytes(m) + kEagerResidualBytes)
                        + (m.rotary ? T * (heads + kvHeads) * qkDim * kEagerRopeBytes : 0.0);
        p.eagerKernels += (m.layerNorm ? 0 : kEagerRmsNormKernels)
                          + (m.rotary ? kEagerRopeKernels : 0);
        return;
    }
    p.elementBytes += tokens * h * 11 // norm, residual+dropout; RoPE
                      + (m.rotary ? T * heads * qkDim * 2 * 2 * 2 : 0.0);
    p.normBytes += tokens * h * 4;
    if (c.kernels().unfusedModelExtras && !m.isMla()) {
        const double kvHeads = std::max(1.0, double(m.kvHeads) / s.tp);
        const double rope = T * (heads + kvHeads) * qkDim * kYarnRopeBytes;
        if (m.yarnRope)
            addExtra(p, rope, 2 * rope, kYarnRopeKernels, kYarnRopeKernels);
        if (m.linearBias)
            addExtra(p, tokens * h * kOutputBiasBytes, tokens * h * kOutputBiasBytes, 1, 1);
    }
}

void mlpBlock(const ModelDims &m, int width, const LayerShard &s, const ComputeModel &c, Pass &p)
{
    const double T = double(s.microBatch) * s.seqLen / s.cp;
    const double h = m.hidden;
    const double w = double(width) / s.tp;
    const double up = m.gatedMlp ? 2 * w : w;
    addGemm(p, c, s, T, up, h, TpSide::In);
    addGemm(p, c, s, T, h, w, TpSide::Out);
    addSeparateReduce(p, c, s, T, h);
    const double tokens = s.sequenceParallel ? T / s.tp : T;
    if (c.kernels().eagerElementwise) {
        p.eagerBytes += tokens * h * (eagerNormBytes(m) + kEagerResidualBytes)
                        + T * w * (m.gatedMlp ? kEagerSwigluBytes : kEagerGeluBytes);
        p.eagerKernels += eagerMlpKernels(m);
        return;
    }
    p.elementBytes += tokens * h * 11 + T * w * 2 * (m.gatedMlp ? 3 : 2);
    p.normBytes += tokens * h * 4;
    if (c.kernels().unfusedModelExtras && m.gatedMlp && m.gluClamp > 0)
        addExtra(p,
                 T * w * kClampBytesForward,
                 T * w * kClampBytesBackward,
                 kClampKernelsForward,
                 kClampKernelsBackward);
}

void moeBlock(const ModelDims &m, const LayerShard &s, const ComputeModel &c, Pass &p)
{
    const Pass::Part before = mark(p);
    const double T = double(s.microBatch) * s.seqLen / s.cp;
    const double h = m.hidden;
    const double tokensHere = s.sequenceParallel ? T / s.tp : T; // this rank's tokens
    // Router.
    addGemm(p, c, s, tokensHere, m.experts, h, TpSide::None, false);
    // Routed experts, balanced: each rank gets its share of the top-k token copies of its EP
    // group, gathered over expert-TP, for its experts.
    // Dropless routing loads the busiest rank's experts above their share.
    const double copies = tokensHere * m.topK * s.etp * s.expertImbalance;
    const double localExperts = std::max(1.0, double(m.experts) / s.ep);
    const double perExpert = copies / localExperts;
    const double w = double(m.expertFfn) / s.etp;
    const double up = m.gatedMlp ? 2 * w : w;
    // One grouped GEMM per projection over this rank's experts (Megatron's --moe-grouped-gemm,
    // TE's GroupedLinear): the experts' tiles share the waves.
    const double upF = c.gemmGrouped(localExperts, perExpert, up, h);
    const double downF = c.gemmGrouped(localExperts, perExpert, h, w);
    p.gemm += upF + downF;
    p.gemmBack += c.gemmGroupedBackward(localExperts, perExpert, up, h)
                  + c.gemmGroupedBackward(localExperts, perExpert, h, w);
    p.gemmFlops += 2.0 * localExperts * perExpert * h * (up + w);
    p.expert += upF + downF;
    // Permute and unpermute the token copies, the activation function.
    if (c.kernels().eagerElementwise) {
        p.eagerBytes += tokensHere * h * (eagerNormBytes(m) + kEagerResidualBytes)
                        + copies * h * 2 * 4
                        + copies * w * (m.gatedMlp ? kEagerSwigluBytes : kEagerGeluBytes);
        p.eagerKernels += eagerMlpKernels(m);
    } else {
        p.normBytes += tokensHere * h * 4;
        p.elementBytes += tokensHere * h * 11 + copies * h * 2 * 4
                          + copies * w * 2 * (m.gatedMlp ? 3 : 2);
    }
    if (c.kernels().unfusedModelExtras) {
        if (m.gatedMlp && m.gluClamp > 0)
            addExtra(p,
                     copies * w * kClampBytesForward,
                     copies * w * kClampBytesBackward,
                     kClampKernelsForward,
                     kClampKernelsBackward);
        if (m.linearBias) {
            const int kernels = 2 * int(std::ceil(localExperts)) + 1;
            addExtra(p,
                     copies * h * kExpertBiasBytes,
                     copies * h * kExpertBiasBytes,
                     kernels,
                     kernels);
        }
    }
    p.moeActBytes = copies * w * 2 * (m.gatedMlp ? 3 : 2);
    p.moe = since(before, p);
    // Shared experts run like a dense MLP on every token.
    if (m.sharedExperts > 0) {
        const Pass::Part beforeShared = mark(p);
        mlpBlock(m, m.expertFfn * m.sharedExperts, s, c, p);
        p.sharedExperts = since(beforeShared, p);
    }
}

LayerTimes finish(const Pass &p, const LayerShard &s, const ComputeModel &c)
{
    LayerTimes t;
    const int eagerKernels = p.eagerKernels;
    const double elementF = c.elementwiseForward(p.elementBytes) + c.memory(p.eagerBytes)
                            + c.memory(p.extraBytesForward)
                            + (12 + eagerKernels + p.extraKernelsForward) * kKernelOverheadS;
    const double elementB = c.elementwiseBackward(2 * (p.elementBytes - p.normBytes))
                            + c.normBackward(2 * p.normBytes) + c.memory(2 * p.eagerBytes)
                            + c.memory(p.extraBytesBackward)
                            + (24 + 2 * eagerKernels + p.extraKernelsBackward) * kKernelOverheadS;
    t.forward = p.gemm + p.attention + elementF + p.reduceForward;
    t.attentionForward = p.attention;
    t.tpGemmForward = p.tpGemm;
    t.tpOpGemmForward = p.tpOp;
    t.tpOps = p.tpOps;
    t.expertForward = p.expert;
    // Backward: data and weight gradients, flash attention backward, element-wise kernels
    // twice.
    t.backward = p.gemmBack + p.attentionBack + elementB;
    double recompute = 0;
    double recomputeFlops = 0;
    if (s.recompute == Recompute::Full) {
        recompute = s.recomputeShare * t.forward;
        recomputeFlops = s.recomputeShare * (p.gemmFlops + p.attentionFlops);
    } else if (s.recompute == Recompute::Selective && p.recomputedGemmShare > 0) {
        // The matmuls not kept (their share of the block's GEMM work) and the element-wise
        // kernels run again; the attention kernel's output is kept.
        recompute = p.recomputedGemmShare * p.gemm + elementF;
        recomputeFlops = p.recomputedGemmShare * p.gemmFlops;
    }
    double recomputedGemm = 0;
    if (s.recompute == Recompute::Selective && p.recomputedGemmShare <= 0) {
        // Megatron's recompute modules: each named part's forward runs again in backward.
        const unsigned modules = s.recomputeModules;
        if (modules & kRecomputeCoreAttn) {
            recompute += p.attention;
            recomputeFlops += p.attentionFlops;
        }
        if (modules & kRecomputeLayernorm)
            recompute += c.elementwiseForward(p.normBytes);
        if ((modules & kRecomputeMoeAct) && !(modules & kRecomputeMoe))
            recompute += c.elementwiseForward(p.moeActBytes);
        const auto again = [&](const Pass::Part &part) {
            recomputedGemm += part.gemm;
            recompute += part.gemm + c.elementwiseForward(part.bytes);
            recomputeFlops += part.flops;
        };
        if (modules & kRecomputeMoe)
            again(p.moe);
        if (modules & (kRecomputeSharedExperts | kRecomputeMoe))
            again(p.sharedExperts);
        if (modules & kRecomputeMlp)
            again(p.mlp);
        if (modules & kRecomputeMlaUpProj)
            again(p.upProj);
    }
    t.backward += recompute;
    t.gemm = p.gemm + p.gemmBack + recomputedGemm;
    if (s.recompute == Recompute::Full)
        t.gemm += s.recomputeShare * p.gemm;
    else if (s.recompute == Recompute::Selective)
        t.gemm += p.recomputedGemmShare * p.gemm;
    const double fwdFlops = p.gemmFlops + p.attentionFlops;
    t.hardwareFlops = 3 * fwdFlops + recomputeFlops;
    return t;
}

} // namespace

LayerTimes layerTimes(const ModelDims &m, bool moe, const LayerShard &s, const ComputeModel &c)
{
    Pass p;
    attentionBlock(m, s, c, p);
    if (moe) {
        moeBlock(m, s, c, p);
    } else {
        const Pass::Part before = mark(p);
        mlpBlock(m, m.ffn, s, c, p);
        p.mlp = since(before, p);
    }
    if (!moe && s.selectiveEveryOtherMatmul && m.qLoraRank <= 0 && m.kvLoraRank <= 0) {
        // A dense block's matmuls in order: Q, K, V, the output projection, then the MLP's
        // (gated: w1, w3, w2; else up, down): K, the output projection and the MLP's second
        // (w3, or the down projection) are recomputed, the same h x FFN work either way.
        const double h = m.hidden, hq = double(m.heads) * m.headDim;
        const double hkv = double(m.kvHeads) * m.headDim, f = m.ffn;
        const double all = h * (hq + 2 * hkv) + hq * h + (m.gatedMlp ? 3 : 2) * h * f;
        const double again = h * hkv + hq * h + h * f;
        p.recomputedGemmShare = again / all;
    }
    return finish(p, s, c);
}

LayerTimes outputLayerTimes(const ModelDims &m, const LayerShard &s, const ComputeModel &c)
{
    Pass p;
    const double T = double(s.microBatch) * s.seqLen / s.cp;
    const double v = double(m.vocab) / s.tp;
    addGemm(p, c, s, T, v, m.hidden, TpSide::None, false); // the output layer usually stays in BF16
    // Final norm, and the cross-entropy over the vocabulary shard: logits in FP32 through
    // separate kernels (12 bytes a logit forward, twice that backward), or one fused kernel over
    // the BF16 logits at HBM's rate (2 forward; backward reads them and writes the gradient, 4).
    p.elementBytes = T * m.hidden * 2 * 4;
    if (s.fusedCrossEntropy) {
        p.extraBytesForward += T * v * 2;
        p.extraBytesBackward += T * v * 4;
    } else
        p.elementBytes += T * v * 4 * 3;
    p.normBytes = T * m.hidden * 4;
    LayerShard noRecompute = s;
    noRecompute.recompute = Recompute::None;
    return finish(p, noRecompute, c);
}

double modelFlopsPerStep(const ModelDims &m, double tokens, int seqLen)
{
    const double h = m.hidden;
    const double qkDim = m.headDim + m.qkRopeDim;
    const double vDim = m.vHeadDim > 0 ? m.vHeadDim : m.headDim;
    // Per token, forward: 2 x (matmul parameters) + attention 2 x s x heads x (qk + v).
    double attnParams = m.attentionParamsPerLayer();
    double attn = 2.0 * attnParams + 2.0 * seqLen * m.heads * (qkDim + vDim);
    double dense = 2.0 * m.mlpParamsPerLayer(m.ffn);
    double moe = 0;
    if (m.isMoe())
        moe = 2.0 * (m.mlpParamsPerLayer(m.expertFfn) * (m.topK + m.sharedExperts) + h * m.experts);
    const double perToken = m.layers * attn + m.denseLayers() * dense
                            + (m.isMoe() ? m.moeLayers * moe : 0) + 2.0 * h * m.vocab;
    return 3.0 * perToken * tokens;
}

} // namespace railyard::engine
