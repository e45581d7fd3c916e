#pragma once

#include "scene/levelofdetail.h"
#include "topology.h"

#include <QPen>
#include <QRectF>
#include <QString>

class QPainter;

namespace railyard::paint {

// Drawing shared by the canvas items, so a GPU or an NVLink looks the same in every item.

// A short label for a device inside its server ("GPU 12", "NIC 3", "Leaf 4").
QString deviceLabel(const engine::Topology &topology, int device);

// A font size in scene units that reads as about `screenPx` pixels at `lod`, within limits
// the box it goes in can hold. 0 if even the largest would be too small to read.
int fontUnits(double lod, double screenPx, int minUnits, int maxUnits);

void drawDevice(QPainter *painter,
                const QRectF &rect,
                engine::DeviceKind kind,
                const QString &label,
                Detail detail,
                double lod);

// The pen for a link kind: hairlines when zoomed out, the kind's width and dash when close.
QPen linkPen(engine::LinkKind kind, Detail detail, double width = 1.5);

// Text with a translucent white plate behind it, `px` pixels tall whatever the zoom: for rack
// names over racks drawn as blocks.
void drawPlateLabel(
        QPainter *painter, const QPointF &centre, const QString &text, double lod, double px);

} // namespace railyard::paint
