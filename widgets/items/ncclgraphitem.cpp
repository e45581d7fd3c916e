#include "ncclgraphitem.h"

#include "paintutil.h"
#include "scene/clustergeometry.h"
#include "scene/levelofdetail.h"

#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

namespace railyard {

namespace {
constexpr double kArrowPx = 9; // arrowhead length on screen
constexpr double kSpacing = 4; // scene units between channels drawn together
} // namespace

NcclGraphItem::NcclGraphItem(const ClusterGeometry &geometry)
    : m_geometry(geometry)
{
    setZValue(7.5); // over the racks and the fabric, under the selection and hover marks
    setVisible(false);
    setAcceptedMouseButtons(Qt::NoButton);
    setFlag(QGraphicsItem::ItemUsesExtendedStyleOption); // for the exposed rectangle
}

QColor NcclGraphItem::channelColour(int channel)
{
    // Qualitative hues that read on the pale canvas and stay apart from the link kinds' colours
    // (NVLink green, InfiniBand blue, PCIe grey).
    static const QColor hues[] = {QColor(0xd6, 0x27, 0x28),
                                  QColor(0xff, 0x7f, 0x0e),
                                  QColor(0x94, 0x67, 0xbd),
                                  QColor(0xe3, 0x77, 0xc2),
                                  QColor(0x8c, 0x56, 0x4b),
                                  QColor(0xbc, 0xbd, 0x22),
                                  QColor(0x17, 0xbe, 0xcf),
                                  QColor(0x33, 0x33, 0x33)};
    constexpr int n = static_cast<int>(std::size(hues));
    return hues[((channel % n) + n) % n];
}

QPolygonF NcclGraphItem::edgeLine(const engine::GraphEdge &edge) const
{
    const engine::Topology &t = m_geometry.topology();
    QPolygonF out;
    int at = edge.from;
    for (int l : edge.links) {
        QPolygonF path = m_geometry.linkPath(l);
        if (t.links()[static_cast<std::size_t>(l)].a != at)
            std::reverse(path.begin(), path.end());
        for (const QPointF &p : path)
            if (out.isEmpty() || QLineF(out.back(), p).length() > 0.5)
                out.append(p);
        at = t.otherEnd(l, at);
    }
    return out;
}

void NcclGraphItem::setOverlay(const engine::NcclGraphOverlay *overlay, int channel)
{
    prepareGeometryChange();
    m_paths.clear();
    m_order.clear();
    m_bounds = QRectF();
    if (overlay) {
        const engine::Topology &t = m_geometry.topology();
        std::vector<const engine::GraphChannelPath *> shown;
        for (const engine::GraphChannelPath &c : overlay->channels)
            if (channel < 0 || c.channel == channel)
                shown.push_back(&c);
        const double n = static_cast<double>(shown.size());
        const double spacing = std::min(kSpacing, 24.0 / std::max(1.0, n));
        for (std::size_t k = 0; k < shown.size(); ++k) {
            const double off = (static_cast<double>(k) - (n - 1) / 2) * spacing;
            const QColor colour = channelColour(shown[k]->channel);
            for (const engine::GraphEdge &e : shown[k]->edges) {
                Path p;
                p.line = edgeLine(e).translated(off, off);
                p.bounds = p.line.boundingRect().adjusted(-2, -2, 2, 2);
                p.colour = colour;
                p.arrow = t.devices()[static_cast<std::size_t>(e.to)].kind
                          == engine::DeviceKind::Gpu;
                m_bounds = m_bounds.united(p.line.boundingRect());
                m_paths.push_back(std::move(p));
            }
        }
        if (shown.size() == 1) {
            // One channel: each GPU says where it comes in the channel (1, 2, ... per server).
            const auto &gpus = shown.front()->gpus;
            const std::size_t perServer = gpus.size() / std::max(1, overlay->servers);
            m_orderColour = channelColour(shown.front()->channel);
            for (std::size_t i = 0; i < gpus.size(); ++i) {
                const QRectF r = m_geometry.deviceRect(t.gpuDevice(gpus[i]));
                m_order.emplace_back(r.topRight(),
                                     static_cast<int>(i % std::max<std::size_t>(1, perServer)) + 1);
            }
        }
    }
    m_bounds = m_bounds.isNull() ? QRectF() : m_bounds.adjusted(-60, -60, 60, 60);
    setVisible(!m_paths.empty());
    update();
}

void NcclGraphItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const double lod = std::max(1e-6, option->levelOfDetailFromTransform(painter->worldTransform()));
    // Only what is exposed: a whole-cluster ring has a path per hop on every server.
    const QRectF exposed = option->exposedRect.isNull() ? paint::visibleRect(painter)
                                                        : option->exposedRect;
    std::vector<const Path *> shown;
    shown.reserve(m_paths.size());
    for (const Path &p : m_paths)
        if (p.bounds.intersects(exposed) || exposed.isNull())
            shown.push_back(&p);
    const bool many = shown.size() > 3000;
    painter->setRenderHint(QPainter::Antialiasing, !many);
    painter->setBrush(Qt::NoBrush);
    QPen halo(QColor(255, 255, 255, 210), 5.5);
    halo.setCosmetic(true);
    halo.setCapStyle(Qt::RoundCap);
    halo.setJoinStyle(Qt::RoundJoin);
    painter->setPen(halo);
    for (const Path *p : shown)
        painter->drawPolyline(p->line);
    const double arrow = kArrowPx / lod;
    for (const Path *shownPath : shown) {
        const Path &p = *shownPath;
        QPen pen(p.colour, 2.5);
        pen.setCosmetic(true);
        pen.setCapStyle(Qt::RoundCap);
        pen.setJoinStyle(Qt::RoundJoin);
        painter->setPen(pen);
        painter->setBrush(Qt::NoBrush);
        painter->drawPolyline(p.line);
        if (!p.arrow || p.line.size() < 2 || detailFor(lod) < Detail::Devices)
            continue;
        const QLineF last(p.line[p.line.size() - 2], p.line.back());
        if (last.length() <= 0)
            continue;
        const QPointF tip = last.p2();
        const QPointF dir = (last.p2() - last.p1()) / last.length();
        const QPointF side(-dir.y(), dir.x());
        const QPolygonF head({tip,
                              tip - dir * arrow + side * arrow * 0.45,
                              tip - dir * arrow - side * arrow * 0.45});
        painter->setPen(Qt::NoPen);
        painter->setBrush(p.colour);
        painter->drawPolygon(head);
    }
    if (m_order.empty() || detailFor(lod) < Detail::Devices)
        return;
    // Badges a fixed size on screen at the GPUs' top-right corners.
    const double radius = 8 / lod;
    QFont f = painter->font();
    f.setPixelSize(std::max(1, static_cast<int>(std::lround(11 / lod))));
    f.setBold(true);
    painter->setFont(f);
    for (const auto &[at, n] : m_order) {
        const QRectF badge(at.x() - radius, at.y() - radius, 2 * radius, 2 * radius);
        painter->setPen(QPen(Qt::white, 1.5 / lod));
        painter->setBrush(m_orderColour);
        painter->drawEllipse(badge);
        painter->setPen(Qt::white);
        painter->drawText(badge, Qt::AlignCenter, QString::number(n));
    }
}

} // namespace railyard
