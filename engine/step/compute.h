#pragma once

#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"

#include <array>

namespace railyard::engine {

// The kernels a software stack runs where there is a choice (StackProfile): which flash
// attention, and how its element-wise kernels (norms, activations, residual adds) compare with
// the fused ones the catalog's memory efficiency was measured on.
struct KernelChoice
{
    AttentionKernel attention = AttentionKernel::Cudnn; // a flash kernel (never Flash itself)
    double elementwiseForward = 1.0;
    double elementwiseBackward = 1.0;
    // GEMMs split their last partial wave along K (StackProfile::streamK).
    bool streamK = true;
    // Element-wise operations run as PyTorch's eager kernels, one per operation
    // (StackProfile::eagerElementwise without TrainingConfig::compile): priced by the bytes
    // each kernel moves, at the catalog's memory efficiency.
    bool eagerElementwise = false;
    // The model's operations beyond Llama's run as kernels of their own
    // (StackProfile::unfusedModelExtras).
    bool unfusedModelExtras = false;
    // Tensor-core work at the GPU's sustained training clock (GpuSpec::sustainedClock, or
    // sustainedClockFp8 when the GEMMs run in FP8 or FP4); false: at the clock of a short
    // kernel benchmark, as tests/data/kernels measured.
    bool sustainedClock = true;
    // Serving a block-scaled FP8 checkpoint: each FP8 GEMM's activations are quantized in 1 x 128
    // groups (one scale each) by a kernel of their own before it, as the stacks' per-token-group
    // quantization runs; the MoE experts' is fused into the dispatch and the activation kernel.
    bool blockScaledActivations = false;
    // ... and its MoE grouped GEMMs promote their accumulators after the MMA of every 128 of K
    // (ServingStackProfile::moePromotionExposed, on GPUs without block-scaled MMA).
    bool expertPromotionExposed = false;
};

// The kernels `stack` runs on `gpu` for a layout whose attention is `attention`; `compile`: the
// layout compiles the model (TrainingConfig::compile).
KernelChoice kernelChoice(const StackProfile &stack,
                          AttentionKernel attention,
                          const GpuSpec &gpu,
                          bool compile = true);

// How long a GPU takes for the pieces of a transformer layer: GEMMs at an achievable fraction of
// peak (lower when the tiles do not fill the last wave of SMs, or when the GEMM is memory bound),
// flash attention at its kernel's measured efficiency with per-tile costs, element-wise kernels
// at HBM bandwidth. The efficiencies are the catalog's, measured on kernels alone
// (tests/data/kernels).
class ComputeModel
{
public:
    // FP4 (serving): NVFP4 GEMMs where the GPU has FP4 tensor cores; elsewhere 4-bit weights
    // read from HBM and multiplied on the FP8 (or BF16) tensor cores.
    ComputeModel(const GpuSpec &gpu, Precision precision, const KernelChoice &kernels = {});
    void setKernels(const KernelChoice &kernels);
    const KernelChoice &kernels() const { return m_kernels; }

