#include "layout/servingstack.h"

namespace railyard::engine {

namespace {

std::vector<ServingStackProfile> buildStacks()
{
    std::vector<ServingStackProfile> s;
    {
        ServingStackProfile p;
        p.id = "vllm";
        p.description = "vLLM V1 (0.10-0.11): decode steps from CUDA graphs up to batch 512, "
                        "chunked prefill, paged KV blocks of 16 tokens, 90% of GPU memory, "
                        "custom one-shot all-reduce over NVLink for up to 8 ranks, NCCL "
                        "all-to-all for MoE, KV cache sent after the prefill (NIXL connector)";
        // EngineArgs: gpu_memory_utilization 0.9, block_size 16 on CUDA
        // (docs.vllm.ai/en/latest/configuration/engine_args.html); CompilationConfig captures
        // batch sizes up to 512; device_communicators/custom_all_reduce.py: max_size 8 MiB,
        // world_size <= 8 with full NVLink peer access.
        p.memoryFraction = 0.9;
        p.kvBlockTokens = 16;
        p.cudaGraphMaxBatch = 512;
        p.customAllReduceMaxRanks = 8;
        p.customAllReduceMaxBytes = 8.0 * (1 << 20);
        s.push_back(p);
    }
    {
        ServingStackProfile p;
        p.id = "sglang";
        p.description = "SGLang (0.4-0.5): overlap (zero-overhead) scheduler, CUDA graphs up to "
                        "batch 512, token-granular KV pages, mem_fraction_static by TP size, "
                        "custom all-reduce for up to 8 ranks, DeepEP for wide expert "
                        "parallelism (--moe-a2a-backend deepep), KV cache sent after the prefill "
                        "(Mooncake / NIXL)";
        // srt/server_args.py: page_size 1; mem_fraction_static 0.88 / 0.87 (TP >= 2) / 0.85
        // (TP >= 4) / 0.81 (TP >= 8) / 0.79 (TP >= 16); on H100 and H200, cuda_graph_max_bs 512
        // for TP >= 4 (256 below); lmsys.org/blog/2024-12-04-sglang-v0-4 (zero-overhead batch
        // scheduler: no GPU idle time between decode steps in Nsight).
        p.memoryFraction = 0.88;
        p.memoryFractionByTp = {{2, 0.87}, {4, 0.85}, {8, 0.81}, {16, 0.79}};
        p.kvBlockTokens = 1;
        p.cudaGraphMaxBatch = 512;
        p.customAllReduceMaxRanks = 8;
        p.customAllReduceMaxBytes = 8.0 * (1 << 20);
        p.moeDispatcher = MoeDispatcher::DeepEP;
        s.push_back(p);
    }
    {
        ServingStackProfile p;
        p.id = "trtllm";
        p.description = "TensorRT-LLM (1.0, PyTorch backend): overlap scheduler, CUDA graphs, "
                        "KV blocks of 32 tokens in 90% of the memory left after the weights, "
                        "AllReduce strategy AUTO (one-shot / two-shot over NVLink, MNNVL across "
                        "a GB200 NVL72 rack), wide-EP all-to-all kernels, KV cache sent after "
                        "the context phase (UCX / NIXL)";
        // tensorrt_llm/llmapi/llm_args.py KvCacheConfig: tokens_per_block 32,
        // free_gpu_memory_fraction 0.9 (of the memory free after the weights);
        // nvidia.github.io/TensorRT-LLM .../overlap_scheduler (on by default).
        p.memoryFraction = 0.9;
        p.fractionOfFree = true;
        p.kvBlockTokens = 32;
        p.cudaGraphMaxBatch = 2048;
        p.customAllReduceMaxRanks = 72;
        p.customAllReduceMaxBytes = 8.0 * (1 << 20);
        p.moeDispatcher = MoeDispatcher::DeepEP;
        // AIConfigurator's TensorRT-LLM MoE tables (ai-dynamo/aiconfigurator @ 095f58a5,
        // systems/data/h200_sxm/moe/trtllm/1.3.0rc20, moe_torch_flow_cutlass fp8_block):
        // DeepSeek-V3's block-scaled MoE on H200 runs a CUTLASS grouped GEMM whose
        // accumulator promotion follows the MMA (tests/data/serving-parts/moe-grouped.csv).
        p.moePromotionExposed = true;
        s.push_back(p);
    }
    {
        ServingStackProfile p;
        p.id = "dynamo";
        p.description = "NVIDIA Dynamo (0.4-0.5) over TensorRT-LLM workers: disaggregated "
                        "prefill and decode pools, the KV cache moved by NIXL as the prefill "
                        "produces it, layer by layer; the workers' kernels and memory as trtllm";
        p.memoryFraction = 0.9;
        p.fractionOfFree = true;
        p.kvBlockTokens = 32;
        p.cudaGraphMaxBatch = 2048;
        p.customAllReduceMaxRanks = 72;
        p.customAllReduceMaxBytes = 8.0 * (1 << 20);
        p.moeDispatcher = MoeDispatcher::DeepEP;
        p.kvLayerwise = true;
        p.moePromotionExposed = true; // the TensorRT-LLM workers' MoE kernels
        s.push_back(p);
    }
    return s;
}

} // namespace

const std::vector<ServingStackProfile> &servingStackProfiles()
{
    static const std::vector<ServingStackProfile> stacks = buildStacks();
    return stacks;
}

const ServingStackProfile &genericServingStack()
{
    static const ServingStackProfile generic = [] {
        ServingStackProfile p;
        p.id = "";
        p.description = "generic: CUDA graphs, paged KV blocks of 16 tokens in 90% of memory, "
                        "one-shot all-reduce over NVLink for up to 8 ranks, NCCL all-to-all, KV "
                        "cache sent after the prefill";
        return p;
    }();
    return generic;
}

const ServingStackProfile *findServingStack(const std::string &id)
{
    if (id.empty())
        return &genericServingStack();
    for (const ServingStackProfile &p : servingStackProfiles())
        if (p.id == id)
            return &p;
    return nullptr;
}

std::string servingStackList()
{
    std::string s;
    for (const ServingStackProfile &p : servingStackProfiles())
        s += (s.empty() ? "" : ", ") + p.id;
    return s;
}

} // namespace railyard::engine
