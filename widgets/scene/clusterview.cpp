#include "clusterview.h"

#include "clustergeometry.h"
#include "clusterscene.h"
#include "commands/changemapping.h"
#include "document/document.h"
#include "dropplan.h"
#include "palette/groupmime.h"
#include "panels/devicedescription.h"
#include "parallel.h"
#include "style.h"
#include "units.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLinearGradient>
#include <QLocale>
#include <QMenu>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>

#include <cmath>
#include <functional>
#include <set>

namespace railyard {

using engine::DeviceKind;

namespace {

constexpr int kLegendRowH = 20;
constexpr int kMaxSwatches = 16;
// A GPU must be at least this wide on screen to be picked up and dragged; smaller, a press
// pans the view.
constexpr double kMinDragGpuPx = 14;

// "rank 25: TP group 3 · PP stage 0 · DP replica 1", for a GPU's tooltip.
QString gpuRoles(const engine::RankLayout &ranks, int gpu)
{
    const int rank = ranks.rankOfGpu(gpu);
    if (rank < 0)
        return QObject::tr("runs no rank");
    QStringList roles;
    for (GroupKind kind : kAllGroupKinds) {
        if (groupCount(ranks, kind) <= 1 && kind != GroupKind::Tp)
            continue;
        if (ranks.size(dimOf(kind)) <= 1 && kind != GroupKind::PpStage
            && kind != GroupKind::DpReplica)
            continue;
        roles << groupName(GroupRef{kind, groupOfRank(ranks, kind, rank)});
    }
    return QObject::tr("<b>rank %1</b>: %2").arg(rank).arg(roles.join(QStringLiteral(" \u00b7 ")));
}

} // namespace

struct ClusterView::DragState
{
    QByteArray source;
    int gpu = -2, node = -2, rack = -2;
    DropPlan plan;
};

ClusterView::ClusterView(ClusterScene *scene, QWidget *parent)
    : QGraphicsView(scene, parent)
{
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    // Items set their own pen, brush, font and hints (chip example).
    setOptimizationFlags(QGraphicsView::DontSavePainterState
                         | QGraphicsView::DontAdjustForAntialiasing);
    setRenderHint(QPainter::TextAntialiasing, true);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAcceptDrops(true);
    connect(scene, &ClusterScene::rebuilt, this, [this] {
        if (m_autoFit)
            fitToCluster();
    });
    // The legend lists the groups and the load scale: repaint it when they change.
    connect(scene, &ClusterScene::colourByChanged, viewport(), qOverload<>(&QWidget::update));
    connect(scene, &ClusterScene::placementChanged, viewport(), qOverload<>(&QWidget::update));
    connect(scene, &ClusterScene::linkLoadVisibleChanged, this, [this] {
        if (m_autoFit)
            fitToCluster();
        viewport()->update();
    });
    connect(scene, &ClusterScene::colourByChanged, this, [this] {
        if (m_autoFit)
            fitToCluster();
    });
    // The title block prices the job.
    connect(scene->document(),
            &Document::evaluationChanged,
            viewport(),
            qOverload<>(&QWidget::update));
}

ClusterView::~ClusterView() = default;

ClusterScene *ClusterView::clusterScene() const
{
    return static_cast<ClusterScene *>(scene());
}

double ClusterView::zoom() const
{
    return transform().m11();
}

double ClusterView::fitZoom() const
{
    const QRectF r = sceneRect();
    // Leave room for the title block above and the legend below.
    const QRect v = viewport()->rect().adjusted(8,
                                                m_legend ? 88 : 8,
                                                -8,
                                                m_legend ? -(legendHeight() + 22) : -8);
    if (r.isEmpty() || v.isEmpty())
        return 1.0;
    return std::min(v.width() / r.width(), v.height() / r.height());
}

double ClusterView::minZoom() const
{
    return std::min(fitZoom() * 0.5, 0.05);
}

void ClusterView::applyZoom(double z)
{
    z = std::clamp(z, minZoom(), maxZoom());
    const double f = z / zoom();
    if (std::abs(f - 1.0) < 1e-9)
        return;
    scale(f, f);
    Q_EMIT zoomChanged(zoom());
}

void ClusterView::setZoom(double z)
{
    m_autoFit = false;
    const auto anchor = transformationAnchor();
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    applyZoom(z);
    setTransformationAnchor(anchor);
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
    resetTransform();
    const double z = fitZoom();
    scale(z, z);
    centerOn(sceneRect().center() + QPointF(0, m_legend ? -4 / z : 0));
    m_autoFit = true;
    Q_EMIT zoomChanged(zoom());
}

void ClusterView::showDevice(int device)
{
    ClusterScene *s = clusterScene();
    if (device < 0 || device >= s->document()->topology().deviceCount())
        return;
    const QRectF r = s->geometry().deviceRect(device);
    // Close enough to read its label, never further out than the user already was.
    const double want = std::max(zoom(), 0.8);
    m_autoFit = false;
    applyZoom(want);
    centerOn(r.center());
    s->setSelectedDevice(device);
}

bool ClusterView::search(const QString &query)
{
    const engine::Topology &t = clusterScene()->document()->topology();
    const int device = t.findDevice(query.toStdString());
    if (device < 0)
        return false;
    const QString q = query.trimmed().toLower();
    ClusterScene *s = clusterScene();
    const engine::Device &d = t.devices()[static_cast<std::size_t>(device)];
    // "node 17", "rack 4": show the whole server or rack, with its first GPU selected.
    QRectF frame;
    if (q.startsWith(QLatin1String("node")) || q.startsWith(QLatin1String("server"))
        || q.startsWith(QLatin1String("tray")))
        frame = s->geometry().nodeRect(d.node);
    else if (q.startsWith(QLatin1String("rack")))
        frame = s->geometry().rackRect(s->geometry().rackOfNode(d.node));
    if (!frame.isNull()) {
        m_autoFit = false;
        const QRect v = viewport()->rect().adjusted(40, 40, -40, -40);
        applyZoom(std::min(v.width() / frame.width(), v.height() / frame.height()));
        centerOn(frame.center());
        s->setSelectedDevice(device);
        return true;
    }
    showDevice(device);
    return true;
}

void ClusterView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    m_autoFit = false;
    applyZoom(zoom() * std::pow(1.2, steps));
    event->accept();
}

