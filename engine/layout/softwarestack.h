#pragma once

#include "layout/layout.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// A named training software stack (`training.stack` in the layout): what its kernels and
// schedules do by default. The layout's own keys beside `stack` override the layout defaults
// (attention kernel, overlap switches, gradient reduction type); the engine-side constants
// (kernel efficiency, collective granularity) come from here alone, one set per stack.
struct StackProfile
{
    std::string id;          // "megatron-core"
    std::string description; // one line: the framework, version and what sets it apart
    // Layout defaults.
    AttentionKernel attention = AttentionKernel::Flash;
    OverlapConfig overlap;
    bool gradReduceFp32 = false;
    // The gradient type when the weights are sharded with FSDP (the stack's FSDP path may
    // recommend another); unset: as gradReduceFp32.
    std::optional<bool> fsdpGradReduceFp32;
    // Engine constants.
    // The kernel `attention: flash` runs: `flashAmpere` on Ampere, `flashHopperPlus` on Hopper
    // and Blackwell (Transformer Engine prefers cuDNN's there, PyTorch's SDPA runs
    // FlashAttention-2).
    AttentionKernel flashAmpere = AttentionKernel::FlashAttention2;
    AttentionKernel flashHopperPlus = AttentionKernel::Cudnn;
    // Element-wise kernels (norms, activations, residual adds) against the fused ones the
    // catalog's memory efficiency is measured on (Transformer Engine / cuDNN: 1); PyTorch's own
    // RMSNorm runs at about 0.8 of cuDNN's bandwidth forward and 0.45 backward.
    double elementwiseForward = 1.0;
    double elementwiseBackward = 1.0;
    // Optimizer state per parameter, bytes: FP32 master weights and Adam's two moments (12),
    // less where the stack keeps them in 16 bits.
    double optimizerBytesPerParam = 12;
    // Parameters per data-parallel gradient bucket: each bucket is one collective, paying
    // the collective's latency once. The bucket holds max(dpBucketParams, dpBucketParamsPerDp x
    // DP) parameters (Megatron-Core grows it with DP); 0: one collective for everything.
    double dpBucketParams = 40e6;
    double dpBucketParamsPerDp = 0;
    // cuBLAS splits a GEMM's last partial wave along K over the idle SMs (stream-K: Osama et
    // al., PPoPP 2023, arXiv 2301.03598; in CUTLASS from 2.11, November 2022); false: the
    // CUDA 11 libraries of 2021-2022 stacks, whose partial waves idle SMs.
    bool streamK = true;
    // Dropless MoE routing (no forced balance): the busiest expert-parallel rank's share of
    // the routed tokens against the mean, which its expert GEMMs run on.
    double moeDroplessImbalance = 1.0;
    // MoE layers launched eagerly (step/hostlaunch.h), in framework operations of the host's
    // GpuSpec::hostOpS each; all 0: the host is not priced (a stack whose MoE layers run from
    // CUDA graphs, or whose launches were not counted). Per layer and micro-batch: the forward
    // up to the dispatcher's wait for the tokens per expert, the forward after it, and the
    // backward, without the experts; per local expert: its GEMMs forward and backward (one
    // per expert and projection), and per pass the quantization of its activations when the
    // GEMMs run in FP8.
    double moeHostOpsBeforeWait = 0;
    double moeHostOpsAfterWait = 0;
    double moeHostOpsBackward = 0;
    double expertHostOpsForward = 0;
    double expertHostOpsBackward = 0;
    double expertHostOpsFp8 = 0;
    // ZeRO-3 / FSDP: parameters fetched per all-gather (and reduced per reduce-scatter); 0 =
    // one transformer layer per collective (FSDP wrapping each block).
    double zeroGatherParams = 0;
    // ZeRO-3 / FSDP: the gathers are prefetched and the reduce-scatters run asynchronously, so
    // they hide behind the compute of the same micro-batch; false: each collective waits.
    bool zeroPrefetch = true;
    // ZeRO-3 / FSDP: the backward's gathers are prefetched too; false: a unit's parameters are
    // requested only after the next unit's gradients are computed (PyTorch FSDP1's
    // BACKWARD_POST), so each backward gather waits.
    bool zeroBackwardPrefetch = true;
    // ZeRO-3 / FSDP: the most bytes per second one GPU's parameter gathers and gradient
    // reduce-scatters move, whatever the links (0: the links alone bound them). DeepSpeed's
    // 2021 partitioned collectives went through per-rank tensor lists, flattened and copied
    // back, submodule by submodule.
    double zeroCollectiveGBps = 0;
    // ZeRO-3 / FSDP: each submodule's parameters are released after its forward, so full
    // recomputation gathers them again before the backward's own gather (DeepSpeed); false:
    // the recomputed forward reuses the backward's gather (FSDP units around each block).
    bool zeroRegatherForRecompute = false;
    // A 2021-2022 stack, as published on A100: not among the stacks a Hopper or Blackwell
    // layout that names none may be running (step/stackrange.h).
    bool preHopper = false;
    // FSDP with pipeline parallelism: each stage's parameters are gathered once a step and
    // kept unsharded through all its micro-batches (no reshard after forward or backward),
    // the gradients accumulate unsharded in the reduction type, and are reduce-scattered once,
    // after the stage's last backward; false: every micro-batch gathers and reduces.
    bool fsdpPipelineHoldsUnsharded = false;
    // `recompute: selective` as an op-level policy that keeps the output of every other
    // matmul of a block (the first, third, ...) and of the attention kernel, and recomputes the
    // rest in the backward (the other matmuls, norms, activations); false: Korthikanti et al.'s
    // selective recomputation, which drops only the attention scores.
    bool selectiveEveryOtherMatmul = false;
    // Bytes per logit the loss holds at its peak (the last stage, end of the forward): FP32
    // logits and their gradient (8); a stack that keeps its BF16 logits beside an FP32 copy and
    // the log-softmax output holds 10.
    double lossBytesPerLogit = 8;
    // The loss is one fused kernel over the BF16 logits (flash-attn's xentropy, llm-foundry's
    // default loss_fn "fused_crossentropy"): forward reads each logit once, backward reads it and
    // writes its gradient, at HBM's rate; otherwise FP32 logits through separate kernels.
    bool fusedCrossEntropy = false;
    // The model's element-wise operations are PyTorch's own (torchtitan's Llama, Hugging Face
    // models): run eagerly, each is a kernel of its own, unless the layout compiles them
    // (TrainingConfig::compile, whose default is `compile`). false: fused kernels of the
    // stack's own (Transformer Engine, apex, Megatron's fused kernels).
    bool eagerElementwise = false;
    bool compile = true;
    // TP overlap (`overlap.tp`, with sequence parallelism) reaches the backward's
    // input-gradient reduce-scatters (Transformer Engine's ring exchange splits each beside its
    // GEMM). false: PyTorch's async TP (inductor's micro-pipelining) fuses a reduce-scatter only
    // with the single matmul that produces its input; backward, the input gradient of the QKV
    // and of the FFN's first projections is a sum of two or three GEMMs, so those two
    // reduce-scatters per layer wait.
    bool tpOverlapBackwardReduceScatter = true;
    // TP overlap's forward reduce-scatters end in a reduction kernel of their own: PyTorch's
    // fused_matmul_reduce_scatter (torch/distributed/_symmetric_memory, 2024-2026) sends each
    // rank its chunk's BF16 partials from every rank, then sums the TP partials with
    // torch.sum after the pipeline, on the critical path (ComputeModel::kAtenOuterSumShare).
    // false: the collective reduces as it moves (NCCL, Transformer Engine's userbuffers).
    bool tpOverlapSeparateReduce = false;
    // Under FP8 training, TP's all-gathers move FP8 (one byte a value); the reduce-scatters
    // stay BF16. Transformer Engine quantizes the norm's output before the sequence-parallel
    // all-gather (LayerNormLinear, v1.8 through 2.x, with or without userbuffers) and the
    // output's gradient before the backward's ("FP8 case with gather: ... cast, transpose for
    // efficient gather", base.py grad_output_preprocess, v1.8); its saved FP8 input is what the
    // weight gradient gathers again. torchao's float8 tensor parallelism (torchtitan:
    // Float8ColwiseParallel, Float8RowwiseParallel, PrepareFloat8ModuleInput, tensorwise
    // scaling) casts each block's input before the all-gather and the output's gradient to
    // float8 e5m2 before the backward's (NoopFwToFloat8BwDynamic). false: a stack that gathers
    // in BF16 (none today).
    bool tpFloat8AllGather = true;
    // With sequence parallelism, the column-parallel GEMMs' gathered inputs for their weight
    // gradients: true (Megatron-Core): each linear keeps its shard and gathers it again in
    // backward, beside the data-gradient GEMM, hidden. false (PyTorch's DTensor TP): the
    // matmul keeps the gathered input, so there is no gather of its own; under torchtitan's
    // per-op selective recomputation the all-gather is not among the saved operations
    // (torchtitan parallelize_llama.py `_save_list`: mm, SDPA, reduce_scatter_tensor, max), so
    // the recomputed matmuls gather their input again, in the backward's stream, not hidden
    // (AsyncTP fuses it with the matmul it feeds, as in the forward).
    bool tpWgradGatherHidden = true;
    // Context parallelism as PyTorch's context_parallel runs it (torch.distributed.tensor.
    // experimental._attention, December 2024): the keys and values, which torchtitan expands
    // to the query heads before attention (repeat_kv), are all-gathered once a pass just before
    // the diagonal step's attention and waited for at the next step; backward, the keys' and
    // values' gradients travel in FP32, one all-to-all a step. false: a ring of the keys and
    // values at the model's own key-value heads, each step beside the attention of the one
    // before (Transformer Engine).
    bool torchContextParallel = false;
    // The model's operations beyond Llama's (ModelDims::gluClamp, linearBias, yarnRope) run as
    // PyTorch kernels of their own beside the stack's fused ones, as Megatron-Core 0.15 runs
    // gpt-oss: false: fused into the kernels beside them, or not priced.
    bool unfusedModelExtras = false;
    // Transformer Engine in FP8 keeps the inputs of the linear layers for their weight
    // gradients as FP8 (one byte), column-wise only where the backward does not gather them
    // (module/linear.py and layernorm_linear.py, TE 2.9: the norm output keeps its row-wise
    // copy too when sequence parallelism gathers it): false, they stay BF16.
    bool fp8SavesLinearInputs = false;
    // Transformer Engine in FP8 keeps each linear layer's FP8 weights through the step's
    // micro-batches (Megatron-Core passes is_first_microbatch unless
    // disable_parameter_transpose_cache; TE module/linear.py caches the quantized weight in
    // _fp8_workspaces["weight"]): a byte per parameter (setStackMemory(), step/memory.h).
    // False: cast again every micro-batch, nothing kept.
    bool fp8WeightCache = false;
    // Pipeline sends as DeepSpeed's PipelineEngine (0.5-0.7) runs them: each micro-batch's
    // four transfers (activations in and out, gradients in and out) are blocking calls, one
    // after another, where Megatron pairs a send with a receive (batch_isend_irecv); false:
    // two exchanges a micro-batch on the critical path.
    bool pipeSendsSerialized = false;
    // Each TP rank sends a TP-th of the pipeline's activation or gradient and the receiving
    // stage all-gathers it over its TP group (DeepSpeed's PartitionedTensor: one gather
    // forward, two backward, where the stage also restores its own output); false: the whole
    // tensor travels (or its sequence-parallel shard).
    bool pipeSendsSplitOverTp = false;
    // Bytes per parameter of the stage moved through HBM after each micro-batch's backward to
    // add its BF16 gradients into FP32 accumulators (DeepSpeed's BF16_Optimizer
    // update_hp_grads: read 2 + read 4 + write 4); 0: the gradients accumulate in place.
    double gradAccumBytesPerParam = 0;
    // The sharded optimizer's gradients are all-reduced in full, each rank then updating its
    // shard and all-gathering the parameters (DeepSpeed's BF16_Optimizer with ZeRO stage 0);
    // false: reduce-scattered into the shards (Megatron's distributed optimizer).
    bool dpAllReduceThenGather = false;
    // The stack's pipeline engine runs with ZeRO stage 1 at most (DeepSpeed's PipelineEngine
    // asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism").
    bool pipelineZeroAtMost1 = false;
    // Activation offload to host memory is on offer (Transformer Engine's CPU offload under
    // Megatron-Core's cpu_offloading_num_layers, step/offload.h): the planner may propose it.
    bool activationOffload = false;
};

