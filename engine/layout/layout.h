#pragma once

#include "base/jsonvalue.h"
#include "base/outputfile.h"
#include "layout/catalog.h"
#include "layout/faults.h"
#include "layout/servertemplate.h"
#include "layout/transformer.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// The largest cluster Railyard accepts. Beyond this a layout is refused with a message rather
// than risking a hang or an allocation that cannot succeed (the largest published runs are
// around 100k GPUs; this leaves headroom).
inline constexpr int kMaxGpus = 262144;
// Format 2 adds cluster.server (explicit devices and links); a layout without it is written as
// format 1, which every Railyard reads. Format 1 files read as format 2 without a server.
inline constexpr int kLayoutFormatVersion = 2;

// The product of parallel sizes, saturating at INT64_MAX: sizes read from a file can be up to
// kMaxGpus each, so four of them overflow 64 bits.
inline std::int64_t sizeProduct(std::initializer_list<std::int64_t> sizes)
{
    std::int64_t p = 1;
    for (const std::int64_t s : sizes)
        if (__builtin_mul_overflow(p, s, &p))
            return std::numeric_limits<std::int64_t>::max();
    return p;
}
// A sizeProduct for a message.
inline std::string sizeText(std::int64_t product)
{
    return product == std::numeric_limits<std::int64_t>::max() ? "more than 9.2e18"
                                                               : std::to_string(product);
}

enum class FabricKind { RailOptimized, SingleSwitch, ThreeTier };
// Number format of weights and GEMMs (and, for serving, of the KV cache). FP4 (NVFP4: 4-bit
// values with an FP8 scale per 16) is for serving only; training reads bf16 and fp8.
enum class Precision { Bf16, Fp8, Fp4 };
// Bytes one value takes in memory: 2, 1, or 0.5625 for NVFP4 (4 bits plus an 8-bit scale per
// block of 16; NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
// Inference", developer.nvidia.com/blog, 2025).
double bytesPerValue(Precision p);
enum class Recompute { None, Selective, Full };
// Megatron-Core's --recompute-modules: under selective recomputation, the parts of a layer that
// run again in backward instead of keeping their activations (a bit set; Megatron's default is
// core_attn alone). core_attn: the attention kernel; layernorm: the norms; moe_act: the experts'
// activation function; moe: the whole MoE layer (router, dispatch and combine, experts); mlp: a
// dense layer's MLP; mla_up_proj: MLA's up-projections; shared_experts: the shared experts.
enum RecomputeModule : unsigned {
    kRecomputeCoreAttn = 1u << 0,
    kRecomputeLayernorm = 1u << 1,
    kRecomputeMoeAct = 1u << 2,
    kRecomputeMoe = 1u << 3,
    kRecomputeMlp = 1u << 4,
    kRecomputeMlaUpProj = 1u << 5,
    kRecomputeSharedExperts = 1u << 6,
};
constexpr unsigned kDefaultRecomputeModules = kRecomputeCoreAttn;
// Megatron's names in order ("core_attn", "layernorm", ...) with their bits.
const std::vector<std::pair<std::string, unsigned>> &recomputeModuleNames();
// "core_attn+layernorm": the set's names joined by '+', "" for none.
std::string recomputeModulesText(unsigned modules);
// The attention kernel. Flash kernels are fused and never store the s x s scores: FlashAttention-2
// (Dao 2023, Ampere and later), FlashAttention-3 (Shah et al. 2024, Hopper), cuDNN's fused flash
// attention (what Transformer Engine runs on Hopper and Blackwell). `Flash` is the software
// stack's own choice for the GPU (StackProfile::flashKernel). `Materialized`: the scores written
// to HBM (Megatron and DeepSpeed before FlashAttention, 2021-2022).
// FlashAttention1: the flash-attn package's 1.x CUDA kernels; FlashAttentionTriton: its Triton
// implementation (flash_attn_triton.py), which llm-foundry runs as attn_impl "triton".
enum class AttentionKernel {
    Flash,
    Materialized,
    FlashAttention1,
    FlashAttentionTriton,
    FlashAttention2,
    FlashAttention3,
    Cudnn
};
// How MoE tokens reach their experts: NCCL all-to-all (one copy per routed expert), or a
// dispatcher that sends each token once per destination node and forwards it over NVLink
// (DeepEP, HybridEP).
enum class MoeDispatcher { AllToAll, DeepEP };

