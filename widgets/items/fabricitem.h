#pragma once

#include <QGraphicsItem>

#include <vector>

namespace railyard {

class ClusterGeometry;

// One block's network: its leaf switches, the rails (trunks and lanes) and every NIC's drop onto
// them; in bus mode also the leaves' uplinks into the block column's trunk.
class BlockFabricItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 2 };

    BlockFabricItem(const ClusterGeometry &geometry, int block);

    int type() const override { return Type; }
    int block() const { return m_block; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    int m_block;
    QRectF m_bounds;
};

// The tiers above the blocks: spine (and core) switches and the links that reach them.
class SpineFabricItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 3 };

    explicit SpineFabricItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const ClusterGeometry &m_geometry;
    std::vector<int> m_switches; // spines and cores
    QRectF m_bounds;
};

} // namespace railyard
