#include "rackitem.h"

#include "nvlinklabels.h"
#include "paintutil.h"
#include "scene/canvasstate.h"
#include "scene/clustergeometry.h"
#include "scene/style.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QVarLengthArray>

#include <array>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;

namespace {

constexpr int kLinkKinds = 5;

// Segments batched per link kind, so each kind is one drawLines call.
struct LineBatch
{
    std::array<QVarLengthArray<QLineF, 256>, kLinkKinds> lines;
    std::array<double, kLinkKinds> width{};

    void addPath(LinkKind kind, const QPolygonF &path, double w)
    {
        auto &out = lines[static_cast<std::size_t>(kind)];
        for (int i = 1; i < path.size(); ++i)
            out.append(QLineF(path[i - 1], path[i]));
        width[static_cast<std::size_t>(kind)] = std::max(width[static_cast<std::size_t>(kind)], w);
    }
    void draw(QPainter *painter, Detail detail)
    {
        for (int k = 0; k < kLinkKinds; ++k) {
            const auto &l = lines[static_cast<std::size_t>(k)];
            if (l.isEmpty())
                continue;
            painter->setPen(paint::linkPen(static_cast<LinkKind>(k),
                                           detail,
                                           width[static_cast<std::size_t>(k)]));
            painter->drawLines(l.constData(), static_cast<int>(l.size()));
            paintStats().linkLines += static_cast<int>(l.size());
        }
    }
};

// Segments batched per load step in the link-load view, idle links first so busy ones lie on
// top.
struct LoadBatch
{
    std::array<QVarLengthArray<QLineF, 128>, paint::kLoadSteps + 1> lines;
    std::array<double, paint::kLoadSteps + 1> width{};

    void addPath(double load, const QPolygonF &path, double w, bool reverse)
    {
        const auto s = static_cast<std::size_t>(paint::loadStep(load));
        if (reverse)
            for (int i = path.size() - 1; i > 0; --i)
                lines[s].append(QLineF(path[i], path[i - 1]));
        else
            for (int i = 1; i < path.size(); ++i)
                lines[s].append(QLineF(path[i - 1], path[i]));
        width[s] = std::max(width[s], w);
    }
    void addLine(double load, const QLineF &line, double w)
    {
        const auto s = static_cast<std::size_t>(paint::loadStep(load));
        lines[s].append(line);
        width[s] = std::max(width[s], w);
    }
    void draw(QPainter *painter, Detail detail, double dashPhase)
    {
        for (int s = 0; s <= paint::kLoadSteps; ++s) {
            const auto &l = lines[static_cast<std::size_t>(s)];
            if (l.isEmpty())
                continue;
            const double w = width[static_cast<std::size_t>(s)];
            painter->setPen(paint::loadPen(paint::stepLoad(s), detail, w));
            painter->drawLines(l.constData(), static_cast<int>(l.size()));
            paintStats().linkLines += static_cast<int>(l.size());
            if (s > 0 && dashPhase >= 0) {
                painter->setPen(paint::dashPen(paint::stepLoad(s), detail, w, dashPhase));
                painter->drawLines(l.constData(), static_cast<int>(l.size()));
            }
        }
    }
};

double linkWidth(const engine::Link &l)
{
    // Thicker for more bandwidth, so an 18-lane NVLink bundle outweighs a PCIe lane.
    return l.kind == LinkKind::NvLink ? 1.0 + 0.25 * l.lanes : 1.5;
}

QColor serverBlockColor()
{
    return style::deviceFill(DeviceKind::Gpu).lighter(165);
}

} // namespace

RackItem::RackItem(const ClusterGeometry &geometry, const CanvasState &state, int rack)
    : m_geometry(geometry)
    , m_state(state)
    , m_rack(rack)
    , m_bounds(geometry.rackPaintRect(rack))
{
    setZValue(0);
}

void RackItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const Detail detail = detailFor(lod);
    const ClusterGeometry &g = m_geometry;
    const engine::Topology &t = g.topology();
    const QRectF rack = g.rackRect(m_rack);
    const int first = g.firstNodeOfRack(m_rack);
    const int last = g.firstNodeOfRack(m_rack + 1);
    PaintStats &stats = paintStats();
    ++stats.racks;

    painter->setRenderHint(QPainter::Antialiasing, detail == Detail::Labels);
    if (detail == Detail::Racks) {
        // The rack as a block, its servers as stripes.
        painter->setPen(QPen(style::kRackBorder, 0));
        painter->setBrush(style::kRackFill);
        painter->drawRect(rack);
        const int gpn = t.shape().gpusPerNode;
        for (int n = first; n < last; ++n) {
            const QRectF node = g.nodeRect(n);
            if (!m_state.colouring() || gpn <= 0) {
                painter->fillRect(node, serverBlockColor());
                continue;
            }
            // Each GPU as a slice of its server, in its group's colour: the placement reads
            // from across the room. Neighbours of one colour (a TP group) are one slice.
            const double w = node.width() / gpn;
            for (int i = 0; i < gpn;) {
                const QColor fill = m_state.gpuFill(n * gpn + i);
                int j = i + 1;
                while (j < gpn && m_state.gpuFill(n * gpn + j) == fill)
                    ++j;
                painter->fillRect(QRectF(node.left() + i * w, node.top(), (j - i) * w, node.height()),
                                  fill);
                i = j;
            }
        }
        return; // named by LocationLabelsItem, above every rack
    }

    painter->setPen(QPen(style::kRackBorder, detail == Detail::Labels ? 2 : 0));
    painter->setBrush(style::kRackFill);
    if (detail == Detail::Labels)
        painter->drawRoundedRect(rack, 8, 8);
    else
        painter->drawRect(rack);
    const QString rackTitle = g.rackBus(m_rack)
                                      ? QStringLiteral("Rack %1 \u00b7 NVLink domain of %2 GPUs")
                                                .arg(m_rack)
                                                .arg(t.shape().domainSize)
                                      : QStringLiteral("Rack %1").arg(m_rack);
    if (const int units = paint::rackTitleUnits(lod)) {
        QFont f = painter->font();
        f.setPixelSize(units);
        f.setBold(true);
        painter->setFont(f);
        painter->setPen(style::kTextMuted);
        painter->drawText(QRectF(rack.left() + 12,
                                 rack.top() + 2,
                                 rack.width() - 24,
                                 ClusterGeometry::kTitleH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          rackTitle);
        ++stats.titles;
    }

    const bool tray = t.shape().nodesPerDomain > 1;
    const QString nodeWord = tray ? QStringLiteral("Tray %1") : QStringLiteral("Node %1");
    const QString nodeSuffix = QStringLiteral(" \u2014 %1 \u00d7 %2")
                                       .arg(t.shape().gpusPerNode)
                                       .arg(QString::fromStdString(t.gpuSpec().id));
    const int titleUnits = paint::nodeTitleUnits(lod);
    LineBatch batch;
    LoadBatch loadBatch;
    const bool loads = m_state.showLoads();
    for (int n = first; n < last; ++n) {
        const QRectF node = g.nodeRect(n);
        ++stats.servers;
        painter->setPen(QPen(style::kServerBorder, detail == Detail::Labels ? 1.2 : 0));
        painter->setBrush(style::kServerFill);
        if (detail == Detail::Labels)
            painter->drawRoundedRect(node, 6, 6);
        else
            painter->drawRect(node);
        if (titleUnits > 0) {
            QFont f = painter->font();
            f.setPixelSize(titleUnits);
            f.setBold(true);
            painter->setFont(f);
            painter->setPen(style::kTextDark);
            painter->drawText(QRectF(node.left() + 10,
                                     node.top() + 2,
                                     node.width() - 20,
                                     ClusterGeometry::kNodeTitleH),
                              Qt::AlignLeft | Qt::AlignVCenter,
                              nodeWord.arg(n) + nodeSuffix);
            ++stats.titles;
        }
        if (detail == Detail::Servers) {
            // Each row of devices as one band: the server's make-up without its detail.
            for (int id : g.nodeDevices(n)) {
                const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
                if (d.kind == DeviceKind::Gpu)
                    painter->fillRect(g.deviceRect(id).adjusted(-10, 0, 10, 0),
                                      m_state.gpuFill(d.index));
                else if (d.kind == DeviceKind::Nic || d.kind == DeviceKind::NvSwitch)
                    painter->fillRect(g.deviceRect(id).adjusted(-10, 0, 10, 0),
                                      style::deviceFill(d.kind));
            }
            continue;
        }
        for (int link : g.nodeLinks(n)) {
            const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
            if (loads)
                loadBatch.addPath(m_state.load(link),
                                  g.linkPath(link),
                                  linkWidth(l),
                                  m_state.dashes() && m_state.reversed(link));
            else
                batch.addPath(l.kind, g.linkPath(link), linkWidth(l));
        }
    }
    if (detail == Detail::Servers)
        return;

    // NVL72: every GPU drops onto the rack's NVLink bus; every NVSwitch chip hangs from it.
    const auto chips = g.rackSwitches(m_rack);
    if (const ClusterGeometry::RackBus *bus = g.rackBus(m_rack); bus && !chips.empty()) {
        auto &nv = batch.lines[static_cast<std::size_t>(LinkKind::NvLink)];
        constexpr double kBusWidth = 2.5;
        // In the link-load view a drop shows its busiest NVLink, the bus the rack's busiest.
        const auto deviceLoad = [&](int id) {
            double u = 0;
            for (int link : t.linksOf(id))
                if (t.links()[static_cast<std::size_t>(link)].kind == LinkKind::NvLink)
                    u = std::max(u, m_state.load(link));
            return u;
        };
        double busLoad = 0;
        const auto add = [&](int id, const QLineF &line) {
            if (!loads) {
                nv.append(line);
                return;
            }
            const double u = deviceLoad(id);
            busLoad = std::max(busLoad, u);
            loadBatch.addLine(u, line, kBusWidth);
        };
        double lo = bus->right, hi = bus->left;
        bool lower = false;
        for (int n = first; n < last; ++n) {
            const bool mirrored = g.isMirrored(n);
            lower = lower || mirrored;
            for (int id : g.nodeDevices(n)) {
                if (t.devices()[static_cast<std::size_t>(id)].kind != DeviceKind::Gpu)
                    continue;
                const QRectF r = g.deviceRect(id);
                const double x = r.center().x();
                add(id,
                    mirrored ? QLineF(x, r.top(), x, bus->lowerY)
                             : QLineF(x, r.bottom(), x, bus->upperY));
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
        }
        for (int id : chips) {
            const QRectF r = g.deviceRect(id);
            const double x = r.center().x();
            add(id, QLineF(x, r.top(), x, bus->upperY));
            if (lower)
                add(id, QLineF(x, r.bottom(), x, bus->lowerY));
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        const QLineF upperBus(lo, bus->upperY, hi, bus->upperY);
        const QLineF lowerBus(lo, bus->lowerY, hi, bus->lowerY);
        if (loads) {
            loadBatch.addLine(busLoad, upperBus, kBusWidth);
            if (lower)
                loadBatch.addLine(busLoad, lowerBus, kBusWidth);
        } else {
            nv.append(upperBus);
            if (lower)
                nv.append(lowerBus);
            batch.width[static_cast<std::size_t>(LinkKind::NvLink)] = kBusWidth;
        }
    }
    if (loads)
        loadBatch.draw(painter, detail, m_state.dashes() ? m_state.dashPhase : -1);
    batch.draw(painter, detail);

    const bool labels = detail == Detail::Labels;
    for (int n = first; n < last; ++n)
        for (int id : g.nodeDevices(n)) {
            const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
            const DeviceKind k = d.kind;
            if (k == DeviceKind::Gpu) {
                paint::drawGpu(painter,
                               g.deviceRect(id),
                               m_state.gpuFill(d.index),
                               labels ? paint::deviceLabel(t, id) : QString(),
                               labels ? m_state.gpuCaption(d.index) : QString(),
                               detail,
                               lod);
                ++stats.devices;
                continue;
            }
            paint::drawDevice(painter,
                              g.deviceRect(id),
                              k,
                              detail == Detail::Labels ? paint::deviceLabel(t, id) : QString(),
                              detail,
                              lod);
            ++stats.devices;
        }
    for (int id : chips) {
        paint::drawDevice(painter,
                          g.deviceRect(id),
                          DeviceKind::NvSwitch,
                          detail == Detail::Labels ? paint::deviceLabel(t, id) : QString(),
                          detail,
                          lod);
        ++stats.devices;
    }
    for (int n = first; n < last; ++n)
        paint::drawNvlinkLanes(painter, g, n, lod);
}

} // namespace railyard
