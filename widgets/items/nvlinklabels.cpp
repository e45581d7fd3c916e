#include "nvlinklabels.h"

#include "scene/clustergeometry.h"
#include "scene/levelofdetail.h"
#include "scene/style.h"

#include <QFontMetricsF>
#include <QPainter>

#include <cmath>
#include <map>

namespace railyard::paint {

using engine::DeviceKind;
using engine::LinkKind;

namespace {

// A pill with "NV<lanes>" centred on `at`, a fixed size on screen.
void pill(QPainter *painter, const QPointF &at, int lanes, double lod)
{
    const QString text = QStringLiteral("NV%1").arg(lanes);
    QFont f = painter->font();
    f.setPixelSize(std::max(1, static_cast<int>(std::lround(10 / lod))));
    f.setBold(true);
    painter->setFont(f);
    const QFontMetricsF fm(f);
    const double w = fm.horizontalAdvance(text) + 6 / lod;
    const double h = fm.height() + 1 / lod;
    const QRectF box(at.x() - w / 2, at.y() - h / 2, w, h);
    const QColor green = style::linkColor(LinkKind::NvLink);
    painter->setPen(QPen(green, 1 / lod));
    painter->setBrush(QColor(255, 255, 255, 235));
    painter->drawRoundedRect(box, h / 2, h / 2);
    painter->setPen(green.darker(130));
    painter->drawText(box, Qt::AlignCenter, text);
}

} // namespace

int drawNvlinkLanes(QPainter *painter, const ClusterGeometry &g, int node, double lod)
{
    const engine::Topology &t = g.topology();
    if (!t.shape().explicitServer || detailFor(lod) != Detail::Labels)
        return 0;
    const auto &devices = t.devices();
    int drawn = 0;
    std::map<int, double> intoSwitches; // GPU device -> lanes into the NVSwitches
    for (int link : g.nodeLinks(node)) {
        const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
        if (l.kind != LinkKind::NvLink)
            continue;
        const DeviceKind ka = devices[static_cast<std::size_t>(l.a)].kind;
        const DeviceKind kb = devices[static_cast<std::size_t>(l.b)].kind;
        if (ka == DeviceKind::Gpu && kb == DeviceKind::NvSwitch) {
            intoSwitches[l.a] += l.lanes;
            continue;
        }
        if (ka != DeviceKind::Gpu || kb != DeviceKind::Gpu)
            continue;
        // On the bundle's longest stretch (an arc's bottom), at its middle.
        const QPolygonF path = g.linkPath(link);
        QLineF longest;
        for (int i = 1; i < path.size(); ++i)
            if (QLineF(path[i - 1], path[i]).length() > longest.length())
                longest = QLineF(path[i - 1], path[i]);
        pill(painter, longest.center(), static_cast<int>(std::lround(l.lanes)), lod);
        ++drawn;
    }
    for (const auto &[gpu, lanes] : intoSwitches) {
        const QRectF r = g.deviceRect(gpu);
        pill(painter,
             QPointF(r.center().x(), r.bottom() + 9 / lod + 2),
             int(std::lround(lanes)),
             lod);
        ++drawn;
    }
    return drawn;
}

} // namespace railyard::paint
