#include "serving/servingcompute.h"

#include "serving/servingmemory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace railyard::engine {

LayerCost &LayerCost::operator+=(const LayerCost &o)
{
    compute += o.compute;
    weightsRead += o.weightsRead;
    attention += o.attention;
    expertCompute += o.expertCompute;
    weightBytes += o.weightBytes;
    kvBytes += o.kvBytes;
    kernels += o.kernels;
    return *this;
}

LayerCost LayerCost::scaled(double f) const
{
    LayerCost c = *this;
    c.compute *= f;
    c.weightsRead *= f;
    c.attention *= f;
    c.expertCompute *= f;
    c.weightBytes *= f;
    c.kvBytes *= f;
    c.kernels = static_cast<int>(std::lround(c.kernels * f));
    return c;
}

LayerCost LayerCost::stretched(double f) const
{
    LayerCost c = *this;
    c.compute *= f;
    c.weightsRead *= f;
    c.attention *= f;
    c.expertCompute *= f;
    return c;
}

namespace {

// `groups` GEMMs of cost `g` each in one grouped kernel, the kernel's fixed time apart.
double groupedBodyS(const ComputeModel &cm, const ComputeModel::GemmCost &g, double groups)
{
    return groups * (g.totalS - cm.inferenceKernelS());
}

// Adds one GEMM (m x k).(k x n), the (k x n) operand the weights, to `c`: to weightsRead when
// reading it from HBM bounds it, else to compute. `groups` > 1: that many such GEMMs in one
// grouped kernel (MoE experts), which pays one kernel's fixed time, not one per group.
// `experts`: the MoE experts' grouped GEMMs, whose activations arrive quantized from the
// dispatch and the activation kernel; any other low-precision GEMM of a block-scaled FP8
// checkpoint first quantizes its activations in a kernel of its own (activationQuantS).
double addGemm(LayerCost &c,
               const ComputeModel &cm,
               double m,
               double n,
               double k,
               bool low = true,
               double groups = 1,
               bool experts = false)
{
    if (m <= 0 || n <= 0 || k <= 0 || groups <= 0)
        return 0;
    ComputeModel::GemmCost g = cm.gemmCost(m, n, k, low, ComputeModel::Use::Inference);
    double t = groupedBodyS(cm, g, groups) + cm.inferenceKernelS();
    if (low && experts && cm.kernels().expertPromotionExposed) {
        g.computeS *= kExposedPromotionFactor;
        t = groups * std::max(g.computeS, g.memoryS) + cm.inferenceKernelS();
    }
    (g.memoryBound() ? c.weightsRead : c.compute) += t;
    c.weightBytes += groups * n * k * (low ? cm.weightBytes() : 2.0);
    ++c.kernels;
    if (low && !experts && cm.kernels().blockScaledActivations) {
        c.compute += activationQuantS(cm, m, k);
        ++c.kernels;
    }
    return t;
}

void attentionProjections(const ModelDims &m,
                          const ServingPoolShape &p,
                          const PassShape &s,
                          const ComputeModel &cm,
                          bool low,
                          LayerCost &c)
{
    // The projections' GEMMs, at the attention's precision.
    const auto project = [&](double rows, double n, double k) { addGemm(c, cm, rows, n, k, low); };
    const double h = m.hidden;
    const double T = s.tokens;
    const double heads = double(m.heads) / p.attentionTp();
    const double vDim = m.valueHeadDim();
    if (m.isMla()) {
        const double qkDim = m.headDim + m.qkRopeDim;
        if (m.qLoraRank > 0) {
            project(T, m.qLoraRank, h);
            project(T, heads * qkDim, m.qLoraRank);
        } else {
            project(T, heads * qkDim, h);
        }
        project(T, m.kvLoraRank + m.qkRopeDim, h);
        if (s.decode) {
            // Absorbed (weights of kv_b folded into the query and the output): the latent is
            // attended directly, never decompressed.
            project(T, heads * m.kvLoraRank, m.headDim);
            project(T, heads * vDim, m.kvLoraRank);
        } else {
            // Prefill decompresses K and V of the chunk and of the cached prefix it attends.
            project(T + s.prefixTokens, heads * (m.headDim + vDim), m.kvLoraRank);
        }
        project(T, h, heads * vDim);
        return;
    }
    const double kvHeads = std::max(1.0, std::ceil(double(m.kvHeads) / p.attentionTp()));
    project(T, (heads + 2.0 * kvHeads) * m.headDim, h);
    project(T, h, heads * m.headDim);
}

void coreAttention(const ModelDims &m,
                   bool sliding,
                   const ServingPoolShape &p,
                   const PassShape &s,
                   const ComputeModel &cm,
                   Precision kv,
                   LayerCost &c)
{
    const double heads = double(m.heads) / p.attentionTp();
    const double perToken = kvBytesPerTokenPerLayer(m, p.attentionTp(), kv);
    double flops = 0, bytes = 0;
    double keys = 0; // keys each query tile sweeps
    if (s.decode) {
        const double context = sliding ? s.contextSliding : s.context;
        const double queries = s.requests > 0 ? s.tokens / s.requests : 0;
        // Per query, key and head: QK^T and AV; MLA attends the latent (kv_lora_rank + rope for
        // the scores, kv_lora_rank for the values).
        const double perKey = m.isMla() ? 2.0 * (2.0 * m.kvLoraRank + m.qkRopeDim)
                                        : 2.0 * (m.headDim + m.valueHeadDim());
        flops = s.requests * queries * context * heads * perKey;
        keys = context;
        bytes = s.requests * context * perToken;
    } else {
        const double pairs = sliding ? s.keyPairsSliding : s.keyPairs;
        flops = 2.0 * heads * pairs * (m.headDim + m.qkRopeDim + m.valueHeadDim());
        keys = s.tokens > 0 ? pairs / s.tokens : 0;
        bytes = s.prefixTokens * perToken;
    }
    if (flops <= 0 && bytes <= 0)
        return;
    // Decode attention splits each request's keys over the SMs and merges the partial results
    // in a second kernel (FlashMLA's split-KV and combine kernels, FlashInfer's merge of
    // states); prefill runs one kernel. Each pays a small kernel's time in a CUDA graph.
    const int kernels = s.decode ? 2 : 1;
    c.attention += std::max(cm.attentionForward(flops, keys, !s.decode, m.headDim + m.qkRopeDim)
                                    - ComputeModel::kKernelLaunchS,
                            cm.memory(bytes))
                   + kernels * cm.inferenceKernelS();
    c.kvBytes += bytes;
    c.kernels += kernels;
}

void mlp(const ModelDims &m, double width, int tp, double T, const ComputeModel &cm, LayerCost &c)
{
    const double w = width / tp;
    addGemm(c, cm, T, m.gatedMlp ? 2 * w : w, m.hidden);
    addGemm(c, cm, T, m.hidden, w);
}

} // namespace

