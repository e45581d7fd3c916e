#include "clustergeometry.h"

#include <algorithm>

namespace railyard {

using engine::DeviceKind;

namespace {
constexpr double kPad = 14;      // inside a server box
constexpr double kNodeGap = 18;  // between servers in a rack
constexpr double kRackPad = 22;  // inside a rack frame (room for its title)
constexpr double kRackGap = 60;  // between racks
constexpr double kTierGap = 140; // between the racks and the leaves, leaves and spines
constexpr double kSwitchW = 96;
} // namespace

ClusterGeometry::ClusterGeometry(const engine::Topology &t)
{
    const engine::ClusterShape &s = t.shape();
    const int gpn = s.gpusPerNode;
    const bool tray = s.nodesPerDomain > 1;
    m_device.assign(static_cast<std::size_t>(t.deviceCount()), QRectF());
    m_node.assign(static_cast<std::size_t>(s.nodes), QRectF());

    // One server: NICs on top, then PCIe switches (or Grace CPUs), GPUs, NVSwitches below.
    const int slots = std::max({gpn, s.nicsPerNode, 1});
    // HGX servers keep their two CPUs at the ends of the PCIe row.
    const double side = tray ? 0 : 76;
    const double nodeW = slots * kSlot + 2 * kPad + 2 * side;
    const double yNic = kPad + 16; // room for the server title
    const double yHost = yNic + kNicH + 34;
    const double yGpu = yHost + kSwitchH + 34;
    const double ySwitch = yGpu + kGpuH + 34;
    const bool serverSwitches = !tray && !s.pcieOnly;
    const double nodeH = (serverSwitches ? ySwitch + kSwitchH : yGpu + kGpuH) + kPad;

    // NVL72: the rack's NVSwitch trays sit in the middle of the rack, as in the real thing.
    const int perRack = std::max(1, s.serversPerRack);
    const double switchBand = tray ? 3 * kSwitchH : 0;
    const double rackW = nodeW + 2 * kRackPad;
    const int rackNodes = std::min(perRack, s.nodes);
    const double rackH = rackNodes * nodeH + (rackNodes - 1) * kNodeGap + 2 * kRackPad + 10
                         + (tray ? switchBand + kNodeGap : 0);

    const int racks = (s.nodes + perRack - 1) / perRack;
    m_rack.resize(static_cast<std::size_t>(racks));
    for (int r = 0; r < racks; ++r)
        m_rack[static_cast<std::size_t>(r)] = QRectF(r * (rackW + kRackGap), 0, rackW, rackH);

    for (int n = 0; n < s.nodes; ++n) {
        const int r = n / perRack;
        const int k = n % perRack;
        const QRectF rack = m_rack[static_cast<std::size_t>(r)];
        double y = rack.top() + kRackPad + 10 + k * (nodeH + kNodeGap);
        if (tray && k >= perRack / 2)
            y += switchBand + kNodeGap;
        m_node[static_cast<std::size_t>(n)] = QRectF(rack.left() + kRackPad, y, nodeW, nodeH);
    }

    const auto slotX = [&](const QRectF &node, double slot, double w) {
        return node.left() + kPad + side + slot * kSlot + (kSlot - w) / 2;
    };
    std::vector<int> leaves, spines, cores;
    for (int id = 0; id < t.deviceCount(); ++id) {
        const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
        QRectF &out = m_device[static_cast<std::size_t>(id)];
        const QRectF node = d.node >= 0 ? m_node[static_cast<std::size_t>(d.node)] : QRectF();
        switch (d.kind) {
        case DeviceKind::Gpu:
            out = QRectF(slotX(node, d.local, kGpuW), node.top() + yGpu, kGpuW, kGpuH);
            break;
        case DeviceKind::Nic: {
            const double w = std::min(kGpuW, kSlot * slots / std::max(1, s.nicsPerNode) - 8);
            const double pitch = double(slots) / std::max(1, s.nicsPerNode);
            out = QRectF(node.left() + kPad + side + d.local * pitch * kSlot
                                 + (pitch * kSlot - w) / 2,
                         node.top() + yNic,
                         w,
                         kNicH);
            break;
        }
        case DeviceKind::PcieSwitch: {
            // Centred over the two GPUs it serves.
            const double w = kSlot * 2 - 24;
            out = QRectF(node.left() + kPad + side + d.local * 2 * kSlot + 12,
                         node.top() + yHost,
                         w,
                         kSwitchH);
            break;
        }
        case DeviceKind::Cpu: {
            const int cpus = 2;
            const double span = slots * kSlot / cpus;
            const double w = tray ? span - 24 : 56;
            if (tray)
                out = QRectF(node.left() + kPad + d.local * span + 12,
                             node.top() + yHost,
                             w,
                             kSwitchH);
            else // at the ends of the PCIe row
                out = QRectF(d.local == 0 ? node.left() + kPad : node.right() - kPad - w,
                             node.top() + yHost,
                             w,
                             kSwitchH);
            break;
        }
        case DeviceKind::NvSwitch: {
            if (d.node >= 0) {
                const int count = std::max(1, t.gpuSpec().nvswitchesPerDomain);
                const double pitch = slots * kSlot / count;
                const double w = std::min(pitch - 16, 150.0);
                out = QRectF(node.left() + kPad + side + d.local * pitch + (pitch - w) / 2,
                             node.top() + ySwitch,
                             w,
                             kSwitchH);
            } else {
                // Rack domain: two rows of switch chips in the middle band of the rack.
                const int rack = d.rack;
                const QRectF rr = m_rack[static_cast<std::size_t>(rack)];
                const int count = std::max(1, t.gpuSpec().nvswitchesPerDomain);
                const int perRow = (count + 1) / 2;
                const double pitch = (rr.width() - 2 * kRackPad) / perRow;
                const int row = d.local / perRow;
                const int col = d.local % perRow;
                const int firstNode = rack * perRack;
                const QRectF above = m_node[static_cast<std::size_t>(firstNode + perRack / 2 - 1)];
                out = QRectF(rr.left() + kRackPad + col * pitch + 2,
                             above.bottom() + kNodeGap / 2 + row * (kSwitchH * 1.4),
                             pitch - 4,
                             kSwitchH);
            }
            break;
        }
        case DeviceKind::Leaf: leaves.push_back(id); break;
        case DeviceKind::Spine: spines.push_back(id); break;
        case DeviceKind::Core: cores.push_back(id); break;
        }
    }

    // Switch tiers above the racks, each tier centred over the whole width.
    double racksRight = racks > 0 ? m_rack.back().right() : nodeW;
    const auto placeRow = [&](const std::vector<int> &row, double y) {
        if (row.empty())
            return;
        const double pitch = std::max(kSwitchW + 24, racksRight / row.size());
        const double total = pitch * row.size();
        const double x0 = (racksRight - total) / 2;
        for (std::size_t i = 0; i < row.size(); ++i)
            m_device[static_cast<std::size_t>(row[i])]
                    = QRectF(x0 + i * pitch + (pitch - kSwitchW) / 2, y, kSwitchW, kSwitchH + 6);
    };
    placeRow(leaves, -kTierGap);
    placeRow(spines, -2 * kTierGap);
    placeRow(cores, -3 * kTierGap);

    QRectF b;
    for (const QRectF &r : m_rack)
        b = b.united(r);
    for (const QRectF &r : m_device)
        if (!r.isNull())
            b = b.united(r);
    m_bounds = b.adjusted(-40, -40, 40, 40);
}

} // namespace railyard
