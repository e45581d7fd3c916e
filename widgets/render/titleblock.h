#pragma once

#include "placedtext.h"

#include <QFont>
#include <QSize>
#include <QString>

#include <vector>

class QPainter;

namespace railyard {

class Document;

namespace render {

// The title block: the layout's title, the cluster in one line, and the job with its price, so
// a screenshot, an export or a print says what it shows. A function of the document, not of a
// view. Lines longer than `maxWidth` wrap at word boundaries; nothing is clipped. `footer`
// (an export's date and program, say) goes on a last muted line when not empty.
class TitleBlock
{
public:
    TitleBlock(const Document &document,
               const QFont &font,
               int maxWidth,
               const QString &footer = QString());

    QSize size() const { return m_size; }
    void paint(QPainter *painter, const QPoint &topLeft) const;
    const std::vector<PlacedText> &texts() const { return m_lines; }

private:
    std::vector<PlacedText> m_lines;
    std::vector<QColor> m_colours;
    QSize m_size;
};

} // namespace render
} // namespace railyard
