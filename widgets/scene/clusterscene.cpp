#include "clusterscene.h"

#include "base/inputerror.h"
#include "clustergeometry.h"
#include "document/document.h"
#include "document/lessonframe.h"
#include "document/viewstate.h"
#include "import/ncclgraphoverlay.h"
#include "items/fabricitem.h"
#include "items/faultmarksitem.h"
#include "items/gpumarksitem.h"
#include "items/lessonmarksitem.h"
#include "items/locationlabelsitem.h"
#include "items/ncclgraphitem.h"
#include "items/rackitem.h"
#include "items/selectionitem.h"
#include "layout/parallel.h"
#include "linkpicker.h"
#include "step/routes.h"
#include "style.h"

#include <algorithm>

namespace railyard {

namespace {
// How many dash periods the flowing dashes move through while one step plays.
constexpr double kDashPeriodsPerStep = 96;
constexpr int kSelection = ViewState::SelectedDevice | ViewState::SelectedGpus
                           | ViewState::SelectedLink;
} // namespace

ClusterScene::ClusterScene(Document *document, QObject *parent)
    : QGraphicsScene(parent)
    , m_document(document)
{
    setBackgroundBrush(style::kCanvasBackground);
    // Items never move: skip the index bookkeeping a moving scene needs, keep the BSP for
    // culling the few hundred aggregate items.
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    connect(document, &Document::clusterChanged, this, &ClusterScene::rebuild);
    connect(document, &Document::ranksChanged, this, &ClusterScene::syncRanks);
    connect(document, &Document::evaluationChanged, this, &ClusterScene::syncLoads);
    m_ownView = new ViewState(document, this);
    m_view = m_ownView;
    m_state.view = m_view;
    connect(m_view, &ViewState::changed, this, [this](ViewState::Changes what) {
        syncView(what.toInt());
    });
    rebuild();
    syncRanks();
}

const engine::RankLayout *ClusterScene::ranks() const
{
    return m_document->ranks();
}

ClusterScene::~ClusterScene()
{
    // Items refer to the geometry: remove them before it goes.
    clear();
}

void ClusterScene::rebuild()
{
    clear();
    m_selection = nullptr;
    m_hovered = -1;
    m_hoveredGroup.reset();
    m_hoveredGpus.clear();
    m_previewGpus.clear();
    m_picker.reset();
    m_geometry = std::make_unique<ClusterGeometry>(m_document->topology());
    const ClusterGeometry &g = *m_geometry;
    // Without a scene rect (and with no event loop, as in tests and exports) the BSP index is
    // not built and queries get hundreds of times slower.
    setSceneRect(g.bounds());
    for (int r = 0; r < g.rackCount(); ++r)
        addItem(new RackItem(g, m_state, r));
    for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b)
        addItem(new BlockFabricItem(g, m_state, b));
    addItem(new SpineFabricItem(g, m_state));
    addItem(new LocationLabelsItem(g));
    // What cluster.faults takes down or slows (the topology resolved them): crossed, hatched.
    if (m_document->topology().hasFaults())
        addItem(new FaultMarksItem(g));
    // Selected GPUs get a ring, not a tint, so each keeps its group's colour.
    m_selectionMarks = new GpuMarksItem(g, GpuMarksItem::Style::Halo, style::kSelection, 8);
    addItem(m_selectionMarks);
    m_hoverMarks = new GpuMarksItem(g, GpuMarksItem::Style::Outline, style::kHover, 9);
    addItem(m_hoverMarks);
    m_selection = new SelectionItem(g);
    addItem(m_selection);
    m_previewMarks = new GpuMarksItem(g, GpuMarksItem::Style::Dashed, style::kDropOk, 11);
    addItem(m_previewMarks);
    m_linkMarks = new GpuMarksItem(g, GpuMarksItem::Style::Outline, style::kHighlight, 10);
    addItem(m_linkMarks);
    m_graphItem = new NcclGraphItem(g);
    addItem(m_graphItem);
    m_lessonMarks = new LessonMarksItem(g);
    addItem(m_lessonMarks);
    // A new cluster: the old ids mean other devices now.
    m_view->setSelectedDevice(-1);
    m_view->setSelectedGpus({});
    m_view->setSelectedLink(-1);
    m_view->setHoveredLink(-1);
    // The document follows a new cluster with ranksChanged and evaluationChanged, which sync the
    // ranks and the loads; until then no GPU has a rank (the old ranks were for other GPUs).
    m_state.gpuRank.assign(static_cast<std::size_t>(m_document->topology().gpuCount()), -1);
    m_state.gpuGroup.clear();
    m_state.groupCount = 0;
    m_state.loads = m_document->linkLoads();
    syncLesson(); // a lesson's ids are for the old topology: it is shown no more
    syncView(kSelection | ViewState::Hover);
    syncGraph(true);
    Q_EMIT rebuilt();
}

