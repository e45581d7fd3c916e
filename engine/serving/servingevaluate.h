#pragma once

// Prices a serving layout (DESIGN.md, "Serving (inference) workloads"): time to first token,
// time per output token, throughput per GPU and per user, memory and the concurrency it holds,
// the bytes every link carries per decode step and per request, one decode step's and one
// request's timeline, and the warnings with what they cost.

#include "layout/layout.h"
#include "step/evaluate.h"
#include "step/timeline.h"
#include "step/workspace.h"
#include "topology/topology.h"

#include <memory>
#include <string>
#include <vector>

namespace railyard::engine {

// Seconds of one decode step or one request's prefill, by what the GPUs do.
struct ServingBreakdown
{
    double compute = 0;     // compute-bound GEMMs, element-wise kernels
    double weightsRead = 0; // memory-bound GEMMs: weights (and activations) through HBM
    double attention = 0;   // core attention: KV cache reads, score matmuls
    double tp = 0;          // TP all-reduces
    double ep = 0;          // MoE dispatch and combine
    double pp = 0;          // sends between pipeline stages
    double kvTransfer = 0;  // disaggregated: the request's KV cache to its decode GPUs (exposed)
    double overhead = 0;    // kernel launches outside CUDA graphs, scheduling
    double sum() const
    {
        return compute + weightsRead + attention + tp + ep + pp + kvTransfer + overhead;
    }
};

// GiB per GPU of the most loaded stage of a pool.
struct ServingMemoryUse
{
    double weightsGiB = 0;
    double kvCacheGiB = 0; // the KV cache of the requests in flight
    double activationsGiB = 0;
    double kvPoolGiB = 0; // what the stack sets aside for KV cache
    double hbmGiB = 0;    // usable
    double totalGiB() const { return weightsGiB + kvCacheGiB + activationsGiB; }
};

// How sure a latency is: a band from the part-level errors measured so far (servingband.h).
struct ServingBand
{
    double lowS = 0, highS = 0;
    double fraction = 0; // half-width as a share of the value
};

// Per link (dense by link id): bytes of one decode step (every decode replica's) and of one
// request (its prefill's collectives and KV transfer, averaged over replicas), and the
// steady-state utilization (bytes per second over the achieved rate). `decodeStep` keeps the
// training type so a view colours it alike: bytesUp/Down per decode step, utilization the
// steady state's, peakUtilization the share of the busiest phase.
struct ServingLinks
{
    LinkLoads decodeStep;
    std::vector<float> requestBytes; // both directions
};

struct ServingEvaluation
{
    bool ok = false;
    std::string error; // why it cannot be priced (when !ok), naming the key
    bool disaggregated = false;
    std::string phase; // "both", "prefill", "decode"
    // Latency.
    double ttftS = 0;     // time to first token: queueing + prefill (+ KV transfer)
    double ttftWaitS = 0; // of it, waiting (for a slot, for the prefill server)
    double tpotS = 0;     // time per output token after the first
    double e2eLatencyS = 0;
    // With a straggler or a link down or degraded (cluster.faults) the replicas run at
    // different speeds: TPOT and TTFT above are the mean a request sees (requests spread evenly
    // over the replicas, each holding as many in flight), these the slowest replica's (else the
    // same): every percentile above the share of requests the faster replicas serve is its.
    double slowestTpotS = 0, slowestTtftS = 0;
    // The decode replicas (in service) by how they run, when they differ: each class's replica
    // indices and what its requests see. Empty when every replica runs alike.
    struct ReplicaClass
    {
        std::vector<int> replicas;
        double tpotS = 0, ttftS = 0, requestsPerS = 0;
    };
    std::vector<ReplicaClass> replicaClasses;
    // Throughput.
    double outputTokensPerS = 0; // the cluster
    double outputTokensPerSPerGpu = 0;
    double inputTokensPerSPerGpu = 0;
    double tokensPerSPerUser = 0; // 1 / TPOT
    double requestsPerS = 0;
    double costPerMillionOutputTokens = 0; // 0 without a price
    // Load.
    // The GPUs the pools hold (per-GPU rates and the price are over them, those out of service
    // included: they are still held).
    int gpus = 0;
    // GPUs out (cluster.faults) take their replica out of service; the others serve the load.
    int gpusOutOfService = 0;                     // down, and the idle GPUs of their replicas
    std::vector<int> replicasOutOfService;        // decode (aggregated: the only) pool's
    std::vector<int> prefillReplicasOutOfService; // disaggregated
    double concurrency = 0;                       // requests in flight per (decode) replica
    double decodeBatch = 0;                       // requests per decode step per replica
    int maxConcurrency = 0;                       // what one (decode) replica's KV cache holds
    double acceptedTokensPerStep = 1;
    // Parts.
    ServingBreakdown decode;  // one decode step
    ServingBreakdown prefill; // one request's prefill (+ its KV transfer)
    double decodeStepS = 0;   // one decode step of the batch (TPOT without prefill interference)
    ServingMemoryUse memory;  // decode GPUs (the only pool when aggregated)
    ServingMemoryUse prefillMemory;
    ServingBand tpotBand, ttftBand;
    std::string bandBasis;
    // What runs: "nccl ring/ll", "one-shot", "deepep" for the decode step's collectives.
    std::string tpMethod, epMethod;
    std::shared_ptr<const ServingLinks> links; // null unless asked for
    StepTimeline decodeTimeline;               // one decode step, stage by stage
    StepTimeline requestTimeline; // one request's life: wait, prefill, KV transfer, decode
    std::vector<Warning> warnings;
    std::vector<std::string> assumptions;
};

class ServingCache;

struct ServingOptions
{
    bool linkLoads = true;
    bool timeline = true;
    // false: the numbers alone (latencies, rates, memory, the concurrency held), without the
    // warnings, the bands and their basis, the assumptions, or the decode step's breakdown at
    // the served batch (the planner's mode).
    bool details = true;
    // Pricing shared by the evaluations of one plan (servingcache.h); null: none.
    ServingCache *cache = nullptr;
};

// Prices the layout's serving workload on `topology`. Never throws for a bad configuration:
// ok == false and `error` instead.
ServingEvaluation evaluateServing(const Layout &layout,
                                  const Topology &topology,
                                  EvaluationWorkspace &workspace,
                                  const ServingOptions &options = {});
ServingEvaluation evaluateServing(const Layout &layout,
                                  const Topology &topology,
                                  const ServingOptions &options = {});

} // namespace railyard::engine
