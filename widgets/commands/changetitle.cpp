#include "changetitle.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

engine::Layout withTitle(const engine::Layout &layout, const QString &title)
{
    engine::Layout out = layout;
    out.title = title.toStdString();
    return out;
}

} // namespace

ChangeTitle::ChangeTitle(Document *document, const QString &title)
    : LayoutCommand(document,
                    withTitle(document->layout(), title),
                    QObject::tr("Change title"),
                    QStringLiteral("title"))
{}

int ChangeTitle::id() const
{
    return ChangeTitleId;
}

} // namespace railyard
