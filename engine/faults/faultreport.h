#pragma once

// The faults' reports: what a layout's faults cost (the `faults` object of evaluate --json and
// its text section) and a sweep's ranking (evaluate --what-if KIND).

#include "base/jsoncursor.h"
#include "faults/faultimpact.h"
#include "faults/faultsweep.h"
#include "topology/topology.h"

#include <iosfwd>

namespace railyard::engine {

// {faults, rerouted, metrics, breakdown_s, links_changed, recovery}: see README, "Failures".
Json faultImpactJson(const FaultImpact &impact, const Topology &faulted);
void writeFaultImpactText(std::ostream &out, const FaultImpact &impact, const Topology &faulted);

// {what_if, baseline_step_time_s, candidates, priced, symmetry, elapsed_s, ranked (the `top`
// costliest)}.
Json sweepJson(const SweepResult &sweep, std::size_t top);
void writeSweepText(std::ostream &out, const SweepResult &sweep, std::size_t top);

// What to apply for a recovery: the layout keys it changes (parallel, training.global_batch,
// mapping), as a layout file writes them.
Json recoveryChangeJson(const Layout &before, const Layout &after);

} // namespace railyard::engine
