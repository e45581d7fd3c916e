#include "clustergeometry.h"
#include "clustergeometry_p.h"

#include <algorithm>
#include <cmath>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;
using geometry_detail::buildCsr;
using geometry_detail::rowSpan;

namespace {
constexpr double kPad = geometry_detail::kServerPad;
constexpr double kRowGap = 30;     // between the rows of devices inside a server
constexpr double kNodeGap = 16;    // between servers in a rack
constexpr double kRackPad = 14;    // inside a rack frame
constexpr double kRackGap = 48;    // between racks in a row
constexpr double kRackRowGap = 40; // between rows of racks
constexpr double kBlockGap = 240;  // between blocks (the gap holds the uplink trunk in bus mode)
constexpr double kTierGap = 150;   // between switch tiers
constexpr double kSwitchW = 120;
constexpr double kFabricSwitchH = 40;
constexpr double kCpuSide = 76; // HGX: the CPUs sit at both ends of the PCIe row
constexpr double kTargetAspect = 1.6;

enum class Row { Nic, Host, Gpu, Switch };

double aspectError(double w, double h)
{
    return h > 0 ? std::abs(std::log((w / h) / kTargetAspect)) : 1e9;
}

} // namespace

ClusterGeometry::ClusterGeometry(const engine::Topology &t)
    : m_topology(t)
{
    place();
    assignArcs();
}

std::span<const int> ClusterGeometry::nodeDevices(int node) const
{
    return rowSpan(m_nodeDevStart, m_nodeDev, node);
}

std::span<const int> ClusterGeometry::nodeLinks(int node) const
{
    return rowSpan(m_nodeLinkStart, m_nodeLink, node);
}

std::span<const int> ClusterGeometry::rackSwitches(int rack) const
{
    return rowSpan(m_rackSwitchStart, m_rackSwitch, rack);
}

const ClusterGeometry::RackBus *ClusterGeometry::rackBus(int rack) const
{
    if (rack < 0 || rack >= rackCount() || !m_hasRackBus[static_cast<std::size_t>(rack)])
        return nullptr;
    return &m_rackBus[static_cast<std::size_t>(rack)];
}

int ClusterGeometry::firstNodeOfRack(int rack) const
{
    return std::min(rack * m_perRack, nodeCount());
}

QRectF ClusterGeometry::rackPaintRect(int rack) const
{
    return m_rack[static_cast<std::size_t>(rack)].adjusted(-2, -2, 2, 2);
}

int ClusterGeometry::laneOfLeaf(int leafDevice) const
{
    const engine::Device &d = m_topology.devices()[static_cast<std::size_t>(leafDevice)];
    if (d.kind != DeviceKind::Leaf || d.index >= static_cast<int>(m_laneOfLeaf.size()))
        return -1;
    return m_laneOfLeaf[static_cast<std::size_t>(d.index)];
}

double ClusterGeometry::nicLaneY(int nicDevice) const
{
    const engine::Device &d = m_topology.devices()[static_cast<std::size_t>(nicDevice)];
    const int leaf = m_topology.leafOfNic(d.index);
    if (leaf < 0 || d.node < 0)
        return deviceRect(nicDevice).center().y();
    const int lane = m_laneOfLeaf[static_cast<std::size_t>(leaf)];
    const int row = m_rowOfNode[static_cast<std::size_t>(d.node)];
    const auto &lanes = isMirrored(d.node) ? m_rowLanesBelow[static_cast<std::size_t>(row)]
                                           : m_rowLanesAbove[static_cast<std::size_t>(row)];
    if (lane < 0 || lane >= static_cast<int>(lanes.size()))
        return deviceRect(nicDevice).center().y();
    return lanes[static_cast<std::size_t>(lane)];
}

