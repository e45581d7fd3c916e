#pragma once

#include "layout/catalog.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"

namespace railyard::engine {

// The host's side of an eager MoE layer. PyTorch launches each kernel from the CPU, which
// normally runs ahead of the GPU, so launching costs nothing. Two things break that in the
// MoE layers of Megatron-Core with Transformer Engine:
// - Dropless dispatchers (all-to-all, DeepEP, HybridEP) copy the tokens per expert to the host
//   and wait for them once per layer forward, just before the dispatch (token_dispatcher.py,
//   `d2h_event.synchronize()`; DeepEP's and HybridEP's buffers size themselves on the host
//   too). The wait drains the GPU's queue: what the host launches after it, the GPU runs no
//   sooner than the host launches it. The backward has no wait.
// - TE's GroupedLinear runs one cuBLASLt GEMM per local expert (multi-stream, each with its
//   descriptors and heuristic), and in FP8 quantizes each expert's activations by a kernel of
//   its own: tens of launches per layer for each expert, where the GPU's work per expert at
//   one micro-batch is a few microseconds.
// So a layer's forward takes max(GPU, host) before the wait plus max(GPU, host) after it, and
// its backward max(GPU, host).
struct MoeHostTime
{
    double beforeWaitS = 0; // host time launching the forward up to the dispatcher's wait
    double afterWaitS = 0;  // after it: dispatch, experts, combine
    double backwardS = 0;
    double localExperts = 1; // experts on each GPU, as priced (at least one)
    bool priced() const { return beforeWaitS + afterWaitS + backwardS > 0; }
};

// The host time of one MoE layer and micro-batch with `localExperts` experts on each GPU, as
// `stack` launches it on `gpu`'s host; `fp8`: the expert GEMMs run in FP8; `recomputed`: the
// share of the layers whose backward runs the forward again (full recomputation), its wait
// included (0: none, 1: every layer).
MoeHostTime moeHostTime(const StackProfile &stack,
                        const GpuSpec &gpu,
                        double localExperts,
                        bool fp8,
                        double recomputed);

// `moe` (one MoE layer's GPU times) at the host's pace: the expert GEMMs (expertForward) run
// after the wait, the rest of the forward before it. Sets hostWaitForward / Backward.
void applyMoeHostTime(LayerTimes &moe, const MoeHostTime &host);

// Both for `model`'s MoE layers trained as `training` says at expert parallelism `ep` on `gpu`
// (the evaluation and the planner price the same host): the host's time, applied to `moe`.
MoeHostTime applyMoeHost(LayerTimes &moe,
                         const StackProfile &stack,
                         const GpuSpec &gpu,
                         const ModelDims &model,
                         int ep,
                         Precision precision,
                         double recomputed); // moeHostTime()'s

} // namespace railyard::engine
