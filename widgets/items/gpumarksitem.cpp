#include "gpumarksitem.h"

#include "scene/clustergeometry.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>

namespace railyard {

namespace {
constexpr double kMinPx = 5; // a marked GPU is never drawn smaller than this on screen
constexpr double kPad = 4;   // scene units around a marked device
} // namespace

GpuMarksItem::GpuMarksItem(const ClusterGeometry &geometry,
                           Style style,
                           const QColor &colour,
                           double z)
    : m_geometry(geometry)
    , m_style(style)
    , m_colour(colour)
{
    setZValue(z);
    setVisible(false);
    setAcceptedMouseButtons(Qt::NoButton);
}

void GpuMarksItem::setMarks(std::vector<int> devices, const std::vector<int> &links)
{
    prepareGeometryChange();
    m_devices = std::move(devices);
    m_rects.clear();
    m_paths.clear();
    QRectF bounds;
    for (int id : m_devices) {
        m_rects.push_back(m_geometry.deviceRect(id));
        bounds = bounds.united(m_rects.back());
    }
    for (int link : links) {
        m_paths.push_back(m_geometry.linkPath(link));
        bounds = bounds.united(m_paths.back().boundingRect());
    }
    // Room for the minimum on-screen size when zoomed far out (a GPU of 64 units at 2% zoom).
    m_bounds = bounds.isNull() ? QRectF() : bounds.adjusted(-120, -120, 120, 120);
    setVisible(!m_devices.empty() || !m_paths.empty());
    update();
}

void GpuMarksItem::setColour(const QColor &colour)
{
    if (colour == m_colour)
        return;
    m_colour = colour;
    update();
}

void GpuMarksItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const double lod = std::max(1e-6, option->levelOfDetailFromTransform(painter->worldTransform()));
    painter->setRenderHint(QPainter::Antialiasing, true);
    if (!m_paths.empty()) {
        // A white halo under each route keeps it readable over links of any colour.
        QPen halo(QColor(255, 255, 255, 200), 6);
        halo.setCosmetic(true);
        halo.setCapStyle(Qt::RoundCap);
        halo.setJoinStyle(Qt::RoundJoin);
        painter->setPen(halo);
        painter->setBrush(Qt::NoBrush);
        for (const QPolygonF &p : m_paths)
            painter->drawPolyline(p);
        QPen route(m_colour, 2.5);
        route.setCosmetic(true);
        route.setCapStyle(Qt::RoundCap);
        route.setJoinStyle(Qt::RoundJoin);
        painter->setPen(route);
        painter->setBrush(Qt::NoBrush);
        for (const QPolygonF &p : m_paths)
            painter->drawPolyline(p);
    }
    QPen outline(m_colour, m_style == Style::Outline ? 3 : 2.5);
    outline.setCosmetic(true);
    if (m_style == Style::Dashed)
        outline.setStyle(Qt::DashLine);
    painter->setPen(outline);
    QColor fill = m_colour;
    fill.setAlpha(m_style == Style::Outline ? 0 : 70);
    painter->setBrush(m_style == Style::Outline ? QBrush(Qt::NoBrush) : QBrush(fill));
    const double minUnits = kMinPx / lod;
    const double pad = std::min(kPad, 3 / lod) + 1.5 / lod;
    for (QRectF r : m_rects) {
        r.adjust(-pad, -pad, pad, pad);
        if (r.width() < minUnits)
            r.adjust(-(minUnits - r.width()) / 2, 0, (minUnits - r.width()) / 2, 0);
        if (r.height() < minUnits)
            r.adjust(0, -(minUnits - r.height()) / 2, 0, (minUnits - r.height()) / 2);
        if (lod >= 0.3)
            painter->drawRoundedRect(r, 5, 5);
        else
            painter->drawRect(r);
    }
}

} // namespace railyard
