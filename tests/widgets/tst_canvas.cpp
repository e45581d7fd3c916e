// The canvas: geometry (every device placed, inside the scene, rails routed to their leaves),
// aggregate items, level of detail at given zooms, hit testing, selection, search, and offscreen
// renders that are not blank, hold the legend and keep the cluster inside the view. The legend
// and title block (widgets/render) fit their content at any width; the canvas says where the
// view is at every zoom (names on the hardware, the overview map); selected GPUs keep their hue.
#include "document/document.h"
#include "document/viewstate.h"
#include "items/fabricitem.h"
#include "items/gpumarksitem.h"
#include "items/lessonmarksitem.h"
#include "items/locationlabelsitem.h"
#include "items/ncclgraphitem.h"
#include "items/rackitem.h"
#include "items/selectionitem.h"
#include "panels/devicedescription.h"
#include "render/legend.h"
#include "render/overview.h"
#include "render/titleblock.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "scene/levelofdetail.h"
#include "scene/style.h"

#include "canvasfixture.h"
#include "testlayouts.h"
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QLocale>
#include <QPainter>
#include <QScreen>

#include <QTest>
#include <QToolTip>
#include <QWheelEvent>

#include "comparenear.h"
#include <map>

using namespace railyard;
using engine::DeviceKind;

namespace {

using test::openLayout;

// A view of `doc` at 1600 x 1000, fitted, as the benchmark and exports render it.
struct Canvas : test::Canvas
{
    explicit Canvas(Document *doc)
        : test::Canvas(doc, {.scrollBars = false, .viewState = false})
    {}
    QImage render()
    {
        paintStats() = {};
        return test::Canvas::render();
    }
};

// Every other pixel in each direction: the counts below are of that sample.
int countColour(const QImage &img, const QColor &colour, int tolerance = 12)
{
    return test::countColour(img, colour, tolerance, {}, 2);
}

// How far apart two hues are, in degrees (0-180).
int hueDistance(const QColor &a, const QColor &b)
{
    const int d = std::abs(a.hsvHue() - b.hsvHue()) % 360;
    return std::min(d, 360 - d);
}

// Where a scene point shows in the view's viewport.
QPoint onScreen(const Canvas &c, const QPointF &scenePos)
{
    return c.onScreen(scenePos);
}

} // namespace

