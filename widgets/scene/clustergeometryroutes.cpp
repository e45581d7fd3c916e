// ClusterGeometry: the routes links take between the placed devices, and hit testing.
#include "clustergeometry.h"
#include "clustergeometry_p.h"

#include <algorithm>
#include <cmath>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;
using geometry_detail::buildCsr;
using geometry_detail::rowSpan;

std::vector<QLineF> ClusterGeometry::globalBusLines() const
{
    std::vector<QLineF> out;
    if (!m_busMode)
        return out;
    std::vector<double> deepest(m_columnGutter.size(), m_globalBusY);
    for (const Block &block : m_blocks) {
        if (block.leaves.empty())
            continue;
        const auto c = static_cast<std::size_t>(
                std::find(m_columnGutter.begin(), m_columnGutter.end(), block.gutterX)
                - m_columnGutter.begin());
        if (c < deepest.size())
            deepest[c] = std::max(deepest[c], block.uplinkY);
    }
    for (std::size_t c = 0; c < m_columnGutter.size(); ++c)
        if (deepest[c] > m_globalBusY)
            out.emplace_back(m_columnGutter[c], m_globalBusY, m_columnGutter[c], deepest[c]);
    out.emplace_back(m_globalLeft, m_globalBusY, m_globalRight, m_globalBusY);
    return out;
}

QPolygonF ClusterGeometry::nodeLinkPath(int link, const engine::Link &l) const
{
    const auto &devices = m_topology.devices();
    const QRectF a = deviceRect(l.a);
    const QRectF b = deviceRect(l.b);
    const DeviceKind ka = devices[static_cast<std::size_t>(l.a)].kind;
    const DeviceKind kb = devices[static_cast<std::size_t>(l.b)].kind;
    if (std::abs(a.center().y() - b.center().y()) < 1) {
        // Same row: side by side, or routed around whatever sits between them.
        if (const int lane = m_arcLane.empty() ? -1 : m_arcLane[static_cast<std::size_t>(link)];
            lane >= 0) {
            const double yy = a.bottom() + 8 + lane * m_arcSpacing;
            const double xa = m_arcX[2 * static_cast<std::size_t>(link)];
            const double xb = m_arcX[2 * static_cast<std::size_t>(link) + 1];
            return QPolygonF({QPointF(xa, a.bottom()),
                              QPointF(xa, yy),
                              QPointF(xb, yy),
                              QPointF(xb, b.bottom())});
        }
        const bool aLeft = a.center().x() < b.center().x();
        const double gap = aLeft ? b.left() - a.right() : a.left() - b.right();
        if (gap < 40)
            return QPolygonF({QPointF(aLeft ? a.right() : a.left(), a.center().y()),
                              QPointF(aLeft ? b.left() : b.right(), b.center().y())});
        if (ka == DeviceKind::Gpu && kb == DeviceKind::Gpu) {
            // A direct NVLink between GPUs further apart: an arc under the GPU row, deeper the
            // further it reaches, so the bundles of a mesh stay apart.
            const double slots = std::round(std::abs(b.center().x() - a.center().x()) / kSlot);
            const double yy = a.bottom() + 8 + (slots - 1) * 6;
            const double off = aLeft ? 6 : -6;
            return QPolygonF({QPointF(a.center().x() + off * (slots - 1) / 4, a.bottom()),
                              QPointF(a.center().x() + off * (slots - 1) / 4, yy),
                              QPointF(b.center().x() - off * (slots - 1) / 4, yy),
                              QPointF(b.center().x() - off * (slots - 1) / 4, b.bottom())});
        }
        const bool cpus = ka == DeviceKind::Cpu && kb == DeviceKind::Cpu;
        // The socket link runs above the row, switch-to-CPU links below it.
        const double yy = cpus ? a.top() - 10 : a.bottom() + 9;
        const double ya = cpus ? a.top() : a.bottom();
        const double xa = a.center().x() + (cpus ? 0 : (aLeft ? -8 : 8));
        return QPolygonF({QPointF(xa, ya),
                          QPointF(xa, yy),
                          QPointF(b.center().x(), yy),
                          QPointF(b.center().x(), ya)});
    }
    // A device hanging straight off a CPU from below (a GPU with no PCIe switch): up to a bus
    // under the PCIe row, along it and up into the CPU, clear of the switches in that row.
    if (kb == DeviceKind::Cpu && a.top() > b.bottom()
        && (a.right() < b.left() || a.left() > b.right())) {
        const double y = b.bottom() + 18;
        const double x = b.center().x() + (a.center().x() < b.center().x() ? -8 : 8);
        return QPolygonF({QPointF(a.center().x(), a.top()),
                          QPointF(a.center().x(), y),
                          QPointF(x, y),
                          QPointF(x, b.bottom())});
    }
    // A device hanging straight off a CPU at the end of the PCIe row: up, then along to it.
    if (kb == DeviceKind::Cpu && (a.right() < b.left() || a.left() > b.right())) {
        const double x = a.center().x() + (a.center().x() < b.center().x() ? 8 : -8);
        const double y = b.bottom() - 6;
        return QPolygonF({QPointF(x, a.top()),
                          QPointF(x, y),
                          QPointF(a.center().x() < b.center().x() ? b.left() : b.right(), y)});
    }
    const bool aAbove = a.center().y() < b.center().y();
    const QRectF &upper = aAbove ? a : b;
    const QRectF &lower = aAbove ? b : a;
    QPointF pu, pl;
    if (l.kind == LinkKind::NvLink) {
        pu = QPointF(upper.center().x(), upper.bottom());
        pl = QPointF(lower.center().x(), lower.top());
    } else {
        // Straight down from the narrower box into the wider one.
        const QRectF &narrow = upper.width() <= lower.width() ? upper : lower;
        const QRectF &wide = upper.width() <= lower.width() ? lower : upper;
        const double x = std::clamp(narrow.center().x(), wide.left() + 6, wide.right() - 6);
        pu = QPointF(x, upper.bottom());
        pl = QPointF(x, lower.top());
    }
    return aAbove ? QPolygonF({pu, pl}) : QPolygonF({pl, pu});
}

