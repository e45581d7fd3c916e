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
    if (m_legend) {
        const ClusterScene *s = clusterScene();
        const render::Legend legend(s->document()->topology(),
                                    s->canvasState(),
                                    font(),
                                    overlayWidth());
        if (!legend.isEmpty())
            legend.paint(painter,
                         QPoint(kOverlayMargin,
                                viewport()->height() - kOverlayMargin - legend.size().height()));
        // Beside the overview map, the title block wraps to the room left of it.
        const QRect overview = overviewRect();
        const int titleW = overview.isNull() ? overlayWidth()
                                             : overview.left() - 2 * kOverlayMargin;
        render::TitleBlock(*s->document(), font(), titleW)
                .paint(painter, QPoint(kOverlayMargin, kOverlayMargin));
    }
    drawOverview(painter);
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

void ClusterView::drawOverview(QPainter *painter)
{
    const QRect box = overviewRect();
    if (box.isNull())
        return;
    const render::Overview overview(clusterScene()->geometry(),
                                    mapToScene(viewport()->rect()).boundingRect(),
                                    locationText(),
                                    font());
    overview.paint(painter, box.topLeft());
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
