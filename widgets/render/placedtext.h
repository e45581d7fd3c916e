#pragma once

#include <QFont>
#include <QRect>
#include <QString>

namespace railyard::render {

// A piece of text a render function places, and where (relative to its box): what tests check
// to see that nothing is cut off, and what an exporter could turn into real text.
struct PlacedText
{
    QString text;
    QRect rect;
    QFont font;
    int flags = 0; // the Qt::AlignmentFlag / Qt::TextFlag it is drawn with
};

// True if `text` drawn in `font` with `flags` fits inside its rectangle (wrapping if the flags
// allow it).
bool fits(const PlacedText &text);

} // namespace railyard::render
