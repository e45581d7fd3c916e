#include "faults/faultimpact.h"

#include "base/units.h"
#include "faults/servingfaultimpact.h"

#include <algorithm>

namespace railyard::engine {

namespace {
// Faults that cost less of the throughput than this have nothing worth recovering.
constexpr double kNothingToRecover = 0.005;
} // namespace

Layout withoutFaults(const Layout &layout)
{
    Layout l = layout;
    l.cluster.faults.clear();
    return l;
}

std::string FaultImpact::error() const
{
    if (serving)
        return !servingHealthy.ok ? servingHealthy.error : servingFaulted.error;
    return !healthy.ok ? healthy.error : faulted.error;
}

FaultImpact analyzeFaults(const Layout &layout,
                          const Topology &healthy,
                          const Topology &faulted,
                          const ImpactOptions &options)
{
    if (layout.isServing())
        return analyzeServingFaults(layout, healthy, faulted, options);
    FaultImpact out;
    out.layout = layout;
    EvaluationWorkspace workspace;
    EvaluateOptions eo;
    eo.timeline = false;
    EvaluateOptions fast;
    fast.timeline = false;
    fast.linkLoads = false;
    out.healthy = evaluate(withoutFaults(layout), healthy, workspace, eo);
    out.faulted = evaluate(layout, faulted, workspace, eo);
    out.rerouted = faulted.faultNotes();
    const Evaluation &a = out.healthy, &b = out.faulted;
    if (a.ok && b.ok) {
        out.metrics = {{"step_time_s", a.stepTimeS, b.stepTimeS},
                       {"tokens_per_s", a.tokensPerS, b.tokensPerS},
                       {"mfu", a.mfu, b.mfu}};
        if (a.costPerMillionTokens > 0)
            out.metrics.push_back(
                    {"cost_per_million_tokens", a.costPerMillionTokens, b.costPerMillionTokens});
        const StepBreakdown &x = a.exposed, &y = b.exposed;
        out.breakdown = {{"compute", x.compute, y.compute},
                         {"tp", x.tp, y.tp},
                         {"cp", x.cp, y.cp},
                         {"ep", x.ep, y.ep},
                         {"pp_bubble", x.ppBubble, y.ppBubble},
                         {"pp_p2p", x.ppP2p, y.ppP2p},
                         {"dp", x.dp, y.dp},
                         {"optimizer", x.optimizer, y.optimizer}};
        // Where the detoured traffic went: the links whose bytes changed, more first.
        out.links = linksWithChangedBytes(a, b, options.links);
        const double loss = a.tokensPerS > 0 ? 1 - b.tokensPerS / a.tokensPerS : 0;
        if (!options.recovery) {
            out.recoveryNote = "not searched";
        } else if (loss < kNothingToRecover) {
            out.recoveryNote = "the faults cost " + formatNumber(100 * loss, 2)
                               + "% of the throughput: nothing worth recovering";
        } else {
            out.consideredRecoveries = findRecoveries(layout, faulted, a, b);
            if (out.consideredRecoveries.empty()) {
                out.recoveryNote = "none of the changes tried (a smaller DP, swapped servers, "
                                   "another rank order) beats the job as it runs";
            } else {
                Recovery best = out.consideredRecoveries.front();
                // A placement change may speed up the healthy job too: say so.
                if (best.kind != "smaller-dp") {
                    const Evaluation h = evaluate(withoutFaults(best.layout),
                                                  healthy,
                                                  workspace,
                                                  fast);
                    if (h.ok && h.tokensPerS > a.tokensPerS)
                        best.healthyGain = h.tokensPerS / a.tokensPerS - 1;
                }
                out.recovery = best;
            }
        }
    }
    return out;
}

} // namespace railyard::engine
