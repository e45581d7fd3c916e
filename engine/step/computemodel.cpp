#include "step/compute.h"

#include <algorithm>
#include <cmath>

// The GPU's kernel rates: which kernels a stack runs (kernelChoice) and how fast each runs on
// a GPU (ComputeModel: GEMMs, attention, element-wise passes through HBM). The layers' work
// priced with them is compute.cpp's.

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

double ComputeModel::attentionPass(double flops,
                                   double keys,
                                   bool causal,
                                   double headDim,
                                   double tileCost,
                                   double efficiency,
                                   double head64) const
{
    if (flops <= 0)
        return 0;
    // Attention stays in BF16 in FP8 training (FP8 attention is opt-in).
    const double shape = attentionShapeEfficiency(keys, causal, tileCost);
    const double head = attentionHeadFactor(head64, headDim);
    return flops / (m_peakBf16 * m_clock * efficiency * shape * head) + kKernelOverheadS;
}

double ComputeModel::attentionDropoutShare(bool backward) const
{
    if (m_gpu.architecture != "blackwell")
        return 1.0;
    return backward ? kDropoutBackwardShare : kDropoutForwardShare;
}

double ComputeModel::attentionForward(double flops, double keys, bool causal, double headDim) const
{
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    return attentionPass(flops,
                         keys,
                         causal,
                         headDim,
                         kAttentionForwardTileCost,
                         attentionEfficiencyForward(),
                         k ? k->forwardHead64 : 0);
}

double ComputeModel::attentionBackward(double flops, double keys, bool causal, double headDim) const
{
    // 2.5x the forward's matmul work (the recomputed scores and the four gradient matmuls).
    const AttentionKernelSpec *k = m_gpu.attentionKernel(toString(m_kernels.attention));
    return attentionPass(2.5 * flops,
                         keys,
                         causal,
                         headDim,
                         kAttentionBackwardTileCost,
                         attentionEfficiencyBackward(),
                         k ? k->backwardHead64 : 0);
}

double ComputeModel::memory(double bytes) const
{
    return bytes / hbmRate();
}

double ComputeModel::memoryAtPeakShare(double bytes, double share) const
{
    return bytes / (m_gpu.hbmTBPerS * 1e12 * share);
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

} // namespace railyard::engine