class TestCanvas : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void singleServerFillsTheCanvas()
    {
        // One server in a rack that holds four: the canvas is as wide as the server, so the
        // fitted view shows it large rather than a sliver beside three empty slots.
        auto doc = openLayout("hgx-h100-server.railyard.json");
        QVERIFY(doc);
        const ClusterGeometry g(doc->topology());
        QVERIFY2(g.bounds().width() < 1.3 * g.rackRect(0).width(),
                 qPrintable(QString::number(g.bounds().width())));
    }

    void everyDeviceIsPlacedInsideTheScene_data()
    {
        QTest::addColumn<QString>("layout");
        for (const char *name : {"hgx-h100-server.railyard.json",
                                 "gmi-h200-cluster.railyard.json",
                                 "gb200-nvl72-rack.railyard.json",
                                 "gb200-nvl72-two-racks-ib.railyard.json",
                                 "dgx-h100-superpod-su.railyard.json"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void everyDeviceIsPlacedInsideTheScene()
    {
        QFETCH(QString, layout);
        auto doc = openLayout(qPrintable(layout));
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        const ClusterGeometry &g = scene.geometry();
        const engine::Topology &t = doc->topology();
        const QRectF bounds = scene.sceneRect();
        for (int id = 0; id < t.deviceCount(); ++id) {
            const QRectF r = g.deviceRect(id);
            QVERIFY2(!r.isEmpty(), qPrintable(QString::fromStdString(t.deviceName(id))));
            QVERIFY(bounds.contains(r));
            const engine::Device &d = t.devices()[static_cast<std::size_t>(id)];
            if (d.node >= 0)
                QVERIFY2(g.nodeRect(d.node).contains(r),
                         qPrintable(QString::fromStdString(t.deviceName(id))));
            // Hit testing finds each device at its centre.
            QCOMPARE(g.deviceAt(r.center()), id);
        }
        // GPUs of a server never overlap.
        for (int n = 0; n < g.nodeCount(); ++n)
            for (int a = 0; a < t.shape().gpusPerNode; ++a)
                for (int b = a + 1; b < t.shape().gpusPerNode; ++b) {
                    const int ga = t.gpuDevice(n * t.shape().gpusPerNode + a);
                    const int gb = t.gpuDevice(n * t.shape().gpusPerNode + b);
                    QVERIFY(!g.deviceRect(ga).intersects(g.deviceRect(gb)));
                }
        // Every item stays inside the scene rect the view fits.
        for (QGraphicsItem *item : scene.items())
            if (!item->boundingRect().isEmpty())
                QVERIFY(bounds.contains(item->sceneBoundingRect()));
    }

    void otherShapesArePlaced_data()
    {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::newRow("single switch")
                << QByteArray("\"rail-optimized\"") << QByteArray("\"single-switch\"");
        QTest::newRow("three tier")
                << QByteArray("\"nodes\": 16") << QByteArray("\"nodes\": 96, \"x\": 0");
        QTest::newRow("1,024 GPUs, bus mode")
                << QByteArray("\"nodes\": 16") << QByteArray("\"nodes\": 128");
        QTest::newRow("half a NIC per GPU")
                << QByteArray("\"per_gpu\": 1") << QByteArray("\"per_gpu\": 0.5");
        QTest::newRow("one server") << QByteArray("\"nodes\": 16") << QByteArray("\"nodes\": 1");
    }

    void otherShapesArePlaced()
    {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFile f(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/gmi-h200-cluster.railyard.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray json = f.readAll();
        QVERIFY(json.contains(from));
        json.replace(from, to);
        if (QTest::currentDataTag() == QByteArray("three tier"))
            json.replace("\"rail-optimized\"", "\"three-tier\"");
        json.replace("\"dp\": 4", "\"dp\": 1"); // sizes are not what this test is about
        QString error;
        auto doc = Document::fromText(json, QStringLiteral("shape"), &error);
        QVERIFY2(doc, qPrintable(error));
        Canvas c(doc.get());
        const ClusterGeometry &g = c.scene.geometry();
        const engine::Topology &t = doc->topology();
        for (int id = 0; id < t.deviceCount(); ++id) {
            const QRectF r = g.deviceRect(id);
            QVERIFY2(!r.isEmpty(), qPrintable(QString::fromStdString(t.deviceName(id))));
            QVERIFY(c.scene.sceneRect().contains(r));
        }
        for (int i = 0; i < t.linkCount(); ++i) {
            const engine::Link &l = t.links()[static_cast<std::size_t>(i)];
            const QPolygonF path = g.linkPath(i);
            QVERIFY(g.deviceRect(l.a).adjusted(-1, -1, 1, 1).contains(path.front()));
            QVERIFY(g.deviceRect(l.b).adjusted(-1, -1, 1, 1).contains(path.back()));
        }
        const QImage img = c.render();
        QVERIFY(paintStats().racks > 0);
        QVERIFY(img.pixelColor(20, img.height() - 20).lightness() > 200);
    }

    void linkRoutesJoinTheirEnds()
    {
        auto doc = openLayout("gb200-nvl72-two-racks-ib.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        const ClusterGeometry &g = scene.geometry();
        const engine::Topology &t = doc->topology();
        for (int i = 0; i < t.linkCount(); ++i) {
            const engine::Link &l = t.links()[static_cast<std::size_t>(i)];
            const QPolygonF path = g.linkPath(i);
            QVERIFY(path.size() >= 2);
            const auto near = [](const QRectF &r, const QPointF &p) {
                return r.adjusted(-1, -1, 1, 1).contains(p);
            };
            QVERIFY2(near(g.deviceRect(l.a), path.front()), qPrintable(QString::number(i)));
            QVERIFY2(near(g.deviceRect(l.b), path.back()), qPrintable(QString::number(i)));
            // Rails are orthogonal: NIC -> leaf routes run only horizontally or vertically.
            if (l.kind == engine::LinkKind::Ib
                && t.devices()[static_cast<std::size_t>(l.a)].kind == DeviceKind::Nic)
                for (int k = 1; k < path.size(); ++k)
                    QVERIFY(path[k].x() == path[k - 1].x() || path[k].y() == path[k - 1].y());
        }
    }

    void railsAreAlignedBands()
    {
        // NIC k of every server drops onto the lane of leaf k: the same lane for a whole rail.
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        const ClusterGeometry &g = scene.geometry();
        const engine::Topology &t = doc->topology();
        QCOMPARE(static_cast<int>(g.blocks().size()), 1);
        QCOMPARE(static_cast<int>(g.blocks().front().leaves.size()), 8);
        for (int nic = 0; nic < t.countOf(DeviceKind::Nic); ++nic) {
            const int dev = t.nicDevice(nic);
            const int rail = t.devices()[static_cast<std::size_t>(dev)].rail;
            const int leaf = t.leafDevice(t.leafOfNic(nic));
            QCOMPARE(g.laneOfLeaf(leaf), rail);
            // The lane is above the NIC, within the band above its rack row.
            QVERIFY(g.nicLaneY(dev) < g.deviceRect(dev).top());
            QVERIFY(g.nicLaneY(dev) > g.deviceRect(leaf).bottom());
        }
    }

    void itemsAreAggregates_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("racks");
        QTest::addColumn<int>("blocks");
        QTest::newRow("one server") << "hgx-h100-server.railyard.json" << 1 << 1;
        QTest::newRow("16 servers") << "gmi-h200-cluster.railyard.json" << 4 << 1;
        QTest::newRow("NVL72") << "gb200-nvl72-rack.railyard.json" << 1 << 1;
        QTest::newRow("two NVL72") << "gb200-nvl72-two-racks-ib.railyard.json" << 2 << 1;
        QTest::newRow("16k GPUs") << "llama3.1-405b-16k-h100.railyard.json" << 512 << 64;
    }

    void itemsAreAggregates()
    {
        QFETCH(QString, layout);
        QFETCH(int, racks);
        QFETCH(int, blocks);
        auto doc = openLayout(qPrintable(layout));
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        int rackItems = 0, blockItems = 0, spineItems = 0, labelItems = 0;
        for (QGraphicsItem *item : scene.items()) {
            rackItems += qgraphicsitem_cast<RackItem *>(item) != nullptr;
            blockItems += qgraphicsitem_cast<BlockFabricItem *>(item) != nullptr;
            spineItems += qgraphicsitem_cast<SpineFabricItem *>(item) != nullptr;
            labelItems += qgraphicsitem_cast<LocationLabelsItem *>(item) != nullptr;
        }
        QCOMPARE(rackItems, racks);
        QCOMPARE(blockItems, blocks);
        QCOMPARE(spineItems, 1);
        QCOMPARE(labelItems, 1);
        // One rack, block and spine item each, the names over them, plus a fixed set of overlays
        // (the selected device, the hovered group, the selected GPUs, the drop preview, the
        // hovered and selected link, the collective lesson's marks): far fewer than devices.
        int overlays = 0;
        for (QGraphicsItem *item : scene.items())
            overlays += qgraphicsitem_cast<SelectionItem *>(item) != nullptr
                        || qgraphicsitem_cast<GpuMarksItem *>(item) != nullptr
                        || qgraphicsitem_cast<LessonMarksItem *>(item) != nullptr
                        || qgraphicsitem_cast<NcclGraphItem *>(item) != nullptr;
        QCOMPARE(overlays, 7); // and the lesson's marks and the NCCL graph overlay
        QCOMPARE(scene.items().size(), racks + blocks + 1 + 1 + overlays);
        QVERIFY((scene.items().size() - overlays) * 50 < doc->topology().deviceCount() + 200);
    }

    void levelOfDetailFollowsZoom()
    {
        QCOMPARE(detailFor(0.01), Detail::Racks);
        QCOMPARE(detailFor(0.08), Detail::Servers);
        QCOMPARE(detailFor(0.3), Detail::Devices);
        QCOMPARE(detailFor(1.0), Detail::Labels);

        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        // Fitted, 16,384 GPUs are racks as blocks: no device drawn, no per-NIC line.
        QCOMPARE(detailFor(c.view.zoom()), Detail::Racks);
        c.render();
        QCOMPARE(paintStats().racks, 512);
        QCOMPARE(paintStats().devices, 0);
        QCOMPARE(paintStats().servers, 0);
        QVERIFY(paintStats().linkLines < 16384); // aggregated, one per server at most
        // Closer: servers, still no devices.
        c.view.setZoom(0.08);
        c.view.centerOn(c.scene.geometry().rackRect(100).center());
        c.render();
        QVERIFY(paintStats().servers > 0);
        QCOMPARE(paintStats().devices, 0);
        QVERIFY(paintStats().racks < 512); // culled to what is in view
        // Closer again: GPUs and their links, no labels yet.
        c.view.setZoom(0.3);
        c.render();
        QVERIFY(paintStats().devices > 0);
        QVERIFY(paintStats().linkLines > 0);
        QCOMPARE(paintStats().labels, 0);
        // Close: labels.
        c.view.setZoom(1.0);
        c.render();
        QVERIFY(paintStats().labels > 0);
    }

    void rendersAreNotBlankAndHoldTheLegend_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::newRow("16 servers") << "gmi-h200-cluster.railyard.json";
        QTest::newRow("NVL72") << "gb200-nvl72-rack.railyard.json";
        QTest::newRow("16k GPUs") << "llama3.1-405b-16k-h100.railyard.json";
    }

    void rendersAreNotBlankAndHoldTheLegend()
    {
        QFETCH(QString, layout);
        auto doc = openLayout(qPrintable(layout));
        QVERIFY(doc);
        Canvas c(doc.get());
        const QImage img = c.render();
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 3)
            for (int x = 0; x < img.width(); x += 3)
                colours.insert(img.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        // GPUs (green) and the network (InfiniBand, or Ethernet on the Llama 3 RoCE layout)
        // are both visible.
        QVERIFY(countColour(img, style::deviceFill(DeviceKind::Gpu).lighter(165), 20)
                        + countColour(img, style::deviceFill(DeviceKind::Gpu))
                > 50);
        QVERIFY(countColour(img, style::linkColor(engine::LinkKind::Ib), 30)
                        + countColour(img, style::linkColor(engine::LinkKind::Ethernet), 30)
                > 50);
        // The legend sits at the bottom left: near-white with the NVLink swatch in it.
        const QColor corner = img.pixelColor(20, img.height() - 20);
        QVERIFY(corner.lightness() > 200);
        const QImage legend = img.copy(0, img.height() - 70, 700, 70);
        QVERIFY(countColour(legend, style::linkColor(engine::LinkKind::NvLink), 20) > 10);
        // The whole cluster is inside the view, clear of the title block and the legend.
        const QRect onScreen = c.view.mapFromScene(c.scene.sceneRect()).boundingRect();
        QVERIFY2(c.view.viewport()->rect().adjusted(-1, -1, 1, 1).contains(onScreen),
                 qPrintable(QStringLiteral("%1,%2 %3x%4")
                                    .arg(onScreen.x())
                                    .arg(onScreen.y())
                                    .arg(onScreen.width())
                                    .arg(onScreen.height())));
        QVERIFY(onScreen.top() >= 60);
        QVERIFY(onScreen.bottom() <= img.height() - 55);
    }

    void clickSelectsAndTooltipsDescribe()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.view.setZoom(0.6);
        const int gpu = doc->topology().gpuDevice(13);
        c.view.centerOn(c.scene.geometry().deviceRect(gpu).center());
        const QPoint at = c.view.mapFromScene(c.scene.geometry().deviceRect(gpu).center());
        QTest::mouseClick(c.view.viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(c.scene.selectedDevice(), gpu);
        // A click on empty canvas clears the selection.
        QTest::mouseClick(c.view.viewport(), Qt::LeftButton, {}, QPoint(3, 3));
        QCOMPARE(c.scene.selectedDevice(), -1);

        const QString tip = deviceTooltip(doc->topology(), gpu);
        QVERIFY(tip.contains(QStringLiteral("GPU 13")));
        QVERIFY(tip.contains(QStringLiteral("H200")));
        QVERIFY(tip.contains(QStringLiteral("NVLink to NVSwitch \u00d7 4: 450 GB/s")));
        const int leaf = doc->topology().leafDevice(2);
        const QString leafTip = deviceTooltip(doc->topology(), leaf);
        QVERIFY(leafTip.contains(QStringLiteral("Rail 2")));
        QVERIFY(leafTip.contains(QStringLiteral("InfiniBand to NIC \u00d7 16")));
    }

    void hoverShowsATooltipAndKeysZoomAndPan()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.view.setZoom(0.6);
        const QRectF nic = c.scene.geometry().deviceRect(doc->topology().nicDevice(19));
        c.view.centerOn(nic.center());
        const QPoint at = c.view.mapFromScene(nic.center());
        QHelpEvent help(QEvent::ToolTip, at, c.view.viewport()->mapToGlobal(at));
        QApplication::sendEvent(c.view.viewport(), &help);
        QVERIFY2(QToolTip::text().contains(QStringLiteral("NIC 2.3")), qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("ConnectX-7")));
        QVERIFY(QToolTip::text().contains(QStringLiteral("InfiniBand to Leaf switch: 50 GB/s")));
        QToolTip::hideText();

        const double z = c.view.zoom();
        QTest::keyClick(c.view.viewport(), Qt::Key_Plus);
        QVERIFY(c.view.zoom() > z);
        QTest::keyClick(c.view.viewport(), Qt::Key_Minus);
        RAILYARD_COMPARE_ABS(c.view.zoom(), z, 1e-9);
        // Dragging the background pans.
        c.view.centerOn(c.scene.sceneRect().center());
        const QPointF before = c.view.mapToScene(c.view.viewport()->rect().center());
        QTest::mousePress(c.view.viewport(), Qt::LeftButton, {}, QPoint(800, 500));
        QMouseEvent move(QEvent::MouseMove,
                         QPointF(600, 400),
                         c.view.viewport()->mapToGlobal(QPointF(600, 400)),
                         Qt::NoButton,
                         Qt::LeftButton,
                         Qt::NoModifier);
        QApplication::sendEvent(c.view.viewport(), &move);
        QTest::mouseRelease(c.view.viewport(), Qt::LeftButton, {}, QPoint(600, 400));
        const QPointF after = c.view.mapToScene(c.view.viewport()->rect().center());
        QVERIFY2(after.x() > before.x() + 100, qPrintable(QString::number(after.x() - before.x())));
        QCOMPARE(c.scene.selectedDevice(), -1); // a pan is not a click
        QTest::keyClick(c.view.viewport(), Qt::Key_0);
        QCOMPARE(c.view.zoom(), c.view.fitZoom());
    }

    // Panning by dragging moves the cluster under the overlays, never the overlays: what the
    // window shows after a drag (its backing store, where a scroll moves pixels) is what a fresh
    // paint at the same scroll position draws, with the title block, the overview map and the
    // legend in their corners and no copies of them over the cluster.
    void panningRepaintsTheOverlays()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState state(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&state);
        ClusterView view(&scene);
        view.setFrameShape(QFrame::NoFrame);
        view.resize(1280, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setZoom(view.fitZoom() * 3);
        view.centerOn(scene.sceneRect().center());
        const auto flush = [] {
            for (int i = 0; i < 4; ++i)
                QCoreApplication::processEvents();
        };
        const auto shown = [&view] {
            return view.screen()
                    ->grabWindow(view.winId())
                    .toImage()
                    .copy(view.viewport()->geometry());
        };
        flush();
        QVERIFY(!view.overviewRect().isNull()); // zoomed in: the map shows where the view is
        QVERIFY(!view.titleBlockRect().isNull());
        QVERIFY(!view.legendRect().isNull());
        const QImage before = shown();
        QVERIFY(!before.isNull());

        // Press on the background (no device under it, no overlay), drag in small steps, each
        // painted before the next as the window does, and let go.
        QPoint from;
        const QRect free = view.viewport()->rect().adjusted(40, 200, -400, -200);
        for (int y = free.top(); y < free.bottom() && from.isNull(); y += 7)
            for (int x = free.left(); x < free.right() && from.isNull(); x += 7)
                if (scene.deviceAt(view.mapToScene(QPoint(x, y))) < 0
                    && !view.overviewRect().contains(QPoint(x, y)))
                    from = QPoint(x, y);
        QVERIFY(!from.isNull());
        const QPointF centre = view.mapToScene(view.viewport()->rect().center());
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, from);
        QPoint at = from;
        for (int i = 0; i < 12; ++i) {
            at += QPoint(9, 5);
            QMouseEvent move(QEvent::MouseMove,
                             QPointF(at),
                             view.viewport()->mapToGlobal(QPointF(at)),
                             Qt::NoButton,
                             Qt::LeftButton,
                             Qt::NoModifier);
            QApplication::sendEvent(view.viewport(), &move);
            flush();
        }
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, at);
        flush();
        const QPointF moved = view.mapToScene(view.viewport()->rect().center()) - centre;
        QVERIFY2(moved.x() < -50 && moved.y() < -20,
                 qPrintable(
                         QStringLiteral("the view moved by %1, %2").arg(moved.x()).arg(moved.y())));
        const QImage panned = shown();
        QVERIFY(panned != before);

        // The same scroll position painted from scratch.
        view.viewport()->update();
        flush();
        const QImage fresh = shown();
        int differ = 0;
        QRect where;
        for (int y = 0; y < fresh.height(); ++y)
            for (int x = 0; x < fresh.width(); ++x)
                if (panned.pixel(x, y) != fresh.pixel(x, y)) {
                    ++differ;
                    where |= QRect(x, y, 1, 1);
                }
        QVERIFY2(differ == 0,
                 qPrintable(QStringLiteral("%1 pixels differ from a fresh paint, in %2,%3 %4x%5")
                                    .arg(differ)
                                    .arg(where.x())
                                    .arg(where.y())
                                    .arg(where.width())
                                    .arg(where.height())));
    }

    // Zoomed in on the canvas a 1280x800 window leaves (about 680x560), the title block, the
    // legend and the overview map would cover a third of it: they fold to a title line, a
    // "Legend" tab and a smaller map. A click on the tab unfolds them, another folds them, and
    // fitting the cluster shows them whole again.
    void overlaysFoldWhenTheyWouldCrowdAZoomedCanvas()
    {
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        test::Canvas c(doc.get(), {.size = {680, 560}, .scrollBars = false});
        ClusterView &view = c.view;
        const double vp = 680.0 * 560.0;
        const auto share = [&] {
            double a = 0;
            for (const QRect &r : {view.titleBlockRect(), view.legendRect(), view.overviewRect()})
                a += double(r.width()) * r.height();
            return a / vp;
        };
        // Fitted: whole, beside the cluster (the fit leaves room for them).
        QVERIFY(!view.overlaysFolded());
        const QRect fullTitle = view.titleBlockRect();
        const QRect fullLegend = view.legendRect();
        QVERIFY(!fullLegend.isNull());
        // Zoomed in with the wheel.
        const QPointF at(340, 280);
        for (int i = 0; i < 5; ++i) {
            QWheelEvent wheel(at,
                              view.viewport()->mapToGlobal(at),
                              QPoint(),
                              QPoint(0, 120),
                              Qt::NoButton,
                              Qt::NoModifier,
                              Qt::NoScrollPhase,
                              false);
            QApplication::sendEvent(view.viewport(), &wheel);
        }
        QVERIFY(!view.overviewRect().isNull());
        QVERIFY(view.overlaysFolded());
        QVERIFY2(share() <= 0.1, qPrintable(QString::number(share())));
        QVERIFY(view.titleBlockRect().height() < fullTitle.height());
        QVERIFY(view.legendRect().height() < fullLegend.height());
        QVERIFY(view.legendRect().width() < 150);
        // The folded overlays are drawn where they say: the title's card at the top left.
        const QImage folded = c.render();
        QVERIFY(folded.pixelColor(view.titleBlockRect().center()).lightness() > 200);
        // A click on the Legend tab unfolds them; a click on the legend folds them again.
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, view.legendRect().center());
        QVERIFY(!view.overlaysFolded());
        QCOMPARE(view.legendRect().size(), fullLegend.size());
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, view.legendRect().center());
        QVERIFY(view.overlaysFolded());
        // Fitted again: whole.
        QTest::keyClick(view.viewport(), Qt::Key_0);
        QVERIFY(!view.overlaysFolded());
        QCOMPARE(view.titleBlockRect(), fullTitle);
        // On a large canvas, zoomed in, they take little room and stay whole.
        test::Canvas big(doc.get(), {.size = {2400, 1500}, .scrollBars = false});
        big.view.setZoom(big.view.fitZoom() * 2);
        QVERIFY(!big.view.overviewRect().isNull());
        QVERIFY(!big.view.overlaysFolded());
    }

    void searchCentresAndSelects_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("name");
        QTest::newRow("GPU 1234") << "GPU 1234"
                                  << "GPU 1234";
        QTest::newRow("gpu16000") << "gpu16000"
                                  << "GPU 16000";
        QTest::newRow("node 17") << "node 17"
                                 << "GPU 136";
        QTest::newRow("leaf 3") << "leaf 3"
                                << "leaf 3";
        QTest::newRow("spine 31") << "spine 31"
                                  << "spine 31";
    }

    void searchCentresAndSelects()
    {
        QFETCH(QString, query);
        QFETCH(QString, name);
        static std::unique_ptr<Document> doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        QVERIFY(c.view.search(query));
        const int device = c.scene.selectedDevice();
        QVERIFY(device >= 0);
        QCOMPARE(QString::fromStdString(doc->topology().deviceName(device)), name);
        const QPoint centre = c.view.viewport()->rect().center();
        const QRectF r = c.scene.geometry().deviceRect(device);
        const QPoint where = c.view.mapFromScene(r.center());
        // Centred (a server or rack query centres the server or rack, which holds it).
        QVERIFY(c.view.viewport()->rect().contains(where));
        QVERIFY2((where - centre).manhattanLength() < 700,
                 qPrintable(QStringLiteral("%1,%2").arg(where.x()).arg(where.y())));
        QVERIFY(detailFor(c.view.zoom()) >= Detail::Devices);
        QVERIFY(!c.view.search(QStringLiteral("GPU 999999")));
        QVERIFY(!c.view.search(QStringLiteral("banana")));
    }

    void zoomIsClampedAndWheelZooms()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const double fit = c.view.zoom();
        QCOMPARE(fit, c.view.fitZoom());
        c.view.setZoom(100);
        QCOMPARE(c.view.zoom(), c.view.maxZoom());
        c.view.setZoom(1e-6);
        QCOMPARE(c.view.zoom(), c.view.minZoom());
        c.view.fitToCluster();
        QWheelEvent wheel(QPointF(800, 500),
                          c.view.viewport()->mapToGlobal(QPointF(800, 500)),
                          QPoint(),
                          QPoint(0, 120),
                          Qt::NoButton,
                          Qt::NoModifier,
                          Qt::NoScrollPhase,
                          false);
        QApplication::sendEvent(c.view.viewport(), &wheel);
        QVERIFY(c.view.zoom() > fit * 1.1);
    }

    void sceneFollowsClusterEdits()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        scene.setSelectedDevice(5);
        engine::Layout l = doc->layout();
        l.cluster.nodes = 32;
        l.parallel.dp = 8;
        doc->setLayout(l);
        QCOMPARE(scene.selectedDevice(), -1); // device ids changed: nothing stays selected
        int racks = 0;
        for (QGraphicsItem *item : scene.items())
            racks += qgraphicsitem_cast<RackItem *>(item) != nullptr;
        QCOMPARE(racks, 8);
        QVERIFY(scene.sceneRect().contains(
                scene.geometry().deviceRect(doc->topology().gpuDevice(255))));
    }

    void legendAndTitleFitTheirContent_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("colourBy"); // -1: none, else a GroupKind
        QTest::addColumn<bool>("linkLoad");
        QTest::addColumn<int>("width");
        const char *big = "llama3.1-405b-16k-h100.railyard.json";
        for (int width : {1600, 700, 360}) {
            const QByteArray w = QByteArray::number(width);
            QTest::newRow("16k plain " + w) << big << -1 << false << width;
            QTest::newRow("16k TP " + w) << big << int(GroupKind::Tp) << false << width;
            QTest::newRow("16k CP " + w) << big << int(GroupKind::Cp) << false << width;
            QTest::newRow("16k EP " + w) << big << int(GroupKind::Ep) << false << width;
            QTest::newRow("16k PP " + w) << big << int(GroupKind::PpStage) << false << width;
            QTest::newRow("16k DP " + w) << big << int(GroupKind::DpReplica) << false << width;
            QTest::newRow("16k load " + w) << big << -1 << true << width;
            QTest::newRow("16k load + TP " + w) << big << int(GroupKind::Tp) << true << width;
            QTest::newRow("NVL72 TP " + w)
                    << "gb200-nvl72-rack.railyard.json" << int(GroupKind::Tp) << false << width;
            QTest::newRow("one server PP " + w)
                    << "hgx-h100-server.railyard.json" << int(GroupKind::PpStage) << false << width;
        }
    }

    void legendAndTitleFitTheirContent()
    {
        QFETCH(QString, layout);
        QFETCH(int, colourBy);
        QFETCH(bool, linkLoad);
        QFETCH(int, width);
        static std::map<QString, std::unique_ptr<Document>> docs;
        auto &doc = docs[layout];
        if (!doc)
            doc = openLayout(qPrintable(layout));
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        scene.setColourBy(colourBy < 0 ? std::nullopt
                                       : std::optional(static_cast<GroupKind>(colourBy)));
        scene.setLinkLoadVisible(linkLoad);
        const QFont font;
        const render::Legend legend(doc->topology(), scene.canvasState(), font, width);
        QVERIFY(!legend.isEmpty());
        QVERIFY2(legend.size().width() <= width,
                 qPrintable(QStringLiteral("%1 > %2").arg(legend.size().width()).arg(width)));
        const QRect box(QPoint(0, 0), legend.size());
        QStringList all;
        for (const render::PlacedText &t : legend.texts()) {
            all << t.text;
            QVERIFY2(box.contains(t.rect), qPrintable(t.text));
            QVERIFY2(render::fits(t), qPrintable(t.text));
        }
        // What it says: the headings, and for thousands of groups how many and the hues' cycle.
        QVERIFY(all.contains(linkLoad ? QStringLiteral("Link load") : QStringLiteral("Links")));
        QVERIFY(all.contains(QStringLiteral("Devices")));
        if (colourBy >= 0) {
            QVERIFY(all.contains(kindNoun(static_cast<GroupKind>(colourBy)) + QLatin1Char('s')));
            const int groups = scene.canvasState().groupCount;
            if (groups > 16 && colourBy != int(GroupKind::PpStage))
                QVERIFY2(all.join(QLatin1Char('|'))
                                 .contains(QStringLiteral("%1 in all; colours repeat every 12")
                                                   .arg(QLocale().toString(groups))),
                         qPrintable(all.join(QLatin1Char('|'))));
        }
        // Drawn, the box holds ink out to its right edge: nothing runs past it.
        QImage img(legend.size() + QSize(40, 40), QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            legend.paint(&p, QPoint(20, 20));
        }
        for (int y = 0; y < img.height(); ++y) {
            for (int x = 0; x < 19; ++x)
                QCOMPARE(img.pixel(x, y), qRgb(255, 255, 255));
            for (int x = legend.size().width() + 21; x < img.width(); ++x)
                QCOMPARE(img.pixel(x, y), qRgb(255, 255, 255));
        }

        const render::TitleBlock title(*doc, font, width);
        QVERIFY(title.size().width() <= width);
        QCOMPARE(title.texts().size(), std::size_t(3)); // title, cluster, job
        for (const render::PlacedText &t : title.texts()) {
            QVERIFY2(QRect(QPoint(), title.size()).contains(t.rect), qPrintable(t.text));
            QVERIFY2(render::fits(t), qPrintable(t.text));
        }
    }

    void narrowCanvasKeepsTheLegendWholeAndClearOfTheCluster()
    {
        // The canvas as the main window leaves it, between the docks.
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.scene.setColourBy(GroupKind::Tp);
        c.view.resize(700, 700);
        c.view.fitToCluster();
        const QRect legend = c.view.legendRect();
        const QRect title = c.view.titleBlockRect();
        const QRect vp = c.view.viewport()->rect();
        QVERIFY(vp.contains(legend));
        QVERIFY(vp.contains(title));
        const QRect cluster = c.view.mapFromScene(c.scene.sceneRect()).boundingRect();
        QVERIFY2(cluster.top() > title.bottom() && cluster.bottom() < legend.top(),
                 qPrintable(QStringLiteral("cluster %1-%2, title to %3, legend from %4")
                                    .arg(cluster.top())
                                    .arg(cluster.bottom())
                                    .arg(title.bottom())
                                    .arg(legend.top())));
        // The legend's note wrapped onto a line of its own, under the swatches: a taller box.
        const render::Legend wide(doc->topology(), c.scene.canvasState(), c.view.font(), 1576);
        QVERIFY(legend.height() > wide.size().height());
    }

    void locationIsShownAtEveryZoom_data()
    {
        QTest::addColumn<double>("zoom");
        for (double z : {0.03, 0.05, 0.08, 0.12, 0.15, 0.2, 0.3, 0.6, 1.0})
            QTest::newRow(qPrintable(QStringLiteral("%1%").arg(z * 100))) << z;
    }

    void locationIsShownAtEveryZoom()
    {
        QFETCH(double, zoom);
        static std::unique_ptr<Document> doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.scene.setColourBy(GroupKind::Tp);
        const ClusterGeometry &g = c.scene.geometry();
        // Node 884: 32 servers per scalable unit and 4 per rack, so SU 27, rack 221.
        QCOMPARE(g.blockOfNode(884), 27);
        QCOMPARE(g.rackOfNode(884), 221);
        c.view.setZoom(zoom);
        c.view.centerOn(g.nodeRect(884).center());
        const QImage img = c.render();
        // Names on the hardware at every zoom: scalable units, racks, servers or their titles.
        QVERIFY2(paintStats().titles > 0, qPrintable(QString::number(zoom)));
        const bool whole = zoom <= c.view.fitZoom();
        const QRect overview = c.view.overviewRect();
        QCOMPARE(overview.isNull(), whole);
        if (whole)
            return;
        QCOMPARE(c.view.locationText(), QStringLiteral("SU 27 \u00b7 Rack 221 \u00b7 Node 884"));
        QVERIFY(c.view.viewport()->rect().contains(overview));
        QVERIFY(!overview.intersects(c.view.legendRect()));
        // The map marks the part in view, in the selection blue, inside the map.
        QVERIFY2(countColour(img.copy(overview), style::kSelection, 30) > 2,
                 qPrintable(
                         QString::number(countColour(img.copy(overview), style::kSelection, 30))));
        // Between 5% and 20% zoom neither rack nor server titles can be read: plates name them.
        if (zoom >= 0.05 && zoom <= 0.2)
            QVERIFY(paintStats().titles >= 4);
    }

    void clickingTheOverviewMovesTheView()
    {
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const ClusterGeometry &g = c.scene.geometry();
        c.view.setZoom(0.15);
        c.view.centerOn(g.nodeRect(0).center());
        // Pushed against the corner, the view's centre is a little way in.
        QVERIFY2(c.view.locationText().startsWith(QStringLiteral("SU 1 ")),
                 qPrintable(c.view.locationText()));
        const QRect box = c.view.overviewRect();
        QVERIFY(!box.isNull());
        const render::Overview map(g,
                                   c.view.mapToScene(c.view.viewport()->rect()).boundingRect(),
                                   c.view.locationText(),
                                   c.view.font());
        QCOMPARE(map.size(), box.size());
        // Where SU 27, in the middle of the cluster, is on the map.
        const QRectF su = g.blocks()[27].rect;
        QVERIFY(map.visibleOnMap().isValid());
        const QRect mr = map.mapRect();
        const QRectF bounds = g.bounds();
        const QPointF
                onMap(mr.left() + (su.center().x() - bounds.left()) / bounds.width() * mr.width(),
                      mr.top() + (su.center().y() - bounds.top()) / bounds.height() * mr.height());
        const QPoint at = box.topLeft() + onMap.toPoint();
        QTest::mouseClick(c.view.viewport(), Qt::LeftButton, {}, at);
        QVERIFY2(c.view.locationText().startsWith(QStringLiteral("SU 27 ")),
                 qPrintable(c.view.locationText()));
        QCOMPARE(c.view.zoom(), 0.15);
        QCOMPARE(c.scene.selectedDevice(), -1); // a click on the map selects nothing
    }

    void selectedGpusKeepTheirHue()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.scene.setColourBy(GroupKind::Tp);
        c.view.setZoom(0.6);
        const engine::Topology &t = doc->topology();
        const ClusterGeometry &g = c.scene.geometry();
        // GPU 9 runs in TP group 1: orange.
        const QRectF gpu = g.deviceRect(t.gpuDevice(9));
        c.view.centerOn(gpu.center());
        const QColor orange = c.scene.canvasState().gpuFill(9);
        QCOMPARE(orange, style::groupColor(1, 16, false));
        // A point of the GPU's fill, clear of its border and its text.
        const QPoint fillAt = onScreen(c,
                                       QPointF(gpu.left() + 0.12 * gpu.width(), gpu.center().y()));
        const QRect around = QRect(onScreen(c, gpu.topLeft()), onScreen(c, gpu.bottomRight()))
                                     .adjusted(-14, -14, 14, 14);
        const QImage before = c.render();
        const QColor plain = before.pixelColor(fillAt);
        QVERIFY2(hueDistance(plain, orange) <= 2, qPrintable(plain.name()));
        c.scene.setSelectedGpus({8, 9, 10, 11, 12, 13, 14, 15});
        const QImage after = c.render();
        const QColor selected = after.pixelColor(fillAt);
        QVERIFY2(hueDistance(selected, orange) <= 3,
                 qPrintable(selected.name() + QStringLiteral(" vs ") + orange.name()));
        RAILYARD_COMPARE_ABS(selected.value(), orange.value(), 12);
        RAILYARD_COMPARE_ABS(selected.hsvSaturation(), orange.hsvSaturation(), 12);
        // And the selection shows: a ring in the selection blue around the GPU.
        const int ringBefore = countColour(before.copy(around), style::kSelection, 30);
        const int ringAfter = countColour(after.copy(around), style::kSelection, 30);
        QVERIFY2(ringAfter > ringBefore + 20,
                 qPrintable(QStringLiteral("%1 -> %2").arg(ringBefore).arg(ringAfter)));

        // Fitted, where a GPU is a few pixels, the selection still shows.
        c.view.fitToCluster();
        c.scene.setSelectedGpus({});
        const int blueBefore = countColour(c.render(), style::kSelection, 20);
        c.scene.setSelectedGpus({8, 9, 10, 11, 12, 13, 14, 15});
        QVERIFY(countColour(c.render(), style::kSelection, 20) > blueBefore + 10);
    }
};

QTEST_MAIN(TestCanvas)
#include "tst_canvas.moc"
