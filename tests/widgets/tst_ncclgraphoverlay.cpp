// The NCCL graph overlay in the window: File > Import of a graph XML offers to draw it over the
// open cluster; the rings show on the canvas, the channel chooser and View > NCCL Graph Overlay
// change what is drawn, and a cluster the graph no longer fits drops it with a message.
#include "commands/changecluster.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "export/diagramexport.h"
#include "import/ncclgraphoverlay.h"
#include "items/ncclgraphitem.h"
#include "mainwindow.h"
#include "scene/clustergeometry.h"
#include "windowtest.h"

#include <QComboBox>
#include <QPainter>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace railyard;
using namespace railyard::test;

namespace {

QString graphFixture(const char *name)
{
    return QStringLiteral(RAILYARD_TEST_DATA "/ncclgraph/") + QLatin1String(name);
}
const char *kRing = "hgx-h100-ring-tree-handwritten.xml";

// Two HGX H100 servers on a rail-optimized fabric, with a workload.
std::unique_ptr<Document> twoServers()
{
    engine::Layout l;
    l.title = "two HGX H100";
    l.cluster.nodes = 2;
    engine::ModelConfig m;
    m.preset = "llama3-8b";
    l.model = m;
    l.parallel.tp = 8;
    QString error;
    auto doc = Document::create(l, &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

// The scene around server 0, rendered at a fixed size.
QImage renderServer(const ClusterScene &scene, int node = 0)
{
    const QRectF r = scene.geometry().nodeRect(node).adjusted(-20, -20, 20, 20);
    QImage img(QSize(900, static_cast<int>(900 * r.height() / r.width())), QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    const_cast<ClusterScene &>(scene).render(&p, QRectF(img.rect()), r);
    return img;
}

int countNear(const QImage &img, const QColor &c, int tolerance = 24)
{
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor p = img.pixelColor(x, y);
            n += std::abs(p.red() - c.red()) + std::abs(p.green() - c.green())
                         + std::abs(p.blue() - c.blue())
                 <= tolerance;
        }
    return n;
}

} // namespace

class TestNcclGraphOverlay : public QObject
{
    Q_OBJECT
    QTemporaryDir m_recovery;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }
    void cleanup() { closeMessageBoxes(); }

    void importOffersAnOverlay()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.setDocument(twoServers());
        Document *doc = w.document();
        QVERIFY(doc);
        const QColor ch0 = NcclGraphItem::channelColour(0), ch1 = NcclGraphItem::channelColour(1);
        const QImage plain = renderServer(*w.scene());
        int asked = 0;
        w.setGraphImportPrompt([&](QWidget *, const QString &path) {
            ++asked;
            return path.endsWith(QLatin1String(kRing)) ? 1 : 0; // overlay
        });
        QVERIFY2(w.importFile(graphFixture(kRing)), qPrintable(w.lastError()));
        QCOMPARE(asked, 1);
        QCOMPARE(w.document(), doc); // the same document: nothing was opened
        QVERIFY(!doc->isModified());
        const ViewState::GraphOverlay *o = w.viewState()->graphOverlay();
        QVERIFY(o);
        QCOMPARE(o->graphs.size(), std::size_t(2));
        QCOMPARE(o->file, QLatin1String(kRing));
        const engine::NcclGraphOverlay *placed = w.scene()->graphOverlay();
        QVERIFY(placed);
        QCOMPARE(placed->channels.size(), std::size_t(2));
        QCOMPARE(placed->servers, 2);
        QCOMPARE(w.scene()->graphOverlayPathCount(), 2 * 2 * 10);

        // Both channels' colours now show around server 0, where the plain canvas had none.
        const QImage both = renderServer(*w.scene());
        QCOMPARE(countNear(plain, ch0), 0);
        QCOMPARE(countNear(plain, ch1), 0);
        QVERIFY2(countNear(both, ch0) > 300, qPrintable(QString::number(countNear(both, ch0))));
        QVERIFY2(countNear(both, ch1) > 300, qPrintable(QString::number(countNear(both, ch1))));
        // Along the ring: on every GPU-to-GPU hop of channel 0 in server 0 (the middle of its
        // first link's route), channel 0's colour is drawn where it was not before.
        const ClusterGeometry &g = w.scene()->geometry();
        int hops = 0;
        for (const engine::GraphEdge &e : placed->channels[0].edges) {
            const auto &devices = doc->topology().devices();
            const engine::Device &from = devices[static_cast<std::size_t>(e.from)];
            const engine::Device &to = devices[static_cast<std::size_t>(e.to)];
            if (from.kind != engine::DeviceKind::Gpu || to.kind != engine::DeviceKind::Gpu
                || from.node != 0)
                continue;
            const QPolygonF route = g.linkPath(e.links.front());
            const QPointF mid = (route.front() + route.back()) / 2;
            const QRectF around(mid - QPointF(12, 12), QSizeF(24, 24));
            QImage img(96, 96, QImage::Format_RGB32);
            img.fill(Qt::white);
            QPainter p(&img);
            w.scene()->render(&p, QRectF(img.rect()), around);
            p.end();
            QVERIFY2(countNear(img, ch0) > 20,
                     qPrintable(QStringLiteral("hop %1 -> %2: %3 pixels")
                                        .arg(from.index)
                                        .arg(to.index)
                                        .arg(countNear(img, ch0))));
            ++hops;
        }
        QCOMPARE(hops, 7);

        // RAILYARD_SHOTS=DIR keeps the pictures, to look at.
        const QString shots = qEnvironmentVariable("RAILYARD_SHOTS");
        if (!shots.isEmpty())
            both.save(shots + QStringLiteral("/overlay-all-channels.png"));

        // The chooser: channel 1 alone. Channel 0's colour goes, channel 1's stays.
        auto *channels = w.findChild<QComboBox *>(QStringLiteral("channelBox"));
        QVERIFY(channels);
        QCOMPARE(channels->count(), 3); // all, 0, 1
        Q_EMIT channels->activated(2);
        QCOMPARE(w.viewState()->graphOverlay()->channel, 1);
        QCOMPARE(w.scene()->graphOverlayPathCount(), 2 * 10);
        const QImage one = renderServer(*w.scene());
        QVERIFY2(countNear(one, ch0) < countNear(both, ch0) / 10,
                 qPrintable(QString::number(countNear(one, ch0))));
        QVERIFY(countNear(one, ch1) > 300);
        QVERIFY(one != both);
        if (!shots.isEmpty())
            one.save(shots + QStringLiteral("/overlay-channel-1.png"));
        QVERIFY(w.scene()->canvasState().graphCaption.contains(QStringLiteral("channel 1 of 2")));

        // The tree graph, from the graph chooser.
        auto *graphs = w.findChild<QComboBox *>(QStringLiteral("graphBox"));
        QVERIFY(graphs);
        QCOMPARE(graphs->count(), 2);
        Q_EMIT graphs->activated(1);
        QCOMPARE(w.scene()->graphOverlay()->pattern, std::string("tree"));
        QCOMPARE(w.viewState()->graphOverlay()->channel, -1);
        QCOMPARE(channels->count(), 2); // all, 0
        if (!shots.isEmpty())
            renderServer(*w.scene()).save(shots + QStringLiteral("/overlay-tree.png"));

        // View > NCCL Graph Overlay hides it and shows it again.
        QAction *shown = w.action(QStringLiteral("actionGraphOverlay"));
        QVERIFY(shown && shown->isEnabled() && shown->isChecked());
        shown->trigger();
        QVERIFY(!w.viewState()->graphOverlay()->visible);
        QCOMPARE(w.scene()->graphOverlayPathCount(), 0);
        QCOMPARE(countNear(renderServer(*w.scene()), ch0), 0);
        QVERIFY(w.scene()->canvasState().graphCaption.isEmpty());
        shown->trigger();
        QVERIFY(w.scene()->graphOverlayPathCount() > 0);
    }

