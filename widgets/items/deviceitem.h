#pragma once

#include "topology.h"

#include <QGraphicsItem>

namespace railyard {

// A GPU, switch, NIC or CPU box with its label.
class DeviceItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 1 };

    DeviceItem(int device, engine::DeviceKind kind, const QRectF &rect, QString label);

    int type() const override { return Type; }
    int device() const { return m_device; }
    engine::DeviceKind kind() const { return m_kind; }
    QString label() const { return m_label; }
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    int m_device;
    engine::DeviceKind m_kind;
    QRectF m_rect;
    QString m_label;
};

// A server or tray frame with its title ("node 3").
class NodeItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 2 };
    NodeItem(int node, const QRectF &rect, QString title, bool rack);
    int type() const override { return Type; }
    int node() const { return m_node; }
    bool isRack() const { return m_rack; }
    QRectF boundingRect() const override { return m_rect.adjusted(-1, -1, 1, 1); }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    int m_node;
    QRectF m_rect;
    QString m_title;
    bool m_rack;
};

// A physical link between two devices.
class LinkItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 3 };
    LinkItem(int link, engine::LinkKind kind, const QPointF &a, const QPointF &b, double width);
    int type() const override { return Type; }
    int link() const { return m_link; }
    engine::LinkKind kind() const { return m_kind; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    int m_link;
    engine::LinkKind m_kind;
    QLineF m_line;
    double m_width;
};

} // namespace railyard
