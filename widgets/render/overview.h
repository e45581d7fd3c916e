#pragma once

#include <QFont>
#include <QPointF>
#include <QRect>
#include <QRectF>
#include <QString>

class QPainter;

namespace railyard {

class ClusterGeometry;

namespace render {

// Where a scene point is, in the hardware's words: "SU 3 · Rack 12 · Node 97" (the parts the
// cluster has: no SU with one block, no rack with one rack). Off every rack, the nearest one:
// "SU 3 · near Rack 12"; empty for an empty cluster.
QString locationText(const ClusterGeometry &geometry, const QPointF &scenePos);

// A small map of the whole cluster (scalable units and racks) with the part in view outlined,
// under a line saying where the centre of the view is. Drawn in a corner of the canvas when it
// is zoomed in, so the user always knows where they are. A function of the geometry and a
// visible rectangle, not of a view.
class Overview
{
public:
    Overview(const ClusterGeometry &geometry,
             const QRectF &visibleScene,
             const QString &location,
             const QFont &font,
             int mapWidth = 200);

    QSize size() const { return m_size; }
    // The map inside the box, relative to the box's top-left corner.
    QRect mapRect() const { return m_map; }
    // The visible part of the scene on the map (relative to the box), at least a few pixels.
    QRectF visibleOnMap() const;
    // Scene point for a point on the map (relative to the box): to move the view by clicking.
    QPointF sceneAt(const QPointF &boxPos) const;
    void paint(QPainter *painter, const QPoint &topLeft) const;

private:
    QPointF toMap(const QPointF &scene) const;

    const ClusterGeometry &m_geometry;
    QRectF m_visible;
    QString m_location;
    QFont m_font;
    QRect m_text;
    QRect m_map;
    QRectF m_bounds; // the scene area the map shows
    double m_scale = 1;
    QSize m_size;
};

} // namespace render
} // namespace railyard