void ClusterScene::syncRanks()
{
    // Sizes that do not fill the cluster have no ranks to show (the pricing says why).
    const engine::RankLayout *ranks = m_document->ranks();
    const int gpus = m_document->topology().gpuCount();
    m_state.gpuRank.assign(static_cast<std::size_t>(gpus), -1);
    // A serving layout's ranks are the serving engine's (both pools, idle GPUs without one).
    if (const engine::ServingGpuGroups *s = m_document->servingGroups(); s && s->ok())
        m_state.gpuRank = s->rank;
    else if (ranks)
        for (int gpu = 0; gpu < gpus; ++gpu)
            m_state.gpuRank[static_cast<std::size_t>(gpu)] = ranks->rankOfGpu(gpu);
    syncColours();
}

void ClusterScene::syncColours()
{
    m_state.gpuGroup.clear();
    m_state.groupCount = 0;
    m_state.serving = m_document->isServing();
    m_state.groupHeading.clear();
    m_state.kindShort.clear();
    m_state.groupNames.clear();
    const engine::RankLayout *ranks = m_document->ranks();
    if (const engine::ServingGpuGroups *s = m_document->servingGroups(); s && m_state.colourBy()) {
        // The serving engine's groups: what it prices is what is coloured.
        const GroupKind kind = *m_state.colourBy();
        const auto k = servingKind(kind);
        m_state.groupHeading = servingKindNoun(kind) + tr("s");
        m_state.kindShort = servingKindLabel(kind);
        if (k == engine::ServingGpuGroups::Pool)
            m_state.groupNames = s->disaggregated
                                         ? std::vector<QString>{tr("prefill"), tr("decode")}
                                         : std::vector<QString>{tr("serving")};
        if (s->ok()) {
            m_state.groupCount = s->count[k];
            m_state.gpuGroup = s->group[k];
        }
    } else if (m_state.colourBy() && ranks) {
        const GroupKind kind = *m_state.colourBy();
        m_state.groupCount = groupCount(*ranks, kind);
        m_state.gpuGroup.assign(m_state.gpuRank.size(), -1);
        for (std::size_t gpu = 0; gpu < m_state.gpuRank.size(); ++gpu)
            if (const int rank = m_state.gpuRank[gpu]; rank >= 0)
                m_state.gpuGroup[gpu] = groupOfRank(*ranks, kind, rank);
    }
    syncHover();
    update();
    Q_EMIT placementChanged();
}

void ClusterScene::setViewState(ViewState *view)
{
    if (!view)
        view = m_ownView;
    if (view == m_view)
        return;
    disconnect(m_view, nullptr, this, nullptr);
    m_view = view;
    m_state.view = view;
    connect(m_view, &ViewState::changed, this, [this](ViewState::Changes what) {
        syncView(what.toInt());
    });
    syncColours();
    syncLesson();
    syncMoment();
    syncView(kSelection | ViewState::Hover);
    syncGraph(false);
    update();
}

void ClusterScene::syncView(int what)
{
    if (what & ViewState::Colouring)
        syncColours();
    if (what & ViewState::LinkLoad)
        update();
    if (what & ViewState::Lesson)
        syncLesson();
    if (what & (ViewState::Playback | ViewState::Moment))
        syncMoment();
    if (what & (ViewState::SelectedLink | ViewState::Hover))
        syncLinkMarks();
    if (what & ViewState::NcclGraph)
        syncGraph(false);
    if ((what & ViewState::SelectedDevice) && m_selection)
        m_selection->setDevice(m_view->selectedDevice());
    if ((what & ViewState::SelectedGpus) && m_selectionMarks)
        m_selectionMarks->setMarks(gpuDevices(m_view->selectedGpus()));
}

void ClusterScene::syncLinkMarks()
{
    if (!m_linkMarks)
        return;
    std::vector<int> links;
    for (int l : {m_view->selectedLink(), m_view->hoveredLink()})
        if (l >= 0 && l < m_document->topology().linkCount())
            links.push_back(l);
    m_linkMarks->setMarks({}, links);
}

