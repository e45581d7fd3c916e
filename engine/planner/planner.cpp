// What a plan is: its names, the settings it stands for, the order plans rank in, and the
// layout it gives (applyPlan). Pricing plans: planpricer.cpp; searching them: plannersearch.cpp.
#include "planner/planner.h"

#include "layout/softwarestack.h"

namespace railyard::engine {

const char *toString(PlanObjective o)
{
    switch (o) {
    case PlanObjective::StepTime: return "step_time";
    case PlanObjective::Cost: return "cost";
    case PlanObjective::TokensPerDollar: return "tokens_per_dollar";
    }
    return "step_time";
}

std::optional<PlanObjective> planObjectiveFromString(const std::string &s)
{
    for (PlanObjective o :
         {PlanObjective::StepTime, PlanObjective::Cost, PlanObjective::TokensPerDollar})
        if (s == toString(o))
            return o;
    return std::nullopt;
}

const char *toString(Sharding s)
{
    switch (s) {
    case Sharding::Zero0: return "zero0";
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    case Sharding::Zero3: return "zero3";
    case Sharding::Fsdp: return "fsdp";
    }
    return "zero0";
}

const char *toString(PlanOrder o)
{
    return o == PlanOrder::PipelineInner ? "tp-cp-ep-pp-dp" : kTopologyAwareOrder;
}

// The optimizer settings a sharding choice stands for; the gradient type follows the stack when
// FSDP is switched on or off, and is the layout's otherwise.
void setSharding(OptimizerConfig &o,
                 const OptimizerConfig &base,
                 const StackProfile &stack,
                 Sharding s)
{
    o.fsdp = s == Sharding::Fsdp;
    o.distributed = s != Sharding::Zero0;
    o.zeroStage = s == Sharding::Zero0   ? 0
                  : s == Sharding::Zero1 ? 1
                  : s == Sharding::Zero2 ? 2
                                         : 3;
    o.gradReduceFp32 = o.fsdp == base.fsdp ? base.gradReduceFp32
                                           : stackGradReduceFp32(stack, o.fsdp);
}

int plannedShardGroup(const OptimizerConfig &base, const PlanChoice &c)
{
    const bool zero3 = c.sharding == Sharding::Fsdp || c.sharding == Sharding::Zero3;
    return zero3 && base.shardGroup > 0 && zeroShardRanks(base, c.dp * c.cp) == base.shardGroup
                   ? base.shardGroup
                   : 0;
}

bool pipelineInnerApplies(const PlanChoice &c, bool moe)
{
    if (c.cp != 1 || c.pp == 1 || c.dp == 1)
        return false;
    if (!moe)
        return true;
    const bool epRegular = c.ep == 1 || c.tp % c.ep == 0 || c.tp == 1;
    const bool edpRegular = c.tp * c.dp == c.ep || c.ep % c.tp == 0;
    return epRegular && edpRegular;
}

bool planBefore(const PlanPrice &a, const PlanPrice &b, PlanObjective objective)
{
    double ka = a.stepTimeS, kb = b.stepTimeS;
    if (objective == PlanObjective::Cost && a.costPerStep > 0 && b.costPerStep > 0) {
        ka = a.costPerStep;
        kb = b.costPerStep;
    } else if (objective == PlanObjective::TokensPerDollar && a.tokensPerDollar > 0
               && b.tokensPerDollar > 0) {
        ka = -a.tokensPerDollar;
        kb = -b.tokensPerDollar;
    }
    if (ka != kb)
        return ka < kb;
    if (a.memoryGiB != b.memoryGiB)
        return a.memoryGiB < b.memoryGiB;
    return a.stepTimeS < b.stepTimeS;
}

Layout applyPlan(const Layout &layout, const PlanChoice &c)
{
    Layout l = layout;
    l.parallel = ParallelConfig{};
    l.parallel.tp = c.tp;
    l.parallel.cp = c.cp;
    l.parallel.ep = c.ep;
    l.parallel.pp = c.pp;
    l.parallel.vp = c.vp;
    l.parallel.dp = c.dp;
    l.parallel.order = toString(c.order);
    l.mapping.clear();
    l.training.microBatch = c.microBatch;
    l.training.recompute = c.recompute;
    l.training.recomputeLayers = 0;
    l.training.offloadLayers = c.offloadLayers;
    const StackProfile *stack = findStack(layout.training.stack);
    setSharding(l.training.optimizer,
                layout.training.optimizer,
                stack ? *stack : genericStack(),
                c.sharding);
    l.training.optimizer.shardGroup = plannedShardGroup(layout.training.optimizer, c);
    return l;
}

} // namespace railyard::engine