void ClusterView::showGpus(const std::vector<int> &gpus)
{
    ClusterScene *s = clusterScene();
    const engine::Topology &t = s->document()->topology();
    QRectF frame;
    for (int gpu : gpus)
        if (gpu >= 0 && gpu < t.gpuCount())
            frame = frame.united(s->geometry().deviceRect(t.gpuDevice(gpu)));
    s->setSelectedGpus(gpus);
    if (frame.isNull())
        return;
    // Keep the zoom if the GPUs are already in view; else frame them (never closer than 100%).
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    if (!visible.contains(frame)) {
        m_autoFit = false;
        const QRect v = viewport()->rect().adjusted(60, 80, -60, -(legendHeight() + 40));
        const QRectF f = frame.adjusted(-40, -40, 40, 40);
        applyZoom(std::min({v.width() / f.width(), v.height() / f.height(), 1.0}));
        centerOn(frame.center());
    }
}

bool ClusterView::makeGroupHere(GroupKind kind)
{
    const std::vector<int> gpus = clusterScene()->selectedGpus();
    if (gpus.empty()) {
        Q_EMIT message(tr("Select GPUs first: Shift-drag a rectangle over them"), true);
        return false;
    }
    return apply(planMakeGroup(*clusterScene(), kind, gpus));
}

bool ClusterView::apply(const DropPlan &plan)
{
    if (!plan.ok) {
        Q_EMIT message(plan.message, true);
        return false;
    }
    if (plan.noChange) {
        Q_EMIT message(plan.message, false);
        return true;
    }
    Document *doc = clusterScene()->document();
    const double before = doc->evaluation().ok ? doc->evaluation().stepTimeS : 0;
    doc->undoStack()->push(new ChangeMapping(doc, plan.mapping, plan.commandText));
    const double after = doc->evaluation().ok ? doc->evaluation().stepTimeS : 0;
    const QString change = stepChangeText(before, after);
    Q_EMIT message(change.isEmpty() ? plan.message : plan.message + QStringLiteral(": ") + change,
                   false);
    return true;
}

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

