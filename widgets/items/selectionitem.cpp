#include "selectionitem.h"

#include "scene/clustergeometry.h"

#include <QPainter>

namespace railyard {

namespace {
const QColor kSelection{0xf5, 0x9e, 0x0b};
} // namespace

SelectionItem::SelectionItem(const ClusterGeometry &geometry)
    : m_geometry(geometry)
{
    setZValue(10);
    setVisible(false);
}

void SelectionItem::setDevice(int device)
{
    prepareGeometryChange();
    m_device = device;
    m_paths.clear();
    m_rect = QRectF();
    m_bounds = QRectF();
    setVisible(device >= 0);
    if (device < 0)
        return;
    const engine::Topology &t = m_geometry.topology();
    m_rect = m_geometry.deviceRect(device);
    m_bounds = m_rect;
    for (int link : t.linksOf(device)) {
        m_paths.push_back(m_geometry.linkPath(link));
        m_bounds = m_bounds.united(m_paths.back().boundingRect());
    }
    m_bounds.adjust(-8, -8, 8, 8);
}

void SelectionItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    if (m_device < 0)
        return;
    painter->setRenderHint(QPainter::Antialiasing, true);
    QPen route(kSelection, 2.5);
    route.setCosmetic(true);
    painter->setPen(route);
    painter->setBrush(Qt::NoBrush);
    for (const QPolygonF &p : m_paths)
        painter->drawPolyline(p);
    QPen outline(kSelection, 3);
    outline.setCosmetic(true);
    painter->setPen(outline);
    painter->drawRoundedRect(m_rect.adjusted(-3, -3, 3, 3), 5, 5);
}

} // namespace railyard