const char *toString(FabricKind kind);
const char *toString(Precision p);
const char *toString(Recompute r);
// "flash", "materialized", "fa1", "triton", "fa2", "fa3", "cudnn"
const char *toString(AttentionKernel a);
// The kernel named `name` (a toString value); false when none is.
bool attentionKernelFromString(const std::string &name, AttentionKernel &out);
const char *toString(MoeDispatcher d);
std::optional<Precision> precisionFromString(const std::string &s);

struct NicConfig
{
    double gbitPerS = 400;
    double perGpu = 1; // NICs per GPU: 1 on HGX H100; 0.5 where two GPUs share a NIC
    std::string model; // catalog id; empty: chosen by rate
    bool operator==(const NicConfig &) const = default;
};

struct FabricConfig
{
    FabricKind kind = FabricKind::RailOptimized;
    double oversubscription = 1.0; // leaf downlink : uplink bandwidth
    bool sharp = false;
    bool operator==(const FabricConfig &) const = default;
};

struct TuningConfig
{
    bool nvls = true;
    int qpsPerConnection = 1;         // NCCL_IB_QPS_PER_CONNECTION
    std::optional<double> efficiency; // overrides the catalog's per-link-kind fractions
    // Packets spread over all spine paths (InfiniBand adaptive routing). Without it, each
    // queue pair hashes to one path and flows can collide (ECMP). Absent: on for InfiniBand,
    // off for Ethernet.
    std::optional<bool> adaptiveRouting;
    bool operator==(const TuningConfig &) const = default;
};

struct ClusterConfig
{
    std::string gpu = "H100-SXM";
    int nodes = 1;
    int gpusPerNode = 8;
    int nvlinkDomain = 8;              // GPUs per NVLink domain: 8 for HGX, 72 for NVL72
    std::optional<int> serversPerRack; // default: 4 HGX servers, or one NVLink domain
    NicConfig nic;
    FabricConfig fabric;
    TuningConfig tuning;
    std::optional<double> pricePerGpuHour;
    // Format 2: every server's devices and links as written (absent: the generated shape).
    // With it, gpusPerNode, nvlinkDomain and nic.perGpu follow from its GPUs and NICs.
    std::optional<ServerTemplate> server;
    // What is down or degraded (DESIGN.md, "Failures and degradation"); empty: all healthy.
    std::vector<Fault> faults;

    int gpuCount() const { return nodes * gpusPerNode; }
    int nodesPerDomain() const { return nvlinkDomain / gpusPerNode; }
    int nicsPerNode() const;
    int domainCount() const { return gpuCount() / nvlinkDomain; }
    int effectiveServersPerRack() const;
    bool operator==(const ClusterConfig &) const = default;
};

struct OptimizerConfig
{
    bool distributed = true; // Megatron's distributed optimizer (ZeRO-1)
    int zeroStage = 1;       // 0..3
    bool fsdp = false;
    // Gradient buffers and their reduction in FP32 (Megatron-LM's default for BF16) rather than
    // BF16 (NeMo 2 recipes).
    bool gradReduceFp32 = false;
    // FP8 primary weights (Transformer Engine's fp8_model_init: NeMo's fp8_params, Megatron's
    // --fp8-param-gather): with FP8 training the sharded optimizer all-gathers the linear
    // layers' weights in FP8, one byte per parameter instead of two (the embedding, norms and
    // biases stay BF16).
    bool fp8ParamGather = false;
    // Parameters per data-parallel gradient bucket (one reduce-scatter / all-gather or
    // all-reduce each); 0: the stack's rule (dpBucketParams() in softwarestack.h).
    double bucketParams = 0;
    // Hybrid sharding (PyTorch FSDP's HYBRID_SHARD, torchtitan's dp_shard with dp_replicate):
    // ZeRO-3 / FSDP shards the weights, gradients and optimizer state over groups of this many
    // consecutive data-parallel ranks (DP x CP, CP fastest) and replicates them across the
    // groups, whose gradient shards are all-reduced once a unit is reduce-scattered. 0: over
    // every data-parallel rank.
    int shardGroup = 0;
    bool operator==(const OptimizerConfig &) const = default;
};
// Whether the weights are sharded too (FSDP, or ZeRO stage 3), not only the optimizer state.
inline bool shardsWeights(const OptimizerConfig &o)
{
    return o.fsdp || o.zeroStage >= 3;
}
// The ranks ZeRO-3 / FSDP shards over when `dataRanks` (DP x CP) hold the same weights: the
// shard group where hybrid sharding divides them, else all of them.
int zeroShardRanks(const OptimizerConfig &o, int dataRanks);

