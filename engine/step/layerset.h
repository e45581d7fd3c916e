#pragma once

#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"
#include "step/hostlaunch.h"

namespace railyard::engine {

// How one GPU's share of a layer is cut: what the evaluation reads from the layout and the
// planner from the configuration it tries.
struct ShardCut
{
    int tp = 1, cp = 1, ep = 1, etp = 1;
    bool sequenceParallel = true;
    int microBatch = 1;
    Recompute recompute = Recompute::Selective;
    // Of a full recomputation: the share of the layers that recompute (fullRecomputeShare()).
    double recomputeShare = 1.0;
};

// The layer shard `cut` makes of `training` under `stack` (the routing imbalance, TP overlap
// and the stack's recomputation rule come from them).
LayerShard layerShard(const TrainingConfig &training,
                      const StackProfile &stack,
                      const ShardCut &cut);

// One micro-batch's times of each kind of layer: a dense transformer layer, an MoE layer with
// its host's launches (step/hostlaunch.h), and the output layer.
struct LayerSet
{
    LayerTimes dense, moe, out;
    MoeHostTime moeHost;
};

// The evaluation and the planner price layers through this one function, so the two cannot
// drift apart.
LayerSet priceLayers(const ModelDims &model,
                     const TrainingConfig &training,
                     const StackProfile &stack,
                     const GpuSpec &gpu,
                     const ComputeModel &compute,
                     const ShardCut &cut);

} // namespace railyard::engine
