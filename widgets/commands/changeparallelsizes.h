#pragma once

#include "layoutcommand.h"

namespace railyard {

// Changes the parallel sizes and rank order (TP, CP, EP, PP, VP, DP). A rank mapping written
// for other sizes no longer fits, so it is dropped when the rank count changes.
class ChangeParallelSizes : public LayoutCommand
{
public:
    ChangeParallelSizes(Document *document,
                        const engine::ParallelConfig &parallel,
                        const QString &mergeKey = {});
    int id() const override;
};

} // namespace railyard
