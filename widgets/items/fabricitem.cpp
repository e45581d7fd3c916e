#include "fabricitem.h"

#include "paintutil.h"
#include "scene/canvasstate.h"
#include "scene/clustergeometry.h"
#include "scene/style.h"
#include "segmentloads.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <array>
#include <vector>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;

namespace {

constexpr double kMinSwitchPx = 5;
constexpr double kMaxGrowth = 50; // scene units, inside the scene rect's margin

LinkKind networkKind(const engine::Topology &t)
{
    return t.nicModel().fabric == "ethernet" ? LinkKind::Ethernet : LinkKind::Ib;
}

void drawSwitch(QPainter *painter,
                const engine::Topology &t,
                const QRectF &r,
                int id,
                Detail detail,
                double lod)
{
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    // Switches are few and large: named from the Devices level on, when the name can be read.
    const bool named = detail >= Detail::Devices && paint::fontUnits(lod, 10, 10, 16) > 0;
    paint::drawDevice(painter, r, d.kind, QString(), named ? Detail::Labels : detail, lod);
    if (!named)
        return;
    QFont f = painter->font();
    f.setPixelSize(paint::fontUnits(lod, 10, 10, 16));
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(style::deviceText(d.kind));
    QString text = paint::deviceLabel(t, id);
    if (d.kind == DeviceKind::Leaf && d.rail >= 0
        && t.shape().fabric == engine::FabricKind::RailOptimized)
        text += QStringLiteral("\nrail %1").arg(d.rail);
    painter->drawText(r, Qt::AlignCenter, text);
    ++paintStats().labels;
}

} // namespace

BlockFabricItem::BlockFabricItem(const ClusterGeometry &geometry,
                                 const CanvasState &state,
                                 int block)
    : m_geometry(geometry)
    , m_state(state)
    , m_block(block)
{
    const ClusterGeometry::Block &b = geometry.blocks()[static_cast<std::size_t>(block)];
    QRectF r = b.rect;
    if (geometry.busMode())
        r = r.united(QRectF(QPointF(b.gutterX, b.uplinkY), QSizeF(1, 1)));
    m_bounds = r.adjusted(-4, -4, 4, 4);
    setZValue(1);
}

BlockFabricItem::~BlockFabricItem() = default;

void BlockFabricItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const ClusterGeometry &g = m_geometry;
    const ClusterGeometry::Block &b = g.blocks()[static_cast<std::size_t>(m_block)];
    if (b.leaves.empty())
        return;
    const engine::Topology &t = g.topology();
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const Detail detail = detailFor(lod);
    const LinkKind kind = networkKind(t);
    painter->setRenderHint(QPainter::Antialiasing, false);

    std::vector<QLineF> lines(b.lanes.begin(), b.lanes.end());
    // Where a drop or riser joins a lane: dots tell a junction from a crossing when close.
    std::vector<QPointF> joins;
    const bool dots = detail == Detail::Labels;
    if (dots)
        for (const QLineF &lane : b.lanes)
            joins.push_back(lane.p1());
    // Trunks: each rail from its leaf down to its lowest lane.
    for (std::size_t i = 0; i < b.leaves.size(); ++i) {
        const double x = b.trunkX[i];
        lines.emplace_back(x, b.leafLaneY[i], x, std::max(b.leafLaneY[i], b.lastLaneY[i]));
        const QRectF leaf = g.deviceRect(b.leaves[i]);
        lines.emplace_back(leaf.center().x(), leaf.bottom(), leaf.center().x(), b.leafLaneY[i]);
        if (dots)
            joins.emplace_back(leaf.center().x(), b.leafLaneY[i]);
    }
    if (g.busMode()) {
        double right = b.gutterX;
        for (int leaf : b.leaves) {
            const QRectF r = g.deviceRect(leaf);
            lines.emplace_back(r.center().x(), r.top(), r.center().x(), b.uplinkY);
            right = std::max(right, r.center().x());
        }
        lines.emplace_back(b.gutterX, b.uplinkY, right, b.uplinkY);
    }
    // Every NIC drops onto its rail's lane; zoomed out, one drop per server stands for them.
    for (int n = b.firstNode; n < b.firstNode + b.nodeCount; ++n) {
        const bool mirrored = g.isMirrored(n);
        const QRectF node = g.nodeRect(n);
        double reach = mirrored ? -1e18 : 1e18;
        for (int id : g.nodeDevices(n)) {
            if (t.devices()[static_cast<std::size_t>(id)].kind != DeviceKind::Nic)
                continue;
            const double laneY = g.nicLaneY(id);
            if (detail == Detail::Racks) {
                reach = mirrored ? std::max(reach, laneY) : std::min(reach, laneY);
                continue;
            }
            const QRectF r = g.deviceRect(id);
            const double x = r.center().x();
            // Above the Devices level the NIC boxes are not drawn: start at the server's edge.
            const double from = detail == Detail::Servers ? (mirrored ? node.bottom() : node.top())
                                                          : (mirrored ? r.bottom() : r.top());
            lines.emplace_back(x, from, x, laneY);
            if (dots)
                joins.emplace_back(x, laneY);
        }
        if (detail == Detail::Racks && std::abs(reach) < 1e17) {
            const double x = node.center().x();
            lines.emplace_back(x, mirrored ? node.bottom() : node.top(), x, reach);
        }
    }
    const bool loads = m_state.showLoads();
    painter->setPen(loads ? paint::loadPen(0, detail, 1.5) : paint::linkPen(kind, detail, 1.5));
    painter->drawLines(lines.data(), static_cast<int>(lines.size()));
    paintStats().linkLines += static_cast<int>(lines.size());
    if (loads)
        drawLoads(painter, detail);
    if (!joins.empty()) {
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(Qt::NoPen);
        painter->setBrush(loads ? style::kIdleLink : style::linkColor(kind));
        for (const QPointF &p : joins)
            painter->drawEllipse(p, 3.5, 3.5);
    }

    for (int leaf : b.leaves)
        drawSwitch(painter, t, g.deviceRect(leaf), leaf, detail, lod);
}

void BlockFabricItem::drawLoads(QPainter *painter, Detail detail)
{
    const ClusterGeometry &g = m_geometry;
    const ClusterGeometry::Block &b = g.blocks()[static_cast<std::size_t>(m_block)];
    const engine::Topology &t = g.topology();
    if (detail != Detail::Racks) {
        // Each NIC's whole route to its leaf in its load's colour, busiest on top, one line
        // per shared segment of lane and trunk.
        if (!m_loads) {
            std::vector<int> links;
            for (int n = b.firstNode; n < b.firstNode + b.nodeCount; ++n)
                for (int id : g.nodeDevices(n)) {
                    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
                    if (d.kind == DeviceKind::Nic)
                        if (const int link = t.nicUplink(d.index); link >= 0)
                            links.push_back(link);
                }
            m_loads = std::make_unique<SegmentLoads>(g, links);
        }
        m_loads->draw(painter, m_state, detail, paint::visibleRect(painter));
        return;
    }
    // Zoomed far out, one drop per server in its busiest NIC's colour.
    paint::LoadBuckets steps;
    for (int n = b.firstNode; n < b.firstNode + b.nodeCount; ++n) {
        const bool mirrored = g.isMirrored(n);
        const QRectF node = g.nodeRect(n);
        double busiest = 0;
        bool back = false;
        double reach = mirrored ? -1e18 : 1e18;
        for (int id : g.nodeDevices(n)) {
            const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
            if (d.kind != DeviceKind::Nic)
                continue;
            const int link = t.nicUplink(d.index);
            if (link < 0)
                continue;
            const double u = m_state.load(link);
            if (u > busiest) {
                busiest = u;
                back = m_state.reversed(link);
            }
            const double laneY = g.nicLaneY(id);
            reach = mirrored ? std::max(reach, laneY) : std::min(reach, laneY);
        }
        if (busiest > 0 && std::abs(reach) < 1e17) {
            const double x = node.center().x();
            const QLineF drop(x, mirrored ? node.bottom() : node.top(), x, reach);
            steps[static_cast<std::size_t>(paint::loadStep(busiest))].push_back(
                    back ? QLineF(drop.p2(), drop.p1()) : drop);
        }
    }
    paint::drawLoadBuckets(painter, steps, detail, m_state.dashes() ? m_state.dashPhase : -1);
}

