#include "diagramrenderer.h"

#include "document/document.h"
#include "items/paintutil.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/style.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace railyard::render {

namespace {

constexpr int kMargin = 24; // around the page's content
constexpr int kGap = 16;    // between the title block, the diagram and the legend
// A page narrower than this would wrap the title block and the legend into tall columns.
constexpr int kMinContentWidth = 560;
// The title block and the legend are laid out for a page about this wide and scaled up with a
// wider one: a large cluster's page is shrunk to fit a document, and its title and legend must
// stay as readable as the diagram's own labels.
constexpr double kOverlayReferenceWidth = 1400;

QRect scaled(const QPoint &topLeft, const QSize &size, double k)
{
    return QRect(topLeft,
                 QSize(int(std::ceil(size.width() * k)), int(std::ceil(size.height() * k))));
}

} // namespace

double estimatedElements(const ClusterScene &scene, const QRectF &source, Detail detail)
{
    const ClusterGeometry &g = scene.geometry();
    const engine::Topology &t = g.topology();
    const double devices = t.deviceCount(), links = double(t.links().size());
    double n = 0;
    switch (detail) {
    case Detail::Labels: n = 2 * devices + links; break;
    case Detail::Devices: n = devices + links; break;
    case Detail::Servers: n = devices + g.nodeCount() + g.rackCount(); break;
    case Detail::Racks: n = 2.0 * g.nodeCount() + g.rackCount() + double(g.blocks().size()); break;
    }
    // A part of the cluster: its share of the area.
    const QRectF whole = g.bounds();
    if (!source.isNull() && whole.width() > 0 && whole.height() > 0) {
        const QRectF part = source.intersected(whole);
        n *= std::clamp(part.width() * part.height() / (whole.width() * whole.height()), 0.0, 1.0);
    }
    return n;
}

Detail finestDetailWithin(const ClusterScene &scene, const QRectF &source, int maxElements)
{
    if (maxElements <= 0)
        return Detail::Labels;
    Detail finest = Detail::Labels;
    for (Detail d : {Detail::Labels, Detail::Devices, Detail::Servers, Detail::Racks}) {
        finest = d;
        if (estimatedElements(scene, source, d) <= maxElements)
            break;
    }
    return finest;
}

DiagramRenderer::DiagramRenderer(ClusterScene &scene,
                                 const QFont &font,
                                 const DiagramOptions &options)
    : m_scene(scene)
{
    // The whole cluster: what the items cover, with a small margin (the scene rect keeps room
    // for a fabric that a single server does not have).
    const QRectF drawn = scene.itemsBoundingRect().adjusted(-kGap, -kGap, kGap, kGap);
    m_source = options.source.isNull() ? drawn.intersected(scene.sceneRect())
                                       : options.source.intersected(scene.sceneRect());
    if (m_source.isEmpty())
        m_source = scene.sceneRect();
    m_finest = finestDetailWithin(scene,
                                  options.source.isNull() ? QRectF() : m_source,
                                  options.maxElements);
    const QSize diagram(std::max(1, int(std::ceil(m_source.width()))),
                        std::max(1, int(std::ceil(m_source.height()))));
    const int contentW = std::max(diagram.width(), kMinContentWidth);
    m_overlayScale = std::max(1.0, contentW / kOverlayReferenceWidth);
    const int overlayW = int(contentW / m_overlayScale);
    // The margins and gaps grow with the title block and the legend: a wide page is shown
    // shrunk, and the names and links the scene draws at its edges (in device pixels, whatever
    // the scale) must keep clear of the title block above and the legend below.
    const int margin = int(std::ceil(kMargin * m_overlayScale));
    const int gap = int(std::ceil(kGap * m_overlayScale));
    int y = margin;
    if (options.titleBlock) {
        m_title = std::make_unique<TitleBlock>(*scene.document(), font, overlayW, options.footer);
        m_titleRect = scaled(QPoint(margin, y), m_title->size(), m_overlayScale);
        y += m_titleRect.height() + gap;
    }
    // The diagram is centred in the content width when the page is wider than the cluster.
    m_diagram = QRect(QPoint(margin + (contentW - diagram.width()) / 2, y), diagram);
    y += diagram.height();
    if (options.legend) {
        m_legend = std::make_unique<Legend>(scene.document()->topology(),
                                            scene.canvasState(),
                                            font,
                                            overlayW);
        if (m_legend->isEmpty()) {
            m_legend.reset();
        } else {
            y += gap;
            m_legendRect = scaled(QPoint(margin, y), m_legend->size(), m_overlayScale);
            y += m_legendRect.height();
        }
    }
    m_size = QSize(contentW + 2 * margin, y + margin);
}

