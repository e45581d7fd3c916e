#include "step/compute.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {
constexpr double kKernelOverheadS = ComputeModel::kKernelLaunchS;
// Flash attention's per-query-tile prologue and epilogue (load Q, initialise, the final rescale
// and store of O; backward: load K/V, store dK/dV), in 128-row key blocks of the main loop:
// about 2 forward and 3 backward. Fitted to the measured sequence-length curves of
// tests/data/kernels/attention.csv (FA2, FA3 and cuDNN on A100, H100, H200, GB200 and GB300 at
// once: least summed |log error| of all 100 rows with each kernel's own efficiencies), not to
// training runs.
constexpr double kAttentionForwardTileCost = 2.0;
constexpr double kAttentionBackwardTileCost = 3.0;
constexpr double kAttentionKeyBlock = 128.0;

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

// Of the work a query tile's sweep over `keys` keys does, the part that is useful: the tile's
// fixed cost is `tileCost` key blocks; a causal call computes its diagonal block in full (half
// of it masked) and, on average, half of the other blocks.
double attentionShapeEfficiency(double keys, bool causal, double tileCost)
{
    const double n = std::max(keys / kAttentionKeyBlock, 1.0);
    return causal ? n / (n + 1.0 + 2.0 * tileCost) : n / (n + tileCost);
}
} // namespace

KernelChoice kernelChoice(const StackProfile &stack,
                          AttentionKernel attention,
                          const GpuSpec &gpu,
                          bool compile)
{
    KernelChoice k;
    k.attention = resolveAttention(stack, attention, gpu.architecture);
    if (k.attention == AttentionKernel::Materialized)
        k.attention = resolveAttention(stack, AttentionKernel::Flash, gpu.architecture);
    k.elementwiseForward = stack.elementwiseForward;
    k.elementwiseBackward = stack.elementwiseBackward;
    k.streamK = stack.streamK;
    k.eagerElementwise = stack.eagerElementwise && !compile;
    k.unfusedModelExtras = stack.unfusedModelExtras;
    return k;
}

ComputeModel::ComputeModel(const GpuSpec &gpu, Precision precision, const KernelChoice &kernels)
    : m_gpu(gpu)
    , m_kernels(kernels)
{
    m_peakBf16 = gpu.bf16Tflops * 1e12;
    m_fp8 = precision != Precision::Bf16 && gpu.fp8Tflops > 0;
    m_peakGemm = m_fp8 ? gpu.fp8Tflops * 1e12 : m_peakBf16;
    m_effGemm = m_fp8 && gpu.gemmEfficiencyFp8 > 0 ? gpu.gemmEfficiencyFp8 : gpu.gemmEfficiencyBf16;
    m_weightBytes = m_actBytes = m_fp8 ? 1 : 2;
    if (precision == Precision::Fp4) {
        // 4-bit weights always; activations in FP4 only on FP4 tensor cores (NVFP4 W4A4),
        // else the GEMM dequantizes the weights for FP8 or BF16 tensor cores. FP4 GEMMs take
        // FP8's achieved fraction of peak until measured.
        m_weightBytes = bytesPerValue(Precision::Fp4);
        if (gpu.fp4Tflops > 0) {
            m_fp8 = true;
            m_peakGemm = gpu.fp4Tflops * 1e12;
            m_effGemm = gpu.gemmEfficiencyFp8 > 0 ? gpu.gemmEfficiencyFp8 : gpu.gemmEfficiencyBf16;
            m_actBytes = m_weightBytes;
        }
    }
    m_clock = sustainedClock();
    m_persistentGemms = gpu.architecture == "hopper" || gpu.architecture == "blackwell";
}

// The clock of the step's tensor-core load: FP8's when its GEMMs run on the FP8 (or FP4)
// tensor cores, BF16's otherwise; the benchmark's clock when the kernels ask for it.
double ComputeModel::sustainedClock() const
{
    if (!m_kernels.sustainedClock)
        return 1.0;
    return m_fp8 ? m_gpu.sustainedClockFp8 : m_gpu.sustainedClock;
}

void ComputeModel::setKernels(const KernelChoice &kernels)
{
    m_kernels = kernels;
    m_clock = sustainedClock();
}

