#pragma once

// One forward pass through one layer on one GPU of a serving instance, for a prefill chunk or a
// decode batch: every GEMM through the compute model's roofline (memory-bound when its weights
// take longer to read from HBM than to multiply), attention over the cached keys (causal, GQA,
// MLA, sliding window), element-wise kernels at HBM bandwidth.

#include "serving/servingsetup.h"
#include "step/compute.h"

namespace railyard::engine {

// What the pass runs on one GPU.
struct PassShape
{
    bool decode = false;
    // Query tokens of this GPU's attention group (the M of the attention and dense GEMMs).
    double tokens = 0;
    // Token copies the EP group's experts receive from every attention-DP rank, top-k included.
    double routedCopies = 0;
    // Prefill: keys the queries attend to, summed over the query tokens (causal), for a full
    // and for a sliding-window layer; the prefix tokens already cached (read back, and for MLA
    // decompressed).
    double keyPairs = 0, keyPairsSliding = 0;
    double prefixTokens = 0;
    // Decode: the requests, and the cached tokens each reads on a full and a sliding layer.
    double requests = 0;
    double context = 0, contextSliding = 0;
};

// Seconds on one GPU, by what bounds them.
struct LayerCost
{
    double compute = 0;       // compute-bound GEMMs and element-wise kernels
    double weightsRead = 0;   // memory-bound GEMMs: their weights (and activations) through HBM
    double attention = 0;     // core attention: the KV cache read or the score matmuls
    double expertCompute = 0; // the routed experts' part of compute + weightsRead
    double weightBytes = 0;   // weights read from HBM
    double kvBytes = 0;       // KV cache read
    int kernels = 0;          // kernels launched
    double total() const { return compute + weightsRead + attention; }
    LayerCost &operator+=(const LayerCost &o);
    LayerCost scaled(double f) const;
    // The same work on a GPU whose kernels take `f` times as long (a straggler): the seconds
    // stretched, the bytes and kernels as they were.
    LayerCost stretched(double f) const;
};

// One layer (dense or MoE; sliding-window attention or full) of a model served at `weights`
// precision (attentionPrecision() for its attention projections).
LayerCost servingLayerCost(const ModelDims &model,
                           bool moe,
                           bool sliding,
                           const ServingPoolShape &pool,
                           const PassShape &pass,
                           const ComputeModel &compute,
                           Precision weights,
                           Precision kvPrecision);
// The output layer (vocab-parallel logits of `tokens` sampled positions, BF16) and sampling.
LayerCost servingOutputCost(const ModelDims &model,
                            const ServingPoolShape &pool,
                            double tokens,
                            const ComputeModel &compute);

// An MoE layer's router, routed experts (grouped GEMMs on the busiest EP rank's copies, the
// routing kernels around them) and shared experts. `balanced`: every rank gets the mean
// (a benchmark's balanced routing), no busiest rank.
LayerCost servingExpertCost(const ModelDims &model,
                            const ServingPoolShape &pool,
                            const PassShape &pass,
                            const ComputeModel &compute,
                            bool balanced = false);

// A block-scaled FP8 checkpoint's activation quantization before one GEMM of `m` rows and depth
// `k` (KernelChoice::blockScaledActivations): a small kernel's time in a CUDA graph and its bytes.
// AIConfigurator's TensorRT-LLM GEMM tables on H200 (ai-dynamo/aiconfigurator @ 095f58a5,
// systems/data/h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet, m = 1, n <= 1024): fp8_block
// 11.8 us at k = 7168 and 8.6 us at k = 4096 against BF16's 5.6 and 5.4 us, the difference about
// one more small kernel (graph_kernel_us 5.6).
double activationQuantS(const ComputeModel &compute, double m, double k);

// The FP32 accumulator promotion of a block-scaled FP8 GEMM on Hopper when it does not overlap
// the MMA: the factor on its tensor-core time. Per 128 of K an SM's tile of bm x bn outputs
// takes bm x bn x 128 / 4096 cycles of FP8 MMA (1979 TFLOPS dense over 132 SMs at 1.83 GHz:
// 4096 multiply-adds a cycle) and then, on 128 FP32 lanes, two operations per accumulator
// (the row and column scales' product, a fused multiply-add): bm x bn / 64 cycles, half the
// MMA's. AIConfigurator's H200 block-scaled CUTLASS MoE rows (tests/data/serving-parts/
// moe-grouped.csv) are 30-38% slower than the unpromoted model at 128-256 rows per expert.
inline constexpr double kExposedPromotionFactor = 1.0 + 2.0 * 4096.0 / (128.0 * 128.0);

// `groups` GEMMs (m x k).(k x n) in one grouped kernel (the MoE experts, each on its own `m`
// rows), the kernel's fixed time apart: each group priced as one inference GEMM (split along K
// to fill the SMs). tst_servingparts::groupedGemm checks it against DeepGEMM's grouped GEMM
// tables and AIConfigurator's MoE tables.
double groupedGemmBodyS(
        const ComputeModel &compute, double groups, double m, double n, double k, bool low);

// The busiest of `ep` expert-parallel ranks' routed copies in one step against the mean
// `copiesPerRank` (1 without EP). After EPLB a rank's copies vary with variance
// kRoutingDispersion x mean; the busiest sits the expected maximum of `ep` normal draws above.
double expertLoadImbalance(double copiesPerRank, int ep);
// Variance over mean of an EP rank's routed copies in one decode step after EPLB: TRT-LLM
// tech blog 4 ("Scaling Expert Parallelism in TensorRT-LLM", NVIDIA/TensorRT-LLM
// docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md, Table 1:
// DeepSeek-R1 on 32 GB200, EPLB with 9 slots per rank, 1024 copies per rank on average,
// standard deviation 52.0): 52.0^2 / 1024.
inline constexpr double kRoutingDispersion = 52.0 * 52.0 / 1024.0;

// The expected share of a layer's experts that get at least one of `copies` routed token copies
// (each token picks top-k distinct experts of `experts`, balanced).
double activeExpertShare(const ModelDims &model, double tokens);

} // namespace railyard::engine
