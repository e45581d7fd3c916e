#include "clusterscene.h"

#include "clustergeometry.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "inputerror.h"
#include "items/fabricitem.h"
#include "items/gpumarksitem.h"
#include "items/locationlabelsitem.h"
#include "items/rackitem.h"
#include "items/selectionitem.h"
#include "parallel.h"
#include "routes.h"
#include "style.h"

#include <algorithm>

namespace railyard {

ClusterScene::ClusterScene(Document *document, QObject *parent)
    : QGraphicsScene(parent)
    , m_document(document)
{
    setBackgroundBrush(style::kCanvasBackground);
    // Items never move: skip the index bookkeeping a moving scene needs, keep the BSP for
    // culling the few hundred aggregate items.
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    connect(document, &Document::clusterChanged, this, &ClusterScene::rebuild);
    connect(document, &Document::workloadChanged, this, &ClusterScene::syncRanks);
    connect(document, &Document::mappingChanged, this, &ClusterScene::syncRanks);
    connect(document, &Document::evaluationChanged, this, &ClusterScene::syncLoads);
    rebuild();
}

ClusterScene::~ClusterScene()
{
    // Items refer to the geometry: remove them before it goes.
    clear();
}

void ClusterScene::rebuild()
{
    const bool hadSelection = m_selected >= 0;
    const bool hadGpus = !m_selectedGpus.empty();
    clear();
    m_selection = nullptr;
    m_selected = -1;
    m_hovered = -1;
    m_hoveredGroup.reset();
    m_hoveredGpus.clear();
    m_selectedGpus.clear();
    m_previewGpus.clear();
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
    // Selected GPUs get a ring, not a tint, so each keeps its group's colour.
    m_selectionMarks = new GpuMarksItem(g, GpuMarksItem::Style::Halo, style::kSelection, 8);
    addItem(m_selectionMarks);
    m_hoverMarks = new GpuMarksItem(g, GpuMarksItem::Style::Outline, style::kHover, 9);
    addItem(m_hoverMarks);
    m_selection = new SelectionItem(g);
    addItem(m_selection);
    m_previewMarks = new GpuMarksItem(g, GpuMarksItem::Style::Dashed, style::kDropOk, 11);
    addItem(m_previewMarks);
    syncRanks();
    syncLoads();
    if (hadSelection)
        Q_EMIT selectedDeviceChanged(-1);
    if (hadGpus)
        Q_EMIT selectedGpusChanged();
    Q_EMIT rebuilt();
}

void ClusterScene::syncRanks()
{
    m_ranks.reset();
    try {
        m_ranks = std::make_unique<engine::RankLayout>(m_document->layout());
    } catch (const engine::InputError &) {
        // Sizes that do not fill the cluster: no ranks to show (the pricing says why).
    }
    const int gpus = m_document->topology().gpuCount();
    m_state.gpuRank.assign(static_cast<std::size_t>(gpus), -1);
    if (m_ranks)
        for (int gpu = 0; gpu < gpus; ++gpu)
            m_state.gpuRank[static_cast<std::size_t>(gpu)] = m_ranks->rankOfGpu(gpu);
    syncColours();
}

void ClusterScene::syncColours()
{
    m_state.gpuGroup.clear();
    m_state.groupCount = 0;
    if (m_state.colourBy && m_ranks) {
        const GroupKind kind = *m_state.colourBy;
        m_state.groupCount = groupCount(*m_ranks, kind);
        m_state.gpuGroup.assign(m_state.gpuRank.size(), -1);
        for (std::size_t gpu = 0; gpu < m_state.gpuRank.size(); ++gpu)
            if (const int rank = m_state.gpuRank[gpu]; rank >= 0)
                m_state.gpuGroup[gpu] = groupOfRank(*m_ranks, kind, rank);
    }
    syncHover();
    update();
    Q_EMIT placementChanged();
}

void ClusterScene::setViewState(ViewState *view)
{
    if (m_view)
        disconnect(m_view, nullptr, this, nullptr);
    m_view = view;
    if (m_view)
        connect(m_view, &ViewState::changed, this, [this](ViewState::Changes what) {
            if (what & ViewState::Playback)
                syncMoment();
        });
    syncMoment();
}

void ClusterScene::syncMoment()
{
    const engine::Evaluation &e = m_document->evaluation();
    if (m_view && m_view->hasMoment() && !e.timeline.empty())
        engine::utilizationAt(e.timeline,
                              m_document->topology(),
                              m_view->playbackTime(),
                              m_state.moment);
    else
        m_state.moment.clear();
    if (m_state.linkLoad)
        update();
}

void ClusterScene::syncLoads()
{
    m_state.loads = m_document->evaluation().links;
    syncMoment();
    syncHover(); // the links a group's traffic crosses follow the loads
    if (m_state.linkLoad)
        update();
}

void ClusterScene::setColourBy(std::optional<GroupKind> kind)
{
    if (kind == m_state.colourBy)
        return;
    m_state.colourBy = kind;
    syncColours();
    Q_EMIT colourByChanged();
}

void ClusterScene::setLinkLoadVisible(bool visible)
{
    if (visible == m_state.linkLoad)
        return;
    m_state.linkLoad = visible;
    update();
    Q_EMIT linkLoadVisibleChanged(visible);
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
    if (device == m_selected)
        return;
    m_selected = device;
    m_selection->setDevice(device);
    Q_EMIT selectedDeviceChanged(device);
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
    if (rank < 0 || !m_ranks) {
        m_hoverMarks->clear();
        return;
    }
    const GroupKind kind = m_state.colourBy.value_or(GroupKind::Tp);
    const GroupRef group{kind, groupOfRank(*m_ranks, kind, rank)};
    m_hoveredGroup = group;
    m_hoveredGpus = groupGpus(*m_ranks, group);
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
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    if (gpus == m_selectedGpus)
        return;
    m_selectedGpus = std::move(gpus);
    m_selectionMarks->setMarks(gpuDevices(m_selectedGpus));
    Q_EMIT selectedGpusChanged();
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
