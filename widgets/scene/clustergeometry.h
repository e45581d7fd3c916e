#pragma once

#include "topology.h"

#include <QRectF>
#include <QString>
#include <vector>

namespace railyard {

// Where every device of a topology sits on the canvas: servers in racks, racks side by side, the
// leaf switches above the racks and the spines above the leaves. A pure function of the
// topology; the scene places items from it and exports reuse it.
class ClusterGeometry
{
public:
    explicit ClusterGeometry(const engine::Topology &topology);

    QRectF deviceRect(int device) const { return m_device[static_cast<std::size_t>(device)]; }
    QRectF nodeRect(int node) const { return m_node[static_cast<std::size_t>(node)]; }
    QRectF rackRect(int rack) const { return m_rack[static_cast<std::size_t>(rack)]; }
    int rackCount() const { return static_cast<int>(m_rack.size()); }
    int nodeCount() const { return static_cast<int>(m_node.size()); }
    QRectF bounds() const { return m_bounds; }

    // Size constants, shared with the items that draw inside these rectangles.
    static constexpr double kGpuW = 64, kGpuH = 40;
    static constexpr double kSlot = 84; // horizontal pitch of GPUs in a server
    static constexpr double kSwitchH = 26;
    static constexpr double kNicH = 22;

private:
    std::vector<QRectF> m_device;
    std::vector<QRectF> m_node;
    std::vector<QRectF> m_rack;
    QRectF m_bounds;
};

} // namespace railyard