ComputeModel::GemmCost ComputeModel::gemmCore(
        double groups, double m, double n, double k, bool low, Use use) const
{
    const double peak = (low ? m_peakGemm : m_peakBf16) * m_clock;
    const double eff = low ? m_effGemm : m_gpu.gemmEfficiencyBf16;
    // Output tiles run in waves over the SMs, and a tile that overhangs its group's rows or
    // columns computes the overhang for nothing. Like cuBLAS's heuristics, take the tile shape
    // that wastes least; smaller tiles reuse less data and run a little slower.
    struct Tile
    {
        double m, n, eff;
    };
    static constexpr Tile kTiles[] = {{128, 256, 1.0},
                                      {128, 128, 0.95},
                                      {64, 128, 0.85},
                                      {64, 64, 0.7}};
    // Each output tile pays a prologue and epilogue (loads before the first MMA, the output's
    // conversion and store) worth about one 128-deep step of a BF16 K loop. The cost is a time,
    // and an FP8 K step moves twice the elements in it, so FP8 loses 256 elements' worth: a
    // short K amortizes it badly (DeepGEMM's H800 FP8 table loses 20% between K = 7168 and 512
    // at M = 4096, tests/data/kernels/gemm.csv).
    const double tileOverheadK = low ? 256.0 : 128.0;
    const double flops = 2.0 * groups * m * n * k;
    const double sms = std::max(1, m_gpu.sms);
    GemmCost c;
    if (use == Use::Training) {
        // cuBLAS (12 and later, on Ampere and later: stream-K) splits the last wave's tiles
        // along K over the idle SMs, so a partial wave idles SMs only for a part of one 64-deep
        // K step.
        const double kSteps = m_kernels.streamK ? std::ceil(k / 64.0) : 1.0;
        double waveEff = 0;
        for (const Tile &tile : kTiles) {
            const double perGroup = std::ceil(m / tile.m) * std::ceil(n / tile.n);
            const double waves = groups * perGroup * kSteps / sms;
            const double fill = m * n / (perGroup * tile.m * tile.n);
            waveEff = std::max(waveEff, tile.eff * fill * waves / std::ceil(waves));
        }
        const double kEff = k / (k + tileOverheadK);
        c.computeS = flops / (peak * eff * waveEff * kEff);
    } else {
        // Split-K (as cuBLAS and CUTLASS run skinny GEMMs): too few output tiles to fill the
        // SMs split their K loop over several SMs, at least 256 deep each; their FP32 partial
        // sums meet in L2 (not priced).
        double best = 0;
        for (const Tile &tile : kTiles) {
            const double tiles = groups * std::ceil(m / tile.m) * std::ceil(n / tile.n);
            const double split = std::max(1.0,
                                          std::min(std::floor(sms / tiles), std::floor(k / 256.0)));
            const double waves = tiles * split / sms;
            const double depth = k / split;
            const double fill = groups * m * n / (tiles * tile.m * tile.n);
            const double score = tile.eff * fill * waves / std::ceil(waves) * depth
                                 / (depth + tileOverheadK);
            best = std::max(best, score);
        }
        c.computeS = flops / (peak * eff * best);
    }
    const double act = low ? m_actBytes : 2.0, weight = low ? m_weightBytes : 2.0;
    const double bytes = groups * (m * k * act + k * n * weight + m * n * 2.0);
    c.memoryS = bytes / hbmRate();
    // A serving GEMM pays a small kernel's measured time in a CUDA graph (launch, the ramp to
    // HBM bandwidth, the tail: AIConfigurator's BF16 GEMMs at m = 1 take 4.3-5.7 us with
    // 0.5 MB of weights and that plus bytes / bandwidth above, tests/data/serving-parts/
    // gemm-m1.csv); training keeps the launch and tail its kernel benchmarks give.
    c.totalS = std::max(c.computeS, c.memoryS)
               + (use == Use::Inference ? inferenceKernelS() : kKernelOverheadS);
    return c;
}

double ComputeModel::gemmKernel(double m, double n, double k, bool fp8) const
{
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    return gemmCore(1, m, n, k, fp8 && m_fp8, Use::Training).totalS;
}

double ComputeModel::gemm(double m, double n, double k, bool fp8) const
{
    return gemmGrouped(1, m, n, k, fp8);
}

ComputeModel::GemmCost ComputeModel::gemmCost(double m, double n, double k, bool fp8, Use use) const
{
    if (m <= 0 || n <= 0 || k <= 0)
        return {};
    const bool low = fp8 && m_fp8;
    GemmCost c = gemmCore(1, m, n, k, low, use);
    // FP8 (Transformer Engine): the BF16 input is scaled and cast, and transposed for the
    // weight gradient (read 2 bytes, write 1 + 1), in a kernel of its own. The weights' FP8
    // copies are cast once a step and cached across micro-batches: not priced. Serving stacks
    // fuse the activations' quantization into the kernel before.
    if (low && use == Use::Training) {
        const double cast = m * k * 4.0 / hbmRate();
        c.memoryS += cast;
        c.totalS += cast + kKernelOverheadS;
    }
    return c;
}

