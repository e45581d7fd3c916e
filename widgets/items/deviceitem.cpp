#include "deviceitem.h"

#include "scene/style.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace railyard {

DeviceItem::DeviceItem(int device, engine::DeviceKind kind, const QRectF &rect, QString label)
    : m_device(device)
    , m_kind(kind)
    , m_rect(rect)
    , m_label(std::move(label))
{
    setZValue(2);
    setAcceptHoverEvents(true);
    setFlag(ItemIsSelectable);
}

QRectF DeviceItem::boundingRect() const
{
    return m_rect.adjusted(-2, -2, 2, 2);
}

void DeviceItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const QColor fill = style::deviceFill(m_kind);
    if (lod < 0.15) {
        painter->fillRect(m_rect, fill);
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing, true);
    const bool selected = option->state & QStyle::State_Selected;
    painter->setPen(QPen(selected ? QColor(0xff, 0xa0, 0x00) : fill.darker(140), selected ? 3 : 1));
    painter->setBrush(fill);
    painter->drawRoundedRect(m_rect, 4, 4);
    if (lod < 0.4)
        return;
    painter->setPen(style::deviceText(m_kind));
    QFont f = painter->font();
    f.setPixelSize(m_rect.height() > 30 ? 12 : 10);
    f.setBold(m_kind == engine::DeviceKind::Gpu);
    painter->setFont(f);
    painter->drawText(m_rect.adjusted(2, 0, -2, 0), Qt::AlignCenter | Qt::TextWordWrap, m_label);
}

NodeItem::NodeItem(int node, const QRectF &rect, QString title, bool rack)
    : m_node(node)
    , m_rect(rect)
    , m_title(std::move(title))
    , m_rack(rack)
{
    setZValue(rack ? -2 : -1);
}

void NodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    painter->setRenderHint(QPainter::Antialiasing, lod > 0.3);
    painter->setPen(QPen(m_rack ? style::kRackBorder : style::kServerBorder, m_rack ? 2 : 1.2));
    painter->setBrush(m_rack ? style::kRackFill : style::kServerFill);
    painter->drawRoundedRect(m_rect, m_rack ? 8 : 6, m_rack ? 8 : 6);
    if (lod < 0.25)
        return;
    QFont f = painter->font();
    f.setPixelSize(m_rack ? 14 : 12);
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(m_rack ? style::kTextMuted : style::kTextDark);
    painter->drawText(m_rect.adjusted(10, 4, -10, 0), Qt::AlignLeft | Qt::AlignTop, m_title);
}

LinkItem::LinkItem(int link, engine::LinkKind kind, const QPointF &a, const QPointF &b, double width)
    : m_link(link)
    , m_kind(kind)
    , m_line(a, b)
    , m_width(width)
{
    setZValue(1);
}

QRectF LinkItem::boundingRect() const
{
    const double m = m_width + 2;
    return QRectF(m_line.p1(), m_line.p2()).normalized().adjusted(-m, -m, m, m);
}

QPainterPath LinkItem::shape() const
{
    QPainterPath p(m_line.p1());
    p.lineTo(m_line.p2());
    QPainterPathStroker stroker;
    stroker.setWidth(m_width + 4);
    return stroker.createStroke(p);
}

void LinkItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    painter->setRenderHint(QPainter::Antialiasing, lod > 0.3);
    QPen pen(style::linkColor(m_kind),
             m_width,
             lod > 0.3 ? style::linkPenStyle(m_kind) : Qt::SolidLine);
    pen.setCosmetic(false);
    painter->setPen(pen);
    painter->drawLine(m_line);
}

} // namespace railyard
