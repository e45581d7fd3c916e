#pragma once

#include "import/ncclgraphoverlay.h"

#include <QColor>
#include <QGraphicsItem>
#include <QPolygonF>

#include <vector>

namespace railyard {

class ClusterGeometry;

// The NCCL graph overlay on the canvas: each channel's path, GPU to GPU through the NVSwitch
// or PCIe tree, out through its NIC and across the fabric to the next server, in the channel's
// colour with an arrowhead where each step arrives. Channels drawn together are set a little
// apart so that parallel rings stay distinguishable. Draws only: the paths come from
// engine::overlayNcclGraph.
class NcclGraphItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 9 };

    explicit NcclGraphItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    // Draws channel `channel` of `overlay` (-1: every channel); null clears it.
    void setOverlay(const engine::NcclGraphOverlay *overlay, int channel);
    int pathCount() const { return static_cast<int>(m_paths.size()); }
    // The colour of channel `channel` of `count`, as drawn and as the legend shows it.
    static QColor channelColour(int channel);

    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    struct Path
    {
        QPolygonF line;
        QRectF bounds; // of the line, for culling: a ring over 2,048 servers is 40,000 paths
        QColor colour;
        bool arrow = false; // an arrowhead at its end (it arrives at a GPU)
    };
    QPolygonF edgeLine(const engine::GraphEdge &edge) const;

    const ClusterGeometry &m_geometry;
    std::vector<Path> m_paths;
    std::vector<std::pair<QPointF, int>> m_order; // one channel: each GPU's place in it
    QColor m_orderColour;
    QRectF m_bounds;
};

} // namespace railyard
