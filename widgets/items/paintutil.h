#pragma once

#include <array>
#include <vector>

#include "scene/levelofdetail.h"
#include "topology/topology.h"

#include <QFont>
#include <QHash>
#include <QPair>
#include <QPen>
#include <QPolygonF>
#include <QRectF>
#include <QStaticText>
#include <QString>
#include <QTransform>

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
// With `dashPhase` >= 0 (while a moment of the step is shown) light dashes flow along each
// line from p1 to p2, `dashPhase` periods on (busier steps move faster).
void drawLoadBuckets(QPainter *painter,
                     const LoadBuckets &buckets,
                     Detail detail,
                     double dashPhase = -1);
// The flowing dashes over a loaded line drawn with loadPen(utilization, detail, width).
QPen dashPen(double utilization, Detail detail, double width, double dashPhase);
// The scene area `painter` can show (its device within its clip, mapped back): what is worth
// drawing.
QRectF visibleRect(QPainter *painter);
// Appends a route's segments, backwards when `reverse` (so dashes flow b -> a).
void appendPath(std::vector<QLineF> &out, const QPolygonF &path, bool reverse);

// Names on translucent plates, a fixed size on screen whatever the zoom: scalable units, racks
// and servers when their own titles are too small to read. Drawn in device coordinates with one
// font per size, so a few hundred plates cost little. Construct it inside an item's paint();
// it restores the painter's transform when it goes.
class Plates
{
public:
    enum class Style { Light, Dark }; // a dark plate (white text) marks the level above
    // Laid-out names kept between paints by the item that draws them: a name is shaped once,
    // not on every frame.
    using Cache = QHash<QPair<int, QString>, QStaticText>;
    Plates(QPainter *painter, Cache *cache);
    ~Plates();
    Plates(const Plates &) = delete;
    Plates &operator=(const Plates &) = delete;

    // The plate for `text`, `px` pixels tall, with its `anchor` point (Qt::AlignCenter,
    // Qt::AlignLeft | Qt::AlignTop, ...) at the scene point `at`; `offset` in pixels.
    QRectF draw(const QPointF &at,
                const QString &text,
                int px,
                Qt::Alignment anchor = Qt::AlignCenter,
                Style style = Style::Light,
                const QPointF &offset = {});
    // The scene area the painter can show (its device, within its clip): what to draw plates
    // for.
    QRectF visibleScene() const { return m_visible; }

private:
    QPainter *m_painter;
    Cache *m_cache;
    QTransform m_world;
    QRectF m_visible;
    QFont m_font;
    int m_fontPx = 0;
};

// The font size (scene units) of a rack's and of a server's title at `lod`, 0 where it would be
// too small to read: the canvas names racks and servers another way below these.
int rackTitleUnits(double lod);
int nodeTitleUnits(double lod);

} // namespace railyard::paint
