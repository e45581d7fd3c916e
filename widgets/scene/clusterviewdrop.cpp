// ClusterView: drags that arrive on the canvas (group chips from the palette, GPUs from the
// canvas itself): the plan under the cursor, its cue, and the drop.
#include "clusterview.h"

#include "clusterscene.h"
#include "clusterview_p.h"
#include "document/document.h"
#include "palette/groupmime.h"

#include <QDragEnterEvent>
#include <QDragLeaveEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QMimeData>

namespace railyard {

const DropPlan &ClusterView::planAt(const QMimeData *data, const QPointF &pos)
{
    ClusterScene *s = clusterScene();
    const QPointF scenePos = mapToScene(pos.toPoint());
    QByteArray source = data->data(QLatin1String(mime::kGroupType))
                        + data->data(QLatin1String(mime::kGpuType));
    const int gpu = s->gpuAt(scenePos);
    const int node = gpu >= 0 ? -1 : s->nodeAt(scenePos);
    const int rack = gpu >= 0 || node >= 0 ? -1 : s->rackAt(scenePos);
    if (!m_drag || m_drag->source != source || m_drag->gpu != gpu || m_drag->node != node
        || m_drag->rack != rack) {
        if (!m_drag)
            m_drag = std::make_unique<DragState>();
        m_drag->source = std::move(source);
        m_drag->gpu = gpu;
        m_drag->node = node;
        m_drag->rack = rack;
        // Priced while dragging so the cue can say what the drop would cost.
        m_drag->plan = planDrop(*s, data, scenePos, true);
        const DropPlan &plan = m_drag->plan;
        s->setDropPreview(plan.targets, plan.ok);
        m_dragTone = plan.ok ? Tone::Ok : Tone::Refused;
        m_dragCaption = plan.title;
        m_dragDetail = plan.message;
        // What it would cost: the step time, or a serving layout's time per output token.
        const engine::Evaluation &now = s->document()->evaluation();
        const engine::ServingEvaluation *serving = s->document()->servingEvaluation();
        if (plan.ok && !plan.noChange && plan.tpotS > 0 && serving && serving->ok)
            m_dragDetail = tpotChangeText(serving->tpotS, plan.tpotS);
        else if (plan.ok && !plan.noChange && plan.stepTimeS > 0 && now.ok)
            m_dragDetail = stepChangeText(now.stepTimeS, plan.stepTimeS);
    }
    m_dragPos = pos.toPoint();
    viewport()->update();
    return m_drag->plan;
}

void ClusterView::clearDrag()
{
    m_drag.reset();
    m_dragCaption.clear();
    m_dragDetail.clear();
    clusterScene()->clearDropPreview();
    viewport()->update();
}

void ClusterView::dragEnterEvent(QDragEnterEvent *event)
{
    if (!mime::isRailyardDrag(event->mimeData())) {
        event->ignore();
        return;
    }
    const DropPlan &plan = planAt(event->mimeData(), event->position());
    // Entering is always accepted, so the cue follows the cursor; moves say where it can drop.
    event->setDropAction(Qt::MoveAction);
    event->accept();
    if (!plan.ok)
        Q_EMIT message(plan.message, true);
}

void ClusterView::dragMoveEvent(QDragMoveEvent *event)
{
    if (!mime::isRailyardDrag(event->mimeData())) {
        event->ignore();
        return;
    }
    const bool wasOk = m_drag && m_drag->plan.ok;
    const QString before = m_drag ? m_drag->plan.message : QString();
    const DropPlan &plan = planAt(event->mimeData(), event->position());
    if (plan.ok) {
        event->setDropAction(Qt::MoveAction);
        event->accept();
    } else {
        event->ignore(); // the forbidden cursor
    }
    // The status bar follows the cue: what the drop would do, or why it cannot.
    if (plan.message != before || plan.ok != wasOk)
        Q_EMIT message(plan.ok && !plan.noChange && !m_dragDetail.isEmpty()
                               ? plan.title + QStringLiteral(": ") + m_dragDetail
                               : plan.message,
                       !plan.ok);
}

void ClusterView::dragLeaveEvent(QDragLeaveEvent *event)
{
    clearDrag();
    event->accept();
}

void ClusterView::dropEvent(QDropEvent *event)
{
    if (!mime::isRailyardDrag(event->mimeData())) {
        event->ignore();
        return;
    }
    // Planned afresh: the document may have changed since the last move.
    const DropPlan plan = planDrop(*clusterScene(),
                                   event->mimeData(),
                                   mapToScene(event->position().toPoint()));
    clearDrag();
    if (apply(plan) && plan.ok) {
        event->setDropAction(Qt::MoveAction);
        event->accept();
    } else {
        event->ignore();
    }
}

} // namespace railyard