QPolygonF ClusterGeometry::linkPath(int link) const
{
    const engine::Link &l = m_topology.links()[static_cast<std::size_t>(link)];
    const auto &devices = m_topology.devices();
    const engine::Device &da = devices[static_cast<std::size_t>(l.a)];
    const engine::Device &db = devices[static_cast<std::size_t>(l.b)];
    const QRectF a = deviceRect(l.a);
    const QRectF b = deviceRect(l.b);
    if (da.node >= 0 && da.node == db.node)
        return nodeLinkPath(link, l);

    // A GPU to a rack-scale NVSwitch chip: down (or up) to the rack's NVLink bus.
    if (da.kind == DeviceKind::Gpu && db.kind == DeviceKind::NvSwitch) {
        if (const RackBus *bus = rackBus(rackOfNode(da.node)); bus && da.node >= 0) {
            const bool mirrored = isMirrored(da.node);
            const double busY = mirrored ? bus->lowerY : bus->upperY;
            const double ga = mirrored ? a.top() : a.bottom();
            const double sb = mirrored ? b.bottom() : b.top();
            return QPolygonF({QPointF(a.center().x(), ga),
                              QPointF(a.center().x(), busY),
                              QPointF(b.center().x(), busY),
                              QPointF(b.center().x(), sb)});
        }
    }
    // A NIC to its leaf: onto its rail's lane, along to the trunk, up to the leaf.
    if (da.kind == DeviceKind::Nic && db.kind == DeviceKind::Leaf && da.node >= 0) {
        const Block &block = m_blocks[static_cast<std::size_t>(blockOfNode(da.node))];
        const int lane = laneOfLeaf(l.b);
        if (lane >= 0 && lane < static_cast<int>(block.trunkX.size())) {
            const double laneY = nicLaneY(l.a);
            const double nicY = isMirrored(da.node) ? a.bottom() : a.top();
            const double tx = block.trunkX[static_cast<std::size_t>(lane)];
            const double ly = block.leafLaneY[static_cast<std::size_t>(lane)];
            return QPolygonF({QPointF(a.center().x(), nicY),
                              QPointF(a.center().x(), laneY),
                              QPointF(tx, laneY),
                              QPointF(tx, ly),
                              QPointF(b.center().x(), ly),
                              QPointF(b.center().x(), b.bottom())});
        }
    }
    // A leaf to a spine: straight up, or through the block column's trunk in bus mode.
    if (da.kind == DeviceKind::Leaf && db.kind == DeviceKind::Spine && m_busMode) {
        for (const Block &block : m_blocks) {
            if (std::find(block.leaves.begin(), block.leaves.end(), l.a) == block.leaves.end())
                continue;
            return QPolygonF({QPointF(a.center().x(), a.top()),
                              QPointF(a.center().x(), block.uplinkY),
                              QPointF(block.gutterX, block.uplinkY),
                              QPointF(block.gutterX, m_globalBusY),
                              QPointF(b.center().x(), m_globalBusY),
                              QPointF(b.center().x(), b.bottom())});
        }
    }
    const bool aAbove = a.center().y() < b.center().y();
    return QPolygonF({QPointF(a.center().x(), aAbove ? a.bottom() : a.top()),
                      QPointF(b.center().x(), aAbove ? b.top() : b.bottom())});
}