ComputeModel::GemmCost ComputeModel::gemmGroupedCost(
        double groups, double m, double n, double k, bool fp8, Use use) const
{
    if (groups <= 0 || m <= 0 || n <= 0 || k <= 0)
        return {};
    return gemmCore(groups, m, n, k, fp8 && m_fp8, use);
}

double ComputeModel::gemmBackward(double m, double n, double k, bool fp8) const
{
    return gemmGroupedBackward(1, m, n, k, fp8);
}

double ComputeModel::gemmGrouped(double groups, double m, double n, double k, bool fp8) const
{
    if (groups <= 0 || m <= 0 || n <= 0 || k <= 0)
        return 0;
    const bool low = fp8 && m_fp8;
    double t = gemmCore(groups, m, n, k, low, Use::Training).totalS;
    // FP8 (Transformer Engine): the BF16 input is scaled and cast, and transposed for the
    // weight gradient (read 2 bytes, write 1 + 1), in a kernel of its own. The weights' FP8
    // copies are cast once a step and cached across micro-batches: not priced.
    if (low)
        t += groups * m * k * 4.0 / hbmRate() + kKernelOverheadS;
    return t;
}

double ComputeModel::gemmGroupedBackward(double groups, double m, double n, double k, bool fp8) const
{
    if (groups <= 0 || m <= 0 || n <= 0 || k <= 0)
        return 0;
    const bool low = fp8 && m_fp8;
    // Data gradient (m x n).(n x k) and weight gradient (k x m).(m x n).
    double t = gemmCore(groups, m, k, n, low, Use::Training).totalS
               + gemmCore(groups, k, n, m, low, Use::Training).totalS;
    // FP8: the output gradient is cast and transposed (read 2, write 1 + 1).
    if (low)
        t += groups * m * n * 4.0 / hbmRate() + kKernelOverheadS;
    return t;
}

double ComputeModel::attentionEfficiencyForward() const
{
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    return k ? k->forward : m_gpu.attentionEfficiency;
}

double ComputeModel::attentionEfficiencyBackward() const
{
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    return k ? k->backward : m_gpu.attentionEfficiency;
}

double ComputeModel::attentionHeadFactor(double r, double d)
{
    if (r <= 0.5 || r >= 1 || d >= 128)
        return 1.0;
    const double c = 128.0 * (1 - r) / (2 * r - 1);
    return d * (128.0 + c) / (128.0 * (d + c));
}

double ComputeModel::attentionForward(double flops, double keys, bool causal, double headDim) const
{
    if (flops <= 0)
        return 0;
    // Attention stays in BF16 in FP8 training (FP8 attention is opt-in).
    const double shape = attentionShapeEfficiency(keys, causal, kAttentionForwardTileCost);
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    const double head = attentionHeadFactor(k ? k->forwardHead64 : 0, headDim);
    return flops / (m_peakBf16 * m_clock * attentionEfficiencyForward() * shape * head)
           + kKernelOverheadS;
}

double ComputeModel::attentionBackward(double flops, double keys, bool causal, double headDim) const
{
    if (flops <= 0)
        return 0;
    const double shape = attentionShapeEfficiency(keys, causal, kAttentionBackwardTileCost);
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    const double head = attentionHeadFactor(k ? k->backwardHead64 : 0, headDim);
    return 2.5 * flops / (m_peakBf16 * m_clock * attentionEfficiencyBackward() * shape * head)
           + kKernelOverheadS;
}

double ComputeModel::memory(double bytes) const
{
    return bytes / hbmRate();
}

double ComputeModel::elementwiseForward(double bytes) const
{
    return bytes / (hbmRate() * m_kernels.elementwiseForward);
}

double ComputeModel::elementwiseBackward(double bytes) const
{
    return bytes / (hbmRate() * m_kernels.elementwiseBackward);
}

// cuDNN's norm backward reaches 0.72 of HBM on H200 and 0.63 on GB200 / GB300 where its
// forward reaches 0.79 (tests/data/kernels/norms.csv); the other element-wise kernels' backward
// (activations, residuals, permutes) is not measured apart and keeps the forward's fraction.
double ComputeModel::normBackward(double bytes) const
{
    return bytes / (hbmRateBackward() * m_kernels.elementwiseBackward);
}