LayerCost servingExpertCost(const ModelDims &m,
                            const ServingPoolShape &p,
                            const PassShape &s,
                            const ComputeModel &cm,
                            bool balanced)
{
    LayerCost c;
    const double h = m.hidden;
    // Router (BF16), on this GPU's tokens.
    addGemm(c, cm, s.tokens, m.experts, h, false);
    // The routed copies spread over the EP ranks; each rank's experts that get any, each on
    // its own copies (expert TP splits their width). An EP size that does not divide the
    // experts leaves some GPUs one more (the slowest), and the busiest rank of the step
    // receives more copies than the mean (expertLoadImbalance): the step waits for it.
    const double local = std::ceil(double(m.experts) / p.ep);
    const double mean = s.routedCopies * local / m.experts;
    const double copies = balanced ? mean : mean * expertLoadImbalance(mean, p.ep);
    const double busiest = s.routedCopies * (mean > 0 ? copies / mean : 1.0);
    const double active = local * activeExpertShare(m, busiest / std::max(1, m.topK));
    if (copies > 0 && active > 0) {
        const double perExpert = copies / active;
        const double w = double(m.expertFfn) / p.etp();
        // One grouped GEMM per projection over the active experts.
        LayerCost all;
        addGemm(all, cm, perExpert, m.gatedMlp ? 2 * w : w, h, true, active, true);
        addGemm(all, cm, perExpert, h, w, true, active, true);
        c.expertCompute += all.compute + all.weightsRead;
        c += all;
        // The routing kernels around the grouped GEMMs: top-k selection, permuting the copies
        // in (with their expert offsets), the activation, and un-permuting and weighting them
        // out; each a kernel with its launch and tail even when it moves a few bytes.
        constexpr int kRoutingKernels = 4;
        c.compute += cm.memory(copies * h * 2.0 * 4.0 + copies * w * 2.0 * 3.0)
                     + kRoutingKernels * cm.inferenceKernelS();
        c.kernels += kRoutingKernels;
    }
    if (m.sharedExperts > 0)
        mlp(m, double(m.expertFfn) * m.sharedExperts, p.mlpTp(), s.tokens, cm, c);
    return c;
}

