// Faults in the GUI (issue 22): the canvas's right-click Fail / Degrade / Restore, each one undo
// step; failed and degraded elements drawn on the canvas and in exported diagrams; the Fault
// dock's list, cost, recovery (applied as one undo step) and what-if sweep.
#include "base/units.h"
#include "canvasfixture.h"
#include "commands/changefaults.h"
#include "comparenear.h"
#include "document/document.h"
#include "items/faultmarksitem.h"
#include "layout/layout.h"
#include "panels/faultpanel.h"
#include "panels/inspectorpanel.h"
#include "render/diagramrenderer.h"
#include "scene/clustergeometry.h"
#include "scene/faultmenu.h"
#include "scene/style.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>

using namespace railyard;
using railyard::test::Canvas;
using railyard::test::CanvasOptions;
using railyard::test::countColour;

namespace {

std::unique_ptr<Document> open(const char *name)
{
    QString error;
    auto doc = Document::load(QStringLiteral(RAILYARD_TEST_DATA "/") + QLatin1String(name), &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

std::unique_ptr<Document> make(const engine::Layout &layout)
{
    QString error;
    auto doc = Document::create(layout, &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

engine::Layout llama8b(const engine::ClusterConfig &cluster, int tp, int dp, int globalBatch)
{
    engine::Layout l;
    l.cluster = cluster;
    engine::ModelConfig m;
    m.preset = "llama3-8b";
    l.model = m;
    l.training.globalBatch = globalBatch;
    l.parallel.tp = tp;
    l.parallel.dp = dp;
    return l;
}

// The data-parallel-heavy job of tst_faultsweep: 52 A100 servers (200G HDR) under 40-port
// switches at 2:1, two scalable units, TP8 in each server, DP52 not overlapped, the replicas
// alternating between the units, so every DP ring step crosses the spines.
engine::Layout dpHeavy()
{
    engine::ClusterConfig c;
    c.gpu = "A100-SXM-80GB";
    c.nodes = 52;
    c.nic.gbitPerS = 200;
    c.fabric.oversubscription = 2;
    // TP4 and replica pairs' servers alternating between the two units: every DP ring step
    // between servers crosses the spine (tst_faultsweep's dpHeavy says why not TP8).
    engine::Layout l = llama8b(c, 4, 104, 104);
    l.training.overlap.dp = false;
    for (int dp = 0; dp < 104; ++dp)
        for (int tp = 0; tp < 4; ++tp)
            l.mapping.push_back((((dp / 2) % 2) * 26 + dp / 4) * 8 + (dp % 2) * 4 + tp);
    return l;
}

int deviceNamed(const Document &doc, const char *name)
{
    return doc.topology().findDevice(name);
}

// Opens the canvas's context menu at `scenePos` and triggers the action named `action` in it
// (or in one of its submenus) while it shows; false when the menu had no such action.
bool triggerContextAction(ClusterView &view, const QPointF &scenePos, const QString &action)
{
    bool found = false;
    QTimer::singleShot(0, [&] {
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        if (!menu)
            return;
        if (auto *a = menu->findChild<QAction *>(action)) {
            found = a->isEnabled();
            if (found)
                a->trigger();
        }
        menu->close();
    });
    // Never hang on a menu that did not close.
    QTimer::singleShot(10000, [] {
        if (QWidget *popup = QApplication::activePopupWidget())
            popup->close();
    });
    const QPoint pos = view.mapFromScene(scenePos);
    QContextMenuEvent event(QContextMenuEvent::Mouse, pos, view.viewport()->mapToGlobal(pos));
    QApplication::sendEvent(view.viewport(), &event);
    return found;
}

// Pixels that differ by more than `tolerance` in any channel, in `area`.
int changedPixels(const QImage &a, const QImage &b, const QRect &area, int tolerance = 24)
{
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x) {
            const QColor p = a.pixelColor(x, y), q = b.pixelColor(x, y);
            if (std::abs(p.red() - q.red()) > tolerance
                || std::abs(p.green() - q.green()) > tolerance
                || std::abs(p.blue() - q.blue()) > tolerance)
                ++n;
        }
    return n;
}

// The first NIC-to-leaf link of the topology.
int nicUplink(const engine::Topology &t)
{
    for (int l = 0; l < t.linkCount(); ++l) {
        const engine::Link &k = t.links()[static_cast<std::size_t>(l)];
        if (t.devices()[static_cast<std::size_t>(k.a)].kind == engine::DeviceKind::Nic
            && t.devices()[static_cast<std::size_t>(k.b)].kind == engine::DeviceKind::Leaf)
            return l;
    }
    return -1;
}

// The point halfway along a route, where the cross goes.
QPointF midpoint(const QPolygonF &path)
{
    double left = 0;
    for (int i = 1; i < path.size(); ++i)
        left += QLineF(path[i - 1], path[i]).length() / 2;
    for (int i = 1; i < path.size(); ++i) {
        const QLineF seg(path[i - 1], path[i]);
        if (seg.length() >= left && seg.length() > 0)
            return seg.pointAt(left / seg.length());
        left -= seg.length();
    }
    return path.isEmpty() ? QPointF() : path.back();
}

FaultMarksItem *faultMarks(const ClusterScene &scene)
{
    for (QGraphicsItem *item : scene.items())
        if (item->type() == FaultMarksItem::Type)
            return static_cast<FaultMarksItem *>(item);
    return nullptr;
}

} // namespace

class TestFaultGui : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void failALeafFromTheContextMenu()
    {
        // Leaf 3 of the GMI-style cluster (rail 3 of every server), right-clicked > Fail.
        auto doc = open("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const int leaf = deviceNamed(*doc, "leaf 3");
        QVERIFY(leaf >= 0);
        const double healthy = doc->evaluation().stepTimeS;
        const QByteArray healthyText = doc->toText();
        QVERIFY(triggerContextAction(c.view,
                                     c.scene.geometry().deviceRect(leaf).center(),
                                     QStringLiteral("actionFail")));
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        const engine::Fault &f = doc->layout().cluster.faults.front();
        QCOMPARE(f.device, std::string("leaf 3"));
        QCOMPARE(f.state, engine::FaultState::Down);
        QVERIFY(doc->topology().deviceDown(leaf));
        // Rail 3's traffic goes through NIC 2 of each server: the step gets longer.
        QVERIFY(doc->evaluation().ok);
        const double faulted = doc->evaluation().stepTimeS;
        QVERIFY2(faulted > healthy,
                 qPrintable(QStringLiteral("%1 -> %2").arg(healthy).arg(faulted)));
        // Drawn crossed out, with the leaf's links.
        FaultMarksItem *marks = faultMarks(c.scene);
        QVERIFY(marks);
        QCOMPARE(marks->downDeviceCount(), 1);
        // Undo restores the layout to the byte and the step; redo fails the leaf again.
        doc->undoStack()->undo();
        QVERIFY(doc->layout().cluster.faults.empty());
        QCOMPARE(doc->toText(), healthyText);
        QCOMPARE(doc->evaluation().stepTimeS, healthy);
        QVERIFY(!faultMarks(c.scene));
        doc->undoStack()->redo();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        QCOMPARE(doc->evaluation().stepTimeS, faulted);
        // Failed already: Fail is off; Restore brings it back as one more undo step.
        QVERIFY(!triggerContextAction(c.view,
                                      c.scene.geometry().deviceRect(leaf).center(),
                                      QStringLiteral("actionFail")));
        QVERIFY(triggerContextAction(c.view,
                                     c.scene.geometry().deviceRect(leaf).center(),
                                     QStringLiteral("actionRestore")));
        QCOMPARE(doc->undoStack()->count(), 2);
        QVERIFY(doc->layout().cluster.faults.empty());
        QCOMPARE(doc->evaluation().stepTimeS, healthy);
    }

    void degradeAndSlowDownFromTheMenu()
    {
        auto doc = open("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        const int link = nicUplink(doc->topology());
        QVERIFY(link >= 0);
        QMenu menu;
        faultmenu::addFaultActions(&menu, doc.get(), -1, link, nullptr);
        auto *half = menu.findChild<QAction *>(QStringLiteral("actionDegrade50"));
        QVERIFY(half);
        half->trigger();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        const engine::Fault f = doc->layout().cluster.faults.front();
        QCOMPARE(f.target, engine::FaultTarget::Link);
        QCOMPARE(f.linkId.value_or(-1), link);
        QCOMPARE(f.rate.value_or(0), 0.5);
        QCOMPARE(doc->topology().links()[static_cast<std::size_t>(link)].health, 0.5);
        // A GPU slows down rather than degrading; a second edit of the same element replaces it.
        const int gpu = deviceNamed(*doc, "GPU 9");
        QMenu gpuMenu;
        faultmenu::addFaultActions(&gpuMenu, doc.get(), gpu, -1, nullptr);
        QVERIFY(!gpuMenu.findChild<QAction *>(QStringLiteral("actionDegrade50")));
        auto *slow = gpuMenu.findChild<QAction *>(QStringLiteral("actionSlowDown110"));
        QVERIFY(slow);
        slow->trigger();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(2));
        QCOMPARE(doc->topology().gpuSlowdown(9), 1.1);
        QMenu again;
        faultmenu::addFaultActions(&again, doc.get(), gpu, -1, nullptr);
        again.findChild<QAction *>(QStringLiteral("actionSlowDown150"))->trigger();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(2));
        QCOMPARE(doc->topology().gpuSlowdown(9), 1.5);
        QCOMPARE(doc->undoStack()->count(), 3);
        // What is left is written on the marks.
        ClusterScene scene(doc.get());
        FaultMarksItem *marks = faultMarks(scene);
        QVERIFY(marks);
        QCOMPARE(marks->degradedLinkCount(), 1);
        QCOMPARE(marks->degradedDeviceCount(), 1);
        QVERIFY(marks->labels().contains(QStringLiteral("50%")));
        QVERIFY(marks->labels().contains(QStringLiteral("1.5x")));
    }

    void inspectorAndTooltipsSayWhatIsWrong()
    {
        // Leaf 3 failed, a NIC uplink at half rate and GPU 9 10% slow, each from the menus; the
        // canvas's tooltips and the Inspector say so (and nothing of the kind while healthy).
        auto doc = open("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        InspectorPanel inspector;
        inspector.setScene(&c.scene);
        const int leaf = deviceNamed(*doc, "leaf 3");
        const int gpu = deviceNamed(*doc, "GPU 9");
        const int link = nicUplink(doc->topology());
        QVERIFY(leaf >= 0 && gpu >= 0 && link >= 0);
        const auto tipOver = [&](int device) {
            return c.view.toolTipAt(
                    c.view.mapFromScene(c.scene.geometry().deviceRect(device).center()));
        };
        const auto inspect = [&](int device) {
            c.scene.setSelectedDevice(device);
            return inspector.headerText();
        };
        const QRegularExpression anyFault(QStringLiteral("Down|Degraded|slow"));
        QVERIFY(!tipOver(leaf).contains(anyFault));
        QVERIFY(!inspect(gpu).contains(anyFault));
        QVERIFY(triggerContextAction(c.view,
                                     c.scene.geometry().deviceRect(leaf).center(),
                                     QStringLiteral("actionFail")));
        QMenu linkMenu;
        faultmenu::addFaultActions(&linkMenu, doc.get(), -1, link, nullptr);
        linkMenu.findChild<QAction *>(QStringLiteral("actionDegrade50"))->trigger();
        QMenu gpuMenu;
        faultmenu::addFaultActions(&gpuMenu, doc.get(), gpu, -1, nullptr);
        gpuMenu.findChild<QAction *>(QStringLiteral("actionSlowDown110"))->trigger();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(3));

        QVERIFY2(tipOver(leaf).contains(QStringLiteral(">Down<")), qPrintable(tipOver(leaf)));
        QVERIFY2(inspect(leaf).contains(QStringLiteral(">Down<")), qPrintable(inspect(leaf)));
        QVERIFY2(tipOver(gpu).contains(QStringLiteral("Runs 10% slow")), qPrintable(tipOver(gpu)));
        QVERIFY2(inspect(gpu).contains(QStringLiteral("Runs 10% slow")), qPrintable(inspect(gpu)));
        // The NIC of the degraded uplink: one of its links degraded; the link itself: to 50%.
        const int nic = doc->topology().links()[static_cast<std::size_t>(link)].a;
        QVERIFY2(inspect(nic).contains(QStringLiteral("1 degraded (to 50%")),
                 qPrintable(inspect(nic)));
        c.scene.setSelectedDevice(-1);
        c.scene.setSelectedLink(link);
        QVERIFY2(inspector.headerText().contains(QStringLiteral("Degraded to 50% of its rate")),
                 qPrintable(inspector.headerText()));
        // A server beside the failed leaf: its NIC on rail 3 has its uplink down.
        const int nic3 = deviceNamed(*doc, "NIC 0.3");
        QVERIFY(nic3 >= 0);
        QVERIFY2(inspect(nic3).contains(QStringLiteral("1 of its links down")),
                 qPrintable(inspect(nic3)));
    }

    void unroutableFaultIsRefusedWithTheEnginesMessage()
    {
        // Every NVLink of GPU 0 down: the engine cannot route it, and says what to do instead.
        auto doc = open("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        const engine::Topology &t = doc->topology();
        std::vector<engine::Fault> faults;
        for (int l : t.gpuNvlinks(0)) {
            engine::Fault f;
            f.target = engine::FaultTarget::Link;
            f.linkId = l;
            faults.push_back(f);
        }
        QVERIFY(!faults.empty());
        QWidget parent;
        QString refusal;
        QVERIFY(!faultmenu::applyFaults(doc.get(),
                                        faults,
                                        QStringLiteral("Fail"),
                                        &parent,
                                        &refusal));
        QCOMPARE(doc->undoStack()->count(), 0);
        QVERIFY(doc->layout().cluster.faults.empty());
        QVERIFY2(refusal.contains(QStringLiteral("every NVLink of GPU 0 is down")),
                 qPrintable(refusal));
        auto *box = parent.findChild<QMessageBox *>(QStringLiteral("faultRefused"));
        QVERIFY(box);
        QVERIFY(box->informativeText().contains(QStringLiteral("/cluster/faults/")));
        box->close();
    }

    void failedLinkIsDrawnDifferently()
    {
        // The same view before and after one NIC's uplink fails: its route changes colour (a
        // red cross halfway), on the canvas and in the exported diagram.
        auto doc = open("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        const int link = nicUplink(doc->topology());
        CanvasOptions o;
        o.size = QSize(1600, 1000);
        Canvas c(doc.get(), o);
        QTest::qWait(20);
        c.view.setZoom(0.6);
        c.view.centerOn(c.scene.geometry().linkPath(link).boundingRect().center());
        const QImage before = c.render();
        QImage exportBefore;
        {
            const render::DiagramRenderer r(c.scene, QApplication::font());
            exportBefore = QImage(r.size(), QImage::Format_ARGB32);
            exportBefore.fill(Qt::white);
            QPainter p(&exportBefore);
            r.paint(&p);
        }
        engine::Fault f;
        f.target = engine::FaultTarget::Link;
        f.linkId = link;
        QVERIFY(faultmenu::applyFaults(doc.get(), {f}, QStringLiteral("Fail link"), nullptr));
        // The scene was rebuilt for the new cluster; show the same place.
        c.view.setZoom(0.6);
        c.view.centerOn(c.scene.geometry().linkPath(link).boundingRect().center());
        const QImage after = c.render();
        QCOMPARE(after.size(), before.size());
        const QPoint mid = c.onScreen(midpoint(c.scene.geometry().linkPath(link)));
        const QRect around(mid - QPoint(12, 12), QSize(25, 25));
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty()) {
            before.save(dir + QStringLiteral("/fault-link-before.png"));
            after.save(dir + QStringLiteral("/fault-link-after.png"));
            qInfo("link %d mid %d,%d", link, mid.x(), mid.y());
        }
        const int changed = changedPixels(before, after, around);
        QVERIFY2(changed > 40, qPrintable(QStringLiteral("%1 pixels changed").arg(changed)));
        QVERIFY(countColour(after, style::kFaultDown, 30, around)
                > countColour(before, style::kFaultDown, 30, around) + 20);
        // The export draws the same marks (and a legend row for them).
        const render::DiagramRenderer r(c.scene, QApplication::font());
        QImage exportAfter(r.size(), QImage::Format_ARGB32);
        exportAfter.fill(Qt::white);
        {
            QPainter p(&exportAfter);
            r.paint(&p);
        }
        QVERIFY(countColour(exportAfter, style::kFaultDown, 30)
                > countColour(exportBefore, style::kFaultDown, 30) + 20);
        bool legendRow = false;
        for (const render::PlacedText &t : r.legend()->texts())
            legendRow = legendRow || t.text == QStringLiteral("Faults");
        QVERIFY(legendRow);
    }

    void dockListsCostsAndRecovers()
    {
        // A 30% straggler in a DP16 job (tst_faultsweep's): the dock lists it, prices it and
        // offers to drop its replica (DP 16 -> 15), applied as one undo step.
        engine::ClusterConfig c;
        c.nodes = 16;
        engine::Layout l = llama8b(c, 8, 16, 240);
        engine::Fault f;
        f.device = "GPU 9";
        f.state = engine::FaultState::Degraded;
        f.slowdown = 1.3;
        l.cluster.faults = {f};
        auto doc = make(l);
        QVERIFY(doc);
        FaultPanel panel;
        QSignalSpy shown(&panel, &FaultPanel::impactShown);
        panel.setDocument(doc.get());
        QCOMPARE(panel.faultTable()->rowCount(), 1);
        QCOMPARE(panel.faultTable()->item(0, 0)->text(), QString::fromStdString(f.describe()));
        QVERIFY(panel.faultTable()->cellWidget(0, 1));
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        const engine::FaultImpact *impact = panel.impact();
        QVERIFY(impact && panel.isImpactCurrent());
        QVERIFY(impact->faulted.stepTimeS > impact->healthy.stepTimeS);
        QVERIFY(panel.summaryLabel()->text().contains(
                QString::fromStdString(engine::formatSeconds(impact->faulted.stepTimeS))));
        QVERIFY(panel.breakdownTable()->rowCount() > 0);
        QVERIFY(impact->recovery.has_value());
        QVERIFY(panel.recoveryLabel()->text().contains(
                QString::fromStdString(impact->recovery->summary)));
        QVERIFY(panel.applyButton()->isEnabled());
        // With RAILYARD_SHOTS_DIR set, save what the dock shows, to look at.
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty()) {
            panel.resize(420, 1100);
            panel.show();
            QTest::qWait(50);
            panel.grab().save(dir + QStringLiteral("/fault-dock.png"));
        }

        const QByteArray faultedText = doc->toText();
        panel.applyButton()->click();
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().dataParallel(), 15);
        QCOMPARE(doc->layout().training.globalBatch, 240);
        QCOMPARE(doc->layout().mapping.size(), std::size_t(120));
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1)); // the fault stays
        QVERIFY(doc->evaluation().ok);
        RAILYARD_COMPARE_NEAR(doc->evaluation().stepTimeS, impact->recovery->stepTimeS, 1e-9);
        doc->undoStack()->undo();
        QCOMPARE(doc->toText(), faultedText);

