#pragma once

#include "layout/layout.h"

#include <string>
#include <utility>
#include <vector>

namespace railyard::engine {

// A named serving stack (`serving.stack` in the layout): what its kernels, scheduler and memory
// manager do by default, one set of constants per stack, each with its source. Keys the layout
// gives beside `stack` (cuda_graphs, moe_dispatcher) override the layout defaults; the
// engine-side constants come from here alone.
struct ServingStackProfile
{
    std::string id;          // "vllm"
    std::string description; // one line: the version and what sets it apart
    // Layout defaults.
    bool cudaGraphs = true; // decode steps replayed from captured CUDA graphs
    MoeDispatcher moeDispatcher = MoeDispatcher::AllToAll;
    // Memory. The share of the GPU's usable HBM the stack lets weights, activations and KV cache
    // take (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static); with
    // `fractionOfFree` the share of what is left after the weights (TensorRT-LLM's
    // free_gpu_memory_fraction), the rest of HBM being left for the framework.
    double memoryFraction = 0.9;
    bool fractionOfFree = false;
    // Where the share depends on the TP size (SGLang): {from TP, share}, ascending TP.
    std::vector<std::pair<int, double>> memoryFractionByTp;
    double memoryFractionFor(int tp) const
    {
        double f = memoryFraction;
        for (const auto &[from, share] : memoryFractionByTp)
            if (tp >= from)
                f = share;
        return f;
    }
    int kvBlockTokens = 16; // tokens per paged-KV block: a request's cache is whole blocks
    // The largest decode batch replayed from a CUDA graph; larger batches launch eagerly.
    int cudaGraphMaxBatch = 512;
    // A custom all-reduce inside one NVLink domain (one-shot: every rank reads every peer's
    // buffer over NVLink and reduces locally), used instead of NCCL where it is faster, for
    // groups of at most `customAllReduceMaxRanks` and messages up to `customAllReduceMaxBytes`
    // (0: NCCL only).
    int customAllReduceMaxRanks = 8;
    double customAllReduceMaxBytes = 8.0 * (1 << 20);
    // Scheduling: host time per decode step that the GPU waits for (0 with an overlap
    // scheduler that prepares step n+1 while step n runs).
    double stepOverheadS = 0;
    // Disaggregated serving: the KV cache leaves the prefill GPUs layer by layer while the
    // prefill runs (false: after it).
    bool kvLayerwise = false;
    // A block-scaled FP8 checkpoint's MoE on Hopper (no block-scaled MMA): the grouped GEMM
    // scales and adds its FP32 accumulators on the CUDA cores after every 128 of K. True: after
    // the MMA, not beside it (TensorRT-LLM's CUTLASS kernel); false: hidden behind the other
    // warpgroup's MMA (DeepGEMM, which SGLang and vLLM run).
    bool moePromotionExposed = false;
};

// Known stacks, in documentation order.
const std::vector<ServingStackProfile> &servingStackProfiles();
// The profile for `id`; nullptr when unknown. The empty id gives the engine's generic stack.
const ServingStackProfile *findServingStack(const std::string &id);
const ServingStackProfile &genericServingStack();
std::string servingStackList(); // "vllm, sglang, trtllm, dynamo" for messages

// Host time per kernel launched outside a CUDA graph (PyTorch eager dispatch and
// cudaLaunchKernel). A decode step of Llama 3.1 8B on one H100 takes 8.4 ms eager and 5.1 ms
// from a CUDA graph (cloudai.pt, "CUDA Graphs + torch.compile: 1.65x LLM Decode Speedup"):
// 3.3 ms over 32 layers of about 14 kernels, about 7 us a kernel, within the 5-25 us of
// CPU-side dispatch per operator usually quoted for PyTorch.
inline constexpr double kEagerLaunchS = 7e-6;

} // namespace railyard::engine
