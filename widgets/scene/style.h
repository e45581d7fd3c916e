#pragma once

#include "topology/topology.h"

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

// Colours for parallel groups. Unordered groups (TP, CP, EP, DP replicas) take distinct hues
// that repeat, a little lighter or darker, after kGroupHues; ordered ones (pipeline stages) run
// along a dark-to-light scale, so stage 0 and the last stage are told apart at a glance.
inline constexpr int kGroupHues = 12;
QColor groupColor(int index, int count, bool ordered);
// Readable text on `fill`: white on dark colours, dark on light ones.
QColor textOn(const QColor &fill);
// A link's load (its busiest direction's share of the step): grey when idle, green, yellow,
// orange, red when saturated.
QColor loadColor(double utilization);
inline const QColor kIdleLink{0xc4, 0xca, 0xd3};
inline const QColor kHighlight{0xf5, 0x9e, 0x0b};   // the selected device, the chosen chip
inline const QColor kSelection{0x25, 0x63, 0xeb};   // selected GPUs, the rubber band, the view
inline const QColor kHover{0x11, 0x18, 0x27};       // the hovered group and its routes
inline const QColor kDropOk{0x05, 0x96, 0x69};      // a drop that will work
inline const QColor kDropRefused{0xdc, 0x26, 0x26}; // a drop that cannot
// A failed device or link (crossed out), and one degraded or slow (hatched with what is left).
inline const QColor kFaultDown{0xdc, 0x26, 0x26};
inline const QColor kFaultDegraded{0xc2, 0x41, 0x0c};

inline const QColor kRackFill{0xf4, 0xf6, 0xf8};
inline const QColor kRackBorder{0xb8, 0xc0, 0xcc};
inline const QColor kServerFill{0xff, 0xff, 0xff};
inline const QColor kServerBorder{0x8a, 0x94, 0xa6};
inline const QColor kCanvasBackground{0xfb, 0xfb, 0xfc};
inline const QColor kTextDark{0x1f, 0x29, 0x37};
inline const QColor kTextMuted{0x5b, 0x66, 0x75};

} // namespace railyard::style