    // One GEMM of (m x k) . (k x n), in seconds. `fp8`: may run on FP8 tensor cores.
    double gemm(double m, double n, double k, bool fp8 = true) const;
    // The same GEMM's roofline: its compute-bound and memory-bound seconds (the larger, plus a
    // kernel's overhead, is gemm()'s time). The (k x n) operand is the weights.
    struct GemmCost
    {
        double computeS = 0;
        double memoryS = 0;
        double totalS = 0; // gemm()
        bool memoryBound() const { return memoryS >= computeS; }
    };
    // How a GEMM runs. Inference: too few output tiles to fill the SMs split their K loop over
    // several (split-K, as cuBLAS and CUTLASS run skinny GEMMs), and activations arrive
    // quantized from the kernel before (fused, as serving stacks do), with no cast kernel of
    // their own. Training keeps the tile-wave model and Transformer Engine's cast.
    enum class Use { Training, Inference };
    GemmCost gemmCost(double m, double n, double k, bool fp8 = true, Use use = Use::Training) const;
    // `groups` GEMMs of one shape in one grouped kernel (MoE experts): their tiles share the
    // waves over the SMs (split along K only while they do not fill them), one kernel's fixed
    // time. Seconds of compute and of memory summed over the groups.
    GemmCost gemmGroupedCost(double groups, double m, double n, double k, bool fp8, Use use) const;
    // Bytes per weight value of the low-precision GEMMs (2 in BF16).
    double weightBytes() const { return m_weightBytes; }
    // HBM bytes per second element-wise kernels and memory-bound GEMMs achieve.
    double hbmBytesPerS() const { return hbmRate(); }
    // Its backward: the data-gradient and weight-gradient GEMMs, each as large as the forward.
    double gemmBackward(double m, double n, double k, bool fp8 = true) const;
    // `groups` GEMMs of one shape in one grouped kernel (MoE experts, TE's GroupedLinear): the
    // tiles of every group share the waves over the SMs, each group rounds its rows up to whole
    // tiles, one launch.
    double gemmGrouped(double groups, double m, double n, double k, bool fp8 = true) const;
    double gemmGroupedBackward(double groups, double m, double n, double k, bool fp8 = true) const;
    // The GEMM kernel alone (no FP8 casts), as kernel benchmarks time it.
    double gemmKernel(double m, double n, double k, bool fp8) const;
    // Flash attention forward with `flops` of matmul work (after causal masking), in kernel calls
    // whose query tiles each sweep `keys` key rows; `causal`: the calls mask their diagonal (a
    // causal call wastes half its diagonal tile). Each query tile pays a fixed prologue and
    // epilogue (loading Q, the final rescale and store) worth kAttention*TileCost key blocks.
    // `headDim`: the query/key head dimension; below 128 the kernel runs at the catalog's
    // measured rate for 64 (attentionHeadFactor), at and above 128 at its own.
    double attentionForward(double flops, double keys, bool causal, double headDim = 128) const;
    double attentionBackward(double flops,
                             double keys,
                             bool causal,
                             double headDim = 128) const; // 2.5x the matmuls
    // Attention dropout inside the flash kernel (GPT-style models train with it: Megatron's
    // default 0.1) draws a random mask element by element, forward and again backward. The share
    // of the kernel's rate it keeps, measured on Blackwell (Dao-AILab/flash-attention#2597,
    // GB200, p = 0.125, cuDNN 9.24 beside FlashAttention-4: with dropout FlashAttention-4 holds
    // 75-85% of its forward rate and 60-70% of its backward, cuDNN's forward trades wins with it
    // and its backward runs 1.1-1.2x slower at head dimension 128); 1 on GPUs where it was not
    // measured (Hopper, Ampere).
    double attentionDropoutShare(bool backward) const;
    static constexpr double kDropoutForwardShare = 0.80;   // Blackwell: the middle of 75-85%
    static constexpr double kDropoutBackwardShare = 0.565; // 65% / 1.15 (cuDNN's backward)
    // Element-wise kernels moving `bytes` through HBM.
    double memory(double bytes) const;
    // A kernel moving `bytes` at `share` of HBM's peak (kernels measured against the peak).
    double memoryAtPeakShare(double bytes, double share) const;
    // ATen's torch.sum over a short outer dimension (2 to 8 partials, as PyTorch's
    // fused_matmul_reduce_scatter reduces its BF16 partials) reaches 23-43% of HBM's peak on
    // H100 ("ATen's reduce_kernel is instruction-bound: for a reduction of extent 2-8 it
    // executes roughly ten times the" instructions; a Triton kernel moving the same bytes
    // reaches 82-88%: pytorch/pytorch#191803). The middle of that range.
    static constexpr double kAtenOuterSumShare = 0.33;
    // The stack's element-wise kernels (norms, activations) moving `bytes`, forward / backward.
    double elementwiseForward(double bytes) const;
    double elementwiseBackward(double bytes) const;
    // A norm's backward (it also reduces the weight gradient over the tokens), at the GPU's
    // measured backward fraction of HBM.
    double normBackward(double bytes) const;

    // The launch and tail of one kernel (every kernel priced here pays it once).
    static constexpr double kKernelLaunchS = 1.5e-6;
    // The same for serving (Use::Inference): one small kernel replayed from a CUDA graph back
    // to back with the next (GpuSpec::graphKernelS, measured), H100's where not measured.
    static constexpr double kGraphKernelFallbackS = 5.7e-6;
    double inferenceKernelS() const
    {
        return m_gpu.graphKernelS > 0 ? m_gpu.graphKernelS : kGraphKernelFallbackS;
    }

    // cuBLAS's GEMMs on this GPU are persistent: one CTA per SM, each working through several
    // output tiles (Hopper and Blackwell, whose CTAs fill an SM's shared memory); false: many
    // CTAs in waves, several to an SM (Ampere). Beside a collective, whose kernels hold SMs,
    // a persistent GEMM's CTAs that find none wait for a second wave (pytorch/pytorch#143988,
    // PR #144974).
    bool persistentGemms() const { return m_persistentGemms; }
    double peakFlops() const { return m_peakGemm; } // the precision's dense peak
    double bf16Peak() const { return m_peakBf16; }
    // The resolved kernel's efficiencies (forward, backward) on long sequences.
    double attentionEfficiencyForward() const;
    double attentionEfficiencyBackward() const;
    // The rate at head dimension `d` against 128's, from the rate r measured at 64: a score
    // costs the matmuls' d plus the softmax's fixed c (in the same units), so the rate goes as
    // d / (d + c) and c = 128 (1 - r) / (2r - 1); 1 at and above 128, and where r is unknown.
    static double attentionHeadFactor(double r, double d);

private:
    // A flash-attention pass with `flops` of matmul work as kernel benchmarks time it: the
    // resolved kernel's efficiency, its per-tile cost (`tileCost` key blocks) and its rate at
    // head dimension `headDim` (`head64`: the rate measured at 64).
    double attentionPass(double flops,
                         double keys,
                         bool causal,
                         double headDim,
                         double tileCost,
                         double efficiency,
                         double head64) const;
    GemmCost gemmCore(double groups, double m, double n, double k, bool low, Use use) const;
    double hbmRate() const { return m_gpu.hbmTBPerS * 1e12 * m_gpu.memoryEfficiency; }
    double hbmRateBackward() const
    {
        const double e = m_gpu.memoryEfficiencyBackward > 0 ? m_gpu.memoryEfficiencyBackward
                                                            : m_gpu.memoryEfficiency;
        return m_gpu.hbmTBPerS * 1e12 * e;
    }
    double sustainedClock() const;

