#pragma once

// The planner: every valid parallel configuration of a layout's model on its cluster, priced by
// a fast path (one representative group per dimension with the default placement, the
// evaluation's own cost formulas: stepcost.h, plannerpatterns.h), filtered by memory and ranked.

#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

struct StackProfile;

enum class PlanObjective { StepTime, Cost, TokensPerDollar };
const char *toString(PlanObjective o); // "step_time", "cost", "tokens_per_dollar"
std::optional<PlanObjective> planObjectiveFromString(const std::string &s);

// How optimizer state, gradients and weights are sharded over the data-parallel ranks.
enum class Sharding { Zero0, Zero1, Zero2, Zero3, Fsdp };
const char *toString(Sharding s); // "zero0" (none), "zero1" (distributed optimizer), ...

// The rank orders the planner places ranks in (rank r on GPU r): Megatron's default, and
// pipeline stages inside data-parallel replicas (Llama 3's), tried where every group stays a
// regular stride of ranks and the two differ (PP and DP both above 1; CP 1).
enum class PlanOrder { Megatron, PipelineInner };
const char *toString(PlanOrder o); // the layout's order string: "tp-cp-ep-dp-pp", ...

// One configuration: parallel sizes, rank order and the training settings the planner varies.
// Expert TP is 1; sequence parallelism is on with TP.
struct PlanChoice
{
    int tp = 1, cp = 1, ep = 1, pp = 1, vp = 1, dp = 1;
    int microBatch = 1;
    Recompute recompute = Recompute::Selective;
    Sharding sharding = Sharding::Zero1;
    PlanOrder order = PlanOrder::Megatron;
    // Layers whose activations go to host memory (step/offload.h): only with a stack that
    // offers it, PP 1 and no recomputation; 0: none.
    int offloadLayers = 0;
    bool operator==(const PlanChoice &) const = default;
};

// What the fast path gives for one configuration.
struct PlanPrice
{
    bool fits = false;      // memory within the GPU's usable HBM
    double memoryGiB = 0;   // per GPU, the most loaded stage
    MemoryBreakdown memory; // that stage's
    double stepTimeS = 0;   // 0 when not priced (does not fit)
    StepBreakdown exposed;  // adds up to the step time
    int microBatches = 0;   // per replica and step
    int shardGroup = 0;     // the layout's hybrid sharding group where it applies (0: none)
    double tokensPerS = 0;
    double mfu = 0;
    double costPerStep = 0; // dollars (0: no price)
    double costPerMillionTokens = 0;
    double tokensPerDollar = 0;
    // How unsure the step time is: the evaluation's band (step_time_band_s) for the plan's
    // regime, as a half-width fraction, and its basis (PlanSearch::bandBases; -1: none).
    double bandFraction = 0;
    int bandBasis = -1;
};

struct Plan
{
    PlanChoice choice;
    PlanPrice price;
};

// Whether PlanOrder::PipelineInner applies to the configuration's sizes: every group is a
// regular stride of ranks in that order, and the order differs from Megatron's (PP and DP both
// above 1).
bool pipelineInnerApplies(const PlanChoice &c, bool moe);

// The optimizer settings a sharding choice stands for; the gradient type follows the stack when
// FSDP is switched on or off, and is the layout's (`base`) otherwise.
void setSharding(OptimizerConfig &o,
                 const OptimizerConfig &base,
                 const StackProfile &stack,
                 Sharding s);
// The layout's hybrid sharding group where it applies to `c` (weights sharded, the group
// dividing DP x CP); otherwise none: the plan shards over every data-parallel rank.
int plannedShardGroup(const OptimizerConfig &base, const PlanChoice &c);

// The fast path for single configurations (the search uses the same pieces with its loops'
// invariants hoisted). Keeps caches: one pricer per thread.
class PlanPricer
{
public:
    PlanPricer(const Layout &layout, const Topology &topology);
    ~PlanPricer();
    PlanPricer(const PlanPricer &) = delete;
    PlanPricer &operator=(const PlanPricer &) = delete;

