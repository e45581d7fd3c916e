#pragma once

// The step's cost formulas, apart from where the groups are: what each parallel dimension sends
// and how often, how the priced collectives make the per-layer and per-step communication, how
// the stages compose into the step, and the optimizer. Shared by the full evaluation (which
// prices every group on the real links: stepcomm.cpp) and the planner's fast path (one
// representative group per dimension: planner.cpp), so the two cannot drift apart. Plain
// structs, no allocation: the planner calls these in its inner loop.

#include "collectives/collective.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"
#include "step/evaluate.h"
#include "step/fidelity.h"

#include <array>

namespace railyard::engine {

// One configuration's sizes and settings, as the step formulas read them.
struct StepSetting
{
    const ModelDims *model = nullptr;
    const TrainingConfig *training = nullptr;
    const StackProfile *stack = nullptr;
    int tp = 1, cp = 1, pp = 1, vp = 1, dp = 1, ep = 1, etp = 1;
    int micro = 1; // micro-batches per replica and step
    bool sp = false;
    // The linear layers' weights are FP8 and gathered so (fp8ParamGathers()).
    bool fp8Weights = false;
    // Activation offload (step/offload.h): layers offloaded (offloadedLayers(); 0: none), the
    // bytes one dense / MoE layer keeps per micro-batch, and the GPU's copy rates to and from
    // host memory, bytes/s.
    int offloadLayers = 0;
    double offloadDenseBytes = 0, offloadMoeBytes = 0;
    double hostD2hBytesPerS = 0, hostH2dBytesPerS = 0;
};
// Whether the step keeps FP8 primary weights and gathers them in FP8: asked for
// (optimizer.fp8_param_gather), training in FP8, on a GPU with FP8 tensor cores.
bool fp8ParamGathers(const TrainingConfig &training, const GpuSpec &gpu);

// Consecutive pipeline stages with the same layers (the full evaluation passes one run per
// stage; the planner merges equal neighbours).
struct StageRun
{
    int first = 0; // its first stage
    int count = 1;
    int dense = 0, moe = 0; // layers per stage
    // How much longer its kernels take than the GPU's own (1; a straggler among its GPUs:
    // its slowdown). The stage's TP groups wait for it at every collective, so the stage's
    // layers take this much longer.
    double slowdown = 1;
};
// Layers per stage, calling f(stage, dense layers, MoE layers) for each stage in order. The first
// layers are dense, the rest MoE (DeepSeek-style). When they do not split evenly the middle
// stages take the extra layers: the first and last stages also hold the embedding and the output
// layer and loss (Llama 3 trained 126 layers on 16 stages this way). Extra layers go to stages
// 1 .. pp-2 first, then the last, then the first.
template<class F>
void forEachStage(const ModelDims &m, int pp, F &&f)
{
    if (pp < 1)
        return;
    const int base = m.layers / pp, extra = m.layers % pp;
    const int denseLayers = m.isMoe() ? m.denseLayers() : m.layers;
    int layer = 0;
    for (int s = 0; s < pp; ++s) {
        // The order in which stage s receives an extra layer.
        const int rank = s >= 1 && s <= pp - 2 ? s - 1 : s == pp - 1 && pp >= 2 ? pp - 2 : pp - 1;
        const int n = base + (rank < extra ? 1 : 0);
        const int nd = n < denseLayers - layer
                               ? n
                               : (denseLayers - layer > 0 ? denseLayers - layer : 0);
        layer += n;
        f(s, nd, n - nd);
    }
}

// The runs of `pp` stages for `model` (layers split as the evaluation splits them: the middle
// stages take the extra layers, the first layers are dense). At most `out.size()` runs; returns
// how many (0 if they do not fit).
int stageRuns(const ModelDims &model, int pp, std::array<StageRun, 16> &out);

// The step's collectives, one slot each.
enum class CommSlot {
    TpAg,
    TpRs,
    TpAr,
    CpRing,
    CpAg,
    EpA2a,
    PpP2p,
    PpGather,
    DpRs,
    DpAg,
    DpAr,
    EdpRs,
    EdpAg,
    EdpAr
};
inline constexpr int kCommSlots = 14;
// The groups a collective runs on.
// DpShard and DpReplica: hybrid sharding's groups (OptimizerConfig::shardGroup): the ranks
// one ZeRO-3 shard spans, and the ranks holding the same shard.
enum class CommGroups { Tp, Cp, Ep, Pp, Dp, Edp, DpShard, DpReplica };

// What one collective of the step costs: all of its groups running it at once.
struct CollectiveCost
{
    double latencyS = 0;
    double bwTimeS = 0;
    double bytes = 0;
    double timeS = 0; // one instance
    Algorithm algorithm = Algorithm::Ring;
    // How long one instance keeps its busiest NVLink (at the link's own rate, before NVLS's
    // multicast efficiency) and its busiest other link busy: its demand on the links while it
    // runs (stepschedule.h).
    double nvlinkBusyS = 0, networkBusyS = 0;
};
// The cost of all groups at once: the slowest group's latency, and the link-bound seconds of
// every group's bytes together (`linkS`) at the worst efficiency and ceiling of their plans.
CollectiveCost groupsCost(CollectiveOp op,
                          int n,
                          double bytes,
                          double linkS,
                          double worstLatencyS,
                          double worstEfficiency,
                          double capBusGBps,
                          Algorithm algorithm);
// A collective with the same traffic as `like` (a reduce-scatter after an all-gather on the same
// groups): its bandwidth part scales with the bytes, its latency stays.
CollectiveCost samePatternCost(const CollectiveCost &like, double bytes);

// One collective the step runs, in pricing order.
struct CommRequest
{
    CommSlot slot = CommSlot::TpAg;
    CommGroups groups = CommGroups::Tp;
    CollectiveOp op = CollectiveOp::AllGather;
    double bytes = 0;
    double perStep = 0;       // instances per step (link totals)
    bool samePattern = false; // scale the request just before it (samePatternCost)
    bool deepEp = false;      // DeepEP's dispatch: scale its inter-node bytes
};

// The step's communication, before and after pricing.
struct StepComm
{
    // Requests, in the order they are priced.
    std::array<CommRequest, kCommSlots> request{};
    int requests = 0;
    // Priced, by slot (zero for collectives the step does not run).
    std::array<CollectiveCost, kCommSlots> cost{};
    const CollectiveCost &at(CommSlot s) const { return cost[static_cast<std::size_t>(s)]; }

