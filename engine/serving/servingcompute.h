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

// The expected share of a layer's experts that get at least one of `copies` routed token copies
// (each token picks top-k distinct experts of `experts`, balanced).
double activeExpertShare(const ModelDims &model, double tokens);

} // namespace railyard::engine
