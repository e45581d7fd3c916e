// ClusterView: what is drawn over the scene, in viewport coordinates: the title block and the
// legend (render/, shared with exports), the overview map when zoomed in, the rubber band and
// the cue card at the cursor.
#include "clusterview.h"

#include "clusterscene.h"
#include "document/document.h"
#include "render/legend.h"
#include "render/overview.h"
#include "render/titleblock.h"
#include "style.h"

#include <QPainter>

namespace railyard {

void ClusterView::setLegendVisible(bool visible)
{
    m_legend = visible;
    if (m_autoFit)
        fitToCluster();
    viewport()->update();
}

void ClusterView::drawForeground(QPainter *painter, const QRectF &)
{
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing, true);
    const Overlays o = overlays();
    if (m_legend) {
        const ClusterScene *s = clusterScene();
        if (o.folded) {
            if (!o.legend.isNull())
                drawFoldedLegend(painter, o.legend);
            drawFoldedTitle(painter, o.title);
        } else {
            if (!o.legend.isNull())
                render::Legend(s->document()->topology(), s->canvasState(), font(), overlayWidth())
                        .paint(painter, o.legend.topLeft());
            render::TitleBlock(*s->document(), font(), o.titleWidth)
                    .paint(painter, o.title.topLeft());
        }
    }
    if (!o.overview.isNull())
        render::Overview(clusterScene()->geometry(),
                         mapToScene(viewport()->rect()).boundingRect(),
                         locationText(),
                         font(),
                         o.overviewWidth)
                .paint(painter, o.overview.topLeft());
    if (m_banding) {
        const QRect band = QRect(m_pressPos, m_bandEnd).normalized();
        QColor fill = style::kSelection;
        fill.setAlpha(40);
        painter->setPen(QPen(style::kSelection, 1.5, Qt::DashLine));
        painter->setBrush(fill);
        painter->drawRect(band);
    }
    if (!m_dragCaption.isEmpty())
        drawDragCaption(painter);
    painter->restore();
}

namespace {

// A folded overlay: one line on a card, with a triangle that says it unfolds.
void drawFoldedCard(QPainter *painter, const QRect &box, const QFont &font, const QString &text)
{
    painter->setPen(QPen(QColor(0xcb, 0xd5, 0xe1), 1));
    painter->setBrush(QColor(255, 255, 255, 235));
    painter->drawRoundedRect(QRectF(box).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
    QFont bold = font;
    bold.setBold(true);
    painter->setFont(bold);
    const QFontMetrics fm(bold);
    const QRect inner = box.adjusted(10, 0, -8, 0);
    painter->setPen(style::kTextMuted);
    painter->drawText(inner, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("\u25b8"));
    painter->setPen(style::kTextDark);
    const QRect textRect = inner.adjusted(fm.horizontalAdvance(QStringLiteral("\u25b8 ")), 0, 0, 0);
    painter->drawText(textRect,
                      Qt::AlignLeft | Qt::AlignVCenter,
                      fm.elidedText(text, Qt::ElideRight, textRect.width()));
}

} // namespace

void ClusterView::drawFoldedTitle(QPainter *painter, const QRect &box)
{
    drawFoldedCard(painter,
                   box,
                   font(),
                   QString::fromStdString(clusterScene()->document()->layout().title));
}

void ClusterView::drawFoldedLegend(QPainter *painter, const QRect &box)
{
    drawFoldedCard(painter, box, font(), tr("Legend"));
}

void ClusterView::scrollContentsBy(int dx, int dy)
{
    // QGraphicsView scrolls by moving the viewport's pixels and painting the strip that comes
    // into view. The overlays stay put on the viewport while the cluster moves under them, so
    // the moved pixels hold copies of them in the wrong place (the title block dragged over the
    // cluster, the legend's lines across GPU labels), and the overview map shows the old view:
    // paint the viewport afresh.
    QGraphicsView::scrollContentsBy(dx, dy);
    if (dx != 0 || dy != 0)
        viewport()->update();
}

void ClusterView::drawDragCaption(QPainter *painter)
{
    // A card beside the cursor: where the drop goes and what it costs, or why it cannot.
    QFont bold = font();
    bold.setPixelSize(13);
    bold.setBold(true);
    QFont small = font();
    small.setPixelSize(12);
    const QFontMetrics fb(bold, viewport()), fs(small, viewport());
    const int textW = std::min(460,
                               std::max(fb.horizontalAdvance(m_dragCaption),
                                        fs.horizontalAdvance(m_dragDetail))
                                       + 6);
    const QRect detailRect = fs.boundingRect(QRect(0, 0, textW, 200),
                                             Qt::TextWordWrap,
                                             m_dragDetail);
    const int w = textW + 20;
    const int h = 10 + fb.height() + (m_dragDetail.isEmpty() ? 0 : 4 + detailRect.height()) + 10;
    QRect box(m_dragPos + QPoint(18, 18), QSize(w, h));
    const QRect area = viewport()->rect().adjusted(4, 4, -4, -4);
    if (box.right() > area.right())
        box.moveRight(m_dragPos.x() - 18);
    if (box.bottom() > area.bottom())
        box.moveBottom(m_dragPos.y() - 18);
    const QColor accent = m_dragTone == Tone::Ok        ? style::kDropOk
                          : m_dragTone == Tone::Refused ? style::kDropRefused
                                                        : style::kSelection;
    painter->setPen(QPen(accent, 2));
    painter->setBrush(QColor(255, 255, 255, 245));
    painter->drawRoundedRect(box, 6, 6);
    painter->setFont(bold);
    painter->setPen(style::kTextDark);
    painter->drawText(QRect(box.left() + 10, box.top() + 8, textW, fb.height()),
                      Qt::AlignLeft | Qt::AlignVCenter,
                      m_dragCaption);
    if (!m_dragDetail.isEmpty()) {
        painter->setFont(small);
        painter->setPen(m_dragTone == Tone::Refused ? style::kDropRefused : style::kTextMuted);
        painter->drawText(QRect(box.left() + 10,
                                box.top() + 12 + fb.height(),
                                textW,
                                detailRect.height()),
                          Qt::TextWordWrap,
                          m_dragDetail);
    }
}

} // namespace railyard
