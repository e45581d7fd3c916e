#pragma once

#include "layoutcommand.h"

namespace railyard {

// Changes what a serving layout serves and how its pools are split: the `serving` settings
// (tokens, concurrency, precisions, stack, the disaggregated pools) and, for one aggregated
// pool, the parallel sizes (TP, EP, PP, replicas, attention DP). A placement made by hand is
// dropped when the number of ranks changes (it would no longer place them all).
class ChangeServing : public LayoutCommand
{
public:
    ChangeServing(Document *document,
                  const engine::ServingConfig &serving,
                  const engine::ParallelConfig &parallel,
                  const QString &text,
                  const QString &mergeKey = {});
    int id() const override;

    // The layout the command makes of `layout`.
    static engine::Layout apply(const engine::Layout &layout,
                                const engine::ServingConfig &serving,
                                const engine::ParallelConfig &parallel);
};

} // namespace railyard
