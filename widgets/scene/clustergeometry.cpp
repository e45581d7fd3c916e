#include "clustergeometry.h"

#include <algorithm>
#include <cmath>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;

namespace {
constexpr double kPad = 14;        // inside a server box
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

template<typename T>
std::span<const T> rowSpan(const std::vector<int> &start, const std::vector<T> &data, int i)
{
    if (i < 0 || i + 1 >= static_cast<int>(start.size()))
        return {};
    const int b = start[static_cast<std::size_t>(i)];
    const int e = start[static_cast<std::size_t>(i) + 1];
    return {data.data() + b, static_cast<std::size_t>(e - b)};
}

// Compressed rows from (row, value) pairs.
void buildCsr(int rows,
              const std::vector<std::pair<int, int>> &pairs,
              std::vector<int> &start,
              std::vector<int> &data)
{
    start.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto &p : pairs)
        ++start[static_cast<std::size_t>(p.first) + 1];
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    data.assign(pairs.size(), 0);
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (const auto &p : pairs)
        data[static_cast<std::size_t>(fill[static_cast<std::size_t>(p.first)]++)] = p.second;
}

} // namespace

ClusterGeometry::ClusterGeometry(const engine::Topology &t)
    : m_topology(t)
{
    place();
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
    const bool serverSwitches = !rackDomain && !s.pcieOnly;
    const double side = rackDomain ? 0 : kCpuSide;
    const double nodeW = slots * kSlot + 2 * kPad + 2 * side;
    std::vector<std::pair<Row, double>> rows;
    if (nics > 0)
        rows.emplace_back(Row::Nic, kNicH);
    rows.emplace_back(Row::Host, kSwitchH);
    rows.emplace_back(Row::Gpu, kGpuH);
    if (serverSwitches)
        rows.emplace_back(Row::Switch, kSwitchH);
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
                            out = QRectF(slotX(node, d.local, kGpuW),
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
                            // Centred over the two GPUs it serves.
                            out = QRectF(node.left() + kPad + side + d.local * 2 * kSlot + 12,
                                         rowTopY(Row::Host),
                                         kSlot * 2 - 24,
                                         kSwitchH);
                            break;
                        case DeviceKind::Cpu: {
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

QPolygonF ClusterGeometry::nodeLinkPath(const engine::Link &l) const
{
    const auto &devices = m_topology.devices();
    const QRectF a = deviceRect(l.a);
    const QRectF b = deviceRect(l.b);
    const DeviceKind ka = devices[static_cast<std::size_t>(l.a)].kind;
    const DeviceKind kb = devices[static_cast<std::size_t>(l.b)].kind;
    if (std::abs(a.center().y() - b.center().y()) < 1) {
        // Same row: side by side, or routed around whatever sits between them.
        const bool aLeft = a.center().x() < b.center().x();
        const double gap = aLeft ? b.left() - a.right() : a.left() - b.right();
        if (gap < 40)
            return QPolygonF({QPointF(aLeft ? a.right() : a.left(), a.center().y()),
                              QPointF(aLeft ? b.left() : b.right(), b.center().y())});
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
        return nodeLinkPath(l);

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
