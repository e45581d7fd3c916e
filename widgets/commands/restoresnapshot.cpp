#include "restoresnapshot.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

RestoreSnapshot::RestoreSnapshot(Document *document,
                                 const engine::Layout &snapshot,
                                 const QString &text)
    : LayoutCommand(document, apply(document->layout(), snapshot), text)
{}

int RestoreSnapshot::id() const
{
    return RestoreSnapshotId;
}

engine::Layout RestoreSnapshot::apply(const engine::Layout &layout, const engine::Layout &snapshot)
{
    engine::Layout out = layout;
    out.cluster = snapshot.cluster;
    out.model = snapshot.model;
    out.training = snapshot.training;
    out.parallel = snapshot.parallel;
    out.mapping = snapshot.mapping;
    return out;
}

} // namespace railyard
