#pragma once

#include <array>
#include <vector>

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

// A GPU in its group's colour, its name and (when there is room) a caption such as
// "TP3 · r25" below it.
void drawGpu(QPainter *painter,
             const QRectF &rect,
             const QColor &fill,
             const QString &label,
             const QString &caption,
             Detail detail,
             double lod);

// The pen for a link kind: hairlines when zoomed out, the kind's width and dash when close.
QPen linkPen(engine::LinkKind kind, Detail detail, double width = 1.5);

// The pen for a link in the link-load view: its colour from the load, thicker when busier.
QPen loadPen(double utilization, Detail detail, double width = 1.5);
// Loads are drawn in a few steps so each step is one drawLines call.
inline constexpr int kLoadSteps = 8;
int loadStep(double utilization); // 0: idle; 1..kLoadSteps
double stepLoad(int step);        // the load a step is drawn with
// Lines bucketed by load step (index 0 idle, unused), one drawLines call per step.
using LoadBuckets = std::array<std::vector<QLineF>, kLoadSteps + 1>;
void drawLoadBuckets(QPainter *painter, const LoadBuckets &buckets, Detail detail);

// Text with a translucent plate behind it, `px` pixels tall whatever the zoom: names of
// scalable units, racks and servers when their own titles are too small to read. `anchor` says
// which point of the plate sits at `at` (Qt::AlignCenter, Qt::AlignLeft | Qt::AlignTop...); a
// dark plate (white text) marks the level above the light ones. Returns the plate.
enum class Plate { Light, Dark };
QRectF drawPlateLabel(QPainter *painter,
                      const QPointF &at,
                      const QString &text,
                      double lod,
                      double px,
                      Qt::Alignment anchor = Qt::AlignCenter,
                      Plate plate = Plate::Light);

// The font size (scene units) of a rack's and of a server's title at `lod`, 0 where it would be
// too small to read: the canvas names racks and servers another way below these.
int rackTitleUnits(double lod);
int nodeTitleUnits(double lod);

} // namespace railyard::paint
