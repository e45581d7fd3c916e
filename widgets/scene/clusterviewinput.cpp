// ClusterView: the mouse and the keys (zoom keys, click to select, drag a GPU to swap it,
// Shift-drag to select GPUs, the overview map) and the context menu.
#include "clusterview.h"

#include "clustergeometry.h"
#include "clusterscene.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "dropplan.h"
#include "faultmenu.h"
#include "layout/parallel.h"
#include "levelofdetail.h"
#include "palette/groupmime.h"
#include "render/overview.h"
#include "style.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <utility>

namespace railyard {

void ClusterView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomIn(); return;
    case Qt::Key_Minus: zoomOut(); return;
    case Qt::Key_0:
    case Qt::Key_Home: fitToCluster(); return;
    case Qt::Key_Escape:
        clusterScene()->setSelectedDevice(-1);
        clusterScene()->setSelectedGpus({});
        return;
    default: break;
    }
    QGraphicsView::keyPressEvent(event);
}

bool ClusterView::canDragGpus() const
{
    return ClusterGeometry::kGpuW * zoom() >= kMinDragGpuPx;
}

double ClusterView::dragZoom() const
{
    return kMinDragGpuPx / ClusterGeometry::kGpuW;
}

int ClusterView::visibleGpuAt(const QPointF &scenePos) const
{
    const ClusterScene *s = clusterScene();
    if (const int gpu = s->gpuAt(scenePos); gpu >= 0)
        return gpu;
    // Zoomed far out a server is a block of GPU-coloured slices, one per GPU.
    const int node = s->nodeAt(scenePos);
    const int gpn = s->document()->topology().shape().gpusPerNode;
    if (node < 0 || gpn <= 0 || detailFor(zoom()) != Detail::Racks)
        return -1;
    const QRectF r = s->geometry().nodeRect(node);
    const int slice = std::clamp(static_cast<int>((scenePos.x() - r.left()) / r.width() * gpn),
                                 0,
                                 gpn - 1);
    return node * gpn + slice;
}

void ClusterView::showCue(const QString &caption,
                          const QString &detail,
                          Tone tone,
                          const QPoint &pos)
{
    m_dragCaption = caption;
    m_dragDetail = detail;
    m_dragTone = tone;
    m_dragPos = pos;
    viewport()->update();
}

void ClusterView::centreOnOverview(const QPoint &pos)
{
    const Overlays o = overlays();
    const QRect box = o.overview;
    if (box.isNull())
        return;
    const render::Overview overview(clusterScene()->geometry(),
                                    mapToScene(viewport()->rect()).boundingRect(),
                                    locationText(),
                                    font(),
                                    o.overviewWidth);
    m_autoFit = false;
    centerOn(overview.sceneAt(QPointF(pos - box.topLeft())));
    viewport()->update();
}

void ClusterView::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = event->position().toPoint();
    m_pressGpu = -1;
    m_pressSmallGpu = -1;
    if (event->button() == Qt::LeftButton && event->modifiers() == Qt::NoModifier && m_legend) {
        // A click on a folded title or legend unfolds them (until the next fit); on them
        // unfolded, where they would fold, folds them again.
        const Overlays o = overlays();
        const bool onThem = o.title.contains(m_pressPos) || o.legend.contains(m_pressPos);
        if (onThem && (o.folded || m_unfolded)) {
            m_unfolded = o.folded;
            viewport()->update();
            event->accept();
            return;
        }
    }
    if (event->button() == Qt::LeftButton && overviewRect().contains(m_pressPos)) {
        // The overview map: the view jumps to where it was clicked, and follows a drag.
        m_overviewDrag = true;
        centreOnOverview(m_pressPos);
        event->accept();
        return;
    }
    if (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier)) {
        // Rubber band: select the GPUs it touches on release.
        m_banding = true;
        m_bandEnd = m_pressPos;
        event->accept();
        return;
    }
    if (event->button() == Qt::LeftButton && event->modifiers() == Qt::NoModifier) {
        const QPointF scenePos = mapToScene(m_pressPos);
        if (canDragGpus()) {
            if (const int gpu = clusterScene()->gpuAt(scenePos); gpu >= 0) {
                // A GPU: pressing and moving drags it (to swap), not the view.
                m_pressGpu = gpu;
                event->accept();
                return;
            }
        } else {
            // Too small to pick up: the press pans as on the background, and a move says why
            // the GPU does not come along.
            m_pressSmallGpu = visibleGpuAt(scenePos);
        }
    }
    QGraphicsView::mousePressEvent(event);
}

