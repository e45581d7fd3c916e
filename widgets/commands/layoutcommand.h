#pragma once

#include "layout/layout.h"

#include <QUndoCommand>

namespace railyard {

class Document;

// The shared body of the document's commands: the layout before and after the edit. Every edit
// hands the document a whole Layout, so the preserved `original` (keys this version does not
// know) and everything the edit did not touch come back exactly on undo.
//
// `mergeKey` joins consecutive edits of one thing into one undo step (a spin box dragged through
// ten values, a title typed letter by letter); an empty key never merges.
class LayoutCommand : public QUndoCommand
{
public:
    LayoutCommand(Document *document,
                  engine::Layout after,
                  const QString &text,
                  QString mergeKey = {},
                  QUndoCommand *parent = nullptr);

    void undo() override;
    void redo() override;
    bool mergeWith(const QUndoCommand *other) override;

    const engine::Layout &before() const { return m_before; }
    const engine::Layout &after() const { return m_after; }
    QString mergeKey() const { return m_mergeKey; }

protected:
    Document *m_document;
    engine::Layout m_before;
    engine::Layout m_after;
    QString m_mergeKey;
};

} // namespace railyard
