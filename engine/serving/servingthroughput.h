#pragma once

// From the priced passes to what a deployment serves: requests per second, the decode batch,
// time to first token (waiting + prefill + KV transfer) and time per output token, closed loop
// (a fixed number of requests in flight, as benchmarks sweep concurrency) or open loop (a
// request rate). Aggregated replicas share their time between prefill chunks and decode steps;
// disaggregated pools each do one. Past what the KV cache holds, requests queue.

#include "layout/layout.h"

#include <functional>
#include <vector>

namespace railyard::engine {

struct ThroughputInputs
{
    bool disaggregated = false;
    ServingPhase phase = ServingPhase::Both;
    // Prefill replicas: a share of the pool when the decode replicas are solved in classes
    // (replicas that run at different speeds, each class with its share of the requests).
    double prefillReplicas = 1;
    int decodeReplicas = 1;
    int prefillServers = 1; // prefills one prefill replica runs at once (its attention-DP ranks)
    double inputTokens = 1, outputTokens = 1;
    double accepted = 1; // tokens a decode step yields per request
    double prefillS = 0; // one request's prefill
    // Disaggregated: the prefill replicas by pace when they differ (a straggler paces its own
    // instance): each class's share of the prefill replicas and one request's prefill on them.
    // Requests are spread evenly over the prefill replicas (round robin), so each class serves
    // its share of them at its own pace (its load and its wait the pool's queue's at that
    // pace), and the slowest class saturates first. Empty: every replica at prefillS.
    struct PrefillClass
    {
        double share = 1;
        double prefillS = 0;
    };
    std::vector<PrefillClass> prefillClasses;
    int prefillChunks = 1;  // chunked-prefill steps (aggregated: each rides a decode step)
    int maxConcurrency = 1; // per decode replica
    double concurrency = 0; // per decode replica (closed loop); 0 with a request rate
    double requestRate = 0; // requests/s offered to the cluster (open loop)
    // Seconds of one decode step at a batch of `requests` per replica.
    std::function<double(double)> decodeStepS;
    // Exposed KV-transfer seconds per request at `requestsPerS` (disaggregated).
    std::function<double(double)> kvTransferS;
    double kvMaxRate = 0; // requests/s the KV links carry at most (0: no limit)
};

struct ThroughputResult
{
    double requestsPerS = 0;
    double decodeBatch = 0; // requests per decode step per replica
    double decodeStepS = 0;
    double tpotS = 0; // per output token, prefill interference included
    double ttftS = 0;
    double slowTtftS = 0;   // the TTFT of the slowest prefill class's requests (else ttftS)
    double waitS = 0;       // of TTFT: queueing for a slot and for the prefill
    double kvTransferS = 0; // of TTFT
    double e2eS = 0;
    double concurrency = 0;  // per decode replica, as served
    double prefillShare = 0; // aggregated: the share of a replica's time prefilling
    double queued = 0;       // requests per replica waiting past the KV cache's capacity
    bool overloaded = false; // open loop: the offered rate exceeds what the cluster serves
    double capacity = 0;     // the most requests/s the deployment serves
};

ThroughputResult solveThroughput(const ThroughputInputs &in);

} // namespace railyard::engine