    bool ok() const; // the layout has a model and a known stack
    const std::string &error() const;
    // Whether the configuration is one the search would try, and if not why.
    bool valid(const PlanChoice &choice, std::string *why = nullptr) const;
    // Memory always; the step only when it fits (or `always`).
    PlanPrice price(const PlanChoice &choice, bool always = false);
    // The fewest layers whose activations, offloaded to host memory, make `choice` fit (its own
    // offloadLayers aside); 0 when it fits without, when offload cannot apply to it or when no
    // count makes it fit.
    int offloadToFit(const PlanChoice &choice);
    // The most layers offload can take in `choice` (all but one); 0 where it cannot apply.
    int mostOffload(const PlanChoice &choice) const;
    // The same with every collective given the links to itself (no sharing where they run at
    // once): a lower bound of price()'s step time and, through it, of its cost (the schedule
    // only stretches collectives), at a small share of its cost.
    PlanPrice priceAlone(const PlanChoice &choice, bool always = false);
    // price() of the configuration priceAlone() last priced, from its `alone` price (only the
    // step schedule runs again); none as soon as its step is known to be longer than
    // `giveUpAbove` (one pipeline stage ends later).
    std::optional<PlanPrice> shareLinks(
            const PlanPrice &alone, double giveUpAbove = std::numeric_limits<double>::infinity());

    double hbmGiB() const;
    double pricePerGpuHour() const; // the layout's, else the catalog's (0: none)
    int gpus() const;
    double patternBuildSeconds() const; // building collective patterns so far
    std::size_t patterns() const;
    // What each PlanPrice::bandBasis says, in words.
    const std::vector<std::string> &bandBases() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

struct PlanProgress
{
    std::int64_t evaluated = 0;
    double fraction = 0; // of the outer loop
    double elapsedS = 0;
};

struct PlanOptions
{
    PlanObjective objective = PlanObjective::StepTime;
    int top = 10;
    // Checked every few thousand configurations: set it from another thread to stop early.
    const std::atomic<bool> *cancel = nullptr;
    // Called from the searching thread at most every `progressIntervalS`.
    std::function<void(const PlanProgress &)> progress;
    double progressIntervalS = 0.05;
    // Also keep the Pareto front of step time against memory per GPU (PlanSearch::pareto).
    bool pareto = false;
    // Price each fitting configuration with its collectives alone first (PlanPricer::
    // priceAlone(), a lower bound of its step) and share the links (the step schedule, most of
    // a configuration's cost) only where that bound could still enter the top plans or the
    // front: the same plans at the same prices as scheduling every one. Off: every one is.
    bool boundFirst = true;
};

struct PlanSearch
{
    bool ok = false;         // searched (even if nothing fits)
    std::string error;       // why not (no model, unknown stack)
    std::vector<Plan> plans; // fitting, best first by the objective
    // With PlanOptions::pareto: the fitting plans no other beats on both step time and memory
    // per GPU, least memory first (so step time falls along it).
    std::vector<Plan> pareto;
    std::int64_t evaluated = 0; // valid configurations priced (memory, and the step if it fits)
    std::int64_t fitting = 0;   // of those, within HBM (their step priced)
    std::int64_t scheduled = 0; // of those, priced with the links shared (PlanOptions::boundFirst)
    double elapsedS = 0;
    double patternBuildS = 0; // of which building collective patterns
    bool cancelled = false;
    std::optional<Plan> leastMemory; // when nothing fits: the closest
    std::string noFit;               // when nothing fits: why, for people
    double hbmGiB = 0;
    double pricePerGpuHour = 0;
    int gpus = 0;
    PlanObjective objective = PlanObjective::StepTime;
    std::vector<std::string> assumptions;
    std::vector<std::string> bandBases; // indexed by PlanPrice::bandBasis
};

PlanSearch searchPlans(const Layout &layout,
                       const Topology &topology,
                       const PlanOptions &options = {});

// True when `a` ranks before `b` under `objective` (ties broken by memory, then step time).
bool planBefore(const PlanPrice &a, const PlanPrice &b, PlanObjective objective);

// The layout with the plan's parallel sizes and training settings (the default order and
// mapping): what applying a plan changes, in one edit.
Layout applyPlan(const Layout &layout, const PlanChoice &choice);

} // namespace railyard::engine
