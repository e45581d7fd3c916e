#pragma once

#include "scene/levelofdetail.h"

#include <QGraphicsItem>

#include <memory>
#include <vector>

namespace railyard {

class ClusterGeometry;
class SegmentLoads;
struct CanvasState;

// One block's network: its leaf switches, the rails (trunks and lanes) and every NIC's drop onto
// them; in bus mode also the leaves' uplinks into the block column's trunk. In the link-load
// view each NIC's route to its leaf takes its load's colour.
class BlockFabricItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 2 };

    BlockFabricItem(const ClusterGeometry &geometry, const CanvasState &state, int block);
    ~BlockFabricItem() override;

    int type() const override { return Type; }
    int block() const { return m_block; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    void drawLoads(QPainter *painter, Detail detail);

    const ClusterGeometry &m_geometry;
    const CanvasState &m_state;
    int m_block;
    QRectF m_bounds;
    std::unique_ptr<SegmentLoads> m_loads; // the NICs' routes, built on the first load view
};

// The tiers above the blocks: spine (and core) switches and the links that reach them.
class SpineFabricItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 3 };

    SpineFabricItem(const ClusterGeometry &geometry, const CanvasState &state);
    ~SpineFabricItem() override;

    int type() const override { return Type; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    const CanvasState &m_state;
    std::vector<int> m_switches; // spines and cores
    std::vector<int> m_uplinks;  // the links that reach them, each once
    QRectF m_bounds;
    std::unique_ptr<SegmentLoads> m_loads; // built on the first load view
};

} // namespace railyard