    // A new cluster the graph does not fit (4 GPUs a server for a graph of 8) drops the overlay
    // and says so in the status bar; a cluster it still fits keeps it.
    void clusterChangeDropsIt()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.setDocument(twoServers());
        QVERIFY2(w.overlayGraphFile(graphFixture(kRing)), qPrintable(w.lastError()));
        Document *doc = w.document();

        engine::ClusterConfig four = doc->layout().cluster;
        four.nodes = 4; // still fits: the ring now runs over 4 servers
        doc->undoStack()->push(new ChangeCluster(doc, four, QStringLiteral("Servers")));
        QVERIFY(w.viewState()->graphOverlay());
        QCOMPARE(w.scene()->graphOverlay()->servers, 4);

        engine::ClusterConfig small = doc->layout().cluster;
        small.gpu = "A100-SXM-80GB";
        small.gpusPerNode = 4;
        small.nvlinkDomain = 4;
        QVERIFY2(Document::checkLayout(ChangeCluster::apply(doc->layout(), small)).isEmpty(),
                 qPrintable(Document::checkLayout(ChangeCluster::apply(doc->layout(), small))));
        doc->undoStack()->push(new ChangeCluster(doc, small, QStringLiteral("GPUs")));
        QVERIFY(!w.viewState()->graphOverlay());
        QVERIFY(!w.scene()->graphOverlay());
        QCOMPARE(w.scene()->graphOverlayPathCount(), 0);
        const QString msg = w.statusBar()->currentMessage();
        QVERIFY2(msg.contains(QStringLiteral("NCCL graph overlay removed"))
                         && msg.contains(QLatin1String(kRing))
                         && msg.contains(QStringLiteral("graph 0, channel 0: names GPU 4")),
                 qPrintable(msg));
        QVERIFY(!w.action(QStringLiteral("actionGraphOverlay"))->isEnabled());
    }

    // A graph that does not fit the open cluster is refused with the file, graph and channel.
    void mismatchIsRefused()
    {
        MainWindow w(nullptr, m_recovery.path());
        engine::Layout l;
        l.cluster.gpu = "A100-SXM-80GB";
        l.cluster.gpusPerNode = 4;
        l.cluster.nvlinkDomain = 4;
        l.cluster.nodes = 2;
        QString error;
        w.setDocument(Document::create(l, &error));
        QVERIFY(!w.overlayGraphFile(graphFixture(kRing)));
        QVERIFY(!w.viewState()->graphOverlay());
        QVERIFY2(w.lastError().endsWith(QStringLiteral("graph 0, channel 0: names GPU 4, but the "
                                                       "layout's servers have 4 GPUs (GPU 0 to "
                                                       "3)")),
                 qPrintable(w.lastError()));
        // Not a graph at all.
        QVERIFY(!w.overlayGraphFile(
                QStringLiteral(RAILYARD_TEST_DATA "/import/topo-m/pcie-2x2080ti-pix-autodl.txt")));
        QVERIFY(w.lastError().contains(QStringLiteral("not an NCCL graph")));
    }

    // Imported alone, a graph XML opens the nearest layout and shows its graph on it, as the
    // saved layout does when it is opened again.
    void importAloneShowsTheGraph()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.setGraphImportPrompt([](QWidget *, const QString &) { return 2; }); // new layout
        const QString azure = QStringLiteral(RAILYARD_TEST_DATA
                                             "/import/nccl-graph-xml/azure-ncv4-graph.xml");
        QVERIFY2(w.importFile(azure), qPrintable(w.lastError()));
        QCOMPARE(w.document()->topology().gpuCount(), 4);
        const ViewState::GraphOverlay *o = w.viewState()->graphOverlay();
        QVERIFY(o);
        QCOMPARE(o->file, QStringLiteral("azure-ncv4-graph.xml"));
        QCOMPARE(o->graphs.size(), std::size_t(3));
        QVERIFY(w.scene()->graphOverlay());
        QVERIFY(w.scene()->canvasState().graphCaption.startsWith(
                QStringLiteral("NCCL graph from azure-ncv4-graph.xml: 2 ring channels")));

        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("azure.railyard.json"));
        QVERIFY(w.saveTo(saved));
        MainWindow again(nullptr, m_recovery.path());
        QVERIFY(again.openFile(saved));
        QVERIFY(again.viewState()->graphOverlay());
        QCOMPARE(again.scene()->graphOverlay()->channels.size(), std::size_t(2));
        // So does its diagram from the command line's exporter.
        const QString png = dir.filePath(QStringLiteral("azure.png"));
        QString error;
        QVERIFY2(exportLayoutDiagram(saved, png, 1, -1, &error), qPrintable(error));
        const QImage exported(png);
        QVERIFY(!exported.isNull());
        QVERIFY2(countNear(exported, NcclGraphItem::channelColour(0)) > 100,
                 qPrintable(QString::number(countNear(exported, NcclGraphItem::channelColour(0)))));

        // Cancel leaves everything as it was.
        w.setGraphImportPrompt([](QWidget *, const QString &) { return 0; });
        Document *before = w.document();
        QVERIFY(!w.importFile(graphFixture(kRing)));
        QCOMPARE(w.document(), before);
    }
};

QTEST_MAIN(TestNcclGraphOverlay)
#include "tst_ncclgraphoverlay.moc"