void ClusterGeometry::place()
{
    const engine::Topology &t = m_topology;
    const engine::ClusterShape &s = t.shape();
    const auto &devices = t.devices();
    const int nodes = s.nodes;
    const int gpn = s.gpusPerNode;
    const bool rackDomain = s.nodesPerDomain > 1;
    m_perRack = std::max(1, s.serversPerRack);
    const int racks = (nodes + m_perRack - 1) / m_perRack;
    m_device.assign(devices.size(), QRectF());
    m_node.assign(static_cast<std::size_t>(nodes), QRectF());
    m_rack.assign(static_cast<std::size_t>(racks), QRectF());
    m_mirrored.assign(static_cast<std::size_t>(nodes), 0);
    m_blockOfNode.assign(static_cast<std::size_t>(nodes), 0);
    m_rowOfNode.assign(static_cast<std::size_t>(nodes), 0);
    m_rackBus.assign(static_cast<std::size_t>(racks), RackBus{});
    m_hasRackBus.assign(static_cast<std::size_t>(racks), 0);

    // Who is inside what.
    {
        std::vector<std::pair<int, int>> nodeDev, nodeLink, rackSwitch;
        nodeDev.reserve(devices.size());
        for (int id = 0; id < static_cast<int>(devices.size()); ++id) {
            const engine::Device &d = devices[static_cast<std::size_t>(id)];
            if (d.node >= 0)
                nodeDev.emplace_back(d.node, id);
            else if (d.kind == DeviceKind::NvSwitch)
                rackSwitch.emplace_back(std::clamp(d.rack, 0, std::max(0, racks - 1)), id);
        }
        const auto &links = t.links();
        for (int i = 0; i < static_cast<int>(links.size()); ++i) {
            const engine::Link &l = links[static_cast<std::size_t>(i)];
            const int na = devices[static_cast<std::size_t>(l.a)].node;
            if (na >= 0 && na == devices[static_cast<std::size_t>(l.b)].node)
                nodeLink.emplace_back(na, i);
        }
        buildCsr(nodes, nodeDev, m_nodeDevStart, m_nodeDev);
        buildCsr(nodes, nodeLink, m_nodeLinkStart, m_nodeLink);
        buildCsr(racks, rackSwitch, m_rackSwitchStart, m_rackSwitch);
    }
    const bool switchBand = rackDomain && !m_rackSwitch.empty();

    // One server or tray, in its own coordinates: its rows of devices top to bottom.
    const int nics = s.nicsPerNode;
    const int slots = std::max({gpn, nics, 1});
    // Explicit servers: NVSwitches as the server lists them, or room below the GPUs for a
    // direct mesh's arcs.
    const bool serverSwitches = s.explicitServer
                                        ? (s.directNvlink || t.countOf(DeviceKind::NvSwitch) > 0)
                                        : !rackDomain && !s.pcieOnly;
    const double side = rackDomain ? 0 : kCpuSide;
    const double nodeW = slots * kSlot + 2 * kPad + 2 * side;
    std::vector<std::pair<Row, double>> rows;
    if (nics > 0)
        rows.emplace_back(Row::Nic, kNicH);
    rows.emplace_back(Row::Host, kSwitchH);
    rows.emplace_back(Row::Gpu, kGpuH);
    if (serverSwitches) // a direct mesh's arcs get more room: one lane for each depth
        rows.emplace_back(Row::Switch,
                          s.explicitServer && s.directNvlink ? kSwitchH + 40 : kSwitchH);
    double rowY[4] = {0, 0, 0, 0};
    double rowYMirrored[4] = {0, 0, 0, 0};
    double y = kNodeTitleH + 8;
    for (const auto &[row, h] : rows) {
        rowY[static_cast<int>(row)] = y;
        y += h + kRowGap;
    }
    const double nodeH = y - kRowGap + kPad;
    y = kNodeTitleH + 8;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        rowYMirrored[static_cast<int>(it->first)] = y;
        y += it->second + kRowGap;
    }

    // Racks: servers side by side; NVL72 trays in two rows around the switch band.
    const double bandH = 18 + 16 + kSwitchH + 16 + 18;
    // A cluster smaller than one rack is drawn as wide as its servers, not as a full rack.
    const int topCount = switchBand ? (m_perRack + 1) / 2 : std::min(m_perRack, nodes);
    const bool anyMirrored = switchBand && m_perRack > topCount;
    const double rackW = 2 * kRackPad + topCount * nodeW + (topCount - 1) * kNodeGap;
    const double rackH = kTitleH + 6 + nodeH + (switchBand ? bandH : 0) + (anyMirrored ? nodeH : 0)
                         + kRackPad;

    // Blocks: consecutive racks whose servers share no leaf with the servers of other blocks.
    const int leafCount = t.countOf(DeviceKind::Leaf);
    std::vector<int> lastUse(static_cast<std::size_t>(leafCount), -1);
    std::vector<std::vector<int>> leavesOfNode(static_cast<std::size_t>(nodes));
    for (const engine::Device &d : devices) {
        if (d.kind != DeviceKind::Nic || d.node < 0)
            continue;
        const int leaf = t.leafOfNic(d.index);
        if (leaf < 0)
            continue;
        lastUse[static_cast<std::size_t>(leaf)] = std::max(lastUse[static_cast<std::size_t>(leaf)],
                                                           d.node);
        auto &own = leavesOfNode[static_cast<std::size_t>(d.node)];
        if (std::find(own.begin(), own.end(), leaf) == own.end())
            own.push_back(leaf);
    }
    struct Span
    {
        int firstRack, rackCount;
    };
    std::vector<Span> spans;
    {
        constexpr int kRacksWithoutFabric = 8;
        int start = 0;
        int reach = -1; // the last node that shares a leaf with the current block
        for (int r = 0; r < racks; ++r) {
            const int first = r * m_perRack;
            const bool shared = reach >= first;
            const bool noFabric = leafCount == 0 && r - start >= kRacksWithoutFabric;
            if (r > start && !shared && (leafCount > 0 || noFabric)) {
                spans.push_back({start, r - start});
                start = r;
            }
            for (int n = first; n < std::min(nodes, first + m_perRack); ++n)
                for (int leaf : leavesOfNode[static_cast<std::size_t>(n)])
                    reach = std::max(reach, lastUse[static_cast<std::size_t>(leaf)]);
        }
        if (racks > start)
            spans.push_back({start, racks - start});
    }

    // Each block's leaves, in lane order.
    m_laneOfLeaf.assign(static_cast<std::size_t>(leafCount), -1);
    m_blocks.resize(spans.size());
    std::size_t maxLanes = 0;
    for (std::size_t b = 0; b < spans.size(); ++b) {
        Block &block = m_blocks[b];
        block.firstRack = spans[b].firstRack;
        block.rackCount = spans[b].rackCount;
        block.firstNode = block.firstRack * m_perRack;
        block.nodeCount = std::min(nodes, (block.firstRack + block.rackCount) * m_perRack)
                          - block.firstNode;
        std::vector<int> leaves;
        for (int n = block.firstNode; n < block.firstNode + block.nodeCount; ++n) {
            m_blockOfNode[static_cast<std::size_t>(n)] = static_cast<int>(b);
            for (int leaf : leavesOfNode[static_cast<std::size_t>(n)])
                leaves.push_back(leaf);
        }
        std::sort(leaves.begin(), leaves.end());
        leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
        for (std::size_t i = 0; i < leaves.size(); ++i) {
            m_laneOfLeaf[static_cast<std::size_t>(leaves[i])] = static_cast<int>(i);
            block.leaves.push_back(t.leafDevice(leaves[i]));
        }
        maxLanes = std::max(maxLanes, leaves.size());
    }

    // Block size for R racks per row; the same R for every block, so blocks line up.
    const int lanes = static_cast<int>(maxLanes);
    const double laneBand = lanes > 0 ? lanes * kLaneGap + 10 : 0;
    const double gutterW = lanes > 0 ? lanes * kLaneGap + 30 : 0;
    const double leafBandH = lanes > 0 ? 24 + kFabricSwitchH + 16 + laneBand : 0;
    const double rowH = (nics > 0 ? laneBand : 0) + rackH + (anyMirrored && nics > 0 ? laneBand : 0)
                        + kRackRowGap;
    const int racksInBlock = m_blocks.empty() ? 1 : m_blocks.front().rackCount;
    const auto blockSize = [&](int perRow) {
        const int rowsOfRacks = (racksInBlock + perRow - 1) / perRow;
        return QSizeF(gutterW + perRow * rackW + (perRow - 1) * kRackGap,
                      leafBandH + rowsOfRacks * rowH - kRackRowGap);
    };
    int perRow = 1;
    for (int r = 2; r <= racksInBlock; ++r) {
        const QSizeF a = blockSize(r), b = blockSize(perRow);
        if (aspectError(a.width(), a.height()) < aspectError(b.width(), b.height()))
            perRow = r;
    }
    const QSizeF cell = blockSize(perRow);

    // Blocks in a grid of columns chosen for the overall shape.
    const int blockCount = static_cast<int>(m_blocks.size());
    int columns = 1;
    for (int c = 2; c <= blockCount; ++c) {
        const int rowsA = (blockCount + c - 1) / c, rowsB = (blockCount + columns - 1) / columns;
        if (aspectError(c * (cell.width() + kBlockGap), rowsA * (cell.height() + kBlockGap))
            < aspectError(columns * (cell.width() + kBlockGap), rowsB * (cell.height() + kBlockGap)))
            columns = c;
    }
    const int blockRows = (blockCount + columns - 1) / columns;
    m_busMode = blockRows > 1 && t.countOf(DeviceKind::Spine) > 0;
    m_columnGutter.assign(static_cast<std::size_t>(columns), 0);
    for (int c = 0; c < columns; ++c)
        m_columnGutter[static_cast<std::size_t>(c)] = c * (cell.width() + kBlockGap)
                                                      - kBlockGap / 2;

    // Place each block: leaves and their lanes on top, rows of racks below.
    const auto slotX = [&](const QRectF &node, double slot, double w) {
        return node.left() + kPad + side + slot * kSlot + (kSlot - w) / 2;
    };
    const auto gpuSlot = [&](int local) {
        const double share = double(slots) / std::max(1, gpn);
        return local * share + (share - 1) / 2;
    };
    const std::vector<std::pair<double, double>> nicSlots = explicitNicSlots(slots);
    int rowIndex = 0;
    for (int b = 0; b < blockCount; ++b) {
        Block &block = m_blocks[static_cast<std::size_t>(b)];
        const double x0 = (b % columns) * (cell.width() + kBlockGap);
        const double y0 = (b / columns) * (cell.height() + kBlockGap);
        const int L = static_cast<int>(block.leaves.size());
        const int rowsOfRacks = (block.rackCount + perRow - 1) / perRow;
        const double width = gutterW + std::min(perRow, block.rackCount) * (rackW + kRackGap)
                             - kRackGap;
        block.rect = QRectF(x0, y0, width, leafBandH + rowsOfRacks * rowH - kRackRowGap);
        block.gutterX = m_columnGutter[static_cast<std::size_t>(b % columns)];
        const double racksLeft = x0 + gutterW;
        block.trunkX.resize(static_cast<std::size_t>(L));
        block.leafLaneY.resize(static_cast<std::size_t>(L));
        block.lastLaneY.assign(static_cast<std::size_t>(L), 0);
        if (L > 0) {
            block.uplinkY = y0 + 8;
            const double leafY = y0 + 24;
            const double areaW = width - gutterW;
            const double pitch = std::max(kSwitchW + 24, areaW / L);
            const double lx0 = racksLeft + (areaW - pitch * L) / 2;
            for (int i = 0; i < L; ++i) {
                const QRectF leaf(lx0 + i * pitch + (pitch - kSwitchW) / 2,
                                  leafY,
                                  kSwitchW,
                                  kFabricSwitchH);
                m_device[static_cast<std::size_t>(block.leaves[static_cast<std::size_t>(i)])] = leaf;
                block.trunkX[static_cast<std::size_t>(i)] = x0 + 14 + i * kLaneGap;
                const double ly = leaf.bottom() + 16 + i * kLaneGap;
                block.leafLaneY[static_cast<std::size_t>(i)] = ly;
                block.lanes.emplace_back(block.trunkX[static_cast<std::size_t>(i)],
                                         ly,
                                         leaf.center().x(),
                                         ly);
                block.laneOfLine.push_back(i);
            }
        }
        for (int k = 0; k < rowsOfRacks; ++k, ++rowIndex) {
            const double rowTop = y0 + leafBandH + k * rowH;
            std::vector<double> above, below;
            const double rackTop = rowTop + (nics > 0 ? laneBand : 0);
            for (int i = 0; i < L; ++i) {
                above.push_back(rowTop + 4 + i * kLaneGap);
                below.push_back(rackTop + rackH + 6 + i * kLaneGap);
            }
            m_rowLanesAbove.push_back(above);
            m_rowLanesBelow.push_back(below);
            std::vector<double> laneRightAbove(static_cast<std::size_t>(L), -1e18);
            std::vector<double> laneRightBelow(static_cast<std::size_t>(L), -1e18);
            for (int j = 0; j < perRow; ++j) {
                const int r = block.firstRack + k * perRow + j;
                if (r >= block.firstRack + block.rackCount)
                    break;
                const int first = r * m_perRack;
                const int count = std::min(m_perRack, nodes - first);
                const int top = switchBand ? (count + 1) / 2 : count;
                const double w = 2 * kRackPad + top * nodeW + (top - 1) * kNodeGap;
                const QRectF rack(racksLeft + j * (rackW + kRackGap), rackTop, w, rackH);
                m_rack[static_cast<std::size_t>(r)] = rack;
                const double topY = rack.top() + kTitleH + 6;
                for (int q = 0; q < count; ++q) {
                    const int n = first + q;
                    const bool mirrored = q >= top;
                    const int col = mirrored ? q - top : q;
                    const double ny = mirrored ? topY + nodeH + bandH : topY;
                    m_node[static_cast<std::size_t>(n)] = QRectF(rack.left() + kRackPad
                                                                         + col * (nodeW + kNodeGap),
                                                                 ny,
                                                                 nodeW,
                                                                 nodeH);
                    m_mirrored[static_cast<std::size_t>(n)] = mirrored;
                    m_rowOfNode[static_cast<std::size_t>(n)] = rowIndex;
                }
                if (switchBand) {
                    RackBus bus;
                    bus.upperY = topY + nodeH + 18;
                    bus.lowerY = bus.upperY + 16 + kSwitchH + 16;
                    bus.left = rack.left() + kRackPad;
                    bus.right = rack.right() - kRackPad;
                    m_rackBus[static_cast<std::size_t>(r)] = bus;
                    m_hasRackBus[static_cast<std::size_t>(r)] = 1;
                    const auto chips = rackSwitches(r);
                    const double pitch = (bus.right - bus.left)
                                         / std::max<std::size_t>(1, chips.size());
                    const double cw = std::min(pitch - 8, 150.0);
                    for (std::size_t c = 0; c < chips.size(); ++c)
                        m_device[static_cast<std::size_t>(chips[c])] = QRectF(bus.left + c * pitch
                                                                                      + (pitch - cw)
                                                                                                / 2,
                                                                              bus.upperY + 16,
                                                                              cw,
                                                                              kSwitchH);
                }
            }
            // Devices inside the servers of this row, and how far each lane reaches.
            for (int j = 0; j < perRow; ++j) {
                const int r = block.firstRack + k * perRow + j;
                if (r >= block.firstRack + block.rackCount)
                    break;
                for (int n = r * m_perRack; n < std::min(nodes, (r + 1) * m_perRack); ++n) {
                    const QRectF node = m_node[static_cast<std::size_t>(n)];
                    const bool mirrored = m_mirrored[static_cast<std::size_t>(n)];
                    const double *ry = mirrored ? rowYMirrored : rowY;
                    const auto rowTopY = [&](Row row) {
                        return node.top() + ry[static_cast<int>(row)];
                    };
                    for (int id : nodeDevices(n)) {
                        const engine::Device &d = devices[static_cast<std::size_t>(id)];
                        QRectF &out = m_device[static_cast<std::size_t>(id)];
                        switch (d.kind) {
                        case DeviceKind::Gpu:
                            // An explicit server with more NICs than GPUs (two rail NICs per
                            // GPU) spreads its GPUs under them.
                            out = QRectF(slotX(node,
                                               s.explicitServer ? gpuSlot(d.local) : d.local,
                                               kGpuW),
                                         rowTopY(Row::Gpu),
                                         kGpuW,
                                         kGpuH);
                            break;
                        case DeviceKind::Nic: {
                            const double pitch = double(slots) / std::max(1, nics) * kSlot;
                            const double w = std::min(kGpuW, pitch - 8);
                            out = QRectF(node.left() + kPad + side + d.local * pitch
                                                 + (pitch - w) / 2,
                                         rowTopY(Row::Nic),
                                         w,
                                         kNicH);
                            if (const auto k = static_cast<std::size_t>(d.local);
                                k < nicSlots.size()) {
                                const auto [slot, width] = nicSlots[k];
                                out = QRectF(node.left() + kPad + side + slot * kSlot - width / 2,
                                             out.top(),
                                             width,
                                             kNicH);
                            }
                            const int leaf = t.leafOfNic(d.index);
                            const int lane = leaf >= 0
                                                     ? m_laneOfLeaf[static_cast<std::size_t>(leaf)]
                                                     : -1;
                            if (lane >= 0) {
                                auto &reach = mirrored ? laneRightBelow : laneRightAbove;
                                reach[static_cast<std::size_t>(lane)]
                                        = std::max(reach[static_cast<std::size_t>(lane)],
                                                   out.center().x());
                            }
                            break;
                        }
                        case DeviceKind::PcieSwitch:
                            if (s.explicitServer)
                                break; // placeExplicitHosts, once the GPUs and NICs are placed
                            // Centred over the two GPUs it serves.
                            out = QRectF(node.left() + kPad + side + d.local * 2 * kSlot + 12,
                                         rowTopY(Row::Host),
                                         kSlot * 2 - 24,
                                         kSwitchH);
                            break;
                        case DeviceKind::Cpu: {
                            if (s.explicitServer)
                                break; // placeExplicitHosts, once the GPUs and NICs are placed
                            const int cpus = std::max(1, gpn >= 2 ? 2 : 1);
                            if (rackDomain) {
                                const double span = slots * kSlot / cpus;
                                out = QRectF(node.left() + kPad + d.local * span + 12,
                                             rowTopY(Row::Host),
                                             span - 24,
                                             kSwitchH);
                            } else {
                                const double w = 56;
                                out = QRectF(d.local == 0 ? node.left() + kPad
                                                          : node.right() - kPad - w,
                                             rowTopY(Row::Host),
                                             w,
                                             kSwitchH);
                            }
                            break;
                        }
                        case DeviceKind::NvSwitch: {
                            if (s.explicitServer)
                                break; // placeExplicitHosts, once the GPUs and NICs are placed
                            const int count = std::max(1, t.gpuSpec().nvswitchesPerDomain);
                            const double pitch = slots * kSlot / count;
                            const double w = std::min(pitch - 16, 150.0);
                            out = QRectF(node.left() + kPad + side + d.local * pitch
                                                 + (pitch - w) / 2,
                                         rowTopY(Row::Switch),
                                         w,
                                         kSwitchH);
                            break;
                        }
                        default: break;
                        }
                    }
                    if (s.explicitServer)
                        placeExplicitHosts(n, rowTopY(Row::Host), rowTopY(Row::Switch), side);
                }
            }
            for (int i = 0; i < L; ++i) {
                const auto addLane = [&](double yLane, double right) {
                    if (right < -1e17)
                        return;
                    block.lanes.emplace_back(block.trunkX[static_cast<std::size_t>(i)],
                                             yLane,
                                             right,
                                             yLane);
                    block.laneOfLine.push_back(i);
                    block.lastLaneY[static_cast<std::size_t>(i)]
                            = std::max(block.lastLaneY[static_cast<std::size_t>(i)], yLane);
                };
                addLane(above[static_cast<std::size_t>(i)],
                        laneRightAbove[static_cast<std::size_t>(i)]);
                addLane(below[static_cast<std::size_t>(i)],
                        laneRightBelow[static_cast<std::size_t>(i)]);
            }
        }
    }

    // Switch tiers above the blocks.
    std::vector<int> spines, cores;
    for (int id = 0; id < static_cast<int>(devices.size()); ++id) {
        const DeviceKind k = devices[static_cast<std::size_t>(id)].kind;
        if (k == DeviceKind::Spine)
            spines.push_back(id);
        else if (k == DeviceKind::Core)
            cores.push_back(id);
    }
    double right = 0;
    for (const Block &block : m_blocks)
        right = std::max(right, block.rect.right());
    if (m_blocks.empty())
        right = nodeW;
    double leftEdge = m_busMode ? m_columnGutter.front() : 0;
    const auto placeRow = [&](const std::vector<int> &row, double yTop) {
        if (row.empty())
            return;
        const double span = right - leftEdge;
        const double pitch = std::max(kSwitchW + 24, span / row.size());
        const double x0 = leftEdge + (span - pitch * row.size()) / 2;
        for (std::size_t i = 0; i < row.size(); ++i)
            m_device[static_cast<std::size_t>(row[i])] = QRectF(x0 + i * pitch
                                                                        + (pitch - kSwitchW) / 2,
                                                                yTop,
                                                                kSwitchW,
                                                                kFabricSwitchH);
    };
    const double spineTop = m_busMode ? -kTierGap : -kTierGap + 20;
    m_globalBusY = -50;
    placeRow(spines, spineTop);
    placeRow(cores, spineTop - kTierGap);
    m_globalLeft = leftEdge;
    m_globalRight = right;
    for (int id : spines)
        m_globalRight = std::max(m_globalRight, m_device[static_cast<std::size_t>(id)].center().x());

    QRectF bounds;
    for (const Block &block : m_blocks)
        bounds = bounds.united(block.rect);
    for (const QRectF &r : m_device)
        if (!r.isNull())
            bounds = bounds.united(r);
    if (m_busMode)
        bounds = bounds.united(QRectF(QPointF(m_globalLeft, m_globalBusY), QSizeF(1, 1)));
    m_bounds = bounds.adjusted(-60, -60, 60, 60);
}

} // namespace railyard
