#pragma once

// The faults' reports: what a layout's faults cost (the `faults` object of evaluate --json and
// its text section) and a sweep's ranking (evaluate --what-if KIND).

#include "base/jsonvalue.h"
#include "faults/faultimpact.h"
#include "faults/faultsweep.h"
#include "report/reviewreport.h"
#include "topology/topology.h"

#include <iosfwd>

namespace railyard::engine {

// {faults, rerouted, metrics, breakdown_s, links_changed, recovery}: see README, "Failures".
Json faultImpactJson(const FaultImpact &impact, const Topology &faulted);
void writeFaultImpactText(std::ostream &out, const FaultImpact &impact, const Topology &faulted);

// The design review's "Faults" section (report/reviewreport.h): each fault and what it does to
// its element (down, degraded to a share of its rate, a GPU running slow), what was rerouted,
// the key numbers healthy and with the faults, the step breakdown's change, the links that now
// carry more, and the recovery. Text from the layout is plain (plainText), as the report holds.
ReviewSection faultReviewSection(const FaultImpact &impact, const Topology &faulted);

// {what_if, baseline_step_time_s, candidates, priced, symmetry, elapsed_s, ranked (the `top`
// costliest)}.
Json sweepJson(const SweepResult &sweep, std::size_t top);
void writeSweepText(std::ostream &out, const SweepResult &sweep, std::size_t top);

// Whether an impact metric (FaultImpact's metrics: step_time_s, tpot_s, ...) is a time in seconds.
bool impactMetricInSeconds(const std::string &key);

// What to apply for a recovery: the layout keys it changes (parallel, training.global_batch,
// mapping), as a layout file writes them.
Json recoveryChangeJson(const Layout &before, const Layout &after);

} // namespace railyard::engine