        // Restore in the row, then undo; Restore All.
        auto *restore = qobject_cast<QToolButton *>(panel.faultTable()->cellWidget(0, 1));
        QVERIFY(restore);
        restore->click();
        QVERIFY(doc->layout().cluster.faults.empty());
        QVERIFY(!panel.restoreAllButton()->isEnabled());
        QVERIFY(panel.impact() == nullptr);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        QVERIFY(panel.restoreAllButton()->isEnabled());
        panel.restoreAllButton()->click();
        QVERIFY(doc->layout().cluster.faults.empty());
    }

    void servingLayoutFailedFromTheMenuRepricedAndRecovered()
    {
        // The Llama 70B TP8 x 2 serving layout: right-click GPU 3 > Fail. Its replica leaves
        // service; the serving numbers re-price (the other replica takes 64 in flight), the
        // fault is drawn, the Fault dock gives TPOT and tokens/s per GPU before and after; undo
        // restores the layout to the byte, and the fault survives a save and reopen.
        QString error;
        auto doc = Document::load(QStringLiteral(
                                          RAILYARD_SOURCE_DIR
                                          "/layouts/serving-llama70b-tp8-h100.railyard.json"),
                                  &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(doc->layout().isServing());
        Canvas c(doc.get());
        const engine::ServingEvaluation *healthy = doc->servingEvaluation();
        QVERIFY(healthy && healthy->ok);
        const double healthyTps = healthy->outputTokensPerS;
        const QByteArray healthyText = doc->toText();
        const int gpu = deviceNamed(*doc, "GPU 3");
        QVERIFY(gpu >= 0);
        QVERIFY(triggerContextAction(c.view,
                                     c.scene.geometry().deviceRect(gpu).center(),
                                     QStringLiteral("actionFail")));
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        const engine::ServingEvaluation *faulted = doc->servingEvaluation();
        QVERIFY2(faulted && faulted->ok, faulted ? faulted->error.c_str() : "none");
        QCOMPARE(faulted->replicasOutOfService, std::vector<int>{0});
        QVERIFY(faulted->outputTokensPerS < healthyTps);
        const double faultedTps = faulted->outputTokensPerS;
        FaultMarksItem *marks = faultMarks(c.scene);
        QVERIFY(marks);
        QCOMPARE(marks->downDeviceCount(), 1);

        FaultPanel panel;
        QSignalSpy shown(&panel, &FaultPanel::impactShown);
        panel.setDocument(doc.get());
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        const engine::FaultImpact *impact = panel.impact();
        QVERIFY(impact && impact->serving && impact->priced());
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("TPOT")));
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("Output tokens/s per GPU")));
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("left service")));
        QVERIFY(panel.breakdownTable()->rowCount() > 0);

        // Save and reopen: the fault and the numbers are the same.
        const QByteArray faultedText = doc->toText();
        auto reopened = Document::fromText(faultedText, QStringLiteral("saved"), &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->layout().cluster.faults, doc->layout().cluster.faults);
        QCOMPARE(reopened->servingEvaluation()->outputTokensPerS, faultedTps);

        // Undo: the healthy layout to the byte, re-priced; redo fails it again.
        doc->undoStack()->undo();
        QCOMPARE(doc->toText(), healthyText);
        QCOMPARE(doc->servingEvaluation()->outputTokensPerS, healthyTps);
        QVERIFY(!faultMarks(c.scene));
        doc->undoStack()->redo();
        QCOMPARE(doc->servingEvaluation()->outputTokensPerS, faultedTps);
    }

    void servingStragglerRecoveryIsOneUndoStep()
    {
        // GPU 3 twice as slow: dropping its replica (the other serving 64 in flight) serves
        // more than both together, applied from the dock as one undo step.
        QString error;
        auto doc = Document::load(QStringLiteral(
                                          RAILYARD_SOURCE_DIR
                                          "/layouts/serving-llama70b-tp8-h100.railyard.json"),
                                  &error);
        QVERIFY2(doc, qPrintable(error));
        engine::Fault f;
        f.device = "GPU 3";
        f.state = engine::FaultState::Degraded;
        f.slowdown = 2.0;
        QVERIFY(faultmenu::applyFaults(doc.get(), {f}, QStringLiteral("Slow down GPU 3"), nullptr));
        FaultPanel panel;
        QSignalSpy shown(&panel, &FaultPanel::impactShown);
        panel.setDocument(doc.get());
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        const engine::FaultImpact *impact = panel.impact();
        QVERIFY(impact && impact->recovery);
        QVERIFY(panel.recoveryLabel()->text().contains(QStringLiteral("TPOT")));
        QVERIFY(panel.applyButton()->isEnabled());
        const double expected = impact->recovery->tokensPerS;
        const QByteArray faultedText = doc->toText();
        const int steps = doc->undoStack()->count();
        panel.applyButton()->click();
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->layout().dataParallel(), 1);
        QCOMPARE(*doc->layout().serving->concurrency, 64);
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        RAILYARD_COMPARE_NEAR(doc->servingEvaluation()->outputTokensPerS, expected, 1e-9);
        doc->undoStack()->undo();
        QCOMPARE(doc->toText(), faultedText);
    }

    void servingReplicaSwapIsOneUndoStep()
    {
        // Disaggregated DeepSeek-R1 on a GB200 NVL72, GPU 45 (decode replica 0) twice as slow:
        // the best recovery swaps that replica, rank for rank, with a prefill replica's GPUs
        // (tst_servingfaults prices it), a change of the mapping alone, applied from the dock as
        // one undo step.
        QString error;
        auto doc = Document::load(
                QStringLiteral(RAILYARD_SOURCE_DIR
                               "/layouts/serving-disaggregated-gb200-nvl72.railyard.json"),
                &error);
        QVERIFY2(doc, qPrintable(error));
        engine::Fault f;
        f.device = "GPU 45";
        f.state = engine::FaultState::Degraded;
        f.slowdown = 2.0;
        QVERIFY(faultmenu::applyFaults(doc.get(), {f}, QStringLiteral("Slow down GPU 45"), nullptr));
        QVERIFY(doc->layout().mapping.empty());
        FaultPanel panel;
        QSignalSpy shown(&panel, &FaultPanel::impactShown);
        panel.setDocument(doc.get());
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        const engine::FaultImpact *impact = panel.impact();
        QVERIFY(impact && impact->recovery);
        QCOMPARE(impact->recovery->kind, std::string("swap-replicas"));
        // The replicas run at different speeds: the summary names the slowest's latencies, in
        // milliseconds (they were printed as a raw key and "0 -> 0").
        const QString summary = panel.summaryLabel()->text();
        QVERIFY2(summary.contains(QRegularExpression(
                         QStringLiteral("Slowest replica's TTFT: \\d+ ms \u2192 \\d+ ms"))),
                 qPrintable(summary));
        QVERIFY2(!summary.contains(QStringLiteral("slowest_")), qPrintable(summary));
        QVERIFY(impact->recovery->tokensPerS > impact->servingFaulted.outputTokensPerS);
        QVERIFY(panel.applyButton()->isEnabled());
        const double expected = impact->recovery->tokensPerS;
        const QByteArray faultedText = doc->toText();
        const int steps = doc->undoStack()->count();
        panel.applyButton()->click();
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QVERIFY(!doc->layout().mapping.empty());
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        RAILYARD_COMPARE_NEAR(doc->servingEvaluation()->outputTokensPerS, expected, 1e-9);
        doc->undoStack()->undo();
        QCOMPARE(doc->toText(), faultedText);
    }

    void sweepRanksASpineAboveANic()
    {
        // On the DP-heavy job a spine down costs more than any single NIC (tst_faultsweep:
        // 7.98% against 1.64%). Each sweep runs from the dock; a double-click fails the worst.
        auto doc = make(dpHeavy());
        QVERIFY(doc);
        FaultPanel panel;
        panel.setDocument(doc.get());
        QSignalSpy done(&panel, &FaultPanel::sweepFinished);
        const auto run = [&](engine::SweepKind kind) {
            panel.kindBox()->setCurrentIndex(panel.kindBox()->findData(int(kind)));
            const int before = done.count();
            panel.runButton()->click();
            return done.count() > before || done.wait(280000);
        };
        QVERIFY(run(engine::SweepKind::Spines));
        QVERIFY2(panel.sweep().ok, panel.sweep().error.c_str());
        QCOMPARE(panel.sweep().candidates, 6);
        const engine::SweepEntry worstSpine = panel.sweep().ranked.front();
        QVERIFY(worstSpine.ok);
        QCOMPARE(panel.sweepTable()->rowCount(), 6);
        QCOMPARE(panel.sweepTable()->item(0, 1)->text(), QString::fromStdString(worstSpine.name));

        QVERIFY(run(engine::SweepKind::Nics));
        QVERIFY2(panel.sweep().ok, panel.sweep().error.c_str());
        QCOMPARE(panel.sweep().candidates, 416);
        QCOMPARE(panel.sweepTable()->rowCount(), FaultPanel::kSweepRows);
        const engine::SweepEntry worstNic = panel.sweep().ranked.front();
        QVERIFY(worstNic.ok);
        qInfo("worst spine %s: %.2f%%; worst NIC %s: %.2f%%",
              worstSpine.name.c_str(),
              100 * worstSpine.costFraction,
              worstNic.name.c_str(),
              100 * worstNic.costFraction);
        QVERIFY(worstSpine.costFraction > worstNic.costFraction);

        // Double-click the worst NIC: it fails, one undo step.
        panel.resize(480, 1100);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTableWidget *table = panel.sweepTable();
        const QPoint at = table->visualItemRect(table->item(0, 1)).center();
        QVERIFY(table->viewport()->rect().contains(at));
        // The first click selects the row; the double-click (the item view wants its press first)
        // fails the element.
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().cluster.faults.size(), std::size_t(1));
        QCOMPARE(doc->layout().cluster.faults.front(), worstNic.fault);
    }

    void cancelledSweepKeepsTheLayout()
    {
        auto doc = make(dpHeavy());
        QVERIFY(doc);
        FaultPanel panel;
        panel.setDocument(doc.get());
        panel.kindBox()->setCurrentIndex(panel.kindBox()->findData(int(engine::SweepKind::Nics)));
        QSignalSpy done(&panel, &FaultPanel::sweepFinished);
        panel.runButton()->click();
        QVERIFY(panel.isSweeping() || done.count() == 1);
        panel.cancelButton()->click();
        QVERIFY(!panel.isSweeping());
        QVERIFY(panel.runButton()->isEnabled());
        QCOMPARE(doc->undoStack()->count(), 0);
    }
};

QTEST_MAIN(TestFaultGui)
#include "tst_faultgui.moc"