    double act = 0; // one activation tensor, bytes
    double cpKvBytes = 0;
    double a2aBytes = 0;
    double tpPerLayerS = 0; // exposed-before-overlap TP seconds per layer and micro-batch
    double tpHiddenPerLayerS = 0;
    // Of tpPerLayerS: what TP overlap leaves exposed whatever the GEMMs beside it (the
    // backward's input-gradient reduce-scatters where the stack cannot fuse them,
    // StackProfile::tpOverlapBackwardReduceScatter).
    double tpUnfusedPerLayerS = 0;
    // One TP collective of each kind, and how often each block's collectives run beyond the
    // forward and backward (composeStep() hides each behind its own GEMM): the recomputed
    // forward's share, and the all-gathers for the weight gradients a block's input side runs
    // again where they are not hidden (tpWgradGathers(), not StackProfile::tpWgradGatherHidden).
    double tpAgS = 0, tpRsS = 0;
    double tpRecomputeShare = 0;
    double tpRegathersPerInput = 0;
    // The blocks of a MoE layer with TP collectives on its hidden states, of a dense layer's 2:
    // with expert tensor parallelism 1 only the attention's (and the shared experts'), since
    // Megatron's dispatchers send each TP rank's own sequence shard to the experts (the
    // expert-TP group they gather over has one rank; token_dispatcher.py, core_v0.15.0).
    double tpBlocksPerMoeLayer = 2;
    // Layers' worth of TP collectives in `dense` dense and `moe` MoE layers.
    double tpLayers(double dense, double moe) const
    {
        return dense + moe * tpBlocksPerMoeLayer / 2;
    }
    double cpPerLayerS = 0;
    // PyTorch's context parallel (StackProfile::torchContextParallel), per layer and
    // micro-batch: passes that gather the keys and values (forward, its recomputation,
    // backward), one gather's seconds, and one step's send of the FP32 key and value gradients
    // (cp a backward); 0: the ring exchange.
    double cpGatherPasses = 0;
    double cpGatherS = 0;
    double cpGradStepS = 0;
    double epPerMoeLayerS = 0;
    // One pipeline transfer on the critical path (two a micro-batch and virtual stage): the
    // send, twice where the stack's four transfers run one after another, and the TP gathers
    // of a split send (three a micro-batch).
    double ppTransferS = 0;
    double denseParamsGpu = 0, expertParamsGpu = 0; // the largest stage's, per GPU
    double gradBytes = 2;                           // per gradient element on the wire
    // Per parameter element in the parameter gathers: 2 (BF16), less with FP8 weights (the
    // dense part's embedding stays BF16).
    double denseParamBytes = 2, expertParamBytes = 2;
    double zeroDenseParamBytes = 2; // the same for one ZeRO-3 / FSDP gather unit
    bool shardedGrads = false, zero2 = false, zero3 = false;
    // ZeRO-3 / FSDP: the data-parallel ranks one shard spans (zeroShardRanks()); fewer than DP x
    // CP under hybrid sharding, whose gradient shards are then all-reduced (the DpAr slot, on
    // the replica groups) after each unit's reduce-scatter.
    int zeroShardRanks = 1;
    double dpGradS = 0;           // gradient reduction, per step, all collectives
    double dpParamS = 0;          // parameter gathers, per step, all collectives
    double dpOps = 0, edpOps = 0; // buckets: collectives per step of dpRs/dpAg/dpAr, edp*
    // ZeRO-3 / FSDP: collectives per layer, and their seconds per layer and micro-batch.
    double zeroUnits = 0;
    double zeroFwdPerLayerS = 0, zeroBwdPerLayerS = 0;
    // One layer's parameter gather and gradient reduce-scatter, and how many gathers the
    // backward makes (2 where full recomputation gathers again).
    double zeroGatherPerLayerS = 0, zeroReducePerLayerS = 0, zeroBackwardGathers = 1;
    // ZeRO-3 / FSDP under PP with a stack that keeps the stage's parameters unsharded: one
    // gather and one reduce-scatter per unit and step, not per micro-batch.
    bool zeroHolds = false;
    double zeroEmbedS = 0; // the embedding's (first and last stage), per micro-batch
};

// Fills `c`'s requests and sizes (everything but the costs). `runs`: the stages.
void requestStepComm(const StepSetting &s, const StageRun *runs, int nRuns, StepComm &c);
// The share of an all-to-all's inter-node copies that DeepEP sends (each token crosses to a
// remote node once, however many of its experts live there), for an EP group over `domains`.
double deepEpDispatchScale(const ModelDims &model, int domains);
// After the costs are in: per-layer and per-step communication seconds.
void finishStepComm(const StepSetting &s, StepComm &c);

// The step from its parts: one micro-batch of one layer (`dense`, `moe`), the output layer
// (`out`), the priced communication, every collective with the links to itself (the schedule,
// stepschedule.h, then shares the links where they overlap). `exposed` adds up to the step
// time; `total` is each part on its own. `stageCompute`: the slowest stage's compute for one
// micro-batch.
struct StepTimes
{
    StepBreakdown exposed;
    StepBreakdown total;
    double stageCompute = 0;
    // Of stageCompute, per micro-batch: the waits for activation copies to and from host
    // memory (step/offload.h).
    double offloadStallS = 0;
    // DP without ZeRO-3: exposed.dp's two parts (the gradient reduction the optimizer waits
    // for, the parameter gathers the first forwards wait for), and parameterGatherWait()'s terms
    // for the gathers (unit forward 0: nothing hides them).
    double dpGradExposed = 0, dpParamExposed = 0;
    int paramChunks = 1;
    double paramGroup = 1, paramUnitForward = 0;
    // DP without ZeRO-3: of exposed.dp, the compute the hidden reductions and gathers slowed
    // (persistentGemmOverlapLoss()); the optimizer waits for it after the reduction.
    double dpOverlapLoss = 0;
    // ZeRO-3: of exposed.dp, the compute its hidden gathers and reduce-scatters slowed.
    double zeroOverlapLoss = 0;
    // Of exposed.dp, ZeRO-3 or not: the compute the hidden data-parallel collectives slowed.
    double overlapLossS() const { return dpOverlapLoss + zeroOverlapLoss; }
};
// What hiding `hiddenS` seconds of collectives behind compute costs the compute, on a GPU whose
// GEMMs are persistent kernels (ComputeModel::persistentGemms(); 0 elsewhere): the collective's
// kernels hold some SMs, so each GEMM running beside it runs its last CTAs as a second wave and
// takes twice as long (FSDP's matmuls on H100, pytorch/pytorch#143988; PR #144974: "can double
// the latency"), while attention and element-wise kernels keep their rate. `gemmShare`: the
// GEMMs' share of the compute beside the collectives. The stack's TP overlap (Transformer
// Engine's userbuffers) and EP overlap (DeepEP) size their GEMMs to the SMs left and are priced
// apart.
double persistentGemmOverlapLoss(const ComputeModel &compute, double hiddenS, double gemmShare);
// How long the first forwards wait for the step's parameter gathers of `gatherS` seconds that
// start `lead` seconds before the first forward: they arrive in `chunks` equal parts (one per
// model chunk), part k needed after k x `group` + 1 forward units of `unitForward` seconds.
double parameterGatherWait(double gatherS, int chunks, double group, double unitForward, double lead);
// The TP collectives one layer of `l` leaves exposed under TP overlap with sequence
// parallelism, each hidden behind its own GEMM, forward, recomputed and backward. `slow`: the
// straggler's factor on the GEMMs; `blocks`: the layer's blocks with TP collectives (2 for a
// dense layer, StepComm::tpBlocksPerMoeLayer for a MoE layer).
double overlappedTpPerLayer(
        const LayerTimes &l, const StepComm &c, int tp, double slow, double blocks);
// The optimizer step's memory traffic on one GPU, in bytes: memory-bound kernels over the
// local parameters (`params`, after TP / PP / EP) and this GPU's shard of them (`shardWays`:
// the data-parallel ranks the optimizer state is sharded over, 1 without sharding), the way
// Megatron-Core's optimizers run it (megatron/core/optimizer, distrib_optimizer.py and
// optimizer.py at core_r0.8.0):
// - zeroGrads: the gradient buffer zeroed before the step's first micro-batch (zero_grad_buffer):
//   the whole local buffer where one exists (DDP, the distributed optimizer), the shard under
//   ZeRO-2/3 and FSDP, which keep only theirs;
// - castGrads: a 16-bit gradient buffer's shard cast to the FP32 main gradients
//   (_copy_model_grads_to_main_grads; an FP32 buffer's shard is a view, no copy);
// - gradNorm: the norm for gradient clipping over the shard's FP32 main gradients (one read);
// - update: Adam over the shard (adamUpdateBytes with FP32 master weights and gradients);
// - paramCopy: the updated FP32 master weights written back to the 16-bit weights
//   (_copy_main_params_to_model_params: read 4, write 2).
struct OptimizerTraffic
{
    double zeroGrads = 0, castGrads = 0, gradNorm = 0, update = 0, paramCopy = 0;
    double total() const { return zeroGrads + castGrads + gradNorm + update + paramCopy; }
};
// One Adam update per parameter (a fused multi-tensor kernel, apex / Transformer Engine / torch
// `fused=True`): read the weight, its gradient and the moments, write the weight and the moments.
// `stateBytes`: the moments' bytes per parameter (8 for two FP32 moments).
constexpr double adamUpdateBytes(double paramBytes, double gradBytes, double stateBytes)
{
    return paramBytes + gradBytes + stateBytes + paramBytes + stateBytes;
}
// `optimizerBytesPerParam`: the stack's master weights and moments per parameter (12: FP32
// master weights and two FP32 moments; NeMo's BF16 moments: 8). `gradBytes`: the gradient
// buffer's type (4 FP32, 2 BF16). `fullGradBuffer`: the GPU holds every local parameter's
// gradient (not ZeRO-2/3 / FSDP).
OptimizerTraffic optimizerTraffic(double params,
                                  int shardWays,
                                  double gradBytes,
                                  double optimizerBytesPerParam,
                                  bool fullGradBuffer);

StepTimes composeStep(const StepSetting &s,
                      const StageRun *runs,
                      int nRuns,
                      const LayerTimes &dense,
                      const LayerTimes &moe,
                      const LayerTimes &out,
                      const StepComm &c,
                      const ComputeModel &compute);

// The dollars a step costs at `pricePerGpuHour` (0: unknown).
inline double stepCost(double pricePerGpuHour, int gpus, double stepS)
{
    return pricePerGpuHour > 0 ? pricePerGpuHour * gpus * stepS / 3600.0 : 0.0;
}

// What a priced step gives per second and per dollar: the one formula of the evaluation and the
// planner.
struct StepThroughput
{
    double tokensPerS = 0;
    double tokensPerSPerGpu = 0;
    double modelTflopsPerGpu = 0;
    double mfu = 0;                  // model FLOPs against the dense BF16 peak
    double costPerStep = 0;          // dollars (0: no price)
    double costPerMillionTokens = 0; // 0 without a price
    double tokensPerDollar = 0;      // 0 without a price
};
// `modelFlopsPerStep` as modelFlopsPerStep() counts them; `bf16PeakFlops` per GPU
// (ComputeModel::bf16Peak()); `pricePerGpuHour` 0 when unknown.
StepThroughput stepThroughput(double tokensPerStep,
                              double modelFlopsPerStep,
                              double stepTimeS,
                              int gpus,
                              double bf16PeakFlops,
                              double pricePerGpuHour);

// The regime whose validation runs give a training step's uncertainty band (fidelity.h):
// `moe` when the model is MoE with EP above 1, `zero3` with ZeRO-3 or FSDP.
Regime trainingRegime(const GpuSpec &gpu,
                      Precision precision,
                      int gpus,
                      bool moe,
                      bool zero3,
                      bool contextParallel,
                      const std::string &stack);

} // namespace railyard::engine
