#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QLineF>

#include <vector>

namespace railyard {

class ClusterGeometry;

// Marks on a set of devices and the routes of some links, drawn over the racks: the hovered
// GPU's group and the links its traffic crosses, the selected GPUs, the GPUs a drop would land
// on. Outlines use cosmetic pens and never shrink below a few pixels, so a group stays visible
// when the whole cluster is in view.
class GpuMarksItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 5 };
    // Outline: a ring. Halo: a ring with a white ring inside it, so it reads on any fill and
    // leaves the GPU's own colour alone (the selection). Dashed: a dashed ring over a light
    // tint (where a drop would land).
    enum class Style { Outline, Halo, Dashed };

    GpuMarksItem(const ClusterGeometry &geometry, Style style, const QColor &colour, double z);

    int type() const override { return Type; }
    // Device ids to mark and link ids whose routes to draw.
    void setMarks(std::vector<int> devices, const std::vector<int> &links = {});
    void setColour(const QColor &colour);
    void clear() { setMarks({}, {}); }
    const std::vector<int> &devices() const { return m_devices; }
    int linkCount() const { return m_linkCount; }
    QColor colour() const { return m_colour; }

    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    Style m_style;
    QColor m_colour;
    std::vector<int> m_devices;
    std::vector<QRectF> m_rects;
    // The routes as unique segments: routes that share a trunk or a bus draw it once, so a
    // group spread over a 16k-GPU cluster is a few thousand segments, one drawLines call.
    std::vector<QLineF> m_segments;
    int m_linkCount = 0;
    QRectF m_bounds;
};

} // namespace railyard