struct OverlapConfig
{
    bool dp = true;
    bool tp = false;
    bool pp = true;
    bool ep = false;
    bool operator==(const OverlapConfig &) const = default;
};

struct TrainingConfig
{
    // A named software stack (engine/stack.h); empty: the engine's generic defaults. Its
    // defaults for the attention kernel, overlap and gradient type are applied when the
    // layout is read, under the keys written beside it.
    std::string stack;
    int seqLen = 4096;
    int globalBatch = 512;
    int microBatch = 1;
    Precision precision = Precision::Bf16;
    Recompute recompute = Recompute::Selective;
    // With full recomputation only (Megatron's --recompute-method block --recompute-num-layers
    // N, torchtitan's layer-level selective checkpointing, fms-fsdp's selective_checkpointing):
    // N layers of each pipeline stage recompute in full, the others keep their activations.
    // 0: every layer (fullRecomputeShare()).
    int recomputeLayers = 0;
    // With selective recomputation: what runs again (RecomputeModule bits;
    // `training.recompute_modules`).
    unsigned recomputeModules = kDefaultRecomputeModules;
    AttentionKernel attention = AttentionKernel::Flash;
    MoeDispatcher moeDispatcher = MoeDispatcher::AllToAll;
    // Megatron's --moe-router-force-load-balancing (benchmark runs: every expert gets its
    // share); false: dropless routing, whose busiest expert-parallel rank gets more than its
    // share (StackProfile::moeDroplessImbalance).
    bool moeForceBalance = false;
    // PyTorch stacks (StackProfile::eagerElementwise): torch.compile fuses the element-wise
    // operations (norms, rotary embedding, activation, residual adds) into a few kernels;
    // false: each runs eagerly, one kernel per operation, through HBM each time. The stack
    // sets the default (`training.compile`); stacks with fused kernels of their own ignore it.
    bool compile = true;
    // Megatron-Core's cpu_offloading_num_layers (Transformer Engine's activation offload,
    // step/offload.h): the first this many layers keep their activations in host memory
    // between forward and backward. 0: none. Applies without pipeline parallelism and
    // without recomputation only, as Megatron-Core allows it.
    int offloadLayers = 0;
    OptimizerConfig optimizer;
    OverlapConfig overlap;
    bool operator==(const TrainingConfig &) const = default;
};
// The share of a pipeline stage's layers that recompute in full: 0 without full
// recomputation, recomputeLayers of the stage's layers (at most all) with it.
double fullRecomputeShare(const TrainingConfig &t, int layers, int pp);
// What `training` recomputes where it is not Megatron's default: the modules' text ("nothing"
// for none) under selective recomputation with other modules than core_attn alone; "" otherwise.
std::string nonDefaultRecomputeModules(const TrainingConfig &training);

// Serving (DESIGN.md, "Serving (inference) workloads"): what is served and how.
enum class ServingPhase { Both, Prefill, Decode };
enum class SpeculativeMethod { Mtp, Eagle, Draft };
const char *toString(ServingPhase p); // "both", "prefill", "decode"
const char *toString(SpeculativeMethod m);

// One pool of a disaggregated deployment: its instances' sizes.
struct ServingPool
{
    int tp = 1;
    int ep = 1;
    int pp = 1;
    int replicas = 1;
    std::optional<int> attentionDp; // as ParallelConfig::attentionDp
    std::int64_t gpus() const { return sizeProduct({tp, pp, replicas}); }
    bool operator==(const ServingPool &) const = default;
};

struct DisaggregationConfig
{
    ServingPool prefill;
    ServingPool decode;
    bool operator==(const DisaggregationConfig &) const = default;
};

struct SpeculativeConfig
{
    SpeculativeMethod method = SpeculativeMethod::Mtp;
    int draftTokens = 1;              // tokens drafted per step
    std::optional<double> acceptance; // mean tokens accepted per step; absent: the method's
    std::string draftModel;           // `draft`: the draft model's preset
    bool operator==(const SpeculativeConfig &) const = default;
};

