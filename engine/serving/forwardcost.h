#pragma once

// The two passes a serving instance runs, priced on one GPU of its slowest stage with the
// communication of every group at once: one decode step (decodestep.cpp) and one request's
// prefill (prefill.cpp).

#include "serving/servingcomm.h"
#include "serving/servingcompute.h"
#include "serving/servingsetup.h"

#include <span>

namespace railyard::engine {

class LinkTraffic;
class Topology;

// A pool's collectives, priced on its groups.
struct PoolComm
{
    CollectivePricer attentionAr; // attention-TP groups: attention and dense MLP outputs
    CollectivePricer tpAr;        // TP groups: MoE outputs of expert TP (without EP dispatch)
    CollectivePricer dispatch;    // EP groups: MoE dispatch and combine (all-to-all)
    CollectivePricer pipeline;    // one GPU per stage: activations between stages
};
// Every group of the pool at once (the evaluation).
PoolComm priceComm(const Topology &topology,
                   const PoolGroups &groups,
                   const ServingSetup &setup,
                   const ServingPoolShape &pool,
                   LinkTraffic &scratch);

// How many collectives of each kind one pass runs, and their sizes (bytes per rank, nccl-tests'
// convention), for the link loads and the timeline.
struct PassCollectives
{
    double attentionAr = 0, attentionArBytes = 0;
    double tpAr = 0, tpArBytes = 0;
    double dispatch = 0, dispatchBytes = 0; // and as many combines
    double combineBytes = 0;
    double pipelineSends = 0, pipelineBytes = 0;
};

// One pass: seconds by what bounds them (one GPU of the slowest stage, or through every stage
// for a request's latency).
struct PassCost
{
    double compute = 0;
    double weightsRead = 0;
    double attention = 0;
    double tp = 0;       // attention and MLP all-reduces
    double ep = 0;       // MoE dispatch and combine
    double pp = 0;       // sends between stages
    double overhead = 0; // launch and scheduling the GPU waits for
    double weightBytes = 0;
    double kvBytes = 0;
    PassCollectives collectives; // per pass, on every stage
    double total() const { return compute + weightsRead + attention + tp + ep + pp + overhead; }
};

// One decode step of `batch` requests per replica, each with `context` cached tokens on average
// (input + half the output), through every stage: the time between two tokens of a request
// without speculation (with it, the time of one verification step and its drafts).
// `stageSlowdown` (absent: 1): per pipeline stage, how much longer its kernels take (a straggler
// among the stage's GPUs: the slowest's slowdown; its TP and EP groups wait for it at every
// collective, so the whole stage runs at its pace).
PassCost decodeStep(const ServingSetup &setup,
                    const ServingPoolShape &pool,
                    const PoolComm &comm,
                    const ComputeModel &compute,
                    double batch,
                    double context,
                    std::span<const double> stageSlowdown = {});

// One request's prefill of `tokens` input tokens in chunks of the prefill budget, through every
// stage (chunks pipelined across stages); `concurrentRequests`: prefills running at once on the
// replica's attention-DP ranks (their tokens share the EP dispatch). `stageSlowdown` as for
// decodeStep.
PassCost prefillRequest(const ServingSetup &setup,
                        const ServingPoolShape &pool,
                        const PoolComm &comm,
                        const ComputeModel &compute,
                        double tokens,
                        double concurrentRequests,
                        std::span<const double> stageSlowdown = {});

// Mean tokens a speculative decoding step accepts per request (1 without speculation): the
// layout's acceptance, else 1 + p + ... + p^k for k drafted tokens at the method's per-token
// acceptance p: MTP 0.85 (DeepSeek-V3 technical report, arXiv 2412.19437, section 5.4.3: "the
// acceptance rate of the second token prediction ranges between 85% and 90%"), EAGLE 0.66
// (EAGLE-3 heads for Llama 3.1 8B and 3.3 70B accept 2.77 and 2.88 tokens per step with 7
// drafts on MT-bench: huggingface.co/nebius/EAGLE3-Llama-3.3-70B-Instruct, "Comparison with
// Public Checkpoints"). A draft model has no default: its acceptance must be given.
double acceptedTokensPerStep(const ServingConfig &config);

} // namespace railyard::engine