namespace {

struct Pass
{
    double gemm = 0;      // GEMM seconds, forward
    double gemmBack = 0;  // GEMM seconds, backward (data and weight gradients)
    double tpGemm = 0;    // forward GEMMs adjacent to TP collectives
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
};

// What `p` gained since `before`: the GEMM seconds and FLOPs forward and the element-wise bytes.
Pass::Part partSince(const Pass &before, const Pass &p)
{
    return {p.gemm - before.gemm,
            p.gemmFlops - before.gemmFlops,
            p.elementBytes + p.eagerBytes - before.elementBytes - before.eagerBytes};
}

void addExtra(Pass &p, double forward, double backward, int kernelsForward, int kernelsBackward)
{
    p.extraBytesForward += forward;
    p.extraBytesBackward += backward;
    p.extraKernelsForward += kernelsForward;
    p.extraKernelsBackward += kernelsBackward;
}

// Adds one GEMM (m x k).(k x n), forward and backward. A GEMM beside a TP collective runs as
// TP chunks of its rows when TP communication is overlapped (Transformer Engine's ring
// exchange), which costs the efficiency of smaller GEMMs.
double addGemm(Pass &p,
               const ComputeModel &c,
               const LayerShard &s,
               double m,
               double n,
               double k,
               bool tpAdjacent,
               bool fp8 = true)
{
    const int chunks = tpAdjacent && s.tpOverlap && s.sequenceParallel && s.tp > 1 ? s.tp : 1;
    const double fwd = chunks * c.gemm(m / chunks, n, k, fp8);
    const double bwd = chunks * c.gemmBackward(m / chunks, n, k, fp8);
    p.gemm += fwd;
    p.gemmBack += bwd;
    if (tpAdjacent)
        p.tpGemm += fwd;
    p.gemmFlops += 2 * m * n * k;
    return fwd;
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
        addGemm(p, c, s, T, m.qLoraRank, h, false);
        const Pass beforeQ = p;
        addGemm(p, c, s, T, heads * qkDim, m.qLoraRank, true);
        const Pass::Part q = partSince(beforeQ, p);
        addGemm(p, c, s, T, m.kvLoraRank + m.qkRopeDim, h, false);
        const Pass beforeKv = p;
        addGemm(p, c, s, T, heads * (m.headDim + vDim), m.kvLoraRank, true);
        const Pass::Part kv = partSince(beforeKv, p);
        p.upProj = {q.gemm + kv.gemm, q.flops + kv.flops, 0};
    } else {
        const double qkv = (double(m.heads) + 2.0 * m.kvHeads) * m.headDim / s.tp;
        addGemm(p, c, s, T, qkv, h, true);
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
        p.attentionFlops += (1 - sliding) * flops + sliding * slidingFlops;
        p.attention += (1 - sliding) * c.attentionForward(flops, keys, !ring, qkDim)
                       + sliding * c.attentionForward(slidingFlops, slidingKeys, true, qkDim);
        p.attentionBack += (1 - sliding) * c.attentionBackward(flops, keys, !ring, qkDim)
                           + sliding * c.attentionBackward(slidingFlops, slidingKeys, true, qkDim);
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
    addGemm(p, c, s, T, h, heads * vDim, true);
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
    addGemm(p, c, s, T, up, h, true);
    addGemm(p, c, s, T, h, w, true);
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
    const Pass before = p;
    const double T = double(s.microBatch) * s.seqLen / s.cp;
    const double h = m.hidden;
    const double tokensHere = s.sequenceParallel ? T / s.tp : T; // this rank's tokens
    // Router.
    addGemm(p, c, s, tokensHere, m.experts, h, false, false);
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
    p.moe = partSince(before, p);
    // Shared experts run like a dense MLP on every token.
    if (m.sharedExperts > 0) {
        const Pass beforeShared = p;
        mlpBlock(m, m.expertFfn * m.sharedExperts, s, c, p);
        p.sharedExperts = partSince(beforeShared, p);
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
    t.forward = p.gemm + p.attention + elementF;
    t.attentionForward = p.attention;
    t.tpGemmForward = p.tpGemm;
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
        if ((modules & kRecomputeSharedExperts) || (modules & kRecomputeMoe))
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
        const Pass before = p;
        mlpBlock(m, m.ffn, s, c, p);
        p.mlp = partSince(before, p);
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
    addGemm(p, c, s, T, v, m.hidden, false, false); // the output layer usually stays in BF16
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
