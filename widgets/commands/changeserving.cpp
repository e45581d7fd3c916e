#include "changeserving.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

// The ranks a serving layout places: both pools', or TP x PP x replicas.
long long servingRanks(const engine::Layout &l)
{
    if (l.serving && l.serving->disaggregated)
        return l.serving->disaggregated->prefill.gpus() + l.serving->disaggregated->decode.gpus();
    return 1LL * l.parallel.tp * l.parallel.pp * l.dataParallel();
}

} // namespace

engine::Layout ChangeServing::apply(const engine::Layout &layout,
                                    const engine::ServingConfig &serving,
                                    const engine::ParallelConfig &parallel)
{
    engine::Layout out = layout;
    out.serving = serving;
    out.parallel = parallel;
    if (servingRanks(out) != servingRanks(layout))
        out.mapping.clear();
    return out;
}

ChangeServing::ChangeServing(Document *document,
                             const engine::ServingConfig &serving,
                             const engine::ParallelConfig &parallel,
                             const QString &text,
                             const QString &mergeKey)
    : LayoutCommand(document, apply(document->layout(), serving, parallel), text, mergeKey)
{}

int ChangeServing::id() const
{
    return ChangeServingId;
}

} // namespace railyard