SpineFabricItem::SpineFabricItem(const ClusterGeometry &geometry, const CanvasState &state)
    : m_geometry(geometry)
    , m_state(state)
{
    const engine::Topology &t = geometry.topology();
    QRectF r;
    for (int id = 0; id < t.deviceCount(); ++id) {
        const DeviceKind k = t.devices()[static_cast<std::size_t>(id)].kind;
        if (k == DeviceKind::Spine || k == DeviceKind::Core || k == DeviceKind::Leaf)
            r = r.united(geometry.deviceRect(id));
        if (k == DeviceKind::Spine || k == DeviceKind::Core)
            m_switches.push_back(id);
    }
    for (int id : m_switches)
        for (int link : t.linksOf(id))
            if (t.links()[static_cast<std::size_t>(link)].b == id)
                m_uplinks.push_back(link);
    for (const QLineF &l : geometry.globalBusLines())
        r = r.united(QRectF(l.p1(), l.p2()).normalized().adjusted(-1, -1, 1, 1));
    // Room for the switches' growth when zoomed far out (see paint()).
    if (!r.isNull())
        m_bounds = r.adjusted(-4, -kMaxGrowth - 4, 4, kMaxGrowth + 4);
    setZValue(1);
}

SpineFabricItem::~SpineFabricItem() = default;

void SpineFabricItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const ClusterGeometry &g = m_geometry;
    const engine::Topology &t = g.topology();
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const Detail detail = detailFor(lod);
    const LinkKind kind = networkKind(t);
    painter->setRenderHint(QPainter::Antialiasing, detail == Detail::Labels);

    std::vector<QLineF> lines = g.globalBusLines();
    const std::vector<int> &tops = m_switches;
    for (int id : tops) {
        const DeviceKind k = t.devices()[static_cast<std::size_t>(id)].kind;
        const QRectF r = g.deviceRect(id);
        if (k == DeviceKind::Spine && g.busMode())
            lines.emplace_back(r.center().x(), r.bottom(), r.center().x(), g.globalBusY());
    }
    const bool loads = m_state.showLoads();
    // In the link-load view the links are drawn per shared segment, with their loads.
    if (!loads)
        for (int id : tops) {
            for (int link : t.linksOf(id)) {
                const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
                const int other = t.otherEnd(link, id);
                const DeviceKind ok = t.devices()[static_cast<std::size_t>(other)].kind;
                // Each link once, from its lower end: leaf -> spine (straight only), spine ->
                // core.
                if (l.b != id || (ok == DeviceKind::Leaf && g.busMode()))
                    continue;
                const QPolygonF path = g.linkPath(link);
                for (int i = 1; i < path.size(); ++i)
                    lines.emplace_back(path[i - 1], path[i]);
            }
        }
    painter->setPen(loads ? paint::loadPen(0, detail, 1.5) : paint::linkPen(kind, detail, 1.5));
    painter->drawLines(lines.data(), static_cast<int>(lines.size()));
    paintStats().linkLines += static_cast<int>(lines.size());
    if (loads) {
        // Every uplink along its whole route (through the column trunks in bus mode), busiest
        // on top.
        if (!m_loads)
            m_loads = std::make_unique<SegmentLoads>(g, m_uplinks);
        m_loads->draw(painter, m_state, detail, paint::visibleRect(painter));
    }
    for (int id : tops) {
        QRectF r = g.deviceRect(id);
        // A spine tier of 96-unit boxes vanishes at 2% zoom: keep each switch a visible mark.
        const double grow = std::min(kMaxGrowth, (kMinSwitchPx / lod - r.height()) / 2);
        if (grow > 0)
            r.adjust(0, -grow, 0, grow);
        drawSwitch(painter, t, r, id, detail, lod);
    }
}

} // namespace railyard