double activationQuantS(const ComputeModel &cm, double m, double k)
{
    if (m <= 0 || k <= 0)
        return 0;
    // Reads the BF16 activations, writes them in FP8 with one FP32 scale per 128 values.
    return cm.memory(m * k * (2.0 + 1.0) + m * std::ceil(k / 128.0) * 4.0) + cm.inferenceKernelS();
}

double groupedGemmBodyS(const ComputeModel &cm, double groups, double m, double n, double k, bool low)
{
    if (m <= 0 || n <= 0 || k <= 0 || groups <= 0)
        return 0;
    return groupedBodyS(cm, cm.gemmCost(m, n, k, low, ComputeModel::Use::Inference), groups);
}

namespace {

// The expected maximum of `n` standard normal draws: Blom's approximation,
// Phi^-1((n - 0.375) / (n + 0.25)), by Newton's method on the normal CDF from the tail's
// asymptote sqrt(2 ln n).
double expectedMaxOfNormals(double n)
{
    const double q = (n - 0.375) / (n + 0.25);
    double z = std::sqrt(2.0 * std::log(n));
    for (int i = 0; i < 8; ++i) {
        const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
        const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
        z -= (cdf - q) / pdf;
    }
    return z;
}

} // namespace

double expertLoadImbalance(double copiesPerRank, int ep)
{
    if (ep <= 1 || copiesPerRank <= 0)
        return 1.0;
    // A rank's routed copies in one step vary around their mean with variance
    // kRoutingDispersion x mean (a token's top-k land on a rank together more often than
    // independent picks would: DeepSeek's node-limited routing); the busiest of `ep` ranks
    // sits the expected maximum of `ep` normal draws above the mean. It cannot take more than
    // every copy of the step. The maxima are tabled once (the planner prices many layouts).
    constexpr int kTabled = 1024;
    static const std::array<double, kTabled + 1> maxima = [] {
        std::array<double, kTabled + 1> t{};
        for (int n = 2; n <= kTabled; ++n)
            t[static_cast<std::size_t>(n)] = expectedMaxOfNormals(n);
        return t;
    }();
    const double z = ep <= kTabled ? maxima[static_cast<std::size_t>(ep)]
                                   : expectedMaxOfNormals(ep);
    const double f = 1.0 + z * std::sqrt(kRoutingDispersion / copiesPerRank);
    return std::min(f, double(ep));
}

double activeExpertShare(const ModelDims &m, double tokens)
{
    if (m.experts <= 0 || tokens <= 0)
        return 0;
    const double notPicked = 1.0 - double(m.topK) / m.experts;
    return 1.0 - std::pow(std::max(0.0, notPicked), tokens);
}

LayerCost servingLayerCost(const ModelDims &m,
                           bool moe,
                           bool sliding,
                           const ServingPoolShape &p,
                           const PassShape &s,
                           const ComputeModel &cm,
                           Precision weights,
                           Precision kv)
{
    LayerCost c;
    if (s.tokens <= 0)
        return c;
    attentionProjections(m, p, s, cm, attentionPrecision(m, weights) == weights, c);
    coreAttention(m, sliding, p, s, cm, kv, c);
    if (moe)
        c += servingExpertCost(m, p, s, cm);
    else
        mlp(m, m.ffn, p.mlpTp(), s.tokens, cm, c);
    // Element-wise: two norms, the residual adds, rotary embedding and the KV-cache write, the
    // activation function, activation quantization: about ten passes over the hidden state.
    const double elementBytes = s.tokens * m.hidden * 2.0 * 10.0;
    constexpr int kElementKernels = 6;
    c.compute += cm.memory(elementBytes) + kElementKernels * cm.inferenceKernelS();
    c.kernels += kElementKernels;
    return c;
}

LayerCost servingOutputCost(const ModelDims &m,
                            const ServingPoolShape &p,
                            double tokens,
                            const ComputeModel &cm)
{
    LayerCost c;
    if (tokens <= 0)
        return c;
    addGemm(c, cm, tokens, double(m.vocab) / p.mlpTp(), m.hidden, false);
    // Final norm; softmax and sampling over the vocabulary shard in FP32.
    c.compute += cm.memory(tokens * m.hidden * 4.0
                           + tokens * double(m.vocab) / p.mlpTp() * 4.0 * 3.0)
                 + 3 * cm.inferenceKernelS();
    c.kernels += 3;
    return c;
}

} // namespace railyard::engine
