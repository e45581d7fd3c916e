#pragma once

// What a serving layout's faults (cluster.faults) cost it: TPOT, TTFT, output tokens/s per GPU
// and per user before and after, the change of one decode step and of one request's prefill
// part by part, the links whose bytes per decode step changed (where the detoured traffic
// went), and a change that wins back most of the loss (a replica dropped, or moved onto other
// servers), priced. analyzeFaults() (faultimpact.h) calls it for serving layouts; the sweep
// (faultsweep.h) prices its candidates with priceServingFault().

#include "faults/faultimpact.h"
#include "layout/layout.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

FaultImpact analyzeServingFaults(const Layout &layout,
                                 const Topology &healthy,
                                 const Topology &faulted,
                                 const ImpactOptions &options = {});

// The serving impact's numbers, before and after, in the order the reports print them:
// tpot_s, ttft_s, output_tokens_per_s_per_gpu, tokens_per_s_per_user, output_tokens_per_s,
// requests_per_s, slowest_tpot_s and slowest_ttft_s (when a fault makes the replicas differ) and
// cost_per_million_output_tokens (with a price).
std::vector<ImpactMetric> servingImpactMetrics(const ServingEvaluation &healthy,
                                               const ServingEvaluation &faulted);
// Every part of one decode step ("decode.compute", ...) and of one request's prefill
// ("prefill.kv_transfer", ...), before and after.
std::vector<BreakdownChange> servingImpactBreakdown(const ServingEvaluation &healthy,
                                                    const ServingEvaluation &faulted);

// What recovers most of what the faults cost a serving layout, priced on `faulted`, best
// first (by output tokens/s): dropping the replicas on the failed or slow GPUs (the others take
// their load), swapping a failed server's ranks with a spare's or another replica's, or a
// different placement of the replicas: one on the faulted element swapped with another
// replica of the same size (of either pool) or moved onto idle GPUs.
std::vector<Recovery> findServingRecoveries(const Layout &layout,
                                            const Topology &faulted,
                                            const ServingEvaluation &healthy,
                                            const ServingEvaluation &faultedEval);

// `layout` (serving) without replicas `out` of its pool `decode` (false: the prefill pool of a
// disaggregated layout), the others serving the same load (closed loop: the requests in flight
// per replica raised to keep the total, to the nearest whole request). Empty `error` on success.
struct ServingWithout
{
    Layout layout;
    std::string error;
    std::string summary; // "serve without replica 1: 2 -> 1 replicas, 32 -> 64 in flight each"
};
ServingWithout servingWithoutReplicas(const Layout &layout,
                                      bool decode,
                                      const std::vector<int> &out);

} // namespace railyard::engine