void ClusterView::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = event->position().toPoint();
    m_pressGpu = -1;
    if (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier)) {
        // Rubber band: select the GPUs it touches on release.
        m_banding = true;
        m_bandEnd = m_pressPos;
        event->accept();
        return;
    }
    if (event->button() == Qt::LeftButton && event->modifiers() == Qt::NoModifier && canDragGpus()) {
        const int gpu = clusterScene()->gpuAt(mapToScene(m_pressPos));
        if (gpu >= 0) {
            // A GPU: pressing and moving drags it (to swap), not the view.
            m_pressGpu = gpu;
            event->accept();
            return;
        }
    }
    QGraphicsView::mousePressEvent(event);
}

void ClusterView::mouseMoveEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    if (m_banding) {
        m_bandEnd = pos;
        viewport()->update();
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
    if (event->buttons() == Qt::NoButton)
        clusterScene()->setHoveredGpu(clusterScene()->gpuAt(mapToScene(pos)));
    QGraphicsView::mouseMoveEvent(event);
}

void ClusterView::mouseReleaseEvent(QMouseEvent *event)
{
    const QPoint pos = event->position().toPoint();
    if (m_banding) {
        m_banding = false;
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
        s->setSelectedDevice(s->deviceAt(scenePos));
        s->setSelectedGpus(gpu >= 0 ? std::vector<int>{gpu} : std::vector<int>{});
    }
}

