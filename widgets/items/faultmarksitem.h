#pragma once

#include "items/paintutil.h"

#include <QGraphicsItem>
#include <QLineF>
#include <QPolygonF>
#include <QString>

#include <vector>

namespace railyard {

class ClusterGeometry;

// The cluster's faults (cluster.faults, as the topology resolved them) drawn over the racks and
// the fabric: a device or a link that is down crossed out in red, one that is degraded (or a
// GPU that runs slow) hatched with what is left ("40%", "1.1x"), and the links a failed switch
// or NIC takes with it dashed in red. Built from the topology, so it follows the cluster (the
// scene rebuilds its items when the faults change); drawn on the canvas and, through the same
// scene, in every exported diagram. Marks keep a few pixels on screen when zoomed far out, so
// a failed leaf shows on a 16,384-GPU overview.
class FaultMarksItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 13 };

    explicit FaultMarksItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    // What is marked (for tests): devices crossed out and hatched, links crossed out and
    // hatched, and the links dashed because a device they hang from is down.
    int downDeviceCount() const { return static_cast<int>(m_downDevices.size()); }
    int degradedDeviceCount() const { return static_cast<int>(m_degradedDevices.size()); }
    int downLinkCount() const { return static_cast<int>(m_downLinks.size()); }
    int degradedLinkCount() const { return static_cast<int>(m_degradedLinks.size()); }
    // The labels of the degraded marks ("40%", "1.1x"), in drawing order.
    QStringList labels() const;

private:
    struct Mark
    {
        QRectF rect;    // a device's box
        QPolygonF path; // a link's route
        QPointF at;     // where its label and cross go
        QString label;  // what is left: "40%", "1.1x"; empty for a device down
    };
    void addDevice(int device, bool down, const QString &label);
    void addLink(int link, bool down, const QString &label);

    const ClusterGeometry &m_geometry;
    std::vector<Mark> m_downDevices, m_degradedDevices, m_downLinks, m_degradedLinks;
    std::vector<QLineF> m_takenLinks; // links of failed devices, as unique segments
    QRectF m_bounds;
    paint::Plates::Cache m_plates;
};

} // namespace railyard
