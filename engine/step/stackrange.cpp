#include "step/stackrange.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "step/reformjob.h"
#include "step/stepmodel_p.h"
#include "step/workspace.h"
#include "topology/topology.h"

#include <algorithm>

namespace railyard::engine {

std::vector<const StackProfile *> candidateStacks(const std::string &architecture)
{
    const bool hopperPlus = architecture == "hopper" || architecture == "blackwell";
    std::vector<const StackProfile *> out;
    for (const StackProfile &p : stackProfiles())
        if (!p.id.empty() && !(hopperPlus && p.preHopper))
            out.push_back(&p);
    return out;
}

void applyStackRange(Evaluation &e,
                     const Layout &layout,
                     const Topology &topology,
                     EvaluationWorkspace &workspace)
{
    if (!e.ok || !layout.training.stack.empty())
        return;
    mergeStackRange(e, priceStackRange(layout, topology, workspace));
}

StackRange priceStackRange(const Layout &layout,
                           const Topology &topology,
                           EvaluationWorkspace &workspace,
                           const std::function<bool()> &cancelled)
{
    if (!layout.training.stack.empty())
        return {};
    EvaluateOptions numbersOnly;
    numbersOnly.linkLoads = false;
    numbersOnly.timeline = false;
    StackRange range;
    for (const StackProfile *p : candidateStacks(topology.gpuSpec().architecture)) {
        if (cancelled && cancelled())
            return {};
        Layout as = layout;
        applyStackDefaults(as.training, *p);
        const Evaluation s = detail::StepModel(as, topology, workspace, numbersOnly).run();
        if (!s.ok)
            continue;
        if (!range.stacks || s.stepTimeS < range.fastestS) {
            range.fastestS = s.stepTimeS;
            range.fastest = p->id;
        }
        if (!range.stacks || s.stepTimeS > range.slowestS) {
            range.slowestS = s.stepTimeS;
            range.slowest = p->id;
        }
        ++range.stacks;
    }
    return range;
}

StackRange evaluateStackRange(const Layout &layout,
                              const Topology &topology,
                              EvaluationWorkspace &workspace,
                              const std::function<bool()> &cancelled)
{
    if (cancelled && cancelled())
        return {}; // before binding: a workspace may cost more to bind than a stack to price
    try {
        workspace.bind(topology);
        if (topology.downGpuCount() > 0) {
            const ReformedJob job = reformJob(layout, topology);
            if (!job.ok)
                return {};
            return priceStackRange(job.layout, topology, workspace, cancelled);
        }
        return priceStackRange(layout, topology, workspace, cancelled);
    } catch (const InputError &) {
        return {}; // evaluate() says why
    }
}

void mergeStackRange(Evaluation &e, const StackRange &range)
{
    if (!e.ok || !range.stacks || e.stackRange.stacks)
        return;
    e.stackRange = range;
    StepTimeBand &band = e.stepTimeBand;
    const double t = e.stepTimeS;
    const std::string from = formatSeconds(range.fastestS) + " (" + range.fastest + ") to "
                             + formatSeconds(range.slowestS) + " (" + range.slowest + ")";
    const bool widen = range.fastestS < band.lowS || range.slowestS > band.highS;
    if (widen) {
        band.lowS = std::min(band.lowS, range.fastestS); // both at least zero
        band.highS = std::max(band.highS, range.slowestS);
        band.fraction = std::max(t - band.lowS, band.highS - t) / t;
    }
    const std::string said = "no software stack named: the " + std::to_string(range.stacks)
                             + " stacks it may be running price this step from " + from
                             + (widen ? ", and the band is widened to hold them"
                                      : ", inside the band");
    band.basis += "; " + said;
    for (std::string &a : e.assumptions)
        if (a.rfind("step time band", 0) == 0)
            a = "step time band \u00b1" + formatNumber(100 * band.fraction, 2) + "%: " + band.basis;
    e.warnings.push_back(
            Warning{Severity::Info,
                    "no-stack",
                    "No stack named: " + std::to_string(range.stacks) + " stacks price it " + from,
                    {},
                    0});
}

} // namespace railyard::engine
