#pragma once

#include "topology/topology.h"

#include <QLineF>
#include <QPolygonF>
#include <QRectF>
#include <span>
#include <vector>

namespace railyard {

// Where every device of a topology sits on the canvas, and the route every link takes. A pure
// function of the topology: the scene's items draw from it, hit testing and search use it, and
// exports can reuse it with no scene.
//
// The picture, top to bottom: the spine (and core) tiers; then a grid of blocks, one per group of
// servers that shares its leaf switches (a scalable unit of a rail-optimized fabric), each with
// its leaves on top and its racks below. Every leaf has a rail: a vertical trunk in the block's
// left gutter and a horizontal lane above (or below) each row of racks, so NIC k of every server
// drops straight onto the band of leaf k. Servers sit side by side in their rack; an NVL72
// rack has its NVSwitch chips in a band between two rows of trays, the lower row mirrored so its
// NICs face the lanes below it.
class ClusterGeometry
{
public:
    explicit ClusterGeometry(const engine::Topology &topology);

    const engine::Topology &topology() const { return m_topology; }

    QRectF deviceRect(int device) const { return m_device[static_cast<std::size_t>(device)]; }
    QRectF nodeRect(int node) const { return m_node[static_cast<std::size_t>(node)]; }
    QRectF rackRect(int rack) const { return m_rack[static_cast<std::size_t>(rack)]; }
    int rackCount() const { return static_cast<int>(m_rack.size()); }
    int nodeCount() const { return static_cast<int>(m_node.size()); }
    QRectF bounds() const { return m_bounds; }
    // The whole rack including the lanes its NICs drop onto (what a rack item must repaint).
    QRectF rackPaintRect(int rack) const;

    // Racks hold nodes [firstNodeOfRack(r), firstNodeOfRack(r + 1)).
    int firstNodeOfRack(int rack) const;
    int rackOfNode(int node) const { return node / m_perRack; }
    // A tray in the lower row of an NVL72 rack: drawn upside down, NICs at the bottom.
    bool isMirrored(int node) const { return m_mirrored[static_cast<std::size_t>(node)] != 0; }

    // Device ids inside a node, links with both ends inside it, and (rack-scale NVLink) the
    // NVSwitch chips of a rack and the two NVLink buses they hang from.
    std::span<const int> nodeDevices(int node) const;
    std::span<const int> nodeLinks(int node) const;
    std::span<const int> rackSwitches(int rack) const;
    struct RackBus
    {
        double upperY = 0; // trays above the switches attach here
        double lowerY = 0; // mirrored trays below attach here
        double left = 0, right = 0;
    };
    const RackBus *rackBus(int rack) const;

    // A block: servers sharing leaves, with the rails that join them.
    struct Block
    {
        QRectF rect; // leaves, lanes and racks
        int firstRack = 0, rackCount = 0;
        int firstNode = 0, nodeCount = 0;
        std::vector<int> leaves;       // leaf device ids, in lane order
        std::vector<double> trunkX;    // per lane: the rail's vertical trunk
        std::vector<double> leafLaneY; // per lane: where the leaf's riser meets its trunk
        std::vector<double> lastLaneY; // per lane: the lowest lane, where the trunk ends
        std::vector<QLineF> lanes;     // horizontal lane segments of every row, and leaf lanes
        std::vector<int> laneOfLine;   // lane index of each entry in `lanes`
        double uplinkY = 0;            // leaves meet the block's uplink here (bus mode)
        double gutterX = 0;            // the block column's uplink trunk (bus mode)
    };
    const std::vector<Block> &blocks() const { return m_blocks; }
    int blockOfNode(int node) const { return m_blockOfNode[static_cast<std::size_t>(node)]; }
    int laneOfLeaf(int leafDevice) const;
    // Where the NIC's drop meets its leaf's lane in its row.
    double nicLaneY(int nicDevice) const;

    // Switch tiers above the blocks. In bus mode (more than one row of blocks) leaf -> spine links
    // run up each block column's gutter to a global bus under the spines instead of as
    // straight lines across the blocks above.
    bool busMode() const { return m_busMode; }
    double globalBusY() const { return m_globalBusY; }
    std::vector<QLineF> globalBusLines() const; // the bus and the column trunks

    // The route of a link, from its `a` end to its `b` end.
    QPolygonF linkPath(int link) const;
    // The device under a scene position, or -1 (a grid index built on first use).
    int deviceAt(const QPointF &pos) const;
    // The server (node) and rack whose boxes hold a scene position, or -1.
    int nodeAt(const QPointF &pos) const;
    int rackAt(const QPointF &pos) const;

    // Size constants, shared with the items that draw inside these rectangles.
    static constexpr double kGpuW = 64, kGpuH = 40;
    static constexpr double kSlot = 84; // horizontal pitch of GPUs in a server
    static constexpr double kSwitchH = 26;
    static constexpr double kNicH = 22;
    static constexpr double kLaneGap = 12;
    static constexpr double kTitleH = 36;     // a rack's title band
    static constexpr double kNodeTitleH = 24; // a server's title band

private:
    void place();
    void placeExplicitHosts(int node, double hostY, double switchY, double side);
    void buildIndex() const;
    void assignArcs();
    // Explicit servers: per NIC (local index), the slot its centre sits over and its width;
    // empty when the NICs are spread evenly.
    std::vector<std::pair<double, double>> explicitNicSlots(int slots) const;
    QPolygonF nodeLinkPath(int link, const engine::Link &l) const;

    const engine::Topology &m_topology;
    int m_perRack = 1;
    std::vector<QRectF> m_device;
    std::vector<QRectF> m_node;
    std::vector<QRectF> m_rack;
    std::vector<QRectF> m_rackPaint;
    std::vector<char> m_mirrored;
    std::vector<int> m_nodeDevStart, m_nodeDev, m_nodeLinkStart, m_nodeLink;
    std::vector<int> m_rackSwitchStart, m_rackSwitch;
    std::vector<RackBus> m_rackBus;
    std::vector<char> m_hasRackBus;
    std::vector<Block> m_blocks;
    std::vector<int> m_blockOfNode;
    std::vector<int> m_laneOfLeaf; // by leaf index
    // Per node: y of each lane above and below its row, by lane index.
    std::vector<int> m_rowOfNode;
    std::vector<std::vector<double>> m_rowLanesAbove, m_rowLanesBelow;
    std::vector<double> m_columnGutter;
    bool m_busMode = false;
    double m_globalBusY = 0;
    double m_globalLeft = 0, m_globalRight = 0;
    QRectF m_bounds;
    // Direct NVLink meshes (clustergeometryroutes.cpp): per GPU-to-GPU arc under the GPU row,
    // its depth lane and where it leaves its a and b ends, so no two arcs overlap; empty when
    // the cluster has no direct mesh.
    std::vector<int> m_arcLane;
    std::vector<double> m_arcX; // 2 per link
    double m_arcSpacing = 8;

    // Hit testing: device ids bucketed by a uniform grid over the bounds.
    mutable std::vector<int> m_cellStart, m_cellDev;
    mutable double m_cellSize = 0;
    mutable int m_cols = 0, m_rows = 0;
};

} // namespace railyard
