#include "clusterview.h"

#include "clustergeometry.h"
#include "clusterscene.h"
#include "document/document.h"
#include "panels/devicedescription.h"
#include "style.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>
#include <set>

namespace railyard {

using engine::DeviceKind;

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
    connect(scene, &ClusterScene::rebuilt, this, [this] {
        if (m_autoFit)
            fitToCluster();
    });
}

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
    const QRect v = viewport()->rect().adjusted(8, m_legend ? 70 : 8, -8, m_legend ? -62 : -8);
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

void ClusterView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomIn(); return;
    case Qt::Key_Minus: zoomOut(); return;
    case Qt::Key_0:
    case Qt::Key_Home: fitToCluster(); return;
    case Qt::Key_Escape: clusterScene()->setSelectedDevice(-1); return;
    default: break;
    }
    QGraphicsView::keyPressEvent(event);
}

void ClusterView::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = event->position().toPoint();
    QGraphicsView::mousePressEvent(event);
}

void ClusterView::mouseReleaseEvent(QMouseEvent *event)
{
    QGraphicsView::mouseReleaseEvent(event);
    // A click, not the end of a pan: select what is under it (or nothing).
    if (event->button() == Qt::LeftButton
        && (event->position().toPoint() - m_pressPos).manhattanLength() <= 4)
        clusterScene()->setSelectedDevice(
                clusterScene()->deviceAt(mapToScene(event->position().toPoint())));
}

bool ClusterView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int device = clusterScene()->deviceAt(mapToScene(help->pos()));
        if (device >= 0)
            QToolTip::showText(help->globalPos(),
                               deviceTooltip(clusterScene()->document()->topology(), device),
                               viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

void ClusterView::setLegendVisible(bool visible)
{
    m_legend = visible;
    viewport()->update();
}

void ClusterView::drawForeground(QPainter *painter, const QRectF &)
{
    if (!m_legend)
        return;
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing, true);
    drawLegend(painter);
    drawTitleBlock(painter);
    painter->restore();
}

void ClusterView::drawLegend(QPainter *painter)
{
    // One strip along the bottom: a row of link kinds, a row of device kinds.
    const engine::Topology &t = clusterScene()->document()->topology();
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
    const QFontMetrics fm(f);
    const QFontMetrics fmb(bold);
    const int rowH = 20;
    const int headW = std::max(fmb.horizontalAdvance(tr("Links")),
                               fmb.horizontalAdvance(tr("Devices")))
                      + 12;
    int linksW = 0, devicesW = 0;
    for (auto k : kinds)
        linksW += 42 + fm.horizontalAdvance(style::linkKindName(k)) + 16;
    for (auto k : devices)
        devicesW += 28 + fm.horizontalAdvance(style::deviceKindName(k)) + 16;
    const QRect box(12,
                    viewport()->height() - 12 - 2 * rowH - 12,
                    20 + headW + std::max(linksW, devicesW),
                    2 * rowH + 12);
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
    header(tr("Links"));
    int x = box.left() + 10 + headW;
    for (auto k : kinds) {
        QPen pen(style::linkColor(k), 3, style::linkPenStyle(k));
        pen.setCapStyle(Qt::FlatCap);
        painter->setPen(pen);
        painter->drawLine(x, y + rowH / 2, x + 34, y + rowH / 2);
        painter->setPen(style::kTextDark);
        const int w = fm.horizontalAdvance(style::linkKindName(k));
        painter->drawText(QRect(x + 42, y, w + 4, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          style::linkKindName(k));
        x += 42 + w + 16;
    }
    y += rowH;
    header(tr("Devices"));
    x = box.left() + 10 + headW;
    for (auto k : devices) {
        const QColor fill = style::deviceFill(k);
        painter->setPen(QPen(fill.darker(135), 1));
        painter->setBrush(fill);
        painter->drawRoundedRect(QRectF(x, y + 4, 20, rowH - 8), 3, 3);
        painter->setPen(style::kTextDark);
        const int w = fm.horizontalAdvance(style::deviceKindName(k));
        painter->drawText(QRect(x + 28, y, w + 4, rowH),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          style::deviceKindName(k));
        x += 28 + w + 16;
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
    const QString unit = s.nodesPerDomain > 1 ? tr("trays") : tr("servers");
    QString line = tr("%1 \u00d7 %2 %3 of %4 GPUs \u00b7 %5 GPUs")
                           .arg(s.nodes)
                           .arg(unit)
                           .arg(s.gpusPerNode)
                           .arg(QString::fromStdString(t.gpuSpec().id))
                           .arg(QLocale().toString(t.gpuCount()));
    if (s.hasFabric)
        line += tr(" \u00b7 %1 leaves, %2 spines").arg(s.leaves).arg(s.spines);
    QFont f = font();
    f.setPixelSize(15);
    f.setBold(true);
    QFont small = font();
    small.setPixelSize(12);
    const int w = std::max(QFontMetrics(f).horizontalAdvance(title),
                           QFontMetrics(small).horizontalAdvance(line))
                  + 24;
    const QRect box(12, 12, w, 50);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(box, 6, 6);
    painter->setPen(style::kTextDark);
    painter->setFont(f);
    painter->drawText(box.adjusted(12, 6, -12, -24), Qt::AlignLeft | Qt::AlignVCenter, title);
    painter->setFont(small);
    painter->setPen(style::kTextMuted);
    painter->drawText(box.adjusted(12, 26, -12, -6), Qt::AlignLeft | Qt::AlignVCenter, line);
}

} // namespace railyard
