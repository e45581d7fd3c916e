#pragma once

#include "paintutil.h"

#include <QGraphicsItem>

namespace railyard {

class ClusterGeometry;

// Names the hardware at every zoom, over everything else: scalable units when the racks are
// blocks; then, while rack and server titles are still too small to read, a dark plate per
// scalable unit, a light plate per rack and one per server, each a fixed size on screen. From
// the zoom where a rack's (or a server's) own title can be read, its plate goes.
class LocationLabelsItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 6 };

    explicit LocationLabelsItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    paint::Plates::Cache m_plates;
};

} // namespace railyard
