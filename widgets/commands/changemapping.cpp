#include "changemapping.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

engine::Layout withMapping(const engine::Layout &layout, std::vector<int> mapping)
{
    engine::Layout out = layout;
    out.mapping = std::move(mapping);
    return out;
}

} // namespace

ChangeMapping::ChangeMapping(Document *document,
                             std::vector<int> mapping,
                             const QString &text,
                             int dragId)
    : LayoutCommand(document,
                    withMapping(document->layout(), std::move(mapping)),
                    text,
                    dragId != 0 ? QStringLiteral("drag-%1").arg(dragId) : QString())
{}

int ChangeMapping::id() const
{
    return ChangeMappingId;
}

} // namespace railyard
