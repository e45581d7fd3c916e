#pragma once

#include "layoutcommand.h"

namespace railyard {

// Goes back to a pinned state (A/B compare): its cluster, workload, sizes and placement, as one
// undo step. The title, notes and view settings stay as they are.
class RestoreSnapshot : public LayoutCommand
{
public:
    RestoreSnapshot(Document *document, const engine::Layout &snapshot, const QString &text);
    int id() const override;

    static engine::Layout apply(const engine::Layout &layout, const engine::Layout &snapshot);
};

} // namespace railyard
