#pragma once

// The planner's reports as JSON: `railyard plan --json` and `railyard plan --buy --json`, in
// the keys `evaluate --json` uses for the same numbers (README, "JSON output").

#include "base/jsonvalue.h"
#include "planner/planner.h"
#include "planner/plannerbuy.h"

#include <string>
#include <vector>

namespace railyard::engine {

// One plan: `rank` (when > 0), `parallel`, `training`, `fits`, `step_time_s`,
// `step_time_band_s` (and `step_time_band_basis` when `bases`, PlanSearch::bandBases, is
// given), `tokens_per_s`, `mfu`, `memory_gib_per_gpu`, `memory_breakdown_gib`, `breakdown_s`,
// `cost_per_step`, `cost_per_million_tokens`, `tokens_per_dollar`.
Json planJson(const Plan &plan, int rank, const std::vector<std::string> *bases = nullptr);

// What a layout's file and cluster are called in a plan report.
struct PlanReportSource
{
    std::string file;
    std::string title; // the layout's (may be empty)
    std::string gpu;   // the catalog GPU id
};

// `plan --json`: the search (`evaluated`, `fitting`, `elapsed_s`, ...), the ranked `plans`,
// `no_fit` when nothing fits, and the `assumptions`.
Json planSearchJson(const PlanSearch &search, const PlanReportSource &source);

// `plan --buy --json`: the question (`tokens`, `deadline_days`), the `best` cluster (null when
// none meets the deadline), every cluster `considered`, and what was skipped and assumed.
Json purchaseJson(const BuyAnswer &answer, const BuyOptions &options, const std::string &file);

} // namespace railyard::engine