// Known stacks, in documentation order.
const std::vector<StackProfile> &stackProfiles();
// The profile for `id`; nullptr when unknown. The empty id gives the engine's generic stack.
const StackProfile *findStack(const std::string &id);
const StackProfile &genericStack();
std::string stackList(); // "megatron-2021, megatron-2022, ..." for messages

// Sets the layout defaults that `stack` implies (attention, overlap, gradient type). The
// gradient type depends on training.optimizer.fsdp: set that first.
void applyStackDefaults(TrainingConfig &training, const StackProfile &stack);
// The kernel the stack runs for `requested` on a GPU of `architecture`: Flash becomes the
// stack's flash kernel; an explicit kernel stays, except FlashAttention-3 (Hopper only), which
// becomes the stack's flash kernel elsewhere.
AttentionKernel resolveAttention(const StackProfile &stack,
                                 AttentionKernel requested,
                                 const std::string &architecture);
// The gradient type `stack` reduces in, with or without FSDP.
bool stackGradReduceFp32(const StackProfile &stack, bool fsdp);
// Parameters per data-parallel bucket at data-parallel size `dp`: the layout's own
// (training.optimizer.bucket_params) where given, else the stack's rule; 0: one bucket.
double dpBucketParams(const StackProfile &stack, const OptimizerConfig &optimizer, int dp);

} // namespace railyard::engine