DiagramRenderer::~DiagramRenderer() = default;

void DiagramRenderer::paint(QPainter *painter, const QRectF &target) const
{
    if (m_size.isEmpty() || target.isEmpty())
        return;
    const double s = std::min(target.width() / m_size.width(), target.height() / m_size.height());
    painter->save();
    painter->translate(target.center() - QPointF(m_size.width() * s / 2, m_size.height() * s / 2));
    painter->scale(s, s);
    paint(painter);
    painter->restore();
}

void DiagramRenderer::paint(QPainter *painter) const
{
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setRenderHint(QPainter::TextAntialiasing, true);
    painter->setRenderHint(QPainter::SmoothPixmapTransform, true);
    painter->fillRect(QRect(QPoint(0, 0), m_size), Qt::white);
    painter->fillRect(m_diagram, style::kCanvasBackground);
    // The scene's items choose their detail from the painter's transform, as in the view, up to
    // the finest level the element bound allows.
    {
        const DetailCap cap(m_finest);
        m_scene.render(painter, QRectF(m_diagram), m_source, Qt::KeepAspectRatio);
    }
    if (m_finest < Detail::Devices)
        paintRackRanges(painter);
    painter->save();
    painter->translate(m_titleRect.topLeft());
    painter->scale(m_overlayScale, m_overlayScale);
    if (m_title)
        m_title->paint(painter, QPoint(0, 0));
    painter->restore();
    if (m_legend) {
        painter->translate(m_legendRect.topLeft());
        painter->scale(m_overlayScale, m_overlayScale);
        m_legend->paint(painter, QPoint(0, 0));
    }
    painter->restore();
}

void DiagramRenderer::paintRackRanges(QPainter *painter) const
{
    const ClusterGeometry &g = m_scene.geometry();
    if (g.blocks().size() < 2)
        return;
    painter->save();
    // The scene's transform in QGraphicsScene::render (KeepAspectRatio, centred).
    const QRectF target(m_diagram);
    const double s = std::min(target.width() / m_source.width(),
                              target.height() / m_source.height());
    painter->translate(target.center());
    painter->scale(s, s);
    painter->translate(-m_source.center());
    painter->setClipRect(m_source, Qt::IntersectClip);
    const double pixels = painter->worldTransform().m11(); // device pixels per scene unit
    paint::Plates::Cache cache;
    paint::Plates plates(painter, &cache);
    QFont bold = painter->font();
    bold.setBold(true);
    for (const ClusterGeometry::Block &b : g.blocks()) {
        // Where the scalable unit's own name is drawn (LocationLabelsItem: 50 pixels wide), its
        // racks go under it, at 9 pixels or 8; not when the plate would be wider than the block.
        if (b.rackCount < 1 || b.rect.width() * pixels < 50 || !b.rect.intersects(m_source))
            continue;
        const QString racks = b.rackCount == 1 ? QStringLiteral("rack %1").arg(b.firstRack)
                                               : QStringLiteral("racks %1\u2013%2")
                                                         .arg(b.firstRack)
                                                         .arg(b.firstRack + b.rackCount - 1);
        // A unit too narrow for "racks 240-247" (a page-wide figure of 64 units: 62 pixels
        // each) gets the range alone, "240-247", under its name.
        const QString range = b.rackCount == 1 ? QString::number(b.firstRack)
                                               : QStringLiteral("%1\u2013%2")
                                                         .arg(b.firstRack)
                                                         .arg(b.firstRack + b.rackCount - 1);
        int px = 0;
        QString text;
        for (const QString &t : {racks, range}) {
            for (int size : {9, 8}) {
                bold.setPixelSize(size);
                // The plate is the text plus 10 pixels (paint::Plates).
                if (QFontMetricsF(bold).horizontalAdvance(t) + 10 <= b.rect.width() * pixels) {
                    px = size;
                    text = t;
                    break;
                }
            }
            if (px > 0)
                break;
        }
        if (px == 0)
            continue;
        plates.draw(b.rect.center(),
                    text,
                    px,
                    Qt::AlignHCenter | Qt::AlignTop,
                    paint::Plates::Style::Light,
                    QPointF(0, px + 1));
    }
    painter->restore();
}

} // namespace railyard::render
