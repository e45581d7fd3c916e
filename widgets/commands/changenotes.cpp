#include "changenotes.h"

#include "commandid.h"
#include "document/document.h"

namespace railyard {

namespace {

engine::Layout withNotes(const engine::Layout &layout, const QString &notes)
{
    engine::Layout out = layout;
    out.notes = notes.toStdString();
    return out;
}

} // namespace

ChangeNotes::ChangeNotes(Document *document, const QString &notes)
    : LayoutCommand(document,
                    withNotes(document->layout(), notes),
                    QObject::tr("Change notes"),
                    QStringLiteral("notes"))
{}

int ChangeNotes::id() const
{
    return ChangeNotesId;
}

} // namespace railyard
