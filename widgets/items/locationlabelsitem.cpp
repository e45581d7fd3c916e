#include "locationlabelsitem.h"

#include "paintutil.h"
#include "scene/clustergeometry.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace railyard {

namespace {
constexpr double kSuPx = 12;   // a scalable unit's plate, in screen pixels
constexpr double kRackPx = 10; // a rack's
constexpr double kNodePx = 9;  // a server's
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
    const QRectF exposed = option->exposedRect;
    const bool units = g.blocks().size() > 1;
    const bool tray = g.topology().shape().nodesPerDomain > 1;
    painter->setRenderHint(QPainter::Antialiasing, false);

    if (detail == Detail::Racks) {
        // Zoomed far out, each scalable unit is named once instead of each of its racks.
        if (units) {
            for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b) {
                const QRectF r = g.blocks()[static_cast<std::size_t>(b)].rect;
                if (r.intersects(exposed) && r.width() * lod >= 50)
                    paint::drawPlateLabel(painter,
                                          r.center(),
                                          QStringLiteral("SU %1").arg(b),
                                          lod,
                                          11);
            }
            return;
        }
        for (int rack = 0; rack < g.rackCount(); ++rack) {
            const QRectF r = g.rackRect(rack);
            if (r.intersects(exposed) && r.width() * lod >= 70 && r.height() * lod >= 22)
                paint::drawPlateLabel(painter,
                                      r.center(),
                                      QStringLiteral("Rack %1").arg(rack),
                                      lod,
                                      10);
        }
        return;
    }

    // Closer, while the titles cannot be read yet: servers, racks, then scalable units on top.
    const double px = 1 / lod; // scene units per screen pixel
    bool nodePlates = false;
    if (paint::nodeTitleUnits(lod) == 0 && g.nodeCount() > 1) {
        QFont f = painter->font();
        f.setPixelSize(static_cast<int>(kNodePx));
        f.setBold(true);
        const double needPx = QFontMetricsF(f).horizontalAdvance(QStringLiteral("Node 0000")) + 16;
        for (int n = 0; n < g.nodeCount(); ++n) {
            const QRectF r = g.nodeRect(n);
            if (r.width() * lod < needPx || r.height() * lod < 30)
                break; // every server is the same size
            nodePlates = true;
            if (!r.intersects(exposed))
                continue;
            // At the top, over the NIC row: the GPUs' colours below stay in view.
            paint::drawPlateLabel(painter,
                                  QPointF(r.center().x(), r.top() + 2 * px),
                                  (tray ? QStringLiteral("Tray %1") : QStringLiteral("Node %1"))
                                          .arg(n),
                                  lod,
                                  kNodePx,
                                  Qt::AlignHCenter | Qt::AlignTop);
        }
    }
    if (paint::rackTitleUnits(lod) == 0 && g.rackCount() > 1)
        for (int rack = 0; rack < g.rackCount(); ++rack) {
            const QRectF r = g.rackRect(rack);
            if (!r.intersects(exposed.adjusted(0, 0, 0, 30 * px)) || r.width() * lod < 70)
                continue;
            // Inside the rack's top-left corner; over the rails above it when the servers carry
            // plates of their own there.
            if (nodePlates)
                paint::drawPlateLabel(painter,
                                      r.topLeft() + QPointF(4 * px, 0),
                                      QStringLiteral("Rack %1").arg(rack),
                                      lod,
                                      kRackPx,
                                      Qt::AlignLeft | Qt::AlignBottom);
            else
                paint::drawPlateLabel(painter,
                                      r.topLeft() + QPointF(4 * px, 2 * px),
                                      QStringLiteral("Rack %1").arg(rack),
                                      lod,
                                      kRackPx,
                                      Qt::AlignLeft | Qt::AlignTop);
        }
    if (units && detail <= Detail::Devices)
        for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b) {
            const QRectF r = g.blocks()[static_cast<std::size_t>(b)].rect;
            if (!r.intersects(exposed))
                continue;
            paint::drawPlateLabel(painter,
                                  r.topLeft() + QPointF(6 * px, 6 * px),
                                  QStringLiteral("SU %1").arg(b),
                                  lod,
                                  kSuPx,
                                  Qt::AlignLeft | Qt::AlignTop,
                                  paint::Plate::Dark);
        }
}

} // namespace railyard
