#pragma once

// What one GPU of a serving instance holds: the weights of its stage, the paged KV cache of its
// requests and the activations of the largest forward pass, within the share of HBM the stack
// takes; and the concurrency the KV cache holds.

#include "layout/catalog.h"
#include "serving/servingsetup.h"

namespace railyard::engine {

// The precision a model's attention projections are stored and multiplied in when the layout
// serves it at `precision`: the same, except that an MLA model's NVFP4 checkpoint keeps them in
// BF16 (NVIDIA's DeepSeek-R1 FP4 checkpoints quantize the MoE and dense MLPs only: "Compared to
// nvidia/DeepSeek-R1-0528-FP4, this checkpoint additionally quantizes the wo module in
// attention layers", huggingface.co/nvidia/DeepSeek-R1-0528-FP4-v2, "Description").
Precision attentionPrecision(const ModelDims &model, Precision precision);

// KV-cache bytes one token adds on one GPU of an attention group, per layer. MLA keeps one
// latent of kv_lora_rank + qk_rope_head_dim values per layer and token, whole on every
// attention-TP rank; GQA keeps K and V of the GPU's KV heads (one replicated head when the
// attention TP exceeds the KV heads).
double kvBytesPerTokenPerLayer(const ModelDims &model, int attentionTp, Precision kv);
// The KV bytes of the whole model per token, unsharded (what a disaggregated deployment sends
// once per token of a request): MLA's latent, GQA's K and V of every KV head, every layer.
double kvBytesPerTokenModel(const ModelDims &model, Precision kv);
// Tokens a layer caches for a request of `tokens`: all of them, or at most the window on a
// sliding-window layer, rounded up to whole pages of `blockTokens`.
double cachedTokens(double tokens, bool sliding, const ModelDims &model, int blockTokens);

struct ServingMemory
{
    double weightsGiB = 0;
    double activationsGiB = 0;
    double kvCacheGiB = 0;        // the KV cache of the requests in flight
    double kvPoolGiB = 0;         // what the stack sets aside for KV cache
    double budgetGiB = 0;         // the stack's share of HBM: weights + activations + KV pool
    double hbmGiB = 0;            // usable HBM
    double kvBytesPerRequest = 0; // on one GPU, at the request's full length (pages rounded)
    int maxConcurrency = 0;       // requests per replica the KV pool holds (0: none fits)
    double totalGiB() const { return weightsGiB + activationsGiB + kvCacheGiB; }
};

// Weight bytes on one GPU of pipeline stage `stage` of `pool`: linear layers in `precision`,
// embedding and output layer in BF16.
double stageWeightBytes(const ModelDims &model,
                        const ServingPoolShape &pool,
                        Precision precision,
                        int stage);
// Activation bytes of the largest forward pass on one GPU: `tokens` (the chunked-prefill
// budget, or the decode batch's tokens if larger) through one layer, and the logits of
// `logitTokens`.
double activationBytes(const ModelDims &model,
                       const ServingPoolShape &pool,
                       double tokens,
                       double logitTokens);

// The most loaded stage of `pool` serving requests of `requestTokens` (input + output) with
// `concurrency` in flight per replica (0: none; the weights and pool only).
ServingMemory servingMemory(const ServingSetup &setup,
                            const ServingPoolShape &pool,
                            const GpuSpec &gpu,
                            double requestTokens,
                            double concurrency);

} // namespace railyard::engine