void ClusterScene::syncGraph(bool clusterChanged)
{
    if (!m_graphItem)
        return;
    m_graph.reset();
    m_state.graphCaption.clear();
    m_state.graphColours.clear();
    const ViewState::GraphOverlay *o = m_view->graphOverlay();
    if (o && o->graph >= 0 && o->graph < static_cast<int>(o->graphs.size())) {
        try {
            m_graph = std::make_unique<engine::NcclGraphOverlay>(
                    engine::overlayNcclGraph(o->graphs[static_cast<std::size_t>(o->graph)],
                                             m_document->topology(),
                                             o->file.toStdString()));
        } catch (const engine::InputError &e) {
            m_graphItem->setOverlay(nullptr, -1);
            update();
            // The overlay was set on a cluster it fitted: only a new cluster can refuse it.
            if (clusterChanged) {
                m_view->setGraphOverlay(std::nullopt);
                Q_EMIT graphOverlayDropped(tr("NCCL graph overlay removed: the cluster no longer "
                                              "fits it (%1)")
                                                   .arg(QString::fromStdString(e.what())));
            }
            return;
        }
    }
    if (!m_graph || !o->visible) {
        m_graphItem->setOverlay(nullptr, -1);
        update();
        return;
    }
    m_graphItem->setOverlay(m_graph.get(), o->channel);
    QString caption = QString::fromStdString(m_graph->caption());
    if (o->channel >= 0)
        caption += tr("; channel %1 of %2 shown").arg(o->channel).arg(m_graph->channels.size());
    m_state.graphCaption = caption;
    for (const engine::GraphChannelPath &c : m_graph->channels)
        if (o->channel < 0 || c.channel == o->channel)
            m_state.graphColours.push_back(NcclGraphItem::channelColour(c.channel));
    update();
}

int ClusterScene::graphOverlayPathCount() const
{
    return m_graphItem ? m_graphItem->pathCount() : 0;
}

int ClusterScene::linkAt(const QPointF &scenePos, double tolerance) const
{
    if (!m_picker)
        m_picker = std::make_unique<LinkPicker>(*m_geometry);
    const bool loads = m_state.showLoads();
    return m_picker->linkAt(scenePos, tolerance, [&](int link) {
        return loads ? m_state.load(link) : 0.0;
    });
}

bool ClusterScene::syncLesson()
{
    const LessonFrame *f = m_view->lesson();
    const engine::Topology &t = m_document->topology();
    const bool was = m_state.lesson;
    // A frame for another topology (the cluster changed under the lesson) is not shown.
    m_state.lesson = f && f->topology == t.buildId();
    if (m_lessonMarks)
        m_lessonMarks->setFrame(m_state.lesson ? f : nullptr);
    if (!m_state.lesson) {
        if (was) {
            // Back to the playback's moment (or the step average).
            m_state.lessonLoad.clear();
            m_state.lessonReverse.clear();
            syncMoment();
            update();
        }
        return false;
    }
    const std::size_t n = static_cast<std::size_t>(t.linkCount());
    m_state.lessonLoad.assign(n, 0.0f);
    m_state.lessonReverse.assign(n, 0);
    for (const LessonFrame::Link &l : f->links)
        if (l.link >= 0 && static_cast<std::size_t>(l.link) < n) {
            m_state.lessonLoad[static_cast<std::size_t>(l.link)] = l.load;
            m_state.lessonReverse[static_cast<std::size_t>(l.link)] = l.reverse ? 1 : 0;
        }
    m_state.dashPhase = 0;
    update();
    return true;
}

void ClusterScene::syncMoment()
{
    // The lesson's step, while one is shown, takes the place of the playback's moment; the
    // moment itself (its loads) is the view state's.
    if (m_state.lesson)
        return;
    // The dashes move a few periods per step, whatever its length: what plays is the step in
    // kWallSeconds, so they crawl at the same pace on every layout.
    const double step = m_view->stepLength();
    m_state.dashPhase = m_view->hasMoment() && step > 0
                                ? m_view->playbackTime() / step * kDashPeriodsPerStep
                                : 0;
    if (m_state.linkLoad())
        update();
}

void ClusterScene::syncLoads()
{
    m_state.loads = m_document->linkLoads();
    syncHover(); // the links a group's traffic crosses follow the loads
    if (m_state.linkLoad())
        update();
}

std::optional<GroupKind> ClusterScene::colourBy() const
{
    return m_view->colourBy();
}

void ClusterScene::setColourBy(std::optional<GroupKind> kind)
{
    m_view->setColourBy(kind);
}

