// The main window's layout as a user meets it, through the real menu actions at 1600x1000 and
// 1280x800: every shipped layout opens with the canvas at least half the window and the whole
// cluster in view (a saved zoom gives way when it would cut the cluster off), File > Open keeps
// the docks' widths, no panel is wider than its dock, Pricing and Warnings both show, View >
// Reset Layout and View > Panels, the docks remembered between sessions and checked, and Help's
// shortcut list and guide. With RAILYARD_SHOTS_DIR set, the example rows save what the window
// shows as PNGs there.
#include "base/jsoncursor.h"
#include "charts/paretochart.h"
#include "commands/changemapping.h"
#include "commands/changeserving.h"
#include "docklayout.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "layout/placement.h"
#include "mainwindow.h"
#include "panels/plannerpanel.h"
#include "panels/pricingpanel.h"
#include "panels/servingpricing.h"
#include "panels/timelinepanel.h"
#include "panels/warningspanel.h"
#include "panels/workloadpanel.h"
#include "quickguide.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "shortcutsdialog.h"
#include "step/timeline.h"

#include "windowtest.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>
#include <QWheelEvent>

#include "comparenear.h"
#include <functional>
#include <map>

using namespace railyard;
using namespace railyard::test;

class TestWindowLayout : public QObject
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

    // File > Open Example, through the menu, at the two window sizes people use: the canvas
    // keeps half the window and shows the whole cluster. Every shipped layout, tp-across-servers
    // (which saves a zoom picked on a larger screen) included.
    void examplesOpenInView_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("path");
        for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)})
            for (const QString &p : MainWindow::exampleLayouts())
                QTest::addRow("%dx%d %s", size.width(), size.height(), qPrintable(p.mid(10)))
                        << size << p;
    }

    void examplesOpenInView()
    {
        QFETCH(QSize, size);
        QFETCH(QString, path);
        MainWindow w(nullptr, m_recovery.path());
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        settle();
        QAction *example = nullptr;
        for (QAction *a : w.findChild<QMenu *>(QStringLiteral("menuOpenExample"))->actions())
            if (a->data().toString() == path)
                example = a;
        QVERIFY(example);
        QVERIFY(menuAction(w,
                           {QStringLiteral("File"),
                            QStringLiteral("Open Example"),
                            plain(example->text())})
                == example);
        example->trigger();
        settle();
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        QCOMPARE(QString::fromStdString(w.document()->layout().title), plain(example->text()));
        checkCanvas(w, path);
        shoot(w,
              QStringLiteral("example-%1x%2-%3")
                      .arg(size.width())
                      .arg(size.height())
                      .arg(QFileInfo(path).fileName().remove(QStringLiteral(".railyard.json"))));
    }

    // File > Open through its dialog (stood in for), after a small cluster and after a huge one.
    void openKeepsTheCanvas_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("1280x800") << QSize(1280, 800);
    }

    void openKeepsTheCanvas()
    {
        QFETCH(QSize, size);
        MainWindow w(nullptr, m_recovery.path());
        QStringList asked;
        QString next;
        w.setPathPrompts({[&](QWidget *) {
                              asked << next;
                              return next;
                          },
                          {},
                          {}});
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QAction *open = menuAction(w, {QStringLiteral("File"), QStringLiteral("Open")});
        QVERIFY(open);
        QCOMPARE(open->objectName(), QStringLiteral("actionOpen"));
        for (const char *name : {"llama3.1-405b-16k-h100.railyard.json",
                                 "hgx-h200-server.railyard.json",
                                 "dgx-h100-superpod-su.railyard.json"}) {
            next = layoutPath(name);
            open->trigger();
            QVERIFY2(w.document()->filePath().endsWith(QLatin1String(name)),
                     qPrintable(w.document()->filePath()));
            checkCanvas(w, QLatin1String(name));
            if (QTest::currentTestFailed())
                return;
        }
        QCOMPARE(asked.size(), 3);
        // Cancelling the dialog changes nothing.
        Document *before = w.document();
        next.clear();
        open->trigger();
        QCOMPARE(w.document(), before);
    }

    // A saved zoom gives way to fit when the cluster would not show whole at it.
    void savedZoomOnlyWhenTheClusterShowsWhole()
    {
        QTemporaryDir dir;
        const auto withZoom = [&](double zoom) {
            engine::Layout l = engine::readLayoutFile(
                    layoutPath("tp-across-servers.railyard.json").toStdString());
            l.view.get()["zoom"] = zoom;
            const QString path = dir.filePath(QStringLiteral("zoom-%1.railyard.json").arg(zoom));
            engine::writeLayoutFile(l, path.toStdString());
            return path;
        };
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(withZoom(2.0)));
        settle();
        const double fit = w.view()->fitZoom();
        RAILYARD_COMPARE_ABS(w.view()->zoom(), fit, 1e-9);
        checkCanvas(w, QStringLiteral("zoom 2"));
        // Smaller than fit: the whole cluster shows, so the file's zoom stands.
        const double small = fit * 0.7;
        QVERIFY(w.openFile(withZoom(small)));
        settle();
        RAILYARD_COMPARE_ABS(w.view()->zoom(), small, 1e-9);
    }

    // View > Reset Layout puts every dock back, at the default sizes, after the user moved them.
    void resetLayoutRestoresTheDocks()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        settle();
        const DockLayout::Docks docks = w.dockLayout()->docks();
        QAction *reset = menuAction(w, {QStringLiteral("View"), QStringLiteral("Reset Layout")});
        QVERIFY(reset);
        reset->trigger(); // the default sizes for this window
        settle();
        const int left = docks.workload->width();
        const int right = docks.pricing->width();
        const int pricingHeight = docks.pricing->height();
        QVERIFY(left >= 300 && left <= 380);
        QVERIFY(right >= 360 && right <= 440);
        docks.warnings->setFloating(true);
        docks.inspector->close();
        w.removeDockWidget(docks.groups);
        w.addDockWidget(Qt::RightDockWidgetArea, docks.groups);
        docks.groups->show();
        w.resizeDocks({docks.workload}, {700}, Qt::Horizontal);
        settle();
        QVERIFY(w.centralWidget()->width() < w.width() / 2); // the user's choice, until reset
        reset->trigger();
        settle();
        // The six main docks are shown; of the tabs beside them, Hottest Links is shown and
        // the Planner, the Guided Tour and the Collective Lesson are hidden until asked for.
        QDockWidget *hottest = w.findChild<QDockWidget *>(QStringLiteral("HottestLinksDock"));
        QDockWidget *planner = w.findChild<QDockWidget *>(QStringLiteral("PlannerDock"));
        QDockWidget *tour = w.findChild<QDockWidget *>(QStringLiteral("GuidedTourDock"));
        QVERIFY(hottest && planner && tour);
        const QStringList hiddenByDefault{QStringLiteral("PlannerDock"),
                                          QStringLiteral("GuidedTourDock"),
                                          QStringLiteral("CollectiveLessonDock"),
                                          QStringLiteral("FaultDock")};
        for (QDockWidget *d : w.dockLayout()->all()) {
            QVERIFY2(!d->isFloating(), qPrintable(d->objectName()));
            QCOMPARE(d->toggleViewAction()->isChecked(), !hiddenByDefault.contains(d->objectName()));
        }
        QVERIFY(w.findChild<QDockWidget *>(QStringLiteral("CollectiveLessonDock")));
        QCOMPARE(w.dockWidgetArea(docks.groups), Qt::LeftDockWidgetArea);
        QCOMPARE(w.dockWidgetArea(docks.warnings), Qt::RightDockWidgetArea);
        QCOMPARE(w.dockWidgetArea(planner), Qt::RightDockWidgetArea);
        QCOMPARE(w.dockWidgetArea(tour), Qt::LeftDockWidgetArea);
        QVERIFY(w.tabifiedDockWidgets(docks.workload).contains(docks.cluster));
        QVERIFY(w.tabifiedDockWidgets(docks.workload)
                        .contains(w.findChild<QDockWidget *>(
                                QStringLiteral("CollectiveLessonDock"))));
        QVERIFY(w.tabifiedDockWidgets(docks.groups).contains(docks.inspector));
        QVERIFY(w.tabifiedDockWidgets(docks.pricing).contains(hottest));
        QVERIFY(w.tabifiedDockWidgets(docks.warnings).isEmpty());
        QVERIFY(onShow(w, docks.pricing)); // in front of its tabs
        QVERIFY(onShow(w, docks.groups));
        // Asking for the Planner brings its tab forward beside Pricing; a reset hides it again.
        planner->toggleViewAction()->trigger();
        settle();
        QVERIFY(onShow(w, planner));
        QVERIFY(w.tabifiedDockWidgets(planner).contains(docks.pricing));
        reset->trigger();
        settle();
        QVERIFY(planner->isHidden());
        QVERIFY(onShow(w, docks.pricing));
        RAILYARD_COMPARE_ABS(docks.workload->width(), left, 4);
        RAILYARD_COMPARE_ABS(docks.pricing->width(), right, 4);
        RAILYARD_COMPARE_ABS(docks.pricing->height(), pricingHeight, 4);
        checkCanvas(w, QStringLiteral("reset"));
    }

    // A first start, as main() does it (no saved session): the Groups chips, Workload and
    // Pricing are in front of their tabs, and the hidden-by-default tabs stay hidden.
    void firstStartShowsTheDefaultTabs()
    {
        QSettings().clear();
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1600, 1000);
        w.restoreSession();
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        settle();
        const DockLayout::Docks docks = w.dockLayout()->docks();
        QVERIFY(onShow(w, docks.groups));
        QVERIFY(onShow(w, docks.workload));
        QVERIFY(onShow(w, docks.pricing));
        QVERIFY(!onShow(w, docks.inspector));
        QVERIFY(w.findChild<QDockWidget *>(QStringLiteral("PlannerDock"))->isHidden());
        QVERIFY(w.findChild<QDockWidget *>(QStringLiteral("GuidedTourDock"))->isHidden());
        QVERIFY(w.findChild<QDockWidget *>(QStringLiteral("CollectiveLessonDock"))->isHidden());
    }

    // Pricing and Warnings are both in view (neither behind a tab), each tall enough to read.
    void pricingAndWarningsBothShow()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("tp-across-servers.railyard.json")));
        // The note that no stack is named comes with the stack range, priced off this thread.
        QTRY_VERIFY(!w.document()->isStackRangePending());
        settle();
        const DockLayout::Docks docks = w.dockLayout()->docks();
        QVERIFY(onShow(w, docks.warnings));
        QVERIFY(onShow(w, docks.pricing));
        QVERIFY(w.tabifiedDockWidgets(docks.warnings).isEmpty());
        // Every row in view: the two TP warnings, the note that no stack is named and "where
        // the model is unsure".
        QTreeWidget *list = w.warningsPanel()->list();
        QCOMPARE(list->topLevelItemCount(), 4);
        for (int i = 0; i < list->topLevelItemCount(); ++i)
            QVERIFY2(list->viewport()->rect().contains(list->visualItemRect(list->topLevelItem(i))),
                     qPrintable(list->topLevelItem(i)->text(0)));
        // Clicking a device brings the Inspector forward (it shares a tab with Groups).
        QVERIFY(!onShow(w, docks.inspector));
        QVERIFY(onShow(w, docks.groups));
        QVERIFY(w.search(QStringLiteral("GPU 3")));
        settle();
        QVERIFY(onShow(w, docks.inspector));
        QVERIFY(!onShow(w, docks.groups));
        QVERIFY(onShow(w, docks.warnings));
    }

    // Help > Keyboard Shortcuts lists every shortcut of every menu action; Help > Quick Guide
    // is on F1 and names the keys the actions really have.
    void helpListsEveryShortcutAndHasAGuide()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QAction *keys = menuAction(w,
                                   {QStringLiteral("Help"), QStringLiteral("Keyboard Shortcuts")});
        QVERIFY(keys);
        keys->trigger();
        auto *dialog = w.findChild<ShortcutsDialog *>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(!dialog->isModal());
        QStringList listed;
        QStringList sections;
        for (int i = 0; i < dialog->table()->topLevelItemCount(); ++i) {
            QTreeWidgetItem *item = dialog->table()->topLevelItem(i);
            listed << item->text(1);
            if (item->isFirstColumnSpanned()) {
                QVERIFY2(!sections.contains(item->text(0)), qPrintable(item->text(0)));
                sections << item->text(0);
            }
        }
        QVERIFY(sections.contains(QStringLiteral("View > Colour GPUs By")));
        QVERIFY(sections.contains(QStringLiteral("Canvas")));
        int withKeys = 0;
        for (QAction *a : w.findChildren<QAction *>()) {
            if (a->shortcuts().isEmpty() || a->associatedObjects().isEmpty())
                continue;
            ++withKeys;
            bool found = false;
            const QString k = a->shortcut().toString(QKeySequence::NativeText);
            for (const QString &l : listed)
                found = found || l.split(QStringLiteral(", ")).contains(k);
            QVERIFY2(found, qPrintable(a->text() + QStringLiteral(": ") + k));
        }
        QVERIFY(withKeys >= 20);
        QCOMPARE(ShortcutsDialog::menuEntries(w.menuBar()).size(), withKeys);
        QVERIFY(listed.contains(QStringLiteral("Ctrl+O")));
        QVERIFY(listed.contains(QStringLiteral("Alt+3")));

        QAction *guide = menuAction(w, {QStringLiteral("Help"), QStringLiteral("Quick Guide")});
        QVERIFY(guide);
        QCOMPARE(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
        QCOMPARE(guide->shortcut(), QKeySequence(Qt::Key_F1));
        guide->trigger();
        auto *quick = w.findChild<QuickGuide *>();
        QVERIFY(quick);
        QVERIFY(quick->isVisible());
        const QString text = quick->browser()->toPlainText();
        QVERIFY(text.contains(QStringLiteral("Pin as A (Ctrl+Shift+P)")));
        QVERIFY(text.contains(QStringLiteral("Link Load (Ctrl+L)")));
        QVERIFY(text.contains(QStringLiteral("Keyboard Shortcuts (Ctrl+/)")));
    }

    // View > Panels toggles every dock.
    void viewMenuTogglesEveryDock()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        for (QDockWidget *d : w.dockLayout()->all()) {
            QAction *toggle = menuAction(w,
                                         {QStringLiteral("View"),
                                          QStringLiteral("Panels"),
                                          d->windowTitle()});
            QVERIFY2(toggle, qPrintable(d->windowTitle()));
            const bool shown = toggle->isChecked();
            QCOMPARE(shown, !d->isHidden());
            toggle->trigger();
            QCOMPARE(d->isHidden(), shown);
            toggle->trigger();
            QCOMPARE(d->isHidden(), !shown);
        }
    }

    // The docks come back as the user left them; a state that does not apply is ignored, and a
    // dock floating off every screen comes back into the window.
    void sessionRemembersTheDocksAndChecksThem()
    {
        QSettings().clear();
        {
            MainWindow w(nullptr, m_recovery.path());
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            const DockLayout::Docks docks = w.dockLayout()->docks();
            docks.inspector->close();
            w.removeDockWidget(docks.warnings);
            w.addDockWidget(Qt::LeftDockWidgetArea, docks.warnings);
            docks.warnings->show();
            settle();
            w.saveSession();
        }
        {
            MainWindow w(nullptr, m_recovery.path());
            w.restoreSession();
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            settle();
            const DockLayout::Docks docks = w.dockLayout()->docks();
            QCOMPARE(w.dockWidgetArea(docks.warnings), Qt::LeftDockWidgetArea);
            QVERIFY(docks.inspector->isHidden());
            QCOMPARE(w.size(), QSize(1600, 1000));
            checkCanvas(w, QStringLiteral("restored"));
            // Off every screen: back into the window.
            docks.pricing->setFloating(true);
            docks.pricing->move(-20000, -20000);
            w.saveSession();
        }
        {
            MainWindow w(nullptr, m_recovery.path());
            w.restoreSession();
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QDockWidget *pricing = w.dockLayout()->docks().pricing;
            bool inView = !pricing->isFloating();
            for (const QScreen *screen : QGuiApplication::screens())
                inView = inView || screen->availableGeometry().intersects(pricing->geometry());
            QVERIFY(inView);
        }
        // Garbage, or a state of another version: the default arrangement.
        QSettings().setValue(QStringLiteral("window/state"), QByteArray("not a state"));
        {
            MainWindow w(nullptr, m_recovery.path());
            w.restoreSession();
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            const DockLayout::Docks docks = w.dockLayout()->docks();
            QCOMPARE(w.dockWidgetArea(docks.warnings), Qt::RightDockWidgetArea);
            QVERIFY(!docks.inspector->isHidden());
            checkCanvas(w, QStringLiteral("garbage state"));
        }
        QSettings().clear();
    }
    // Fit (Ctrl+0) leaves the cluster clear of the title block above it and the legend under
    // it: no rack, switch or server under either, for every shipped layout, at 1600x1000 and
    // 1280x800, with Link Load off and on (its scale makes the legend taller).
    void fitLeavesRoomForTheOverlays()
    {
        const QStringList names = QDir(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts"))
                                          .entryList({QStringLiteral("*.railyard.json")});
        QVERIFY(!names.isEmpty());
        MainWindow w(nullptr, m_recovery.path());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        for (const QString &name : names) {
            QVERIFY2(w.openFile(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + name),
                     qPrintable(name));
            for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)})
                for (const bool load : {false, true}) {
                    w.resize(size);
                    if (w.action(QStringLiteral("actionLinkLoad"))->isChecked() != load)
                        w.action(QStringLiteral("actionLinkLoad"))->trigger();
                    settle();
                    w.action(QStringLiteral("actionFit"))->trigger();
                    settle();
                    ClusterView *view = w.view();
                    const QRect title = view->titleBlockRect(), legend = view->legendRect();
                    const ClusterGeometry &g = static_cast<ClusterScene *>(view->scene())->geometry();
                    const engine::Topology &t = w.document()->topology();
                    std::vector<QRectF> parts;
                    for (int r = 0; r < g.rackCount(); ++r)
                        parts.push_back(g.rackRect(r));
                    for (int d = 0; d < t.deviceCount(); ++d) {
                        const auto kind = t.devices()[std::size_t(d)].kind;
                        if (kind == engine::DeviceKind::Leaf || kind == engine::DeviceKind::Spine
                            || kind == engine::DeviceKind::Core || g.rackCount() == 0)
                            parts.push_back(g.deviceRect(d));
                    }
                    for (const QRectF &part : parts) {
                        const QRect at = view->mapFromScene(part).boundingRect();
                        const QString where = QStringLiteral("%1 at %2x%3%4: %5,%6 %7x%8 under the "
                                                             "%9")
                                                      .arg(name)
                                                      .arg(size.width())
                                                      .arg(size.height())
                                                      .arg(load ? QStringLiteral(", link load")
                                                                : QString())
                                                      .arg(at.x())
                                                      .arg(at.y())
                                                      .arg(at.width())
                                                      .arg(at.height());
                        QVERIFY2(!at.intersects(title),
                                 qPrintable(where.arg(QStringLiteral("title"))));
                        QVERIFY2(!at.intersects(legend),
                                 qPrintable(where.arg(QStringLiteral("legend"))));
                    }
                }
            if (w.action(QStringLiteral("actionLinkLoad"))->isChecked())
                w.action(QStringLiteral("actionLinkLoad"))->trigger();
        }
        closeMessageBoxes();
    }

    void dockSetChangesBumpTheStateVersion()
    {
        // The docks each saved-state version holds: a dock added or removed without a new
        // version would have an older session's state restored over a set it does not know.
        const std::map<int, QStringList> docksOfVersion{
                {3,
                 {"WorkloadDock",
                  "ClusterDock",
                  "GroupsDock",
                  "InspectorDock",
                  "PricingDock",
                  "WarningsDock",
                  "HottestLinksDock",
                  "PlannerDock",
                  "GuidedTourDock"}},
                {4,
                 {"WorkloadDock",
                  "ClusterDock",
                  "GroupsDock",
                  "InspectorDock",
                  "PricingDock",
                  "WarningsDock",
                  "HottestLinksDock",
                  "PlannerDock",
                  "GuidedTourDock",
                  "CollectiveLessonDock",
                  "FaultDock"}},
        };
        QSettings().clear();
        QByteArray older;
        {
            MainWindow w(nullptr, m_recovery.path());
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QStringList names;
            for (QDockWidget *d : w.findChildren<QDockWidget *>())
                names << d->objectName();
            QStringList known = docksOfVersion.count(DockLayout::kStateVersion)
                                        ? docksOfVersion.at(DockLayout::kStateVersion)
                                        : QStringList();
            names.sort();
            known.sort();
            QCOMPARE(names, known);
            // A session of version 3 (no Lesson, no Faults dock), its Warnings moved left.
            const DockLayout::Docks docks = w.dockLayout()->docks();
            w.removeDockWidget(w.findChild<QDockWidget *>(QStringLiteral("FaultDock")));
            w.removeDockWidget(w.findChild<QDockWidget *>(QStringLiteral("CollectiveLessonDock")));
            w.removeDockWidget(docks.warnings);
            w.addDockWidget(Qt::LeftDockWidgetArea, docks.warnings);
            docks.warnings->show();
            settle();
            older = w.saveState(3);
        }
        QSettings().setValue(QStringLiteral("window/state"), older);
        {
            // Ignored: the default arrangement, the Faults dock in its place with Pricing.
            MainWindow w(nullptr, m_recovery.path());
            w.restoreSession();
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            settle();
            const DockLayout::Docks docks = w.dockLayout()->docks();
            QCOMPARE(w.dockWidgetArea(docks.warnings), Qt::RightDockWidgetArea);
            auto *faults = w.findChild<QDockWidget *>(QStringLiteral("FaultDock"));
            QVERIFY(faults);
            QCOMPARE(w.dockWidgetArea(faults), w.dockWidgetArea(docks.pricing));
        }
        QSettings().clear();
    }
    // Compare > Pin, then an edit: the Pricing dock shows A beside B and the links whose load
    // changed, several rows of them, not one.
    void pinnedComparisonShowsTheChangedLinks()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        QAction *pin = menuAction(w,
                                  {QStringLiteral("Compare"),
                                   QStringLiteral("Pin Current State as A")});
        QVERIFY(pin);
        pin->trigger();
        const engine::MappingEdit move = engine::placeGroup(w.document()->layout(),
                                                            engine::Dim::TP,
                                                            0,
                                                            {4, 5, 6, 7, 8, 9, 10, 11});
        QVERIFY(move.ok());
        w.document()->undoStack()->push(
                new ChangeMapping(w.document(), move.mapping, QStringLiteral("Place TP group 0")));
        settle();
        // A, B and the change all show in the dock, none cut off at its right edge.
        QTableWidget *m = w.pricingPanel()->metrics();
        for (int c = 0; c < 3; ++c)
            QVERIFY2(m->columnViewportPosition(c) + m->columnWidth(c) <= m->viewport()->width(),
                     qPrintable(QString::number(c)));
        QTreeWidget *links = w.pricingPanel()->linkChanges();
        QVERIFY(links->isVisibleTo(w.pricingPanel()));
        QVERIFY(links->topLevelItemCount() >= 6);
        const int rows = links->viewport()->height() / links->sizeHintForRow(0);
        QVERIFY2(rows >= 6, qPrintable(QString::number(rows)));
        shoot(w, QStringLiteral("pinned-1280x800-gmi-h200-cluster"));
        w.document()->undoStack()->setClean();
    }

    // The window never grows off the screen, and Pricing's numbers stay whole: playing the
    // 16k step (whose running phases make a long line under the canvas) and placing a group
    // while it plays grew the window to 1,747 px on a 1,600 px screen; at 1280x800 with the
    // Lesson open, Pricing's numbers were cut to one digit.
    void windowStaysOnTheScreen_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("1280x800") << QSize(1280, 800);
    }

    void windowStaysOnTheScreen()
    {
        QFETCH(QSize, size);
        MainWindow w(nullptr, m_recovery.path());
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("llama3.1-405b-16k-h100.railyard.json")));
        settle();
        const auto fits = [&](const QString &when) {
            // The stack range lands off the GUI thread and rewrites the step's band: let it land
            // and the dock lay out its new text before measuring it (a busy machine landed it
            // between settle() and the check).
            QTRY_VERIFY(!w.document()->isStackRangePending());
            settle();
            QVERIFY2(w.size() == size,
                     qPrintable(QStringLiteral("%1: the window is %2x%3")
                                        .arg(when)
                                        .arg(w.width())
                                        .arg(w.height())));
            const QSize least = w.minimumSizeHint().expandedTo(w.minimumSize());
            QVERIFY2(least.width() <= size.width() && least.height() <= size.height(),
                     qPrintable(QStringLiteral("%1: the window needs %2x%3")
                                        .arg(when)
                                        .arg(least.width())
                                        .arg(least.height())));
            // Pricing's numbers whole: the step, and every cell of the table, in its column and
            // the column in the table.
            PricingPanel *pricing = w.pricingPanel();
            auto *scroll = qobject_cast<QScrollArea *>(w.dockLayout()->docks().pricing->widget());
            QVERIFY(scroll);
            QVERIFY2(!scroll->horizontalScrollBar()->isVisible(),
                     qPrintable(when + QStringLiteral(": Pricing scrolls sideways")));
            QLabel *step = pricing->findChild<QLabel *>(QStringLiteral("stepTime"));
            QVERIFY(step);
            QVERIFY2(step->fontMetrics().horizontalAdvance(step->text()) <= step->width(),
                     qPrintable(QStringLiteral("%1: \"%2\" in %3 px")
                                        .arg(when, step->text())
                                        .arg(step->width())));
            QTableWidget *m = pricing->metrics();
            const int margin = 2 * (m->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1);
            for (int c = 0; c < m->columnCount(); ++c) {
                if (m->isColumnHidden(c))
                    continue;
                QVERIFY2(m->columnViewportPosition(c) + m->columnWidth(c) <= m->viewport()->width(),
                         qPrintable(QStringLiteral("%1: column %2 cut").arg(when).arg(c)));
                for (int r = 0; r < m->rowCount(); ++r) {
                    const QString text = m->item(r, c)->text();
                    QVERIFY2(m->fontMetrics().horizontalAdvance(text) + margin <= m->columnWidth(c),
                             qPrintable(QStringLiteral("%1: \"%2\" in %3 px")
                                                .arg(when, text)
                                                .arg(m->columnWidth(c))));
                }
            }
        };
        fits(QStringLiteral("opened"));
        // Play, and scrub to the moment with the longest line of running phases.
        w.viewState()->play();
        const engine::StepTimeline &tl = w.document()->evaluation().timeline;
        const std::size_t every = std::max<std::size_t>(1, tl.phases.size() / 100);
        double longest = 0;
        int most = 0;
        for (std::size_t i = 0; i < tl.phases.size(); i += every) {
            const double t = (tl.phases[i].start + tl.phases[i].end) / 2;
            w.viewState()->setPlaybackTime(t);
            if (w.timeline()->statusText().size() > most) {
                most = int(w.timeline()->statusText().size());
                longest = t;
            }
        }
        w.viewState()->setPlaybackTime(longest);
        w.viewState()->play();
        fits(QStringLiteral("playing"));
        // A group placed while it plays (as a drop does): Pricing gains its Before and Change
        // columns.
        const engine::MappingEdit move = engine::placeGroup(w.document()->layout(),
                                                            engine::Dim::TP,
                                                            0,
                                                            {4, 5, 6, 7, 8, 9, 10, 11});
        QVERIFY(move.ok());
        w.document()->undoStack()->push(
                new ChangeMapping(w.document(), move.mapping, QStringLiteral("Place TP group 0")));
        QVERIFY(!w.pricingPanel()->metrics()->isColumnHidden(2));
        fits(QStringLiteral("placed while playing"));
        // Pinned (A, B and the change), with the Collective Lesson open beside Workload.
        menuAction(w, {QStringLiteral("Compare"), QStringLiteral("Pin Current State as A")})
                ->trigger();
        w.document()->undoStack()->undo();
        menuAction(w, {QStringLiteral("View"), QStringLiteral("Collective Lesson")})->trigger();
        QVERIFY(w.lessonDock()->isVisible());
        fits(QStringLiteral("lesson open"));
        w.viewState()->pause();
        w.document()->undoStack()->setClean();
    }

    // A serving layout's Pricing dock at the two window sizes: its last row (the note under
    // the memory and the breakdown) is in view without scrolling, and no number is cut (the
    // dock needed its scroll bar at 1280x800 for the memory, the concurrency and the
    // breakdown). The same with something to compare: A pinned and the concurrency doubled
    // since (the comparison scrolled at 1280x800: every number in its own row, A, B and the
    // change, pushed the breakdown and the memory below the dock's edge).
    void servingPricingFits_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("compare");
        for (const bool compare : {false, true})
            for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)})
                for (const char *name : {"serving-disaggregated-gb200-nvl72.railyard.json",
                                         "serving-deepseek-r1-wide-ep-h200-ib.railyard.json",
                                         "serving-llama70b-tp16-two-servers.railyard.json"})
                    QTest::addRow("%s %dx%d %s",
                                  compare ? "A/B" : "alone",
                                  size.width(),
                                  size.height(),
                                  name)
                            << size << layoutPath(name) << compare;
    }

    void servingPricingFits()
    {
        QFETCH(QSize, size);
        QFETCH(QString, path);
        QFETCH(bool, compare);
        MainWindow w(nullptr, m_recovery.path());
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(path));
        settle();
        QVERIFY(w.document()->isServing() && w.document()->isPriced());
        if (compare) {
            w.pricingPanel()->pinA();
            Document *doc = w.document();
            engine::ServingConfig serving = *doc->layout().serving;
            serving.concurrency = 2 * serving.concurrency.value_or(32);
            doc->undoStack()->push(new ChangeServing(doc,
                                                     serving,
                                                     doc->layout().parallel,
                                                     QStringLiteral("Concurrency")));
            settle();
            QVERIFY(doc->pinned() && doc->isPriced());
        }
        const DockLayout::Docks docks = w.dockLayout()->docks();
        QVERIFY(onShow(w, docks.pricing));
        auto *scroll = qobject_cast<QScrollArea *>(docks.pricing->widget());
        QVERIFY(scroll);
        QCOMPARE(scroll->verticalScrollBar()->value(), 0);
        QVERIFY(!scroll->horizontalScrollBar()->isVisible());
        ServingPricing *serving = w.pricingPanel()->findChild<ServingPricing *>();
        QVERIFY(serving && serving->isVisible());
        QWidget *shownIn = scroll->viewport();
        const auto inView = [&](QWidget *widget, const QRect &part, const QString &what) {
            const QRect shown(widget->mapTo(shownIn, part.topLeft()), part.size());
            QVERIFY2(shownIn->rect().contains(shown),
                     qPrintable(QStringLiteral("%1 at y %2 to %3 in a dock %4 px tall")
                                        .arg(what)
                                        .arg(shown.top())
                                        .arg(shown.bottom())
                                        .arg(shownIn->height())));
        };
        // Every number of the table shown (A, B and the change when comparing), the
        // breakdown's last row shown, and the labels below (wrapped whole: as tall as their
        // text at their width).
        QTableWidget *m = compare ? serving->metrics() : serving->grid();
        QVERIFY(m->isVisible());
        QCOMPARE(serving->metrics()->isVisible(), compare);
        for (int r = 0; r < m->rowCount(); ++r)
            for (int c = 0; c < m->columnCount(); ++c) {
                const QTableWidgetItem *item = m->item(r, c);
                if (!item || m->isColumnHidden(c) || m->isRowHidden(r) || item->text().isEmpty())
                    continue;
                const QRect rect = m->visualItemRect(item);
                inView(m->viewport(), rect, item->text());
                // Not cut: the cell holds its text.
                QVERIFY2(rect.width() >= m->fontMetrics().horizontalAdvance(item->text()),
                         qPrintable(item->text()));
            }
        // Comparing, A, B and the change are as wide as their numbers and the names take what
        // the numbers leave (the change column took it all: 143 px for its 41 px of text at
        // 1600x1000).
        if (compare) {
            int columns = 0;
            for (int c = 0; c < m->columnCount(); ++c) {
                int widest = m->horizontalHeader()->sectionSizeHint(c);
                for (int r = 0; r < m->rowCount(); ++r)
                    widest = std::max(widest,
                                      m->fontMetrics().horizontalAdvance(m->item(r, c)->text()));
                QVERIFY2(m->columnWidth(c) <= widest + 16,
                         qPrintable(QStringLiteral("column %1: %2 px for %3 px of text")
                                            .arg(c)
                                            .arg(m->columnWidth(c))
                                            .arg(widest)));
                columns += m->columnWidth(c);
            }
            QCOMPARE(m->verticalHeader()->width() + columns + 2 * m->frameWidth(), m->width());
        }
        // Alone, the breakdown below; comparing, the decode step's rows in the table (checked
        // above with every number) stand for it.
        QTableWidget *b = serving->breakdown();
        QCOMPARE(b->isVisible(), !compare);
        if (compare)
            QVERIFY(!m->isRowHidden(serving->metricRow(QStringLiteral("Decode step"))));
        int last = -1;
        for (int r = 0; r < b->rowCount() && !compare; ++r)
            if (!b->isRowHidden(r))
                last = r;
        if (!compare) {
            QVERIFY(last >= 0);
            inView(b->viewport(),
                   b->visualItemRect(b->item(last, 0)),
                   b->verticalHeaderItem(last)->text());
            QVERIFY(b->visualItemRect(b->item(last, 0)).bottom() < b->viewport()->height());
        }
        for (QLabel *label : serving->findChildren<QLabel *>()) {
            if (!label->isVisible() || label->text().isEmpty())
                continue;
            QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                     qPrintable(label->text()));
            inView(label, label->rect(), label->text().left(40));
        }
    }

    // The mouse wheel rolled down the Workload dock scrolls the dock; it does not step the
    // spin boxes and combo boxes it passes over (three notches took Global batch from 128 to
    // 32 and the step from 5.32 s to 1.35 s). Once the user is in a field, the wheel steps it.
    void wheelOverADockScrollsIt()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("llama3.1-405b-16k-h100.railyard.json")));
        settle();
        WorkloadPanel *workload = w.workloadPanel();
        auto *scroll = qobject_cast<QScrollArea *>(w.dockLayout()->docks().workload->widget());
        QVERIFY(scroll);
        QScrollBar *bar = scroll->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0, "the Workload dock does not scroll at 1280x800");
        const double step = w.document()->evaluation().stepTimeS;
        const int undo = w.document()->undoStack()->count();
        const auto wheel = [](QWidget *field, int notches) {
            const QPointF at = QRectF(field->rect()).center();
            for (int i = 0; i < std::abs(notches); ++i) {
                QWheelEvent e(at,
                              field->mapToGlobal(at),
                              QPoint(),
                              QPoint(0, notches < 0 ? -120 : 120),
                              Qt::NoButton,
                              Qt::NoModifier,
                              Qt::NoScrollPhase,
                              false);
                QApplication::sendEvent(field, &e);
            }
        };
        QSpinBox *batch = workload->globalBatchBox();
        QComboBox *precision = workload->precisionBox();
        QComboBox *tp = workload->sizeBox(engine::Dim::TP);
        const int batchBefore = batch->value();
        const int precisionBefore = precision->currentIndex();
        const int tpBefore = tp->currentIndex();
        bar->setValue(0);
        wheel(batch, -3);
        QCOMPARE(batch->value(), batchBefore);
        QVERIFY2(bar->value() > 0, "the dock did not scroll");
        const int scrolled = bar->value();
        wheel(precision, -2);
        wheel(tp, -2);
        QCOMPARE(precision->currentIndex(), precisionBefore);
        QCOMPARE(tp->currentIndex(), tpBefore);
        QVERIFY(bar->value() > scrolled || bar->value() == bar->maximum());
        QVERIFY(!batch->hasFocus());
        QCOMPARE(w.document()->evaluation().stepTimeS, step);
        QCOMPARE(w.document()->undoStack()->count(), undo);
        // The fields no longer take the focus from the wheel, but from a click or Tab.
        for (QWidget *field : std::initializer_list<QWidget *>{batch, precision, tp})
            QCOMPARE(field->focusPolicy(), Qt::StrongFocus);

        // In the field (clicked or tabbed into), the wheel steps it, one undo step per value.
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        batch->setFocus(Qt::MouseFocusReason);
        QVERIFY(batch->hasFocus());
        wheel(batch, 1);
        QCOMPARE(batch->value(), batchBefore + batch->singleStep());
        QVERIFY(w.document()->undoStack()->count() > undo);
        w.document()->undoStack()->setClean();
    }
    // The Planner dock at 1280x800 (a tab beside Pricing, over the Warnings): after a search on
    // the 16k preset (six lines of status over the table), the chart was squeezed and its key
    // and note cut off: the panel is taller than the dock. The dock scrolls instead; the chart
    // keeps its height, and scrolled to them the key and the note show whole.
    void plannerShowsWholeAt1280x800()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("llama3.1-405b-16k-h100.railyard.json")));
        menuAction(w, {QStringLiteral("View"), QStringLiteral("Planner")})->trigger();
        settle();
        PlannerPanel *planner = w.plannerPanel();
        QVERIFY(planner->isVisible());
        QSignalSpy done(planner, &PlannerPanel::searchFinished);
        planner->search();
        QVERIFY(done.count() == 1 || done.wait(120000));
        settle();
        // The chart keeps its least height (it was squeezed to under half of it).
        ParetoChart *chart = planner->chart();
        QVERIFY2(chart->height() >= chart->minimumSizeHint().height(),
                 qPrintable(QStringLiteral("the chart is %1 px tall and needs %2")
                                    .arg(chart->height())
                                    .arg(chart->minimumSizeHint().height())));
        // What the dock shows: its scroll area's viewport (scrolled to the label), else the
        // panel itself.
        QWidget *contents = w.plannerDock()->widget();
        auto *scroll = qobject_cast<QScrollArea *>(contents);
        QWidget *shownIn = scroll ? scroll->viewport() : contents;
        for (QLabel *label :
             {planner->chart()->keyLabel(),
              planner->chart()->findChild<QLabel *>(QStringLiteral("paretoNote"))}) {
            QVERIFY(label && label->isVisible());
            if (scroll)
                scroll->ensureWidgetVisible(label, 0, 0);
            settle();
            const QRect shown = QRect(label->mapTo(shownIn, QPoint(0, 0)), label->size());
            // As tall as its wrapped text at its width: a squeezed label shows a strip of it.
            QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                     qPrintable(QStringLiteral("%1 is %2 px tall, its text %3")
                                        .arg(label->objectName())
                                        .arg(label->height())
                                        .arg(label->heightForWidth(label->width()))));
            QVERIFY2(shownIn->rect().contains(shown),
                     qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 in a %6x%7 dock")
                                        .arg(label->objectName())
                                        .arg(shown.x())
                                        .arg(shown.y())
                                        .arg(shown.width())
                                        .arg(shown.height())
                                        .arg(shownIn->width())
                                        .arg(shownIn->height())));
        }
    }
};

QTEST_MAIN(TestWindowLayout)
#include "tst_windowlayout.moc"
