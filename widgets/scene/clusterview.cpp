#include "clusterview.h"

#include "clusterscene.h"
#include "document/document.h"
#include "style.h"

#include <QPainter>
#include <QResizeEvent>
#include <QWheelEvent>

#include <cmath>
#include <set>

namespace railyard {

ClusterView::ClusterView(ClusterScene *scene, QWidget *parent)
    : QGraphicsView(scene, parent)
{
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setRenderHint(QPainter::Antialiasing, true);
    setRenderHint(QPainter::TextAntialiasing, true);
}

double ClusterView::zoom() const
{
    return transform().m11();
}

void ClusterView::setZoom(double z)
{
    z = std::clamp(z, 0.002, 8.0);
    const double f = z / zoom();
    if (std::abs(f - 1.0) < 1e-9)
        return;
    m_autoFit = false;
    scale(f, f);
    Q_EMIT zoomChanged(zoom());
    viewport()->update();
}

void ClusterView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (m_autoFit)
        fitToCluster();
}

void ClusterView::zoomIn()
{
    setZoom(zoom() * 1.25);
}

void ClusterView::zoomOut()
{
    setZoom(zoom() / 1.25);
}

void ClusterView::fitToCluster()
{
    fitInView(sceneRect(), Qt::KeepAspectRatio);
    m_autoFit = true;
    Q_EMIT zoomChanged(zoom());
}

void ClusterView::setLegendVisible(bool visible)
{
    m_legend = visible;
    viewport()->update();
}

void ClusterView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    setZoom(zoom() * std::pow(1.2, steps));
    event->accept();
}

void ClusterView::drawForeground(QPainter *painter, const QRectF &)
{
    if (!m_legend)
        return;
    auto *s = static_cast<ClusterScene *>(scene());
    const engine::Topology &t = s->document()->topology();
    std::set<engine::LinkKind> kinds;
    for (const engine::Link &l : t.links())
        kinds.insert(l.kind);
    if (kinds.empty())
        return;

    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing, true);
    QFont f = font();
    f.setPixelSize(12);
    painter->setFont(f);
    const QFontMetrics fm(f);
    const int rowH = 20;
    int textW = fm.horizontalAdvance(tr("Links"));
    for (auto k : kinds)
        textW = std::max(textW, fm.horizontalAdvance(style::linkKindName(k)));
    const QRect box(12,
                    viewport()->height() - 12 - (int(kinds.size()) + 1) * rowH - 12,
                    textW + 64,
                    (int(kinds.size()) + 1) * rowH + 12);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 235));
    painter->drawRoundedRect(box, 6, 6);
    painter->setPen(style::kTextDark);
    QFont bold = f;
    bold.setBold(true);
    painter->setFont(bold);
    painter->drawText(QRect(box.left() + 10, box.top() + 6, box.width() - 20, rowH),
                      Qt::AlignLeft | Qt::AlignVCenter,
                      tr("Links"));
    painter->setFont(f);
    int y = box.top() + 6 + rowH;
    for (auto k : kinds) {
        QPen pen(style::linkColor(k), 3, style::linkPenStyle(k));
        painter->setPen(pen);
        painter->drawLine(box.left() + 10, y + rowH / 2, box.left() + 44, y + rowH / 2);
        painter->setPen(style::kTextDark);
        painter->drawText(QRect(box.left() + 52, y, textW + 8, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          style::linkKindName(k));
        y += rowH;
    }
    painter->restore();
}

} // namespace railyard