bool ClusterScene::isLinkLoadVisible() const
{
    return m_view->linkLoad();
}

void ClusterScene::setLinkLoadVisible(bool visible)
{
    m_view->setLinkLoad(visible);
}

int ClusterScene::selectedDevice() const
{
    return m_view->selectedDevice();
}

int ClusterScene::selectedLink() const
{
    return m_view->selectedLink();
}

void ClusterScene::setSelectedLink(int link)
{
    if (link >= m_document->topology().linkCount())
        link = -1;
    m_view->setSelectedLink(link);
}

const std::vector<int> &ClusterScene::selectedGpus() const
{
    return m_view->selectedGpus();
}

int ClusterScene::deviceAt(const QPointF &scenePos) const
{
    return m_geometry->deviceAt(scenePos);
}

int ClusterScene::gpuAt(const QPointF &scenePos) const
{
    const int device = deviceAt(scenePos);
    if (device < 0)
        return -1;
    const engine::Device &d = m_document->topology().devices()[static_cast<std::size_t>(device)];
    return d.kind == engine::DeviceKind::Gpu ? d.index : -1;
}

int ClusterScene::nodeAt(const QPointF &scenePos) const
{
    return m_geometry->nodeAt(scenePos);
}

int ClusterScene::rackAt(const QPointF &scenePos) const
{
    return m_geometry->rackAt(scenePos);
}

void ClusterScene::setSelectedDevice(int device)
{
    if (device >= m_document->topology().deviceCount())
        device = -1;
    m_view->setSelectedDevice(device);
}

std::vector<int> ClusterScene::gpuDevices(const std::vector<int> &gpus) const
{
    const engine::Topology &t = m_document->topology();
    std::vector<int> out;
    out.reserve(gpus.size());
    for (int gpu : gpus)
        if (gpu >= 0 && gpu < t.gpuCount())
            out.push_back(t.gpuDevice(gpu));
    return out;
}

void ClusterScene::setHoveredGpu(int gpu)
{
    if (gpu >= m_document->topology().gpuCount())
        gpu = -1;
    if (gpu == m_hovered)
        return;
    m_hovered = gpu;
    syncHover();
    Q_EMIT hoveredGpuChanged(gpu);
}

void ClusterScene::syncHover()
{
    if (!m_hoverMarks)
        return;
    m_hoveredGroup.reset();
    m_hoveredGpus.clear();
    const int rank = m_hovered >= 0 && m_hovered < static_cast<int>(m_state.gpuRank.size())
                             ? m_state.gpuRank[static_cast<std::size_t>(m_hovered)]
                             : -1;
    if (rank < 0 || !ranks()) {
        m_hoverMarks->clear();
        return;
    }
    const GroupKind kind = m_state.colourBy().value_or(GroupKind::Tp);
    const GroupRef group{kind, groupOfRank(*ranks(), kind, rank)};
    m_hoveredGroup = group;
    m_hoveredGpus = groupGpus(*ranks(), group);
    const engine::LinkLoads *loads = m_state.loads.get();
    std::vector<int> links = engine::groupTrafficLinks(m_document->topology(), m_hoveredGpus, loads);
    // A pipeline stage of a 16k-GPU job crosses thousands of links: draw a readable share.
    constexpr std::size_t kMaxLinks = 6000;
    if (links.size() > kMaxLinks)
        links.resize(kMaxLinks);
    m_hoverMarks->setMarks(gpuDevices(m_hoveredGpus), links);
}

int ClusterScene::hoveredLinkCount() const
{
    return m_hoverMarks ? m_hoverMarks->linkCount() : 0;
}

void ClusterScene::setSelectedGpus(std::vector<int> gpus)
{
    const int count = m_document->topology().gpuCount();
    gpus.erase(std::remove_if(gpus.begin(), gpus.end(), [&](int g) { return g < 0 || g >= count; }),
               gpus.end());
    m_view->setSelectedGpus(std::move(gpus));
}

void ClusterScene::setDropPreview(const std::vector<int> &gpus, bool ok)
{
    if (gpus == m_previewGpus && ok == m_previewOk && m_previewMarks->isVisible() == !gpus.empty())
        return;
    m_previewGpus = gpus;
    m_previewOk = ok;
    m_previewMarks->setColour(ok ? style::kDropOk : style::kDropRefused);
    m_previewMarks->setMarks(gpuDevices(gpus));
}

void ClusterScene::clearDropPreview()
{
    m_previewGpus.clear();
    m_previewMarks->clear();
}

} // namespace railyard
