#include "changerankorder.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

ChangeRankOrder::ChangeRankOrder(Document *document, const std::string &order)
    : LayoutCommand(document,
                    apply(document->layout(), order),
                    QObject::tr("Change rank order to %1").arg(QString::fromStdString(order)))
{}

int ChangeRankOrder::id() const
{
    return ChangeRankOrderId;
}

engine::Layout ChangeRankOrder::apply(const engine::Layout &layout, const std::string &order)
{
    engine::Layout out = layout;
    out.parallel.order = order;
    out.mapping.clear();
    return out;
}

} // namespace railyard
