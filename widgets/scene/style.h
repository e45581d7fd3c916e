#pragma once

#include "topology.h"

#include <QColor>
#include <QString>

namespace railyard::style {

// One place for the colours and names the canvas, legend and exports share, so a link kind reads
// the same everywhere.
QColor linkColor(engine::LinkKind kind);
QString linkKindName(engine::LinkKind kind);
Qt::PenStyle linkPenStyle(engine::LinkKind kind);
QColor deviceFill(engine::DeviceKind kind);
QColor deviceText(engine::DeviceKind kind);
QString deviceKindName(engine::DeviceKind kind);

inline const QColor kRackFill{0xf4, 0xf6, 0xf8};
inline const QColor kRackBorder{0xb8, 0xc0, 0xcc};
inline const QColor kServerFill{0xff, 0xff, 0xff};
inline const QColor kServerBorder{0x8a, 0x94, 0xa6};
inline const QColor kCanvasBackground{0xfb, 0xfb, 0xfc};
inline const QColor kTextDark{0x1f, 0x29, 0x37};
inline const QColor kTextMuted{0x5b, 0x66, 0x75};

} // namespace railyard::style
