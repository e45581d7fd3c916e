#include "placedtext.h"

#include <QFontMetrics>

namespace railyard::render {

bool fits(const PlacedText &t)
{
    const QFontMetrics fm(t.font);
    // Measured as it is drawn: unbounded, with the same flags, in the rectangle's width.
    const QRect needed = fm.boundingRect(QRect(0, 0, t.rect.width(), 100000), t.flags, t.text);
    return needed.width() <= t.rect.width() && needed.height() <= t.rect.height();
}

} // namespace railyard::render