void ClusterView::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    if (m_overviewDrag) {
        centreOnOverview(pos);
        event->accept();
        return;
    }
    if (m_banding) {
        m_bandEnd = pos;
        // The cue counts what the band holds, so the user sees what a release will select.
        ClusterScene *s = clusterScene();
        const QRectF band = mapToScene(QRect(m_pressPos, pos).normalized()).boundingRect();
        const engine::Topology &t = s->document()->topology();
        int count = 0;
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
            count += band.intersects(s->geometry().deviceRect(t.gpuDevice(gpu)));
        showCue(count == 0 ? tr("No GPUs in the rectangle") : counted(count, tr("GPU"), tr("GPUs")),
                count == 0 ? QString()
                           : tr("Release to select them; Ctrl+G then makes a group here"),
                Tone::Hint,
                pos);
        event->accept();
        return;
    }
    if (m_pressGpu >= 0 && (event->buttons() & Qt::LeftButton)) {
        if ((pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
            const int gpu = m_pressGpu;
            m_pressGpu = -1;
            startGpuDrag(gpu);
        }
        event->accept();
        return;
    }
    if (m_pressSmallGpu >= 0 && (event->buttons() & Qt::LeftButton)
        && (pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
        const bool first = m_dragCaption.isEmpty();
        const double px = ClusterGeometry::kGpuW * zoom();
        showCue(tr("Zoom in to drag single GPUs"),
                tr("GPU %1 is %2 px wide at %3% zoom; from %4% a GPU can be dragged onto "
                   "another to swap them. Double-click zooms in here.")
                        .arg(m_pressSmallGpu)
                        .arg(px, 0, 'f', 0)
                        .arg(zoom() * 100, 0, 'f', 0)
                        .arg(std::ceil(dragZoom() * 100), 0, 'f', 0),
                Tone::Hint,
                pos);
        if (first)
            Q_EMIT message(tr("GPUs are too small to drag at %1% zoom: zoom in to %2% or more "
                              "(wheel, + or double-click) to drag a GPU onto another")
                                   .arg(zoom() * 100, 0, 'f', 0)
                                   .arg(std::ceil(dragZoom() * 100), 0, 'f', 0),
                           false);
    }
    if (event->buttons() == Qt::NoButton) {
        ClusterScene *s = clusterScene();
        s->setHoveredGpu(s->gpuAt(mapToScene(pos)));
        s->viewState()->setHoveredLink(linkAtViewport(pos));
    }
    QGraphicsView::mouseMoveEvent(event);
}

void ClusterView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || overviewRect().contains(event->position().toPoint())) {
        QGraphicsView::mouseDoubleClickEvent(event);
        return;
    }
    // Zoom in on the point: straight to where GPUs can be picked up when further out, else by
    // a step.
    const QPointF at = mapToScene(event->position().toPoint());
    m_autoFit = false;
    applyZoom(canDragGpus() ? zoom() * 2 : std::max(dragZoom() * 1.05, zoom() * 2));
    centerOn(at);
    event->accept();
}

void ClusterView::mouseReleaseEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    if (m_overviewDrag) {
        m_overviewDrag = false;
        event->accept();
        return;
    }
    if (m_pressSmallGpu >= 0) {
        m_pressSmallGpu = -1;
        m_dragCaption.clear();
        m_dragDetail.clear();
        viewport()->update();
    }
    if (m_banding) {
        m_banding = false;
        m_dragCaption.clear();
        m_dragDetail.clear();
        viewport()->update();
        ClusterScene *s = clusterScene();
        const QRectF band = mapToScene(QRect(m_pressPos, pos).normalized()).boundingRect();
        const engine::Topology &t = s->document()->topology();
        std::vector<int> gpus;
        if ((event->modifiers() & Qt::ControlModifier))
            gpus = s->selectedGpus();
        for (int gpu = 0; gpu < t.gpuCount(); ++gpu)
            if (band.intersects(s->geometry().deviceRect(t.gpuDevice(gpu))))
                gpus.push_back(gpu);
        s->setSelectedGpus(gpus);
        const auto count = s->selectedGpus().size();
        Q_EMIT message(count == 0 ? tr("No GPUs in the rectangle")
                                  : tr("%1 selected: Make Group Here (Ctrl+G) moves a group onto "
                                       "them")
                                            .arg(gpuListText(s->selectedGpus())),
                       false);
        event->accept();
        return;
    }
    const bool pressedGpu = m_pressGpu >= 0;
    m_pressGpu = -1;
    if (!pressedGpu)
        QGraphicsView::mouseReleaseEvent(event);
    // A click, not the end of a pan: select what is under it (or nothing).
    if (event->button() == Qt::LeftButton && (pos - m_pressPos).manhattanLength() <= 4) {
        ClusterScene *s = clusterScene();
        const QPointF scenePos = mapToScene(pos);
        const int gpu = s->gpuAt(scenePos);
        if (event->modifiers() & Qt::ControlModifier) {
            // Ctrl-click adds a GPU to the selection, or takes it out.
            std::vector<int> gpus = s->selectedGpus();
            const auto it = std::find(gpus.begin(), gpus.end(), gpu);
            if (it != gpus.end())
                gpus.erase(it);
            else if (gpu >= 0)
                gpus.push_back(gpu);
            s->setSelectedGpus(gpus);
            return;
        }
        const int device = s->deviceAt(scenePos);
        s->setSelectedDevice(device);
        s->setSelectedGpus(gpu >= 0 ? std::vector<int>{gpu} : std::vector<int>{});
        s->setSelectedLink(device < 0 ? linkAtViewport(pos) : -1);
    }
}