struct ServingConfig
{
    // A named serving stack (layout/servingstack.h); empty: the engine's generic defaults.
    std::string stack;
    Precision precision = Precision::Bf16;
    // An FP8 checkpoint scaled per 128 x 128 weight block and per 1 x 128 activation group
    // (DeepSeek's and Qwen's own FP8 releases; `fp8_scaling: "block"`); false: one scale per
    // tensor (NVIDIA ModelOpt's FP8). Only with precision fp8.
    bool fp8BlockScaled = false;
    std::optional<Precision> kvPrecision; // absent: fp8 when precision is fp8 or fp4, else bf16
    int inputTokens = 1024;               // per request
    int outputTokens = 1024;
    std::optional<int> concurrency;             // requests in flight per (decode) replica
    std::optional<double> requestRate;          // requests/s offered to the cluster (open loop)
    int maxPrefillTokens = 8192;                // chunked-prefill budget per step
    std::optional<bool> cudaGraphs;             // absent: the stack's default
    std::optional<MoeDispatcher> moeDispatcher; // absent: the stack's default
    std::optional<DisaggregationConfig> disaggregated;
    std::optional<SpeculativeConfig> speculative;
    ServingPhase phase = ServingPhase::Both;

    Precision kvCache() const
    {
        return kvPrecision.value_or(precision == Precision::Bf16 ? Precision::Bf16 : Precision::Fp8);
    }
    bool operator==(const ServingConfig &) const = default;
};

struct ParallelConfig
{
    int tp = 1;
    int cp = 1;
    int ep = 1;
    int pp = 1;
    int vp = 1;
    std::optional<int> dp;                // absent: GPUs / (TP x CP x PP)
    std::optional<int> etp;               // expert tensor parallel size (absent: 1)
    std::optional<bool> sequenceParallel; // absent: on when TP > 1
    std::string order = "tp-cp-ep-dp-pp";
    // Serving: attention data-parallel ranks inside a TP group (SGLang's --enable-dp-attention,
    // TensorRT-LLM's enable_attention_dp): attention runs at TP = tp / attention_dp, each rank
    // group on its own requests. Absent: 1; 0: the whole TP group (written as `true`).
    std::optional<int> attentionDp;
    bool operator==(const ParallelConfig &) const = default;
};

struct Layout
{
    std::string title;
    std::string notes;
    ClusterConfig cluster;
    std::optional<ModelConfig> model; // absent: no workload, the cluster only
    TrainingConfig training;          // the defaults when the layout serves (`serving` set)
    // Present: the layout prices serving, not training (a file carries one or the other).
    std::optional<ServingConfig> serving;
    ParallelConfig parallel;
    std::vector<int> mapping; // GPU index of each rank; empty: derived from the order
    JsonValue view;           // zoom, colouring, panels: never affects the numbers
    // The document as read, so keys this version does not know survive a save.
    JsonValue original;

    int dataParallel() const; // dp, or derived from the GPU count
    bool isServing() const { return serving.has_value(); }
    // Serving: attention data-parallel ranks per TP group (1 when off).
    int attentionDataParallel() const;
    bool sequenceParallelOn() const { return parallel.sequenceParallel.value_or(parallel.tp > 1); }
    // Compares what the layout means, not the preserved original text.
    bool sameContent(const Layout &other) const;
};

// Reads a layout document. `file` names it in errors. Throws InputError naming the file, the
// JSON path or the line and column, and what was expected.
Layout parseLayout(const std::string &text, const std::string &file);
// As above, checking the GPU id against `catalog` (nullptr: no check).
Layout parseLayout(const std::string &text, const std::string &file, const Catalog *catalog);
// The bytes of a layout file: refuses what is not a regular file (a directory, a FIFO, a
// device) and files over kMaxJsonBytes, without blocking or reading them whole. Throws
// InputError.
std::string readLayoutText(const std::string &path);
// readLayoutText, then parseLayout.
Layout readLayoutFile(const std::string &path);

// The document as JSON: known keys from the structure, unknown keys from `original`.
Json layoutToJson(const Layout &layout);
std::string layoutToText(const Layout &layout); // pretty, 2-space indent, trailing newline
// Writes under outputfile.h's policy: only a regular file (a symlink followed only to one), never
// one of `inputs`, atomically (a temporary file renamed over the target). Throws InputError.
OutputTarget writeLayoutFile(const Layout &layout,
                             const std::string &path,
                             const std::vector<std::string> &inputs = {});

} // namespace railyard::engine