void ClusterView::leaveEvent(QEvent *event)
{
    clusterScene()->setHoveredGpu(-1);
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
    const engine::RankLayout *ranks = s->ranks();
    for (GroupKind kind : kAllGroupKinds) {
        const int size = ranks ? static_cast<int>(groupRanks(*ranks, GroupRef{kind, 0}).size()) : 0;
        QString text = tr("Make a %1 Here").arg(kindNoun(kind));
        if (size > 0)
            text += QStringLiteral(" (%1)").arg(counted(size, tr("GPU"), tr("GPUs")));
        QAction *a = menu.addAction(text, this, [this, kind] { makeGroupHere(kind); });
        a->setEnabled(size > 0 && static_cast<int>(selected.size()) == size);
    }
    if (gpu >= 0 && ranks && ranks->rankOfGpu(gpu) >= 0) {
        menu.addSeparator();
        const int rank = ranks->rankOfGpu(gpu);
        for (GroupKind kind : kAllGroupKinds) {
            const GroupRef group{kind, groupOfRank(*ranks, kind, rank)};
            if (groupRanks(*ranks, group).size() < 2)
                continue;
            menu.addAction(tr("Select %1").arg(groupName(group)), this, [this, group] {
                if (const engine::RankLayout *r = clusterScene()->ranks())
                    showGpus(groupGpus(*r, group));
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
    menu.exec(event->globalPos());
}

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
        m_dragOk = plan.ok;
        m_dragCaption = plan.title;
        m_dragDetail = plan.message;
        const engine::Evaluation &now = s->document()->evaluation();
        if (plan.ok && !plan.noChange && plan.stepTimeS > 0 && now.ok)
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

bool ClusterView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        ClusterScene *s = clusterScene();
        const int device = s->deviceAt(mapToScene(help->pos()));
        if (device >= 0) {
            QString text = deviceTooltip(s->document()->topology(), device);
            const engine::Device &d
                    = s->document()->topology().devices()[static_cast<std::size_t>(device)];
            if (d.kind == DeviceKind::Gpu && s->ranks())
                text += QStringLiteral("<p>") + gpuRoles(*s->ranks(), d.index)
                        + QStringLiteral("</p>");
            QToolTip::showText(help->globalPos(), text, viewport());
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

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
        drawLegend(painter);
        drawTitleBlock(painter);
    }
    if (m_banding) {
        const QRect band = QRect(m_pressPos, m_bandEnd).normalized();
        QColor fill(0x25, 0x63, 0xeb, 40);
        painter->setPen(QPen(QColor(0x25, 0x63, 0xeb), 1, Qt::DashLine));
        painter->setBrush(fill);
        painter->drawRect(band);
    }
    if (!m_dragCaption.isEmpty())
        drawDragCaption(painter);
    painter->restore();
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
    const QColor accent = m_dragOk ? style::kDropOk : style::kDropRefused;
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
        painter->setPen(m_dragOk ? style::kTextMuted : style::kDropRefused);
        painter->drawText(QRect(box.left() + 10,
                                box.top() + 12 + fb.height(),
                                textW,
                                detailRect.height()),
                          Qt::TextWordWrap,
                          m_dragDetail);
    }
}

int ClusterView::legendHeight() const
{
    const int rows = 2 + (clusterScene()->canvasState().colouring() ? 1 : 0);
    return rows * kLegendRowH + 12;
}

void ClusterView::drawLegend(QPainter *painter)
{
    // A box along the bottom: links (or their load), device kinds, and the group colours.
    ClusterScene *s = clusterScene();
    const CanvasState &state = s->canvasState();
    const engine::Topology &t = s->document()->topology();
    std::set<engine::LinkKind> kinds;
    for (const engine::Link &l : t.links())
        kinds.insert(l.kind);
    std::vector<DeviceKind> devices;
    for (DeviceKind k : {DeviceKind::Gpu,
                         DeviceKind::NvSwitch,
                         DeviceKind::PcieSwitch,
                         DeviceKind::Cpu,
                         DeviceKind::Nic,
                         DeviceKind::Leaf,
                         DeviceKind::Spine,
                         DeviceKind::Core})
        if (t.countOf(k) > 0)
            devices.push_back(k);
    if (kinds.empty() && devices.empty())
        return;

    QFont f = font();
    f.setPixelSize(12);
    QFont bold = f;
    bold.setBold(true);
    QFont tiny = f;
    tiny.setPixelSize(10);
    tiny.setBold(true);
    const QFontMetrics fm(f);
    const QFontMetrics fmb(bold);
    const int rowH = kLegendRowH;
    const bool loads = state.linkLoad;
    const bool groups = state.colouring();
    const QString linksHead = loads ? tr("Link load") : tr("Links");
    const QString groupsHead = groups ? kindNoun(*state.colourBy) + tr("s") : QString();
    int headW = std::max({fmb.horizontalAdvance(linksHead),
                          fmb.horizontalAdvance(tr("Devices")),
                          fmb.horizontalAdvance(groupsHead)})
                + 12;

    // Row contents, measured first so the box fits the widest.
    const QString loadNote = tr("busiest direction, share of its busiest phase");
    const int gradientW = 150;
    int linksW = 0;
    if (loads)
        linksW = 34 + 8 + fm.horizontalAdvance(tr("idle")) + 16 + gradientW + 10
                 + fm.horizontalAdvance(loadNote);
    else
        for (auto k : kinds)
            linksW += 42 + fm.horizontalAdvance(style::linkKindName(k)) + 16;
    int devicesW = 0;
    for (auto k : devices)
        devicesW += 28 + fm.horizontalAdvance(style::deviceKindName(k)) + 16;
    const int count = state.groupCount;
    const bool gradientGroups = groups && state.ordered() && count > kMaxSwatches;
    const int swatches = groups && !gradientGroups ? std::min(count, kMaxSwatches) : 0;
    QString groupNote;
    if (groups && !gradientGroups && count > kMaxSwatches)
        groupNote = tr("\u2026 %1 in all; colours repeat every %2")
                            .arg(QLocale().toString(count))
                            .arg(style::kGroupHues);
    else if (gradientGroups)
        groupNote = tr("%1 to %2").arg(0).arg(count - 1);
    const int swatchW = 26;
    int groupsW = 0;
    if (groups)
        groupsW = (gradientGroups ? gradientW + 10 : swatches * (swatchW + 4) + 6)
                  + fm.horizontalAdvance(groupNote);
    const int rows = 2 + (groups ? 1 : 0);
    const QRect box(12,
                    viewport()->height() - 12 - rows * rowH - 12,
                    20 + headW + std::max({linksW, devicesW, groupsW}),
                    rows * rowH + 12);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(box, 6, 6);

    int y = box.top() + 6;
    const auto header = [&](const QString &text) {
        painter->setFont(bold);
        painter->setPen(style::kTextDark);
        painter->drawText(QRect(box.left() + 10, y, headW, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          text);
        painter->setFont(f);
    };
    const auto label = [&](int x, const QString &text) {
        painter->setPen(style::kTextDark);
        const int w = fm.horizontalAdvance(text);
        painter->drawText(QRect(x, y, w + 4, rowH), Qt::AlignLeft | Qt::AlignVCenter, text);
        return w;
    };
    const auto gradient = [&](int x, const std::function<QColor(double)> &colour) {
        QLinearGradient g(x, 0, x + gradientW, 0);
        for (int i = 0; i <= 10; ++i)
            g.setColorAt(i / 10.0, colour(i / 10.0));
        painter->setPen(Qt::NoPen);
        painter->setBrush(g);
        painter->drawRoundedRect(QRectF(x, y + 5, gradientW, rowH - 10), 3, 3);
    };

    header(linksHead);
    int x = box.left() + 10 + headW;
    if (loads) {
        QPen idle(style::kIdleLink, 3);
        idle.setCapStyle(Qt::FlatCap);
        painter->setPen(idle);
        painter->drawLine(x, y + rowH / 2, x + 34, y + rowH / 2);
        x += 42 + label(x + 42 - 8, tr("idle")) + 8;
        gradient(x, [](double u) { return style::loadColor(std::max(u, 0.02)); });
        painter->setFont(tiny);
        painter->setPen(Qt::white);
        painter->drawText(QRect(x + 4, y, gradientW - 8, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          QStringLiteral("0%"));
        painter->drawText(QRect(x + 4, y, gradientW - 8, rowH),
                          Qt::AlignRight | Qt::AlignVCenter,
                          QStringLiteral("100%"));
        painter->setFont(f);
        x += gradientW + 10;
        painter->setPen(style::kTextMuted);
        painter->drawText(QRect(x, y, fm.horizontalAdvance(loadNote) + 4, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          loadNote);
    } else {
        for (auto k : kinds) {
            QPen pen(style::linkColor(k), 3, style::linkPenStyle(k));
            pen.setCapStyle(Qt::FlatCap);
            painter->setPen(pen);
            painter->drawLine(x, y + rowH / 2, x + 34, y + rowH / 2);
            x += 42 + label(x + 42, style::linkKindName(k)) + 16;
        }
    }
    y += rowH;
    header(tr("Devices"));
    x = box.left() + 10 + headW;
    for (auto k : devices) {
        const QColor fill = style::deviceFill(k);
        painter->setPen(QPen(fill.darker(135), 1));
        painter->setBrush(fill);
        painter->drawRoundedRect(QRectF(x, y + 4, 20, rowH - 8), 3, 3);
        x += 28 + label(x + 28, style::deviceKindName(k)) + 16;
    }
    if (!groups)
        return;
    y += rowH;
    header(groupsHead);
    x = box.left() + 10 + headW;
    if (gradientGroups) {
        gradient(x, [&](double v) {
            return style::groupColor(static_cast<int>(std::lround(v * (count - 1))), count, true);
        });
        x += gradientW + 10;
    } else {
        painter->setFont(tiny);
        for (int i = 0; i < swatches; ++i) {
            const QColor fill = state.groupFill(i);
            painter->setPen(QPen(fill.darker(140), 1));
            painter->setBrush(fill);
            const QRectF r(x, y + 2, swatchW, rowH - 4);
            painter->drawRoundedRect(r, 3, 3);
            painter->setPen(style::textOn(fill));
            painter->drawText(r, Qt::AlignCenter, QString::number(i));
            x += swatchW + 4;
        }
        painter->setFont(f);
        x += 6;
    }
    if (!groupNote.isEmpty()) {
        painter->setPen(style::kTextMuted);
        painter->drawText(QRect(x, y, fm.horizontalAdvance(groupNote) + 4, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          groupNote);
    }
}

void ClusterView::drawTitleBlock(QPainter *painter)
{
    const Document *doc = clusterScene()->document();
    const engine::Topology &t = doc->topology();
    const engine::ClusterShape &s = t.shape();
    QString title = QString::fromStdString(doc->layout().title);
    if (title.isEmpty())
        title = doc->displayName();
    const bool one = s.nodes == 1;
    const QString unit = s.nodesPerDomain > 1 ? (one ? tr("tray") : tr("trays"))
                                              : (one ? tr("server") : tr("servers"));
    QString line = tr("%1 %2 of %3 \u00d7 %4 \u00b7 %5 GPUs")
                           .arg(QLocale().toString(s.nodes), unit)
                           .arg(s.gpusPerNode)
                           .arg(QString::fromStdString(t.gpuSpec().id),
                                QLocale().toString(t.gpuCount()));
    if (s.hasFabric)
        line += tr(" \u00b7 %1 %2, %3 %4")
                        .arg(s.leaves)
                        .arg(s.leaves == 1 ? tr("leaf") : tr("leaves"))
                        .arg(s.spines)
                        .arg(s.spines == 1 ? tr("spine") : tr("spines"));
    // The job and its price, so a screenshot or an export says what it shows.
    const engine::Layout &l = doc->layout();
    QString job;
    if (l.model) {
        const engine::ParallelConfig &p = l.parallel;
        QStringList sizes;
        sizes << tr("TP %1").arg(p.tp);
        if (p.cp > 1)
            sizes << tr("CP %1").arg(p.cp);
        if (p.ep > 1)
            sizes << tr("EP %1").arg(p.ep);
        sizes << (p.vp > 1 ? tr("PP %1 (VP %2)").arg(p.pp).arg(p.vp) : tr("PP %1").arg(p.pp));
        sizes << tr("DP %1").arg(l.dataParallel());
        job = QString::fromStdString(l.model->preset.empty() ? std::string("custom model")
                                                             : l.model->preset)
              + QStringLiteral(" \u00b7 ") + sizes.join(QStringLiteral(" \u00b7 "));
        if (!l.mapping.empty())
            job += tr(" \u00b7 placed by hand");
        const engine::Evaluation &e = doc->evaluation();
        if (e.ok)
            job += tr(" \u00b7 step %1 \u00b7 MFU %2%")
                           .arg(QString::fromStdString(engine::formatSeconds(e.stepTimeS)))
                           .arg(e.mfu * 100, 0, 'f', 0);
    }
    QFont f = font();
    f.setPixelSize(15);
    f.setBold(true);
    QFont small = font();
    small.setPixelSize(12);
    QFont smallBold = small;
    smallBold.setBold(true);
    const int w = std::max({QFontMetrics(f).horizontalAdvance(title),
                            QFontMetrics(small).horizontalAdvance(line),
                            QFontMetrics(smallBold).horizontalAdvance(job)})
                  + 24;
    const QRect box(12, 12, w, job.isEmpty() ? 50 : 68);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(box, 6, 6);
    painter->setPen(style::kTextDark);
    painter->setFont(f);
    painter->drawText(QRect(box.left() + 12, box.top() + 6, w - 24, 20),
                      Qt::AlignLeft | Qt::AlignVCenter,
                      title);
    painter->setFont(small);
    painter->setPen(style::kTextMuted);
    painter->drawText(QRect(box.left() + 12, box.top() + 26, w - 24, 18),
                      Qt::AlignLeft | Qt::AlignVCenter,
                      line);
    if (!job.isEmpty()) {
        painter->setFont(smallBold);
        painter->setPen(style::kTextDark);
        painter->drawText(QRect(box.left() + 12, box.top() + 44, w - 24, 18),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          job);
    }
}

} // namespace railyard
