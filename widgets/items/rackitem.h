#pragma once

#include <QGraphicsItem>

namespace railyard {

class ClusterGeometry;
struct CanvasState;

// One rack: its frame, servers or trays, every device and link inside them and, for an NVL72
// rack, the NVSwitch chips and their NVLink buses. One item draws it all with level of detail
// (Qt's chip example), since one item per device would not scale to 100,000 devices. GPUs take
// their group's colour and links their load from the scene's CanvasState.
class RackItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 1 };

    RackItem(const ClusterGeometry &geometry, const CanvasState &state, int rack);

    int type() const override { return Type; }
    int rack() const { return m_rack; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    const CanvasState &m_state;
    int m_rack;
    QRectF m_bounds;
};

} // namespace railyard
