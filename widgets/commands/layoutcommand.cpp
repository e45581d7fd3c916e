#include "layoutcommand.h"

#include "document/document.h"

namespace railyard {

LayoutCommand::LayoutCommand(Document *document,
                             engine::Layout after,
                             const QString &text,
                             QString mergeKey,
                             QUndoCommand *parent)
    : QUndoCommand(text, parent)
    , m_document(document)
    , m_before(document->layout())
    , m_after(std::move(after))
    , m_mergeKey(std::move(mergeKey))
{}

void LayoutCommand::undo()
{
    // The view settings are not part of the edit: they stay as the user last set them.
    engine::Layout l = m_before;
    l.view = m_document->layout().view;
    m_document->setLayout(l);
}

void LayoutCommand::redo()
{
    engine::Layout l = m_after;
    l.view = m_document->layout().view;
    m_document->setLayout(l);
}

bool LayoutCommand::mergeWith(const QUndoCommand *other)
{
    // id() already matched, so `other` is the same command class.
    const auto *next = static_cast<const LayoutCommand *>(other);
    if (m_mergeKey.isEmpty() || next->m_mergeKey != m_mergeKey)
        return false;
    m_after = next->m_after;
    // Dragged back to where it started: the step is a no-op, so drop it from the stack.
    setObsolete(m_after.sameContent(m_before));
    return true;
}

} // namespace railyard
