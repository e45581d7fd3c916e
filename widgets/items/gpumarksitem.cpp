#include "gpumarksitem.h"

#include "scene/clustergeometry.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

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
    m_segments.clear();
    m_linkCount = static_cast<int>(links.size());
    QRectF bounds;
    for (int id : m_devices) {
        m_rects.push_back(m_geometry.deviceRect(id));
        bounds = bounds.united(m_rects.back());
    }
    std::set<std::array<long long, 4>> seen;
    const auto key = [](const QPointF &a, const QPointF &b) {
        // Either direction is the same segment; coordinates to a tenth of a unit.
        std::array<long long, 4> k = {std::llround(a.x() * 10),
                                      std::llround(a.y() * 10),
                                      std::llround(b.x() * 10),
                                      std::llround(b.y() * 10)};
        if (std::make_pair(k[2], k[3]) < std::make_pair(k[0], k[1]))
            k = {k[2], k[3], k[0], k[1]};
        return k;
    };
    for (int link : links) {
        const QPolygonF path = m_geometry.linkPath(link);
        bounds = bounds.united(path.boundingRect());
        for (int i = 1; i < path.size(); ++i)
            if (seen.insert(key(path[i - 1], path[i])).second)
                m_segments.emplace_back(path[i - 1], path[i]);
    }
    // Room for the minimum on-screen size and the rings when zoomed far out (about 12 pixels
    // around a GPU at 3% zoom).
    m_bounds = bounds.isNull() ? QRectF() : bounds.adjusted(-400, -400, 400, 400);
    setVisible(!m_devices.empty() || !m_segments.empty());
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
    // Thousands of routes (a DP replica of a 16k job) draw without antialiasing: a fraction
    // of the time, and at that scale the difference does not show.
    const bool many = m_segments.size() > 1500;
    painter->setRenderHint(QPainter::Antialiasing, !many);
    if (!m_segments.empty()) {
        const auto n = static_cast<int>(m_segments.size());
        // A white halo under each route keeps it readable over links of any colour.
        QPen halo(QColor(255, 255, 255, 200), many ? 4 : 6);
        halo.setCosmetic(true);
        halo.setCapStyle(Qt::RoundCap);
        painter->setPen(halo);
        painter->setBrush(Qt::NoBrush);
        painter->drawLines(m_segments.data(), n);
        QPen route(m_colour, many ? 2 : 2.5);
        route.setCosmetic(true);
        route.setCapStyle(Qt::RoundCap);
        painter->setPen(route);
        painter->drawLines(m_segments.data(), n);
        painter->setRenderHint(QPainter::Antialiasing, true);
    }
    const double minUnits = kMinPx / lod;
    const double pad = std::min(kPad, 3 / lod) + 1.5 / lod;
    const double radius = lod >= 0.3 ? 5 : 0;
    std::vector<QRectF> rings;
    rings.reserve(m_rects.size());
    for (QRectF r : m_rects) {
        r.adjust(-pad, -pad, pad, pad);
        if (r.width() < minUnits)
            r.adjust(-(minUnits - r.width()) / 2, 0, (minUnits - r.width()) / 2, 0);
        if (r.height() < minUnits)
            r.adjust(0, -(minUnits - r.height()) / 2, 0, (minUnits - r.height()) / 2);
        rings.push_back(r);
    }
    const auto drawRings = [&](double grow) {
        const double d = grow / lod;
        for (const QRectF &r : rings)
            if (radius > 0)
                painter->drawRoundedRect(r.adjusted(-d, -d, d, d), radius + d, radius + d);
            else
                painter->drawRect(r.adjusted(-d, -d, d, d));
    };
    if (m_style == Style::Halo) {
        // White inside, the colour around it: no fill, so the GPU keeps its hue.
        painter->setBrush(Qt::NoBrush);
        QPen white(QColor(255, 255, 255, 230), 2);
        white.setCosmetic(true);
        painter->setPen(white);
        drawRings(0);
        QPen ring(m_colour, 3);
        ring.setCosmetic(true);
        painter->setPen(ring);
        drawRings(2.5);
        return;
    }
    QPen outline(m_colour, m_style == Style::Outline ? 3 : 2.5);
    outline.setCosmetic(true);
    if (m_style == Style::Dashed)
        outline.setStyle(Qt::DashLine);
    painter->setPen(outline);
    QColor fill = m_colour;
    fill.setAlpha(m_style == Style::Outline ? 0 : 70);
    painter->setBrush(m_style == Style::Outline ? QBrush(Qt::NoBrush) : QBrush(fill));
    drawRings(0);
}

} // namespace railyard
