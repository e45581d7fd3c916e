#include "serving/servingmemory.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// One layer's attention weights on one GPU at attention TP `atp`, in values.
double attentionValues(const ModelDims &m, int atp)
{
    const double h = m.hidden;
    const double heads = double(m.heads) / atp;
    if (m.isMla()) {
        const double qkHead = m.headDim + m.qkRopeDim;
        // The down-projections (q_a, kv_a) are replicated on every TP rank; the
        // up-projections and the output are split by heads.
        const double replicated = (m.qLoraRank > 0 ? h * m.qLoraRank : 0)
                                  + h * (m.kvLoraRank + m.qkRopeDim);
        const double q = m.qLoraRank > 0 ? double(m.qLoraRank) * heads * qkHead
                                         : h * heads * qkHead;
        const double kv = double(m.kvLoraRank) * heads * (m.headDim + m.valueHeadDim());
        const double o = heads * m.valueHeadDim() * h;
        return replicated + q + kv + o;
    }
    const double kvHeads = std::max(1.0, double(m.kvHeads) / atp);
    return h * heads * m.headDim + 2.0 * h * kvHeads * m.headDim + heads * m.headDim * h;
}

} // namespace

Precision attentionPrecision(const ModelDims &m, Precision precision)
{
    return precision == Precision::Fp4 && m.isMla() ? Precision::Bf16 : precision;
}

double kvBytesPerTokenPerLayer(const ModelDims &m, int attentionTp, Precision kv)
{
    const double b = bytesPerValue(kv);
    if (m.isMla())
        return (m.kvLoraRank + m.qkRopeDim) * b;
    const double kvHeads = std::max(1.0, std::ceil(double(m.kvHeads) / attentionTp));
    return 2.0 * kvHeads * m.headDim * b;
}

double kvBytesPerTokenModel(const ModelDims &m, Precision kv)
{
    return kvBytesPerTokenPerLayer(m, 1, kv) * m.layers;
}

double cachedTokens(double tokens, bool sliding, const ModelDims &m, int blockTokens)
{
    double t = sliding && m.slidingWindow > 0 ? std::min(tokens, double(m.slidingWindow)) : tokens;
    if (blockTokens > 1)
        t = std::ceil(t / blockTokens) * blockTokens;
    return t;
}

double stageWeightBytes(const ModelDims &m,
                        const ServingPoolShape &p,
                        Precision precision,
                        int stage)
{
    const StageLayers s = stageLayers(m, p.pp, stage);
    const double wb = bytesPerValue(precision);
    double bytes = attentionValues(m, p.attentionTp()) * s.count
                   * bytesPerValue(attentionPrecision(m, precision));
    double values = m.mlpParamsPerLayer(m.ffn) / p.mlpTp() * s.dense;
    if (m.isMoe()) {
        // Experts split EP x expert-TP = TP ways; an EP size that does not divide them leaves
        // some GPUs one more.
        const double routed = m.mlpParamsPerLayer(m.expertFfn) * std::ceil(double(m.experts) / p.ep)
                              / p.etp();
        const double shared = m.mlpParamsPerLayer(m.expertFfn) * m.sharedExperts / p.mlpTp();
        values += (routed + shared) * s.moe;
    }
    bytes += values * wb;
    // Router, embedding and output layer stay in BF16 (vocab-parallel).
    if (m.isMoe())
        bytes += double(m.hidden) * m.experts * 2.0 * s.moe;
    const double vocabShard = double(m.vocab) * m.hidden / p.mlpTp() * 2.0;
    if (stage == 0)
        bytes += vocabShard;
    if (stage == p.pp - 1)
        bytes += vocabShard;
    return bytes;
}

