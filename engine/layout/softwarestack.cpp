#include "layout/softwarestack.h"

#include <algorithm>

namespace railyard::engine {

namespace {

OverlapConfig overlap(bool dp, bool tp, bool pp, bool ep)
{
    OverlapConfig o;
    o.dp = dp;
    o.tp = tp;
    o.pp = pp;
    o.ep = ep;
    return o;
}

// A stack on PyTorch's own kernels (no Transformer Engine): FlashAttention-2 on every GPU
// (SDPA's flash backend or the flash-attn package), PyTorch's norms and element-wise operations,
// run eagerly unless the layout compiles the model, the data-parallel collectives overlapped.
// torch.nn.RMSNorm (eager or compiled) against cuDNN's on H200, GB200 and GB300 at training
// shapes: median 0.8 of the bandwidth forward, 0.45 backward (NVIDIA/cudnn-frontend
// benchmark/norms/results, the pytorch and torch_compile rows).
StackProfile pytorchStack(const char *id, const char *description)
{
    StackProfile p;
    p.id = id;
    p.description = description;
    p.overlap = overlap(true, false, false, false);
    p.flashAmpere = AttentionKernel::FlashAttention2;
    p.flashHopperPlus = AttentionKernel::FlashAttention2;
    p.elementwiseForward = 0.8;
    p.elementwiseBackward = 0.45;
    p.eagerElementwise = true;
    p.compile = false;
    p.tpWgradGatherHidden = false;
    return p;
}

// Megatron-Core's MoE layer with Transformer Engine, launched eagerly (Megatron-Core
// core_dev_r0.15.0 0d8e0714 as Megatron-Bridge 0.2 runs it, TE 2.9; step/hostlaunch.h), in
// framework operations. Counted from the code: before the dispatcher's wait the attention
// block, the router and the dispatcher's preprocessing and permutation (about 20); after it
// the dispatch all-to-alls, the chunk sorts, the activation, the combine, the unpermutation
// and the residual (about 20); the backward about 50. Per local expert, TE's GroupedLinear
// (grouped_linear.py; cublaslt_gemm.cu `multi_stream_cublas_gemm`, one cuBLASLt GEMM per
// expert on four streams): fc1 and fc2 forward (2), their data and weight gradients (4), and
// in FP8 each pass quantizes each expert's input by a launch of its own (`split_quantize`: 2
// a pass; only delayed scaling fuses them).
void eagerMoeHost(StackProfile &p)
{
    p.moeHostOpsBeforeWait = 20;
    p.moeHostOpsAfterWait = 20;
    p.moeHostOpsBackward = 50;
    p.expertHostOpsForward = 2;
    p.expertHostOpsBackward = 4;
    p.expertHostOpsFp8 = 2;
}

// Megatron-Core 0.15 with Transformer Engine 2.9 (Megatron-Bridge 0.2's pins) on gpt-oss's
// operations (github.com/NVIDIA/Megatron-LM core_v0.15.0): the GLU's clamp runs eagerly before
// the compiled activation (fusions/fused_bias_geglu.py: chunk, two clamps and a cat); the
// experts' second bias is added expert by expert (moe/experts.py TEGroupedMLP._apply_bias:
// `t + b * p` per local expert, then a cat); Megatron-Bridge turns RoPE fusion off for YaRN
// (the fused kernel ignores its scale) and gpt-oss's provider sets bias_dropout_fusion False.
void megatronModelExtras(StackProfile &p)
{
    p.unfusedModelExtras = true;
}

// Transformer Engine's FP8 linear layers under Megatron-Core (StackProfile::fp8SavesLinearInputs,
// fp8WeightCache).
void teFp8Layers(StackProfile &p)
{
    p.fp8SavesLinearInputs = true;
    p.fp8WeightCache = true;
}

// Megatron-Core's cpu_offloading_num_layers with Transformer Engine's offload handler
// (megatron/core/transformer/transformer_config.py; step/offload.h), which NeMo and
// Megatron-Bridge recipes set (Megatron-Bridge v0.2.1 scripts/performance: Llama 3 70B and
// 405B on GB200 and GB300).
void teActivationOffload(StackProfile &p)
{
    p.activationOffload = true;
}

std::vector<StackProfile> buildStacks()
{
    std::vector<StackProfile> s;
    {
        StackProfile p;
        p.id = "megatron-2021";
        p.description = "Megatron-LM as in Narayanan et al. 2021 (PyTorch 1.8, apex): attention "
                        "scores materialized, gradients all-reduced in one piece after the "
                        "backward pass, blocking pipeline sends";
        p.attention = AttentionKernel::Materialized;
        p.overlap = overlap(false, false, false, false);
        p.dpBucketParams = 0;
        p.streamK = false; // CUDA 11 cuBLAS (PyTorch 1.8-1.11)
        p.preHopper = true;
        s.push_back(p);
    }
    {
        StackProfile p;
        p.id = "megatron-2022";
        p.description = "Megatron-LM as in Korthikanti et al. 2022: sequence parallelism and "
                        "selective recomputation, attention still materialized, no data-parallel "
                        "overlap";
        p.attention = AttentionKernel::Materialized;
        p.overlap = overlap(false, false, false, false);
        p.gradReduceFp32 = true; // Megatron-LM's default for BF16 since 2021
        p.dpBucketParams = 0;
        p.streamK = false; // CUDA 11 cuBLAS (PyTorch 1.8-1.11)
        p.preHopper = true;
        s.push_back(p);
    }
    {
        StackProfile p;
        p.id = "megatron-deepspeed";
        p.description = "Megatron-DeepSpeed (BigScience / Microsoft, 2021-2022; DeepSpeed "
                        "0.5-0.7 PipelineEngine): Megatron's layers, DeepSpeed's 1F1B with "
                        "blocking pipeline sends one after another, split over TP and gathered "
                        "on arrival; BF16 gradients added into FP32 after every micro-batch, "
                        "all-reduced after the last backward; attention materialized; "
                        "validated against BLOOM-176B's and MT-NLG 530B's runs: 11-13% fast";
        p.attention = AttentionKernel::Materialized;
        p.overlap = overlap(false, false, false, false);
        // DeepSpeed's pipe/p2p.py from 0.5.4 (e2fdd254e, "Big science related changes",
        // #1407): send() and recv() assert async_op == False and call dist.send / dist.recv;
        // pipe/schedule.py TrainSchedule issues RecvActivation, SendGrad, SendActivation and
        // RecvGrad as separate instructions, each before or after a pass, none beside one.
        p.pipeSendsSerialized = true;
        // pipe/engine.py (0.6.0): is_pipe_partitioned = is_grad_partitioned =
        // is_model_parallel; the receiver's PartitionedTensor.full() all-gathers over the TP
        // group (runtime/utils.py), and the backward also restores the stage's own output.
        p.pipeSendsSplitOverTp = true;
        // bf16 with pipelines (#1801, 0.6.2; BLOOM's tr11 ran ZERO_STAGE=0, "bf16 must use z0!
        // it implements its own zero stage 1 equivalent"): BF16_Optimizer.update_hp_grads after
        // every backward pass, hp_grad.add_(lp.grad.to(fp32)); _bf16_reduce_grads all-reduces
        // the FP32 buffers cast to BF16 (communication_data_type), then Adam on this rank's
        // shard and all_gather_dp_groups of the BF16 parameters.
        p.gradAccumBytesPerParam = 10;
        p.dpAllReduceThenGather = true;
        // pipe/engine.py: assert self.zero_optimization_stage() < 2, "ZeRO-2 and ZeRO-3 are
        // incompatible with pipeline parallelism".
        p.pipelineZeroAtMost1 = true;
        // buffered_allreduce_fallback(elements_per_buffer=MEMORY_OPT_ALLREDUCE_SIZE), 5e8.
        p.dpBucketParams = 500e6;
        p.streamK = false; // CUDA 11 cuBLAS (PyTorch 1.8-1.11)
        p.preHopper = true;
        s.push_back(p);
    }
    {
        StackProfile p;
        p.id = "deepspeed-zero3";
        p.description = "DeepSpeed ZeRO-3 (2021) inside Megatron: every parameter tensor "
                        "gathered and its gradient reduce-scattered on its own, prefetched "
                        "behind compute, through per-rank partition lists at about 21 GB/s per "
                        "GPU; recomputation gathers again; attention materialized";
        p.attention = AttentionKernel::Materialized;
        p.overlap = overlap(true, false, false, false);
        p.zeroGatherParams = -1; // one collective per parameter tensor
        // DeepSpeed 0.3.16 with PyTorch 1.8 on 8 A100 over NVLink gathered a 5B-parameter
        // model's 10 GB in a 480 ms forward (DeepSpeed issue #1174, June 2021): about 21 GB/s
        // of gathered bytes per GPU, a tenth of what NVLink carries.
        p.zeroCollectiveGBps = 21;
        p.zeroRegatherForRecompute = true;
        p.streamK = false; // CUDA 11 cuBLAS (PyTorch 1.8-1.11)
        p.preHopper = true;
        s.push_back(p);
    }
    {
        StackProfile p;
        p.id = "megatron-core";
        p.description = "Megatron-Core (2024-) with Transformer Engine: flash attention, "
                        "overlapped gradient reduce-scatter and parameter all-gather, TP "
                        "communication overlap, FP32 gradient reduction (Megatron-LM's default "
                        "for BF16); with FSDP (Megatron-FSDP) gradients reduced in BF16, as its "
                        "user guide recommends";
        p.overlap = overlap(true, true, true, false);
        p.gradReduceFp32 = true;
        // Transformer Engine's DotProductAttention prefers cuDNN's fused attention on sm90 and
        // later and flash-attn (FlashAttention-2) on sm80 (TE 1.4 attention.py: "Select
        // FusedAttention on sm90 and FlashAttention on others for performance"; TE docs
        // examples/attention/attention.ipynb, section 2).
        p.flashAmpere = AttentionKernel::FlashAttention2;
        p.flashHopperPlus = AttentionKernel::Cudnn;
        // Megatron-FSDP's recommended configuration (docs/discussions/megatron-fsdp-user-guide,
        // and its DeepSeek-V3 example script) adds --grad-reduce-in-bf16: every micro-batch
        // reduce-scatters its gradients, so their type sets most of FSDP's traffic.
        p.fsdpGradReduceFp32 = false;
        // Dropless routing against --moe-router-force-load-balancing on the same Qwen3-235B
        // runs (yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md, "Long Context"):
        // chosen so the engine gives their four throughput ratios (tst_throughput).
        p.moeDroplessImbalance = 1.95;
        eagerMoeHost(p);
        megatronModelExtras(p);
        teFp8Layers(p);
        teActivationOffload(p);
        // Buckets of max(40M, 1M x DP) parameters, "larger DP sizes need larger buckets to
        // ensure collectives do not become latency-bound" (github.com/NVIDIA/Megatron-LM,
        // megatron/core/distributed/distributed_data_parallel_config.py, `bucket_size`, and
        // distributed_data_parallel.py: `max(40000000, 1000000 * dp_group.size())`).
        p.dpBucketParams = 40e6;
        p.dpBucketParamsPerDp = 1e6;
        // The loss (megatron/core/tensor_parallel/cross_entropy.py, _VocabParallelCrossEntropy):
        // the BF16 logits are cast to FP32 inside the autograd function, shifted, exponentiated
        // and normalized in place, and only that FP32 softmax is saved for the backward, which
        // turns it into the gradient in place; nothing keeps the BF16 logits. 4 bytes a logit
        // (family U's max_memory_allocated with full recomputation grows by ~2 GiB a sequence of
        // 4,096 tokens where 8 bytes a logit would give ~2.8; tst_throughput::memoryPerGpu).
        p.lossBytesPerLogit = 4;
        s.push_back(p);
    }
    {
        StackProfile p;
        p.id = "nemo";
        p.description = "NeMo / Megatron-Bridge recipes on Megatron-Core: as megatron-core, "
                        "gradients reduced in BF16, Adam's moments kept in BF16 "
                        "(distributed_fused_adam with dtype bf16: 8 bytes of optimizer state "
                        "per parameter)";
        p.overlap = overlap(true, true, true, false);
        p.optimizerBytesPerParam = 8;
        // apex's DistributedFusedAdam (NeMo's MegatronDistributedFusedAdam) fills buckets of
        // 1 MiB x bucket_cap_mb / sizeof(grad_sync_dtype) parameters
        // (github.com/NVIDIA/apex, apex/contrib/optimizers/distributed_fused_adam.py,
        // `__init__`, "Determine bucket sizes"; bucket_cap_mb defaults to 100 there). NeMo's
        // own configurations set bucket_cap_mb 125 (github.com/NVIDIA/NeMo,
        // nemo/collections/llm/tools/auto_configurator/tests/base_configs_tests/
        // test_base_configs.py: the gpt3 and llama3 base configs, `bucket_cap_mb: 125` and
        // `grad_allreduce_chunk_size_mb: 125`), with BF16 gradients: 65.5M parameters.
        p.dpBucketParams = 125.0 * 1024 * 1024 / 2;
        p.flashAmpere = AttentionKernel::FlashAttention2;
        p.flashHopperPlus = AttentionKernel::Cudnn;
        // Dropless routing against --moe-router-force-load-balancing on the same Qwen3-235B
        // runs (yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md, "Long Context"):
        // chosen so the engine gives their four throughput ratios (tst_throughput).
        p.moeDroplessImbalance = 1.95;
        eagerMoeHost(p);
        megatronModelExtras(p);
        teFp8Layers(p);
        teActivationOffload(p);
        s.push_back(p);
    }
    {
        StackProfile p = pytorchStack(
                "torchtitan",
                "torchtitan (PyTorch FSDP2 with TP/PP): FlashAttention-2 through "
                "PyTorch's SDPA, PyTorch's own norms and element-wise operations (eager "
                "unless compiled), async TP fusing the forward's TP collectives (each "
                "reduce-scatter then sums its partials in a kernel of its own) but not "
                "the backward's input-gradient reduce-scatters, float8 TP gathering in "
                "float8, PyTorch's context parallel "
                "(keys and values expanded and all-gathered once a pass, FP32 gradients), "
                "one gather per transformer block "
                "(under PP gathered once a step and held, gradients reduced once), "
                "selective recomputation keeping every other matmul, FP32 gradient "
                "reduction; validated against torchtitan's 26 published runs (Llama 3.1 "
                "8B-405B on 8-512 H100 at 500 W, December 2024 and June 2025): tokens/s "
                "median |error| 4.5% (-9% to +39%, the most at long sequence with context "
                "parallelism), memory median 10% low");
        p.overlap = overlap(true, false, true, false);
        p.gradReduceFp32 = true;
        // scaled_dot_product_attention's flash backend is FlashAttention-2's kernels
        // (torch.nn.attention.SDPBackend.FLASH_ATTENTION, first in PyTorch's priority).
        // With PP, torchtitan shards each block with reshard_after_forward=False "to avoid
        // per-microbatch all-gathers" (torchtitan 9dec370, torchtitan/parallelisms/
        // parallelize_llama.py, apply_fsdp), and torch.distributed.pipelining runs every
        // micro-batch's backward with set_reshard_after_backward(False) and
        // set_requires_gradient_sync(False), then the FSDP post-backward (the reduce-scatters)
        // once after the last one (torch/distributed/pipelining/stage.py,
        // _PipelineStageBase.backward_maybe_with_nosync, `last_backward`).
        p.fsdpPipelineHoldsUnsharded = true;
        // activation_checkpoint.mode 'selective' with selective_ac_option 'op' (the default in
        // train_configs/llama3_8b.toml): _save_list holds aten.mm and the SDPA kernels, and the
        // policy saves "all compute ops, except every second mm", recomputing the rest
        // (parallelize_llama.py, _apply_ac_to_transformer_block).
        p.selectiveEveryOtherMatmul = true;
        // train.py's loss_fn is cross_entropy(pred.flatten(0, 1).float(), ...): the BF16
        // logits (freed only by `del pred` after the loss), their FP32 copy and log-softmax's
        // FP32 output are all live as the loss runs.
        p.lossBytesPerLogit = 10;
        // torchtitan's Llama runs PyTorch's own element-wise operations (models/norms.py
        // RMSNorm, models/llama/model.py apply_rotary_emb and the SwiGLU feed-forward), and its
        // train configs leave torch.compile off (train_configs/llama3_8b.toml: compile = false):
        // pytorchStack()'s eager default.
        // AsyncTP (`overlap.tp`): torch._inductor's micro_pipeline_tp pass runs on the forward
        // and backward graphs alike and fuses an all-gather with the matmuls that take it as
        // their left operand and a reduce-scatter with the one matmul producing its input.
        // Backward, the reduce-scatter of the input gradient takes the sum of the Q, K and V
        // (or the FFN's two) data-gradient GEMMs and is not fused: "there were only valid
        // scaled_mm-reduce-scatter patterns in the forward graph, but not in the backward graph
        // ... the reduce-scatters are receiving as input the addition of various scaled_mms"
        // (pytorch/pytorch#149946, the pass's maintainer, 2025-03-28; _find_producer_matmul).
        p.tpOverlapBackwardReduceScatter = false;
        // The pass's forward reduce-scatters become fused_matmul_reduce_scatter, whose
        // `reduce_fn(stacked_partials...)` (torch.sum over the TP partials) runs after the last
        // chunk's transfer ("That reduction is a separate kernel that only starts after the
        // communication and GEMM work has completed, so all of its memory traffic sits on the
        // critical path": pytorch/pytorch#191803, 2026-07-31, which replaced it; the torch of
        // these runs, 2024-2025, has it).
        p.tpOverlapSeparateReduce = true;
        // With float8 and TP, apply_tp uses torchao's Float8ColwiseParallel /
        // Float8RowwiseParallel / PrepareFloat8ModuleInput ("with all-gather in float8":
        // torchtitan 9dec370 parallelisms/parallelize_llama.py; 6b11290 of 2025-06-27
        // models/llama3/infra/parallelize.py, enable_float8_tensorwise_tp; torchao
        // float8/float8_tensor_parallel.py, 2024-12 to 2025-07): tpFloat8AllGather's default.
        // Context parallel (torchtitan 9dec370: experimental.context_parallel_rotate_method
        // defaults to "allgather"; models/llama/model.py calls repeat_kv before SDPA): PyTorch's
        // _AllGatherRotater gathers once ("We only need to perform the allgather once") just
        // before the first step's SDPA and waits at the second; the backward's gradient
        // rotater is an all-to-all of the FP32 accumulators (convert_to_f32 defaults to True).
        p.torchContextParallel = true;
        s.push_back(p);
    }
    {
        StackProfile p = pytorchStack(
                "composer",
                "MosaicML Composer with llm-foundry (PyTorch FSDP1, FULL_SHARD): "
                "FlashAttention-2 (attn_impl flash; \"triton\" as the layout's "
                "attention), PyTorch's own norms, flash-attn's fused cross-entropy, one "
                "FSDP unit per block, BACKWARD_POST prefetch (backward gathers wait), "
                "gradients reduced in BF16 (mixed_precision PURE); validated against "
                "llm-foundry's 36 published MPT runs (1B-70B on 8-512 H100 and A100): "
                "tokens/s median 8% off (-19% to +24%); the H100 runs with llm-foundry's "
                "Triton attention 20-24% fast");
        // llm-foundry's yamls (scripts/train/yamls/pretrain/mpt-7b.yaml: fsdp_config
        // mixed_precision PURE, i.e. parameters, gradients and buffers in BF16).
        p.gradReduceFp32 = false;
        // attn_impl: flash runs the flash-attn package (FlashAttention-2): pytorchStack()'s.
        // Composer's FSDPConfig defaults (composer/utils/parallelism.py): backward_prefetch
        // BACKWARD_POST, forward_prefetch False with limit_all_gathers True (the forward's next
        // gather is issued as the CPU runs ahead of the GPU, so it still overlaps).
        p.zeroBackwardPrefetch = false;
        // llm-foundry's MPT takes its loss from flash-attn's fused cross-entropy kernel
        // (llmfoundry/models/mpt/modeling_mpt.py at v0.3.0: loss_fn defaults to
        // "fused_crossentropy", flash_attn.losses.cross_entropy), over the BF16 logits it keeps
        // with their gradient.
        p.fusedCrossEntropy = true;
        p.lossBytesPerLogit = 4;
        // Hugging Face or MPT blocks run eagerly (llm-foundry compiles only when asked).
        s.push_back(p);
    }
    {
        StackProfile p = pytorchStack(
                "pytorch-fsdp",
                "PyTorch FSDP1 with its own defaults (IBM's fms-fsdp, a training loop of one's "
                "own): FULL_SHARD (or hybrid), one FSDP unit per block, BACKWARD_PRE prefetch, "
                "FlashAttention-2 through PyTorch's SDPA, PyTorch's own norms and loss (eager "
                "unless compiled), gradients reduced in BF16; validated against IBM fms-fsdp's "
                "10 published runs (Llama 2 7B-70B on 128 A100 and 96 H100): A100 median 4% "
                "(-3% to +12%), H100 +1% to +20%");
        // fms-fsdp's policies/mixed_precision.py bfSixteen: param, reduce and buffer dtypes
        // all BF16.
        p.gradReduceFp32 = false;
        // F.scaled_dot_product_attention(is_causal=True): SDPA's flash backend is
        // FlashAttention-2's kernels (pytorchStack()'s).
        // FSDP1's backward_prefetch defaults to BACKWARD_PRE (fms-fsdp sets none): the next
        // block's gather is issued before this block's gradient computation.
        p.zeroBackwardPrefetch = true;
        // CrossEntropyLoss on the BF16 logits (fms-fsdp's train_utils.py): log-softmax's BF16
        // output beside the logits.
        p.lossBytesPerLogit = 4;
        // FMS's Llama runs eagerly unless use_torch_compile (pytorchStack()'s default).
        s.push_back(p);
    }
    {
        StackProfile p = pytorchStack(
                "deepspeed",
                "DeepSpeed ZeRO (0.14 and later) under Hugging Face Transformers: "
                "FlashAttention-2 (attn_implementation flash_attention_2), PyTorch's own "
                "norms, ZeRO-3 gathers per submodule with prefetch and overlapped "
                "reduce-scatters; recomputation gathers again; validated against one "
                "published run (Hugging Face Accelerate's Granite 7B under ZeRO-3 on 4 A100: "
                "5% fast)");
        // Hugging Face models run eagerly (pytorchStack()'s default).
        p.zeroGatherParams = -1; // submodule by submodule
        p.zeroRegatherForRecompute = true;
        s.push_back(p);
    }
    return s;
}

} // namespace

const std::vector<StackProfile> &stackProfiles()
{
    static const std::vector<StackProfile> stacks = buildStacks();
    return stacks;
}

const StackProfile &genericStack()
{
    static const StackProfile generic = [] {
        StackProfile p;
        p.id = "";
        p.description = "generic: flash attention (FlashAttention-2 on Ampere, cuDNN's on "
                        "Hopper and Blackwell), data-parallel and pipeline overlap on, TP "
                        "overlap off";
        return p;
    }();
    return generic;
}

const StackProfile *findStack(const std::string &id)
{
    if (id.empty())
        return &genericStack();
    for (const StackProfile &p : stackProfiles())
        if (p.id == id)
            return &p;
    return nullptr;
}

std::string stackList()
{
    std::string s;
    for (const StackProfile &p : stackProfiles())
        s += (s.empty() ? "" : ", ") + p.id;
    return s;
}

void applyStackDefaults(TrainingConfig &t, const StackProfile &p)
{
    t.stack = p.id;
    t.attention = p.attention;
    t.overlap = p.overlap;
    t.optimizer.gradReduceFp32 = stackGradReduceFp32(p, t.optimizer.fsdp);
    t.compile = p.compile;
}

AttentionKernel resolveAttention(const StackProfile &stack,
                                 AttentionKernel requested,
                                 const std::string &architecture)
{
    const bool hopperPlus = architecture == "hopper" || architecture == "blackwell";
    const AttentionKernel flash = hopperPlus ? stack.flashHopperPlus : stack.flashAmpere;
    if (requested == AttentionKernel::Flash)
        return flash;
    if (requested == AttentionKernel::FlashAttention3 && architecture != "hopper")
        return flash;
    // FlashAttention 1.x and flash-attn's Triton kernel were built for Ampere and Hopper; on
    // Blackwell neither runs, and the stack's kernel does.
    if ((requested == AttentionKernel::FlashAttention1
         || requested == AttentionKernel::FlashAttentionTriton)
        && architecture == "blackwell")
        return flash;
    return requested;
}

bool stackGradReduceFp32(const StackProfile &p, bool fsdp)
{
    return fsdp && p.fsdpGradReduceFp32 ? *p.fsdpGradReduceFp32 : p.gradReduceFp32;
}

double dpBucketParams(const StackProfile &stack, const OptimizerConfig &optimizer, int dp)
{
    if (optimizer.bucketParams > 0)
        return optimizer.bucketParams;
    if (stack.dpBucketParams <= 0)
        return 0;
    return std::max(stack.dpBucketParams, stack.dpBucketParamsPerDp * std::max(1, dp));
}

} // namespace railyard::engine
