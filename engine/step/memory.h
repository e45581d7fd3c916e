#pragma once

#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"

#include <vector>

namespace railyard::engine {

struct MemoryBreakdown
{
    double weightsGiB = 0;
    double fp8WeightCopiesGiB = 0; // of weightsGiB: FP8 copies kept through the step
    double gradientsGiB = 0;
    double optimizerGiB = 0;
    double activationsGiB = 0;
    double otherGiB = 0; // workspace, communication buffers, fragmentation
    double totalGiB() const
    {
        return weightsGiB + gradientsGiB + optimizerGiB + activationsGiB + otherGiB;
    }
};

// What one GPU of each pipeline stage holds during a training step.
struct MemoryShape
{
    int tp = 1, cp = 1, pp = 1, vp = 1, dp = 1, ep = 1, etp = 1;
    bool sequenceParallel = false;
    int microBatches = 1;               // per data-parallel replica and step
    double optimizerBytesPerParam = 12; // FP32 master weights and Adam moments (the stack's)
    // FSDP with PP where the stack keeps each stage's parameters unsharded through the step
    // and accumulates its gradients unsharded (StackProfile::fsdpPipelineHoldsUnsharded).
    bool fsdpHoldsUnsharded = false;
    // Selective recomputation keeps every other matmul's output and the attention kernel's
    // (StackProfile::selectiveEveryOtherMatmul); dense layers only.
    bool selectiveEveryOtherMatmul = false;
    double lossBytesPerLogit = 8; // the loss's peak bytes per logit (the stack's)
    // Layers whose activations wait in host memory (offloadedLayers(), step/offload.h): the
    // GPU holds offloadResidentLayers() layers' at once instead of all of them.
    int offloadLayers = 0;
    // The linear layers' inputs kept for backward in FP8 (StackProfile::fp8SavesLinearInputs,
    // training in FP8 on FP8 tensor cores).
    bool fp8LinearInputs = false;
    // Bytes per parameter of the FP8 weight copies kept through the step
    // (StackProfile::fp8WeightCache): 0 or 1.
    double fp8WeightCacheBytes = 0;
    std::vector<int> stageDense; // dense layers per stage
    std::vector<int> stageMoe;   // MoE layers per stage
};

// The parts of `shape` the software stack sets for a step trained as `training` says on `gpu`
// (optimizer bytes, FSDP under PP, selective policy, loss, FP8 copies): one place for the
// evaluation and the planner.
void setStackMemory(MemoryShape &shape,
                    const StackProfile &stack,
                    const TrainingConfig &training,
                    const GpuSpec &gpu);

// Activation bytes one layer keeps for backward, per micro-batch (Korthikanti et al. 2022,
// generalised; see memory.cpp).
double layerActivationBytes(const ModelDims &model,
                            const TrainingConfig &training,
                            const MemoryShape &shape,
                            bool moeLayer);
// One layer's activation bytes per micro-batch, dense and MoE, as kept for backward and as
// rebuilt at once when a fully recomputed layer runs again: the same for every stage, so
// computed once per configuration.
struct LayerActivations
{
    double dense = 0, moe = 0;         // kept (the training's recompute setting)
    double denseFull = 0, moeFull = 0; // without recomputation
};
LayerActivations layerActivations(const ModelDims &model,
                                  const TrainingConfig &training,
                                  const MemoryShape &shape);
// What one GPU of pipeline stage `stage` (with `dense` and `moe` layers) holds. Reads `shape`'s
// sizes, not its per-stage vectors.
MemoryBreakdown stageMemoryAt(const ModelDims &model,
                              const TrainingConfig &training,
                              const MemoryShape &shape,
                              const LayerActivations &activations,
                              int stage,
                              double dense,
                              double moe);

// Micro-batches whose activations a stage holds at its peak (fractional with interleaving:
// model chunks of 1/VP of the stage).
double inFlightMicroBatches(const MemoryShape &shape, int stage);

// Bytes per GPU for each pipeline stage, in GiB.
std::vector<MemoryBreakdown> stageMemory(const ModelDims &model,
                                         const TrainingConfig &training,
                                         const MemoryShape &shape);

// The HBM a program can use, in GiB.
double usableHbmGiB(const GpuSpec &gpu);

} // namespace railyard::engine
