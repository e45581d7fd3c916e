#include "overview.h"

#include "scene/clustergeometry.h"
#include "scene/style.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::render {

using engine::DeviceKind;

namespace {

constexpr int kPad = 8;
constexpr double kMinVisiblePx = 6;

QString tr(const char *text)
{
    return QCoreApplication::translate("Overview", text);
}

double distance(const QRectF &r, const QPointF &p)
{
    const double dx = std::max({r.left() - p.x(), 0.0, p.x() - r.right()});
    const double dy = std::max({r.top() - p.y(), 0.0, p.y() - r.bottom()});
    return std::hypot(dx, dy);
}

} // namespace

QString locationText(const ClusterGeometry &g, const QPointF &p)
{
    if (g.rackCount() == 0)
        return {};
    int node = g.nodeAt(p);
    int rack = node >= 0 ? g.rackOfNode(node) : g.rackAt(p);
    bool near = false;
    if (rack < 0) {
        // Between racks, on a rail or under the switches: name the nearest rack.
        double best = std::numeric_limits<double>::max();
        for (int r = 0; r < g.rackCount(); ++r)
            if (const double d = distance(g.rackRect(r), p); d < best) {
                best = d;
                rack = r;
            }
        near = true;
    }
    const engine::Topology &t = g.topology();
    QStringList parts;
    if (g.blocks().size() > 1)
        parts << tr("SU %1").arg(g.blockOfNode(g.firstNodeOfRack(rack)));
    if (g.rackCount() > 1)
        parts << (near ? tr("near Rack %1") : tr("Rack %1")).arg(rack);
    if (node >= 0 && g.nodeCount() > 1)
        parts << (t.shape().nodesPerDomain > 1 ? tr("Tray %1") : tr("Node %1")).arg(node);
    if (parts.isEmpty() && near)
        parts << tr("near Rack %1").arg(rack);
    return parts.join(QStringLiteral(" \u00b7 "));
}

Overview::Overview(const ClusterGeometry &geometry,
                   const QRectF &visibleScene,
                   const QString &location,
                   const QFont &font,
                   int mapWidth)
    : m_geometry(geometry)
    , m_visible(visibleScene)
    , m_location(location)
    , m_font(font)
{
    m_font.setPixelSize(12);
    m_font.setBold(true);
    m_bounds = geometry.bounds();
    if (m_bounds.isEmpty())
        m_bounds = QRectF(0, 0, 1, 1);
    const QFontMetrics fm(m_font);
    const int textW = m_location.isEmpty() ? 0 : fm.horizontalAdvance(m_location) + 2;
    const int w = std::max(mapWidth, textW);
    m_scale = mapWidth / m_bounds.width();
    int h = static_cast<int>(std::ceil(m_bounds.height() * m_scale));
    // A very tall cluster: cap the map's height and keep its aspect.
    if (h > mapWidth) {
        m_scale = mapWidth / m_bounds.height();
        h = mapWidth;
    }
    const int mapW = static_cast<int>(std::ceil(m_bounds.width() * m_scale));
    int y = kPad;
    if (!m_location.isEmpty()) {
        m_text = QRect(kPad, y, w, fm.height());
        y += fm.height() + 5;
    }
    m_map = QRect(kPad + (w - mapW) / 2, y, mapW, h);
    m_size = QSize(w + 2 * kPad, y + h + kPad);
}

QPointF Overview::toMap(const QPointF &scene) const
{
    return QPointF(m_map.left() + (scene.x() - m_bounds.left()) * m_scale,
                   m_map.top() + (scene.y() - m_bounds.top()) * m_scale);
}

QPointF Overview::sceneAt(const QPointF &boxPos) const
{
    return QPointF(m_bounds.left() + (boxPos.x() - m_map.left()) / m_scale,
                   m_bounds.top() + (boxPos.y() - m_map.top()) / m_scale);
}

QRectF Overview::visibleOnMap() const
{
    QRectF r(toMap(m_visible.topLeft()), toMap(m_visible.bottomRight()));
    r = r.intersected(QRectF(m_map).adjusted(-1, -1, 1, 1));
    // Zoomed far in, the view is a speck on the map: keep it big enough to find.
    const QPointF c = r.center();
    if (r.width() < kMinVisiblePx)
        r = QRectF(c.x() - kMinVisiblePx / 2, r.top(), kMinVisiblePx, r.height());
    if (r.height() < kMinVisiblePx)
        r = QRectF(r.left(), c.y() - kMinVisiblePx / 2, r.width(), kMinVisiblePx);
    return r;
}

void Overview::paint(QPainter *painter, const QPoint &topLeft) const
{
    const ClusterGeometry &g = m_geometry;
    painter->save();
    painter->translate(topLeft);
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(QRectF(0.5, 0.5, m_size.width() - 1, m_size.height() - 1), 6, 6);
    if (!m_location.isEmpty()) {
        painter->setFont(m_font);
        painter->setPen(style::kTextDark);
        painter->drawText(m_text, Qt::AlignHCenter | Qt::AlignVCenter, m_location);
    }
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(m_map, style::kCanvasBackground);
    // The switch tiers above the blocks, as one dark band.
    double firstBlockTop = m_bounds.bottom();
    for (const ClusterGeometry::Block &b : g.blocks())
        firstBlockTop = std::min(firstBlockTop, b.rect.top());
    if (g.topology().countOf(DeviceKind::Spine) > 0 && firstBlockTop > m_bounds.top()) {
        const QPointF a = toMap(QPointF(m_bounds.left(), m_bounds.top()));
        const QPointF b = toMap(QPointF(m_bounds.right(), firstBlockTop));
        const double h = std::max(2.0, (b.y() - a.y()) * 0.4);
        painter->fillRect(QRectF(a.x(), a.y() + (b.y() - a.y() - h) / 2, b.x() - a.x(), h),
                          style::deviceFill(DeviceKind::Spine).lighter(180));
    }
    // Scalable units as tiles; racks inside them when they are big enough on the map to tell
    // apart, else each unit is one tile.
    const QColor tile(0xe2, 0xe8, 0xf0), rackFill(0xc3, 0xcd, 0xda), frame(0x94, 0xa3, 0xb8);
    const bool racks = g.rackCount() > 0 && g.rackRect(0).height() * m_scale >= 3
                       && g.rackRect(0).width() * m_scale >= 3;
    for (const ClusterGeometry::Block &b : g.blocks()) {
        const QRectF r(toMap(b.rect.topLeft()), toMap(b.rect.bottomRight()));
        painter->fillRect(r, tile);
        if (g.blocks().size() > 1) {
            painter->setPen(QPen(frame, 1));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r);
        }
    }
    if (racks)
        for (int r = 0; r < g.rackCount(); ++r) {
            const QRectF rr = g.rackRect(r);
            painter->fillRect(QRectF(toMap(rr.topLeft()), toMap(rr.bottomRight())), rackFill);
        }
    // The part in view.
    painter->setRenderHint(QPainter::Antialiasing, true);
    const QRectF v = visibleOnMap();
    QColor fill = style::kSelection;
    fill.setAlpha(50);
    painter->setBrush(fill);
    painter->setPen(QPen(style::kSelection, 2));
    painter->drawRect(v);
    painter->restore();
}

} // namespace railyard::render
