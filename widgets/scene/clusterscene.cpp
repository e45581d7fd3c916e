#include "clusterscene.h"

#include "clustergeometry.h"
#include "document/document.h"
#include "items/deviceitem.h"
#include "style.h"

namespace railyard {

using engine::DeviceKind;

ClusterScene::ClusterScene(Document *document, QObject *parent)
    : QGraphicsScene(parent)
    , m_document(document)
{
    setBackgroundBrush(style::kCanvasBackground);
    connect(document, &Document::clusterChanged, this, &ClusterScene::rebuild);
    rebuild();
}

ClusterScene::~ClusterScene() = default;

DeviceItem *ClusterScene::deviceItem(int device) const
{
    if (device < 0 || device >= static_cast<int>(m_deviceItems.size()))
        return nullptr;
    return m_deviceItems[static_cast<std::size_t>(device)];
}

int ClusterScene::deviceItemCount() const
{
    return static_cast<int>(m_deviceItems.size());
}

static QString shortLabel(const engine::Topology &t, int id)
{
    const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
    switch (d.kind) {
    case DeviceKind::Gpu: return QStringLiteral("GPU %1").arg(d.index);
    case DeviceKind::NvSwitch: return QStringLiteral("NVSwitch %1").arg(d.local);
    case DeviceKind::PcieSwitch: return QStringLiteral("PCIe sw %1").arg(d.local);
    case DeviceKind::Cpu: return QStringLiteral("CPU %1").arg(d.local);
    case DeviceKind::Nic: return QStringLiteral("NIC %1").arg(d.local);
    default: return QString::fromStdString(t.deviceName(id));
    }
}

void ClusterScene::rebuild()
{
    clear();
    m_deviceItems.clear();
    const engine::Topology &t = m_document->topology();
    m_geometry = std::make_unique<ClusterGeometry>(t);
    const ClusterGeometry &g = *m_geometry;
    const engine::ClusterShape &s = t.shape();

    for (int r = 0; r < g.rackCount(); ++r)
        addItem(new NodeItem(-1, g.rackRect(r), tr("Rack %1").arg(r), true));
    const QString nodeWord = s.nodesPerDomain > 1 ? tr("Tray %1") : tr("Node %1");
    for (int n = 0; n < g.nodeCount(); ++n) {
        const QString title = nodeWord.arg(n)
                              + QStringLiteral(" \u2014 %1 \u00d7 %2")
                                        .arg(s.gpusPerNode)
                                        .arg(QString::fromStdString(t.gpuSpec().id));
        addItem(new NodeItem(n, g.nodeRect(n), title, false));
    }

    m_deviceItems.resize(static_cast<std::size_t>(t.deviceCount()), nullptr);
    for (int id = 0; id < t.deviceCount(); ++id) {
        const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
        auto *item = new DeviceItem(id, d.kind, g.deviceRect(id), shortLabel(t, id));
        item->setToolTip(QString::fromStdString(t.deviceName(id)));
        addItem(item);
        m_deviceItems[static_cast<std::size_t>(id)] = item;
    }

    for (int i = 0; i < t.linkCount(); ++i) {
        const engine::Link &l = t.links()[static_cast<std::size_t>(i)];
        const QRectF a = g.deviceRect(l.a);
        const QRectF b = g.deviceRect(l.b);
        // Attach at the facing edges: top and bottom, or the sides for devices on one row.
        QPointF pa, pb;
        if (std::abs(a.center().y() - b.center().y()) < 1) {
            const bool aLeft = a.center().x() < b.center().x();
            pa = QPointF(aLeft ? a.right() : a.left(), a.center().y());
            pb = QPointF(aLeft ? b.left() : b.right(), b.center().y());
        } else {
            const bool aAbove = a.center().y() < b.center().y();
            pa = QPointF(a.center().x(), aAbove ? a.bottom() : a.top());
            pb = QPointF(b.center().x(), aAbove ? b.top() : b.bottom());
        }
        const double width = l.kind == engine::LinkKind::NvLink ? 1.0 + l.lanes * 0.3 : 2.0;
        addItem(new LinkItem(i, l.kind, pa, pb, width));
    }
    // Without a scene rect (and with no event loop) the BSP index is not built.
    setSceneRect(g.bounds());
}

} // namespace railyard
