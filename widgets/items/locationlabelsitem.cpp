#include "locationlabelsitem.h"

#include "paintutil.h"
#include "scene/clustergeometry.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace railyard {

namespace {
constexpr int kSuPx = 12;   // a scalable unit's plate, in screen pixels
constexpr int kRackPx = 10; // a rack's
constexpr int kNodePx = 9;  // a server's
} // namespace

LocationLabelsItem::LocationLabelsItem(const ClusterGeometry &geometry)
    : m_geometry(geometry)
{
    setZValue(7); // over racks and rails, under the marks of the hovered and selected GPUs
    setAcceptedMouseButtons(Qt::NoButton);
    setFlag(QGraphicsItem::ItemUsesExtendedStyleOption); // for the exposed rectangle
}

QRectF LocationLabelsItem::boundingRect() const
{
    return m_geometry.bounds();
}

void LocationLabelsItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const ClusterGeometry &g = m_geometry;
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const Detail detail = detailFor(lod);
    const bool units = g.blocks().size() > 1;
    const bool tray = g.topology().shape().nodesPerDomain > 1;
    const bool nodeNames = paint::nodeTitleUnits(lod) == 0 && g.nodeCount() > 1;
    const bool rackNames = paint::rackTitleUnits(lod) == 0 && g.rackCount() > 1;
    if (detail != Detail::Racks && !nodeNames && !rackNames && !units)
        return;
    paint::Plates plates(painter, &m_plates);
    // What is exposed and on the device: a render of the whole scene exposes every item whole.
    const QRectF exposed = option->exposedRect.intersected(plates.visibleScene());
    // A plate reaches past its anchor by up to this much (scene units).
    const double reach = 40 / lod;

    if (detail == Detail::Racks) {
        // Zoomed far out, each scalable unit is named once instead of each of its racks.
        if (units) {
            for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b) {
                const QRectF r = g.blocks()[static_cast<std::size_t>(b)].rect;
                if (r.intersects(exposed) && r.width() * lod >= 50)
                    plates.draw(r.center(), QStringLiteral("SU %1").arg(b), 11);
            }
            return;
        }
        for (int rack = 0; rack < g.rackCount(); ++rack) {
            const QRectF r = g.rackRect(rack);
            if (r.intersects(exposed) && r.width() * lod >= 70 && r.height() * lod >= 22)
                plates.draw(r.center(), QStringLiteral("Rack %1").arg(rack), 10);
        }
        return;
    }

    // Closer, while the titles cannot be read yet: servers, racks, then scalable units on top.
    bool nodePlates = false;
    if (nodeNames) {
        QFont f = painter->font();
        f.setPixelSize(kNodePx);
        f.setBold(true);
        const double needPx = QFontMetricsF(f).horizontalAdvance(QStringLiteral("Node 0000")) + 16;
        // Every server is the same size.
        const QRectF first = g.nodeRect(0);
        nodePlates = first.width() * lod >= needPx && first.height() * lod >= 30;
        for (int n = 0; nodePlates && n < g.nodeCount(); ++n) {
            const QRectF r = g.nodeRect(n);
            if (!r.intersects(exposed))
                continue;
            // Over the NIC row (the top, or the bottom of a tray drawn upside down): the GPUs'
            // colours stay in view.
            const bool mirrored = g.isMirrored(n);
            plates.draw(QPointF(r.center().x(), mirrored ? r.bottom() : r.top()),
                        (tray ? QStringLiteral("Tray %1") : QStringLiteral("Node %1")).arg(n),
                        kNodePx,
                        Qt::AlignHCenter | (mirrored ? Qt::AlignBottom : Qt::AlignTop),
                        paint::Plates::Style::Light,
                        QPointF(0, mirrored ? -2 : 2));
        }
    }
    if (rackNames)
        for (int rack = 0; rack < g.rackCount(); ++rack) {
            const QRectF r = g.rackRect(rack);
            if (!r.adjusted(0, -reach, reach, 0).intersects(exposed) || r.width() * lod < 70)
                continue;
            // Inside the rack's top-left corner; over the rails above it when the servers carry
            // plates of their own there.
            plates.draw(r.topLeft(),
                        QStringLiteral("Rack %1").arg(rack),
                        kRackPx,
                        Qt::AlignLeft | (nodePlates ? Qt::AlignBottom : Qt::AlignTop),
                        paint::Plates::Style::Light,
                        QPointF(4, nodePlates ? 0 : 2));
        }
    if (units && detail <= Detail::Devices)
        for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b) {
            const QRectF r = g.blocks()[static_cast<std::size_t>(b)].rect;
            if (!r.adjusted(0, 0, reach, reach).intersects(exposed))
                continue;
            plates.draw(r.topLeft(),
                        QStringLiteral("SU %1").arg(b),
                        kSuPx,
                        Qt::AlignLeft | Qt::AlignTop,
                        paint::Plates::Style::Dark,
                        QPointF(6, 6));
        }
}

} // namespace railyard
