#pragma once

// A serving plan (a point of planServing's Pareto front) written into a layout: the pools'
// sizes and the requests in flight, so that applying it prices what the planner priced.

#include "layout/layout.h"
#include "planner/servingplan.h"

namespace railyard::engine {

// `layout` (which serves) with the plan's pools and concurrency: one aggregated pool in
// `parallel` (TP, EP, PP, replicas as DP, attention DP) and no `disaggregated`, or the prefill
// and decode pools in `serving.disaggregated` with `parallel` at its defaults. A placement made
// by hand is dropped (it placed other ranks). Everything else is kept.
Layout applyServingPlan(const Layout &layout, const ServingPlanPoint &plan);

} // namespace railyard::engine
