#pragma once

// The planner on a serving layout (DESIGN.md, "Serving (inference) workloads"): searches TP, EP,
// PP, replicas, attention DP, disaggregated prefill/decode splits and the concurrency per
// replica on the layout's cluster, prices each with the serving model, drops those that do not
// fit or break a TTFT / TPOT limit, and returns the Pareto front of output tokens/s per GPU
// against tokens/s per user (the chart serving benchmarks publish).

#include "base/jsonvalue.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// How far a search has come (ServingPlanOptions::progress).
struct ServingPlanProgress
{
    long long evaluated = 0;
    double fraction = 0; // of the pool shapes and splits to sweep
    double elapsedS = 0;
};

struct ServingPlanOptions
{
    std::optional<double> ttftLimitS; // drop configurations slower to the first token
    std::optional<double> tpotLimitS; // drop configurations slower per output token
    bool disaggregation = true;       // also search separate prefill and decode pools
    int maxConcurrency = 1 << 16;     // the largest requests in flight per replica tried
    // Price what configurations share once (servingcache.h: a pool's collectives, prefill and
    // decode steps) and skip what they do not need (warnings, bands). false: every
    // configuration evaluated from scratch, as `evaluate` would (the same front, slower).
    bool shareWork = true;
    // Checked before every configuration: set it from another thread to stop early (the result
    // is then ok, cancelled, with the front of what was priced).
    const std::atomic<bool> *cancel = nullptr;
    // Called from the searching thread at most every `progressIntervalS`.
    std::function<void(const ServingPlanProgress &)> progress;
    double progressIntervalS = 0.05;
};

// One priced configuration.
struct ServingPlanPoint
{
    bool disaggregated = false;
    ServingPool serving; // aggregated: the one pool (replicas = DP)
    ServingPool prefill, decode;
    int concurrency = 0; // requests in flight per (decode) replica
    int gpus = 0;
    double outputTokensPerSPerGpu = 0;
    double tokensPerSPerUser = 0;
    double ttftS = 0, tpotS = 0;
    double requestsPerS = 0;
    double memoryGiBPerGpu = 0;
    int maxConcurrency = 0;
};

struct ServingPlanResult
{
    bool ok = false;
    std::string error;
    int gpus = 0;
    long long evaluated = 0;  // configurations priced
    long long infeasible = 0; // do not fit, or not a valid split of the model
    long long overLimits = 0; // priced, but past --ttft or --tpot
    double elapsedS = 0;
    bool cancelled = false;              // ServingPlanOptions::cancel stopped it
    std::vector<ServingPlanPoint> front; // by tokens/s per user, fastest first
};

ServingPlanResult planServing(const Layout &layout,
                              const Topology &topology,
                              const ServingPlanOptions &options = {});

// `railyard plan FILE --json` on a serving layout.
Json servingPlanJson(const ServingPlanResult &r,
                     const ServingPlanOptions &options,
                     const std::string &file);

} // namespace railyard::engine