double activationBytes(const ModelDims &m,
                       const ServingPoolShape &p,
                       double tokens,
                       double logitTokens)
{
    const double h = m.hidden;
    const double qkv = (double(m.heads) * (m.headDim + m.qkRopeDim)
                        + 2.0 * std::max(1, m.kvHeads) * m.headDim)
                       / p.attentionTp();
    double mlp = m.denseLayers() > 0 ? 2.0 * m.ffn / p.mlpTp() : 0;
    if (m.isMoe()) {
        // The routed token copies this GPU's experts receive per token of its own (every
        // attention-DP rank's tokens are routed over the EP group), each with its input and
        // its up-projection, and the shared experts.
        const double copies = double(m.topK) * p.attentionDp / p.ep;
        mlp = std::max(mlp,
                       copies * (2.0 * m.expertFfn / p.etp() + h)
                               + 2.0 * m.sharedExperts * m.expertFfn / p.mlpTp());
    }
    // Residual stream, norm output, attention output and MLP output in BF16, the QKV and MLP
    // intermediates, and FP32 logits of the sampled tokens.
    return tokens * (8.0 * h + 2.0 * qkv + 2.0 * 1.5 * mlp)
           + logitTokens * double(m.vocab) / p.mlpTp() * 4.0;
}

ServingMemory servingMemory(const ServingSetup &setup,
                            const ServingPoolShape &p,
                            const GpuSpec &gpu,
                            double requestTokens,
                            double concurrency)
{
    const ModelDims &m = setup.model;
    const ServingStackProfile &stack = *setup.stack;
    ServingMemory out;
    out.hbmGiB = gpu.hbmUsableGiB;
    const double hbm = gpu.hbmUsableGiB * kGiB;
    const double draft = setup.config.speculative ? setup.config.speculative->draftTokens : 0;
    const double decodeTokens = std::max(1.0, concurrency) * (1.0 + draft) / p.attentionDp;
    const double passTokens = std::max(double(setup.config.maxPrefillTokens), decodeTokens);
    const double activations = activationBytes(m, p, passTokens, decodeTokens);
    out.activationsGiB = activations / kGiB;
    double worstWeights = 0;
    double leastRequests = -1;
    double worstRequestBytes = 0;
    for (int stage = 0; stage < p.pp; ++stage) {
        double weights = stageWeightBytes(m, p, setup.precision, stage);
        if (setup.draftModel && stage == p.pp - 1) {
            ServingPoolShape one = p;
            one.pp = 1;
            weights += stageWeightBytes(*setup.draftModel, one, setup.precision, 0);
        }
        const StageLayers s = stageLayers(m, p.pp, stage);
        const double perLayer = kvBytesPerTokenPerLayer(m, p.attentionTp(), setup.kvPrecision);
        const double request
                = perLayer
                  * ((s.count - s.sliding)
                             * cachedTokens(requestTokens, false, m, stack.kvBlockTokens)
                     + s.sliding * cachedTokens(requestTokens, true, m, stack.kvBlockTokens));
        const double budget = stack.fractionOfFree
                                      ? weights + activations
                                                + (hbm - weights - activations)
                                                          * stack.memoryFractionFor(p.tp)
                                      : hbm * stack.memoryFractionFor(p.tp);
        const double pool = std::max(0.0, budget - weights - activations);
        const double requests = request > 0 ? std::floor(pool / request) : 0;
        if (weights > worstWeights) {
            worstWeights = weights;
            out.budgetGiB = budget / kGiB;
        }
        if (leastRequests < 0 || requests < leastRequests) {
            leastRequests = requests;
            out.kvPoolGiB = pool / kGiB;
        }
        worstRequestBytes = std::max(worstRequestBytes, request);
    }
    out.weightsGiB = worstWeights / kGiB;
    out.kvBytesPerRequest = worstRequestBytes;
    // Each attention-DP rank group keeps its own requests' KV cache.
    out.maxConcurrency = static_cast<int>(
            std::min(1e9, std::max(0.0, leastRequests) * p.attentionDp));
    out.kvCacheGiB = std::min(concurrency, double(out.maxConcurrency)) / p.attentionDp
                     * worstRequestBytes / kGiB;
    return out;
}

} // namespace railyard::engine
