#pragma once

// What a layout's faults (cluster.faults) cost its job: the step before and after, the
// per-dimension breakdown of the change, the links that now carry more, what was rerouted,
// and a placement or job change that recovers most of the loss (faultrecovery.h).

#include "faults/faultrecovery.h"
#include "layout/layout.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "step/evaluationdiff.h"
#include "topology/topology.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// One number before and after the faults. Training reports step_time_s, tokens_per_s, mfu
// and cost_per_million_tokens; serving (servingfaultimpact.h) tpot_s, ttft_s,
// output_tokens_per_s_per_gpu, tokens_per_s_per_user, output_tokens_per_s (and
// slowest_tpot_s, cost_per_million_output_tokens where they apply). The report writers print
// whatever it holds.
struct ImpactMetric
{
    std::string key; // as in evaluate --json
    double before = 0;
    double after = 0;
};

// One dimension of the step breakdown (exposed seconds) before and after.
struct BreakdownChange
{
    // "compute", "tp", ..., as in breakdown_s; serving: "decode.tp", "prefill.kv_transfer", ...
    // (breakdown_s.decode.tp: one decode step, and one request's prefill)
    std::string dim;
    double before = 0;
    double after = 0;
};

struct FaultImpact
{
    Layout layout;      // as analyzed (faults included)
    Evaluation healthy; // the layout without its faults (training)
    Evaluation faulted; // as it is (training)
    // A serving layout: its evaluations instead (healthy and faulted above stay empty).
    bool serving = false;
    ServingEvaluation servingHealthy, servingFaulted;
    // Both evaluations priced; else error() says why not.
    bool priced() const
    {
        return serving ? servingHealthy.ok && servingFaulted.ok : healthy.ok && faulted.ok;
    }
    std::string error() const;
    std::vector<ImpactMetric> metrics;
    std::vector<BreakdownChange> breakdown; // every dimension, in breakdown_s order
    // The links whose utilization changed most (more load first), with their bytes per step:
    // where the detoured traffic went. Down links show their load falling to 0.
    std::vector<LinkChange> links;
    std::vector<std::string> rerouted; // Topology::faultNotes()
    // What the faults did to the job itself: serving replicas out of service (the gpu-out
    // warnings). Training says this in its evaluation's warnings.
    std::vector<std::string> jobChanges;
    std::optional<Recovery> recovery; // what recovers most of the loss, if anything does
    std::vector<Recovery> consideredRecoveries;
    std::string recoveryNote; // why there is none, when there is none
};

struct ImpactOptions
{
    std::size_t links = 10; // how many changed links to list
    bool recovery = true;   // search for a recovery (prices a few more layouts)
};

// Prices `layout` with and without its faults on `healthy` (its cluster built without
// faults) and `faulted` (with them). The evaluations carry link loads. A serving layout is
// priced as serving (servingfaultimpact.h).
FaultImpact analyzeFaults(const Layout &layout,
                          const Topology &healthy,
                          const Topology &faulted,
                          const ImpactOptions &options = {});

// `layout` without its faults (the healthy cluster the impact is measured against).
Layout withoutFaults(const Layout &layout);

} // namespace railyard::engine
