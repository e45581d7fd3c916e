// Explicit servers (layout format 2) on the canvas: an imported HGX H100 draws its own PCIe
// switches, CPUs and NICs (not the generated shape), a direct mesh's NVLink bundles are drawn
// apart and labelled NV#, and the Cluster panel does not offer edits the server contradicts.
#include "commands/changecluster.h"
#include "document/document.h"
#include "import/importer.h"
#include "items/nvlinklabels.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "panels/clusterform.h"
#include "panels/clusterpanel.h"
#include "panels/newclusterdialog.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "scene/style.h"

#include "canvasfixture.h"

#include <QFile>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>
#include <QUndoStack>

#include <map>

using namespace railyard;
using engine::DeviceKind;

namespace {

// A layout imported from one of tests/data/import/ (engine import, as File > Import does).
std::unique_ptr<Document> imported(const char *file)
{
    const auto m = engine::importFile(std::string(RAILYARD_TEST_DATA "/import/") + file);
    QString error;
    auto doc = Document::create(engine::layoutFromImport(m, engine::Catalog::builtin()), &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

std::unique_ptr<Document> shipped(const char *name)
{
    QString error;
    auto doc = Document::load(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name),
                              &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

// Server 0 rendered at twice the scene scale (label detail).
QImage renderNode(ClusterScene &scene, QTransform *sceneToImage)
{
    const QRectF r = scene.geometry().nodeRect(0);
    QImage img((r.size() * 2).toSize(), QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    scene.render(&p, QRectF(img.rect()), r);
    *sceneToImage = QTransform::fromScale(2, 2)
                    * QTransform::fromTranslate(-2 * r.left(), -2 * r.top());
    return img;
}

bool near(const QColor &a, const QColor &b, int tolerance = 8)
{
    return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green())
                   + std::abs(a.blue() - b.blue())
           <= tolerance;
}

std::map<DeviceKind, int> kindsInNode(const ClusterGeometry &g, int node)
{
    std::map<DeviceKind, int> out;
    for (int id : g.nodeDevices(node))
        ++out[g.topology().devices()[static_cast<std::size_t>(id)].kind];
    return out;
}

} // namespace

class TestExplicitCanvas : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // sglang #30401's HGX H100: a PCIe switch per GPU and NIC pair, 2 CPUs, 8 NICs, as the
    // file shows them; each is placed inside server 0 and painted in its kind's colour where
    // it sits, and the picture is not the generated HGX H100's.
    void importedHgxDrawsItsOwnDevices()
    {
        auto doc = imported("topo-m/hgx-h100-8gpu-8nic-sglang30401.txt");
        QVERIFY(doc);
        QVERIFY(doc->layout().cluster.server.has_value());
        ClusterScene scene(doc.get());
        const ClusterGeometry &g = scene.geometry();
        const auto kinds = kindsInNode(g, 0);
        QCOMPARE(kinds.at(DeviceKind::Gpu), 8);
        QCOMPARE(kinds.at(DeviceKind::Nic), 8);
        QCOMPARE(kinds.at(DeviceKind::PcieSwitch), 8);
        QCOMPARE(kinds.at(DeviceKind::Cpu), 2);

        QTransform toImage;
        const QImage img = renderNode(scene, &toImage);
        const QRectF node = g.nodeRect(0);
        int checked = 0;
        for (int id : g.nodeDevices(0)) {
            const DeviceKind k = g.topology().devices()[static_cast<std::size_t>(id)].kind;
            if (k != DeviceKind::PcieSwitch && k != DeviceKind::Cpu && k != DeviceKind::Nic)
                continue;
            const QRectF r = g.deviceRect(id);
            QVERIFY2(node.contains(r),
                     qPrintable(QString::fromStdString(g.topology().deviceName(id))));
            // Just inside the left edge, away from the centred label.
            const QPoint at = toImage.map(QPointF(r.left() + 4, r.center().y())).toPoint();
            QVERIFY2(near(img.pixelColor(at), style::deviceFill(k)),
                     qPrintable(QString::fromStdString(g.topology().deviceName(id)) + " is "
                                + img.pixelColor(at).name()));
            ++checked;
        }
        QCOMPARE(checked, 18);
        // No two devices of the server overlap.
        const auto ids = g.nodeDevices(0);
        for (std::size_t i = 0; i < ids.size(); ++i)
            for (std::size_t j = i + 1; j < ids.size(); ++j)
                QVERIFY(!g.deviceRect(ids[i]).intersects(g.deviceRect(ids[j])));

        // The generated HGX H100 has a PCIe switch per two GPUs: another picture.
        auto generated = shipped("hgx-h100-server.railyard.json");
        QVERIFY(generated);
        QVERIFY(!generated->layout().cluster.server);
        ClusterScene plain(generated.get());
        QVERIFY(kindsInNode(plain.geometry(), 0).at(DeviceKind::PcieSwitch) != 8);
        QTransform t2;
        const QImage other = renderNode(plain, &t2);
        QVERIFY(other.size() != img.size() || other != img);
        // The imported PCIe switches are other boxes than the generated ones.
        std::vector<QRectF> generatedSwitches;
        for (int id : plain.geometry().nodeDevices(0))
            if (plain.geometry().topology().devices()[static_cast<std::size_t>(id)].kind
                == DeviceKind::PcieSwitch)
                generatedSwitches.push_back(plain.geometry().deviceRect(id));
        int differs = 0;
        for (int id : g.nodeDevices(0))
            if (g.topology().devices()[static_cast<std::size_t>(id)].kind == DeviceKind::PcieSwitch)
                differs += std::find(generatedSwitches.begin(),
                                     generatedSwitches.end(),
                                     g.deviceRect(id))
                           == generatedSwitches.end();
        QCOMPARE(differs, 8);
    }

    // An imported server opened in the window (fitted, as it opens, at 1280x800 and 1600x1000
    // less the docks) names its PCIe switches: a box too narrow for "PCIe switch 3" takes a
    // shorter name, never none (the imported switches sat one over each GPU, unnamed, beside
    // named NICs).
    void importedPcieSwitchesAreLabelled_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QSize>("viewport");
        for (const char *file :
             {"nccl-topo-xml/azure-ndv5-topo.xml", "topo-m/hgx-h100-8gpu-8nic-sglang30401.txt"})
            for (const QSize size : {QSize(680, 560), QSize(860, 740)})
                QTest::addRow("%s %dx%d", file, size.width(), size.height())
                        << QString::fromLatin1(file) << size;
    }

    void importedPcieSwitchesAreLabelled()
    {
        QFETCH(QString, file);
        QFETCH(QSize, viewport);
        auto doc = imported(file.toLatin1().constData());
        QVERIFY(doc);
        test::Canvas c(doc.get(), {.size = viewport, .scrollBars = false});
        const QImage img = c.render();
        const ClusterGeometry &g = c.scene.geometry();
        int switches = 0;
        for (int id : g.nodeDevices(0)) {
            if (g.topology().devices()[static_cast<std::size_t>(id)].kind != DeviceKind::PcieSwitch)
                continue;
            ++switches;
            // Text inside the box, away from its border: pixels much darker than the box.
            const QRect box
                    = c.view.mapFromScene(g.deviceRect(id)).boundingRect().adjusted(3, 3, -3, -3);
            const int fill = style::deviceFill(DeviceKind::PcieSwitch).lightness();
            int ink = 0;
            for (int y = box.top(); y <= box.bottom(); ++y)
                for (int x = box.left(); x <= box.right(); ++x)
                    ink += img.valid(x, y) && img.pixelColor(x, y).lightness() < fill - 80;
            QVERIFY2(ink >= 6,
                     qPrintable(QStringLiteral("%1 (%2x%3 px) has no label")
                                        .arg(QString::fromStdString(g.topology().deviceName(id)))
                                        .arg(box.width() + 6)
                                        .arg(box.height() + 6)));
        }
        QVERIFY(switches >= 4);
    }

    // The V100 hybrid cube mesh: 16 bundles, each an arc that overlaps no other at its depth,
    // leaving each GPU at its own point; each labelled NV1 or NV2 when zoomed in to labels.
    void directMeshArcsAndLabels()
    {
        auto doc = imported("topo-m/v100-8gpu-hybridcube-legacy-mlx5col-paddlefleetx.txt");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        const ClusterGeometry &g = scene.geometry();
        const engine::Topology &t = doc->topology();
        QVERIFY(t.shape().directNvlink);
        struct Arc
        {
            double y, lo, hi;
        };
        std::vector<Arc> arcs;
        std::map<std::pair<int, long>, int> leaving; // (GPU, x) -> arcs leaving there
        for (int link : g.nodeLinks(0)) {
            const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
            if (l.kind != engine::LinkKind::NvLink)
                continue;
            const QPolygonF p = g.linkPath(link);
            QCOMPARE(p.size(), 4);
            QVERIFY(p[1].y() > g.deviceRect(l.a).bottom());
            QCOMPARE(p[1].y(), p[2].y());
            arcs.push_back({p[1].y(), std::min(p[1].x(), p[2].x()), std::max(p[1].x(), p[2].x())});
            ++leaving[{l.a, std::lround(p[0].x())}];
            ++leaving[{l.b, std::lround(p[3].x())}];
        }
        QCOMPARE(arcs.size(), std::size_t(16));
        for (const auto &[where, n] : leaving)
            QCOMPARE(n, 1);
        for (std::size_t i = 0; i < arcs.size(); ++i)
            for (std::size_t j = i + 1; j < arcs.size(); ++j)
                if (std::abs(arcs[i].y - arcs[j].y) < 1)
                    QVERIFY(arcs[i].hi < arcs[j].lo || arcs[j].hi < arcs[i].lo);
        // Every arc stays inside its server.
        for (const Arc &a : arcs)
            QVERIFY(a.y < g.nodeRect(0).bottom());

        QImage img(64, 64, QImage::Format_RGB32);
        QPainter p(&img);
        QCOMPARE(paint::drawNvlinkLanes(&p, g, 0, 1.0), 16);
        QCOMPARE(paint::drawNvlinkLanes(&p, g, 0, 0.2), 0); // too far out to read

        // A switched board: one label per GPU, its lanes into the NVSwitches (NV18 on H100).
        auto hgx = imported("topo-m/hgx-h100-8gpu-8nic-sglang30401.txt");
        ClusterScene s2(hgx.get());
        QCOMPARE(paint::drawNvlinkLanes(&p, s2.geometry(), 0, 1.0), 8);
        // The generated shape has no explicit server: no labels.
        auto generated = shipped("hgx-h100-server.railyard.json");
        ClusterScene s3(generated.get());
        QCOMPARE(paint::drawNvlinkLanes(&p, s3.geometry(), 0, 1.0), 0);
    }

    // The Cluster panel on an explicit server: GPUs per server, NVLink domain and NICs per GPU
    // are fixed by the server (disabled, saying why); servers stay editable; "Use the
    // Generated Server Instead" drops the server in one undo step.
    void clusterPanelOnExplicitServer()
    {
        auto doc = imported("topo-m/hgx-h100-8gpu-8nic-sglang30401.txt");
        QVERIFY(doc);
        ClusterPanel panel;
        panel.setDocument(doc.get());
        const QList<QSpinBox *> boxes = panel.form()->findChildren<QSpinBox *>();
        QSpinBox *servers = boxes.value(0), *perServer = boxes.value(1), *domain = boxes.value(2);
        QVERIFY(servers && perServer && domain);
        QVERIFY(servers->isEnabled());
        QVERIFY(!perServer->isEnabled());
        QVERIFY(!domain->isEnabled());
        QVERIFY(perServer->toolTip().contains(QStringLiteral("use the generated server")));
        QPushButton *button = panel.generatedServerButton();
        QVERIFY(!button->isHidden());

        // More servers of the same board.
        servers->setValue(2);
        QCOMPARE(doc->layout().cluster.nodes, 2);
        QVERIFY(doc->layout().cluster.server.has_value());
        QCOMPARE(doc->topology().countOf(DeviceKind::PcieSwitch), 16);

        const int steps = doc->undoStack()->count();
        button->click();
        QVERIFY(panel.errorText().isEmpty());
        QVERIFY(!doc->layout().cluster.server);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->topology().gpuCount(), 16);
        QVERIFY(perServer->isEnabled());
        QVERIFY(domain->isEnabled());
        QVERIFY(button->isHidden());
        QVERIFY(doc->topology().countOf(DeviceKind::PcieSwitch) != 16);

        doc->undoStack()->undo();
        QVERIFY(doc->layout().cluster.server.has_value());
        QVERIFY(!perServer->isEnabled());
        QVERIFY(!button->isHidden());
        const QString shots = qEnvironmentVariable("RAILYARD_SHOTS");
        if (!shots.isEmpty()) {
            panel.resize(340, 720);
            panel.grab().save(shots + QStringLiteral("/cluster-panel-explicit.png"));
        }

        // File > New Cluster from it starts from the generated shape, every field editable.
        NewClusterDialog dialog(doc->layout());
        QVERIFY(!dialog.layout().cluster.server);
        QVERIFY(dialog.form()->findChildren<QSpinBox *>().value(1)->isEnabled());
    }
};

QTEST_MAIN(TestExplicitCanvas)
#include "tst_explicitcanvas.moc"
