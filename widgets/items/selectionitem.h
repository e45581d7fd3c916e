#pragma once

#include <QGraphicsItem>
#include <QPolygonF>

#include <vector>

namespace railyard {

class ClusterGeometry;

// The selected device and the routes of its links, drawn over everything.
class SelectionItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 4 };

    explicit SelectionItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    int device() const { return m_device; }
    void setDevice(int device);
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    int m_device = -1;
    QRectF m_rect;
    std::vector<QPolygonF> m_paths;
    QRectF m_bounds;
};

} // namespace railyard
