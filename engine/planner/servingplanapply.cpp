#include "planner/servingplanapply.h"

namespace railyard::engine {

Layout applyServingPlan(const Layout &layout, const ServingPlanPoint &plan)
{
    Layout out = layout;
    if (!out.serving)
        return out;
    ServingConfig &s = *out.serving;
    s.concurrency = plan.concurrency;
    s.requestRate.reset();
    const std::string order = out.parallel.order;
    out.parallel = ParallelConfig{};
    out.parallel.order = order;
    if (plan.disaggregated) {
        s.disaggregated = DisaggregationConfig{plan.prefill, plan.decode};
    } else {
        s.disaggregated.reset();
        out.parallel.tp = plan.serving.tp;
        out.parallel.ep = plan.serving.ep;
        out.parallel.pp = plan.serving.pp;
        out.parallel.dp = plan.serving.replicas;
        out.parallel.attentionDp = plan.serving.attentionDp;
    }
    out.mapping.clear();
    return out;
}

} // namespace railyard::engine
