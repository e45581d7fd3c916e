#pragma once

// What recovers most of what a fault costs: a change to the job or its placement, priced on
// the faulted cluster, given as the layout to apply (one edit: the GUI applies it as one undo
// step). Tried: dropping the data-parallel replicas that hold the failed or slow GPUs (a
// smaller DP), swapping a failed server's ranks with another server's (off the failed server
// or rail, onto a spare or a lighter pipeline stage), and the other rank orders.

#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

struct Recovery
{
    // "smaller-dp", "swap-servers", "rank-order"; serving: "drop-replicas", "swap-servers",
    // "swap-replicas", "move-replica"
    std::string kind;
    std::string summary; // for people: "drop DP replica 5 (GPU 17's): DP 128 -> 127"
    Layout layout;       // the layout to apply, faults kept (they are the cluster's state)
    // Training: the step and tokens/s. Serving: TPOT and output tokens/s (the cluster's; the
    // per-GPU rate is over the GPUs the layout holds), with TTFT below.
    double stepTimeS = 0;
    double tokensPerS = 0;
    double ttftS = 0;                // serving
    double costPerMillionTokens = 0; // 0 without a price
    // The share of the throughput the faults took that it wins back (1: all of it; above 1:
    // better than the healthy cluster's job).
    double recovered = 0;
    int idleGpus = 0;  // GPUs of the cluster it leaves without a rank
    std::string price; // what it costs, in words
    // The same change on the healthy cluster: how much faster than the layout as it is it
    // would be there (0 when not faster, or not priced). Above 0, the change is worth making
    // whatever the faults: the layout's own placement is not the fastest.
    double healthyGain = 0;
};

// The servers whose GPUs a fault touches directly (taken down or slowed, or whose NICs,
// switches or links it takes), ascending.
std::vector<int> affectedServers(const Topology &faulted);

// Every recovery tried, priced on `faulted`, that beats the faulted job's tokens/s: best
// first. `healthy` and `faultedEval` are the job's evaluations without and with the faults.
std::vector<Recovery> findRecoveries(const Layout &layout,
                                     const Topology &faulted,
                                     const Evaluation &healthy,
                                     const Evaluation &faultedEval);

} // namespace railyard::engine