void ClusterGeometry::buildIndex() const
{
    const double area = std::max(1.0, m_bounds.width() * m_bounds.height());
    m_cellSize = std::max(200.0, std::sqrt(area / 65536.0));
    m_cols = std::max(1, static_cast<int>(std::ceil(m_bounds.width() / m_cellSize)));
    m_rows = std::max(1, static_cast<int>(std::ceil(m_bounds.height() / m_cellSize)));
    std::vector<std::pair<int, int>> pairs;
    pairs.reserve(m_device.size() * 2);
    for (int id = 0; id < static_cast<int>(m_device.size()); ++id) {
        const QRectF &r = m_device[static_cast<std::size_t>(id)];
        if (r.isNull())
            continue;
        const int c0 = std::clamp(int((r.left() - m_bounds.left()) / m_cellSize), 0, m_cols - 1);
        const int c1 = std::clamp(int((r.right() - m_bounds.left()) / m_cellSize), 0, m_cols - 1);
        const int r0 = std::clamp(int((r.top() - m_bounds.top()) / m_cellSize), 0, m_rows - 1);
        const int r1 = std::clamp(int((r.bottom() - m_bounds.top()) / m_cellSize), 0, m_rows - 1);
        for (int y = r0; y <= r1; ++y)
            for (int x = c0; x <= c1; ++x)
                pairs.emplace_back(y * m_cols + x, id);
    }
    buildCsr(m_cols * m_rows, pairs, m_cellStart, m_cellDev);
}

int ClusterGeometry::deviceAt(const QPointF &pos) const
{
    if (!m_bounds.contains(pos))
        return -1;
    if (m_cellStart.empty())
        buildIndex();
    const int cx = std::clamp(int((pos.x() - m_bounds.left()) / m_cellSize), 0, m_cols - 1);
    const int cy = std::clamp(int((pos.y() - m_bounds.top()) / m_cellSize), 0, m_rows - 1);
    for (int id : rowSpan(m_cellStart, m_cellDev, cy * m_cols + cx))
        if (m_device[static_cast<std::size_t>(id)].adjusted(-2, -2, 2, 2).contains(pos))
            return id;
    return -1;
}

int ClusterGeometry::rackAt(const QPointF &pos) const
{
    for (int r = 0; r < rackCount(); ++r)
        if (m_rack[static_cast<std::size_t>(r)].contains(pos))
            return r;
    return -1;
}

int ClusterGeometry::nodeAt(const QPointF &pos) const
{
    const int rack = rackAt(pos);
    if (rack < 0)
        return -1;
    for (int n = firstNodeOfRack(rack); n < firstNodeOfRack(rack + 1); ++n)
        if (m_node[static_cast<std::size_t>(n)].contains(pos))
            return n;
    return -1;
}

} // namespace railyard