    const GpuSpec &m_gpu;
    KernelChoice m_kernels;
    double m_peakBf16 = 0;
    double m_peakGemm = 0;
    double m_effGemm = 0;
    double m_weightBytes = 2; // per value of the (k x n) operand in the low-precision GEMMs
    double m_actBytes = 2;    // per value of the (m x k) operand
    bool m_fp8 = false;       // the low-precision GEMMs run below BF16
    double m_clock = 1;       // the fraction of the benchmark clock tensor-core work runs at
    bool m_persistentGemms = false;
};

// The shape of the work one GPU does for one micro-batch of one layer.
struct LayerShard
{
    int tp = 1, cp = 1, ep = 1, etp = 1;
    bool sequenceParallel = true;
    int microBatch = 1;
    int seqLen = 4096;
    Recompute recompute = Recompute::Selective;
    // Selective recomputation: what runs again (RecomputeModule bits, Megatron's
    // --recompute-modules).
    unsigned recomputeModules = kDefaultRecomputeModules;
    // Full recomputation: the share of the layers that recompute (the others keep their
    // activations); the layer's times are the average.
    double recomputeShare = 1.0;
    AttentionKernel attention = AttentionKernel::Flash;
    // The busiest expert-parallel rank's routed tokens against its share (1: balanced).
    double expertImbalance = 1.0;
    // TP communication overlapped with the GEMMs beside it (Transformer Engine's userbuffers,
    // with sequence parallelism): each such GEMM runs as TP chunks of the tokens, each chunk's
    // GEMM beside the next chunk's transfer.
    bool tpOverlap = false;
    // With TP overlap, each forward reduce-scatter's partials are summed by a kernel of their
    // own after the pipeline (StackProfile::tpOverlapSeparateReduce).
    bool tpOverlapSeparateReduce = false;
    // Selective recomputation keeps every other matmul's output and recomputes the others and
    // the element-wise kernels (StackProfile::selectiveEveryOtherMatmul); dense layers only.
    bool selectiveEveryOtherMatmul = false;
    // The loss as one fused kernel over BF16 logits (StackProfile::fusedCrossEntropy).
    bool fusedCrossEntropy = false;
};

struct LayerTimes
{
    double forward = 0;          // seconds, one micro-batch
    double backward = 0;         // including recomputation
    double attentionForward = 0; // the core attention part of forward (CP overlaps with it)
    double tpGemmForward = 0;    // GEMM time next to TP collectives (what TP overlap can hide)
    // The forward GEMM time beside each of the layer's TP collectives, block by block: a
    // block's input projections beside its all-gather (even places), its output projection
    // beside its reduce-scatter (odd places). TP overlap hides each collective behind its own.
    static constexpr int kMaxTpOps = 6;
    std::array<double, kMaxTpOps> tpOpGemmForward{};
    int tpOps = 0;
    double expertForward = 0; // expert MLP time (what EP overlap can hide)
    double hardwareFlops = 0; // forward + backward + recompute, executed
    // Of forward and backward: the GEMMs' seconds (linear layers and experts, recomputed ones
    // included), which a collective running beside them slows on a GPU whose GEMM kernels are
    // persistent (ComputeModel::persistentGemms()).
    double gemm = 0;
    // Of forward and backward: the time the GPU waits for the host to launch its kernels
    // (step/hostlaunch.h; 0 where the GPU is the slower of the two).
    double hostWaitForward = 0;
    double hostWaitBackward = 0;
};

// One transformer layer (dense or MoE) for one micro-batch on one GPU.
LayerTimes layerTimes(const ModelDims &model,
                      bool moe,
                      const LayerShard &shard,
                      const ComputeModel &compute);
// The output layer and loss (last pipeline stage) for one micro-batch.
LayerTimes outputLayerTimes(const ModelDims &model,
                            const LayerShard &shard,
                            const ComputeModel &compute);

// Model FLOPs of one training step (forward + backward, no recompute), by the Megatron/NeMo
// convention of the reference throughput table (NeMo <= 25.07): full s^2 attention (not halved
// for causal masks), MoE counting the top-k and shared experts, logits included.
double modelFlopsPerStep(const ModelDims &model, double tokens, int seqLen);

} // namespace railyard::engine
