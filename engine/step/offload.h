#pragma once

#include "layout/layout.h"

#include <vector>

namespace railyard::engine {

// Activation offload to host memory, as Transformer Engine runs it (transformer_engine/pytorch/
// cpu_offload.py at v2.8-2.9, which Megatron-Bridge 0.2 pins) under Megatron-Core's
// `cpu_offloading_num_layers` (megatron/core/transformer/transformer_block.py, core_r0.15):
// - The first K layers of the model keep their saved activations in pinned host memory: each
//   layer's are copied out (device to host, copy engines, no SMs) after its forward and back
//   in before its backward. Megatron-Core refuses it with pipeline parallelism or with
//   recomputation (transformer_config.py), so it applies only without either.
// - TE spreads the K copies over the N layers of the forward (`layer_window_map`): group c's
//   copy may run until the end of layer window[c], where the compute waits for it, frees the
//   layer's memory and starts the next group's copy. One copy is in flight at a time.
// - The backward runs the same chain in reverse: group j is reloaded from the start of layer
//   window[j]'s backward and waited for where the next reload starts (window[j - 1], or before
//   layer 0's backward). A reloaded group stays on the GPU until its layer's backward.
// So each copy hides behind the compute of its window's layers; what it takes beyond them, the
// step waits.

// The layers whose activations go to the host: `training`'s cpu_offload_layers where it can
// apply (no pipeline parallelism, no recomputation), at most the stage's layers less one; 0
// otherwise.
int offloadedLayers(const TrainingConfig &training, int pp, int layers);

// TE's layer_window_map for `offloaded` (K) of `layers` (N) layers: window[c], the layer at
// whose end group c's copy must be done.
std::vector<int> offloadWindows(int layers, int offloaded);

// The most layers' activations the GPU holds at once (forward and backward, one micro-batch),
// against `layers` without offload: the layers kept, and the reloaded groups waiting for their
// backward.
double offloadResidentLayers(int layers, int offloaded);

// What the compute waits for the copies in one micro-batch, in seconds: copies of `d2hS` each
// (forward) and `h2dS` (backward) against windows of layers of `layerForwardS` and
// `layerBackwardS`.
struct OffloadStall
{
    double forwardS = 0, backwardS = 0;
    double totalS() const { return forwardS + backwardS; }
};
OffloadStall offloadStall(int layers,
                          int offloaded,
                          double d2hS,
                          double h2dS,
                          double layerForwardS,
                          double layerBackwardS);

} // namespace railyard::engine
