#include "clusterscene.h"

#include "clustergeometry.h"
#include "document/document.h"
#include "items/fabricitem.h"
#include "items/rackitem.h"
#include "items/selectionitem.h"
#include "style.h"

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
    clear();
    m_selection = nullptr;
    m_selected = -1;
    m_geometry = std::make_unique<ClusterGeometry>(m_document->topology());
    const ClusterGeometry &g = *m_geometry;
    // Without a scene rect (and with no event loop, as in tests and exports) the BSP index is
    // not built and queries get hundreds of times slower.
    setSceneRect(g.bounds());
    for (int r = 0; r < g.rackCount(); ++r)
        addItem(new RackItem(g, r));
    for (int b = 0; b < static_cast<int>(g.blocks().size()); ++b)
        addItem(new BlockFabricItem(g, b));
    addItem(new SpineFabricItem(g));
    m_selection = new SelectionItem(g);
    addItem(m_selection);
    if (hadSelection)
        Q_EMIT selectedDeviceChanged(-1);
    Q_EMIT rebuilt();
}

int ClusterScene::deviceAt(const QPointF &scenePos) const
{
    return m_geometry->deviceAt(scenePos);
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

} // namespace railyard
