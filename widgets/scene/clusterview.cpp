#include "clusterview.h"

#include "clustergeometry.h"
#include "clusterscene.h"
#include "clusterview_p.h"
#include "commands/changemapping.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "layout/parallel.h"
#include "levelofdetail.h"
#include "panels/devicedescription.h"
#include "panels/linkdescription.h"
#include "render/legend.h"
#include "render/overview.h"
#include "render/titleblock.h"

#include <QHelpEvent>
#include <QResizeEvent>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>

#include <cmath>

namespace railyard {

using engine::DeviceKind;

namespace {

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

// "serving rank 12: decode pool · replica 1 · TP group 5 · EP group 1", for a serving layout's
// GPU: the groups as the serving engine places them (the training ranks do not describe them).
QString servingRoles(const engine::ServingGpuGroups &g, int gpu)
{
    using G = engine::ServingGpuGroups;
    const auto at = [&](G::Kind kind) {
        const std::vector<int> &v = g.group[kind];
        return gpu >= 0 && static_cast<std::size_t>(gpu) < v.size()
                       ? v[static_cast<std::size_t>(gpu)]
                       : -1;
    };
    const int rank = gpu >= 0 && static_cast<std::size_t>(gpu) < g.rank.size()
                             ? g.rank[static_cast<std::size_t>(gpu)]
                             : -1;
    if (rank < 0)
        return QObject::tr("serves nothing");
    QStringList roles;
    if (g.disaggregated)
        roles << (at(G::Pool) == 1 ? QObject::tr("decode pool") : QObject::tr("prefill pool"));
    if (at(G::Replica) >= 0)
        roles << QObject::tr("replica %1").arg(at(G::Replica));
    if (g.count[G::Tp] > 0 && at(G::Tp) >= 0)
        roles << QObject::tr("TP group %1").arg(at(G::Tp));
    if (g.count[G::Ep] > 0 && at(G::Ep) >= 0)
        roles << QObject::tr("EP group %1").arg(at(G::Ep));
    if (g.count[G::Stage] > g.count[G::Replica] && at(G::Stage) >= 0)
        roles << QObject::tr("PP stage group %1").arg(at(G::Stage));
    return QObject::tr("<b>serving rank %1</b>: %2")
            .arg(rank)
            .arg(roles.join(QStringLiteral(" \u00b7 ")));
}

} // namespace

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
        else
            setSceneRect(QRectF()); // the view scrolls over the new cluster's rect
    });
    // The legend lists the groups and the load scale: repaint it (and refit, as it takes
    // room) when they change.
    connect(scene, &ClusterScene::placementChanged, viewport(), qOverload<>(&QWidget::update));
    connect(scene->viewState(), &ViewState::changed, this, [this](ViewState::Changes what) {
        if (!(what & (ViewState::Colouring | ViewState::LinkLoad)))
            return;
        if (m_autoFit)
            fitToCluster();
        viewport()->update();
    });
    // The title block prices the job (its band widens when the stack range lands).
    connect(scene->document(),
            &Document::evaluationChanged,
            viewport(),
            qOverload<>(&QWidget::update));
    connect(scene->document(),
            &Document::stackRangeChanged,
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

QRect ClusterView::freeRect() const
{
    // The viewport less the title block above and the legend below, unfolded and at the full
    // width (as a fitted view shows them).
    const QRect vp = viewport()->rect();
    QRect title, legend;
    if (m_legend) {
        const ClusterScene *s = clusterScene();
        title = QRect(QPoint(kOverlayMargin, kOverlayMargin),
                      render::TitleBlock(*s->document(), font(), overlayWidth()).size());
        const render::Legend l(s->document()->topology(), s->canvasState(), font(), overlayWidth());
        if (!l.isEmpty())
            legend = QRect(QPoint(kOverlayMargin, vp.height() - kOverlayMargin - l.size().height()),
                           l.size());
    }
    return vp.adjusted(8,
                       title.isNull() ? 8 : title.bottom() + 10,
                       -8,
                       legend.isNull() ? -8 : -(vp.bottom() - legend.top()) - 10);
}

double ClusterView::fitZoom() const
{
    const QRectF r = clusterScene()->sceneRect();
    const QRect v = freeRect();
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
    // Zoomed from a fit: the view scrolls over the cluster again, not the fitted viewport's
    // area around it (fitToCluster), so panning stops at the cluster's edges.
    if (sceneRect() != clusterScene()->sceneRect())
        setSceneRect(QRectF());
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
    // The cluster in the middle of the room the overlays leave. Fitted, the cluster is smaller
    // than the viewport, and QGraphicsView centres a scene rect smaller than its viewport in it,
    // whatever centerOn asks (so a legend taller than the title block covered the cluster's
    // bottom): the view scrolls over the area of the scene the whole viewport shows with the
    // cluster centred in that room (a pixel short of it, so no scroll bar appears).
    const QRectF cluster = clusterScene()->sceneRect();
    const QPointF room = QRectF(freeRect()).center() - QRectF(viewport()->rect()).topLeft();
    const QSizeF shown = QSizeF(std::max(1, viewport()->width() - 1),
                                std::max(1, viewport()->height() - 1))
                         / z;
    const QRectF around(cluster.center() - room / z, shown);
    setSceneRect(around.contains(cluster) ? around : around.united(cluster));
    centerOn(cluster.center()
             + (QPointF(viewport()->rect().center()) - QRectF(freeRect()).center()) / z);
    m_autoFit = true;
    m_unfolded = false;
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
        const QRect v = freeRect().adjusted(52, 30, -52, -30);
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
    // What the move did: to the step time, or to a serving layout's time per output token.
    const auto time = [doc] {
        if (const engine::ServingEvaluation *s = doc->servingEvaluation())
            return s->ok ? s->tpotS : 0.0;
        return doc->evaluation().ok ? doc->evaluation().stepTimeS : 0.0;
    };
    const double before = time();
    doc->undoStack()->push(new ChangeMapping(doc, plan.mapping, plan.commandText));
    const double after = time();
    const QString change = doc->isServing() ? tpotChangeText(before, after)
                                            : stepChangeText(before, after);
    Q_EMIT message(change.isEmpty() ? plan.message : plan.message + QStringLiteral(": ") + change,
                   false);
    return true;
}

QString ClusterView::toolTipAt(const QPoint &pos) const
{
    const ClusterScene *s = clusterScene();
    const engine::Topology &t = s->document()->topology();
    const int device = s->deviceAt(mapToScene(pos));
    if (device >= 0) {
        QString text = deviceTooltip(t, device);
        const engine::Device &d = t.devices()[static_cast<std::size_t>(device)];
        if (d.kind == DeviceKind::Gpu && s->document()->servingGroups())
            text += QStringLiteral("<p>") + servingRoles(*s->document()->servingGroups(), d.index)
                    + QStringLiteral("</p>");
        else if (d.kind == DeviceKind::Gpu && s->ranks())
            text += QStringLiteral("<p>") + gpuRoles(*s->ranks(), d.index) + QStringLiteral("</p>");
        return text;
    }
    const int link = linkAtViewport(pos);
    if (link < 0)
        return {};
    const CanvasState &state = s->canvasState();
    const double now = state.moment().empty() ? -1.0 : state.load(link);
    return linkTooltip(documentLinkFacts(*s->document(), s->ranks(), link, now));
}

int ClusterView::linkAtViewport(const QPoint &pos) const
{
    const ClusterScene *s = clusterScene();
    const QPointF at = mapToScene(pos);
    if (s->deviceAt(at) >= 0)
        return -1;
    // Links are drawn one by one from the Devices level on; further out a line is a bundle.
    if (zoom() < kDevicesFrom)
        return -1;
    return s->linkAt(at, 4.0 / std::max(zoom(), 1e-6));
}

void ClusterView::showLink(int link)
{
    ClusterScene *s = clusterScene();
    const engine::Topology &t = s->document()->topology();
    if (link < 0 || link >= t.linkCount())
        return;
    const QRectF route = s->geometry().linkPath(link).boundingRect();
    m_autoFit = false;
    if (zoom() < kDevicesFrom * 1.5)
        applyZoom(kDevicesFrom * 1.5);
    centerOn(route.center());
    s->setSelectedLink(link);
}

bool ClusterView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (!text.isEmpty())
            QToolTip::showText(help->globalPos(), text, viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

int ClusterView::overlayWidth() const
{
    return std::max(0, viewport()->width() - 2 * kOverlayMargin);
}

QRect ClusterView::titleBlockRect() const
{
    return overlays().title;
}

QRect ClusterView::legendRect() const
{
    return overlays().legend;
}

bool ClusterView::overlaysFolded() const
{
    return overlays().folded;
}

bool ClusterView::foldable() const
{
    return !m_autoFit && !m_unfolded;
}

ClusterView::Overlays ClusterView::overlays() const
{
    Overlays o;
    const QRect vp = viewport()->rect();
    const ClusterScene *s = clusterScene();
    // The overview map only when part of the cluster is out of view: fitted, the canvas is its
    // own map.
    const QRectF visible = mapToScene(vp).boundingRect();
    const bool map = !visible.adjusted(-1, -1, 1, 1).contains(s->sceneRect());
    const auto overviewAt = [&](int width) {
        const render::Overview overview(s->geometry(), visible, locationText(), font(), width);
        return QRect(QPoint(vp.width() - kOverlayMargin - overview.size().width(), kOverlayMargin),
                     overview.size());
    };
    if (map)
        o.overview = overviewAt(o.overviewWidth);
    if (m_legend) {
        // Beside the overview map, the title block wraps to the room left of it.
        o.titleWidth = o.overview.isNull() ? overlayWidth()
                                           : o.overview.left() - 2 * kOverlayMargin;
        const render::TitleBlock title(*s->document(), font(), o.titleWidth);
        o.title = QRect(QPoint(kOverlayMargin, kOverlayMargin), title.size());
        const render::Legend legend(s->document()->topology(),
                                    s->canvasState(),
                                    font(),
                                    overlayWidth());
        if (!legend.isEmpty())
            o.legend = QRect(QPoint(kOverlayMargin,
                                    vp.height() - kOverlayMargin - legend.size().height()),
                             legend.size());
    }
    if (!foldable())
        return o;
    const auto area = [](const QRect &r) { return double(r.width()) * r.height(); };
    if (area(o.title) + area(o.legend) + area(o.overview)
        <= kMaxOverlayShare * vp.width() * vp.height())
        return o;
    o.folded = true;
    if (map) {
        o.overviewWidth = 120;
        o.overview = overviewAt(o.overviewWidth);
    }
    if (m_legend) {
        QFont bold = font();
        bold.setBold(true);
        const QFontMetrics fm(bold);
        const int h = fm.height() + 10;
        const int room = std::max(40,
                                  (o.overview.isNull() ? vp.width() : o.overview.left())
                                          - 2 * kOverlayMargin);
        const QString title = QString::fromStdString(s->document()->layout().title);
        o.title = QRect(kOverlayMargin,
                        kOverlayMargin,
                        std::min(room, fm.horizontalAdvance(title) + 36),
                        h);
        if (!o.legend.isNull())
            o.legend = QRect(kOverlayMargin,
                             vp.height() - kOverlayMargin - h,
                             fm.horizontalAdvance(tr("Legend")) + 36,
                             h);
    }
    return o;
}

QString ClusterView::locationText() const
{
    return render::locationText(clusterScene()->geometry(), mapToScene(viewport()->rect().center()));
}

QRect ClusterView::overviewRect() const
{
    return overlays().overview;
}

} // namespace railyard