void ClusterView::leaveEvent(QEvent *event)
{
    clusterScene()->setHoveredGpu(-1);
    clusterScene()->viewState()->setHoveredLink(-1);
    QGraphicsView::leaveEvent(event);
}

void ClusterView::startGpuDrag(int gpu)
{
    ClusterScene *s = clusterScene();
    auto *drag = new QDrag(this);
    drag->setMimeData(mime::encodeGpu(gpu, jobSignature(s->document()->layout())));
    // The GPU itself, in its group's colour, follows the cursor.
    QPixmap chip(QSize(72, 30) * devicePixelRatioF());
    chip.setDevicePixelRatio(devicePixelRatioF());
    chip.fill(Qt::transparent);
    {
        QPainter p(&chip);
        p.setRenderHint(QPainter::Antialiasing, true);
        const QColor fill = s->canvasState().gpuFill(gpu);
        p.setPen(QPen(fill.darker(140), 1));
        p.setBrush(fill);
        p.drawRoundedRect(QRectF(0.5, 0.5, 71, 29), 5, 5);
        QFont f = font();
        f.setPixelSize(12);
        f.setBold(true);
        p.setFont(f);
        p.setPen(style::textOn(fill));
        p.drawText(QRectF(0, 0, 72, 30), Qt::AlignCenter, tr("GPU %1").arg(gpu));
    }
    drag->setPixmap(chip);
    drag->setHotSpot(QPoint(36, 15));
    drag->exec(Qt::MoveAction);
}

void ClusterView::contextMenuEvent(QContextMenuEvent *event)
{
    ClusterScene *s = clusterScene();
    const QPointF scenePos = mapToScene(event->pos());
    const int gpu = s->gpuAt(scenePos);
    // Right-clicking a GPU outside the selection selects it first, as file managers do.
    if (gpu >= 0) {
        const auto &sel = s->selectedGpus();
        if (std::find(sel.begin(), sel.end(), gpu) == sel.end())
            s->setSelectedGpus({gpu});
    }
    const std::vector<int> selected = s->selectedGpus();
    QMenu menu(this);
    // The groups as the document places them: a serving layout's are the serving engine's (a
    // replica's TP group in its pool), not the training ranks'.
    const Document &doc = *s->document();
    const int first = selected.empty() ? -1 : selected.front();
    for (GroupKind kind : kAllGroupKinds) {
        const std::optional<GpuGroup> group = first >= 0 ? groupOfGpu(doc, kind, first)
                                                         : std::nullopt;
        const int size = group ? static_cast<int>(group->gpus.size()) : 0;
        QString text = tr("Make a %1 Here").arg(groupKindNoun(doc, kind));
        if (size > 0)
            text += QStringLiteral(" (%1)").arg(counted(size, tr("GPU"), tr("GPUs")));
        QAction *a = menu.addAction(text, this, [this, kind] { makeGroupHere(kind); });
        a->setEnabled(size > 0 && static_cast<int>(selected.size()) == size);
    }
    if (gpu >= 0) {
        bool separated = false;
        for (GroupKind kind : kAllGroupKinds) {
            const std::optional<GpuGroup> group = groupOfGpu(doc, kind, gpu);
            if (!group || group->gpus.size() < 2)
                continue;
            if (!std::exchange(separated, true))
                menu.addSeparator();
            menu.addAction(tr("Select %1").arg(group->name), this, [this, gpus = group->gpus] {
                showGpus(gpus);
            });
        }
    }
    if (!selected.empty()) {
        menu.addSeparator();
        menu.addAction(tr("Clear Selection"), this, [s] {
            s->setSelectedGpus({});
            s->setSelectedDevice(-1);
        });
    }
    // Fail, degrade, slow down or restore the device or link under the click (one undo step).
    const int device = s->deviceAt(scenePos);
    faultmenu::addFaultActions(&menu,
                               s->document(),
                               device,
                               device < 0 ? linkAtViewport(event->pos()) : -1,
                               this);
    menu.exec(event->globalPos());
}

} // namespace railyard
