// The main window as a user meets it: examples open, bad files leave the open document alone
// with the engine's message, the status bar shows the cluster and the step time, the title
// marks unsaved work, the Cluster panel edits through undo, search, recent files, recovery.
#include "commands/changemapping.h"
#include "commands/changetitle.h"
#include "defaultplan.h"
#include "docklayout.h"
#include "document/autosaver.h"
#include "document/document.h"
#include "mainwindow.h"
#include "palette/groupchipmodel.h"
#include "palette/groupmime.h"
#include "palette/grouppalette.h"
#include "panels/clusterform.h"
#include "panels/clusterpanel.h"
#include "panels/inspectorpanel.h"
#include "panels/newclusterdialog.h"
#include "panels/pricingpanel.h"
#include "panels/warningspanel.h"
#include "placement.h"
#include "quickguide.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "shortcutsdialog.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>

#include <functional>

using namespace railyard;

namespace {

QString layoutPath(const char *name)
{
    return QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name);
}

void closeMessageBoxes()
{
    for (QWidget *top : QApplication::topLevelWidgets())
        if (top->inherits("QMessageBox"))
            top->close();
}

QString plain(QString text)
{
    text.remove(QLatin1Char('&'));
    if (text.endsWith(QChar(0x2026)))
        text.chop(1);
    return text;
}

// The action a user reaches through the menus: {"File", "Open Example", "One HGX H100 server"}.
QAction *menuAction(const QMainWindow &w, const QStringList &path)
{
    QList<QAction *> actions = w.menuBar()->actions();
    for (int i = 0; i < path.size(); ++i) {
        QAction *found = nullptr;
        for (QAction *a : actions)
            if (plain(a->text()) == path[i])
                found = a;
        if (!found)
            return nullptr;
        if (i + 1 == path.size())
            return found;
        if (!found->menu())
            return nullptr;
        actions = found->menu()->actions();
    }
    return nullptr;
}

// Whether the dock is on show: not closed, not floating, not a tab behind another (Qt parks
// those outside the window, still "visible").
bool onShow(const QMainWindow &w, const QDockWidget *d)
{
    return d->isVisible() && !d->isFloating() && w.rect().intersects(d->geometry());
}

// Lets posted layout requests and zero timers run (the window settles after an open).
void settle()
{
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}

// The canvas keeps at least half the window, the side docks keep sensible widths, and the whole
// cluster is in view at a scale that fills the viewport along one side.
void checkCanvas(MainWindow &w, const QString &what)
{
    settle();
    const int canvas = w.centralWidget()->width();
    QVERIFY2(canvas >= w.width() / 2,
             qPrintable(
                     QStringLiteral("%1: canvas %2 px of %3").arg(what).arg(canvas).arg(w.width())));
    for (QDockWidget *d : w.findChildren<QDockWidget *>())
        if (onShow(w, d))
            QVERIFY2(d->width() <= 0.3 * w.width(),
                     qPrintable(QStringLiteral("%1: %2 is %3 px wide")
                                        .arg(what, d->objectName())
                                        .arg(d->width())));
    // No panel is wider than its dock (it would scroll sideways).
    for (QDockWidget *d : w.findChildren<QDockWidget *>())
        if (auto *scroll = qobject_cast<QScrollArea *>(d->widget()); scroll && onShow(w, d))
            QVERIFY2(!scroll->horizontalScrollBar()->isVisible(),
                     qPrintable(QStringLiteral("%1: %2 scrolls sideways (%3 px in %4)")
                                        .arg(what, d->objectName())
                                        .arg(scroll->widget()->minimumSizeHint().width())
                                        .arg(scroll->viewport()->width())));
    ClusterView *view = w.view();
    const QRect viewport = view->viewport()->rect();
    const QRectF cluster = view->mapFromScene(w.scene()->sceneRect()).boundingRect();
    QVERIFY2(QRectF(viewport).adjusted(-1, -1, 1, 1).contains(cluster),
             qPrintable(QStringLiteral("%1: cluster %2,%3 %4x%5 outside the viewport %6x%7")
                                .arg(what)
                                .arg(cluster.x())
                                .arg(cluster.y())
                                .arg(cluster.width())
                                .arg(cluster.height())
                                .arg(viewport.width())
                                .arg(viewport.height())));
    // Fitted, not a speck: the cluster spans most of the viewport one way or the other.
    QVERIFY2(cluster.width() >= 0.6 * viewport.width()
                     || cluster.height() >= 0.6 * viewport.height(),
             qPrintable(QStringLiteral("%1: cluster %2x%3 in a %4x%5 viewport")
                                .arg(what)
                                .arg(cluster.width())
                                .arg(cluster.height())
                                .arg(viewport.width())
                                .arg(viewport.height())));
}

// With RAILYARD_SHOTS_DIR set, saves what the window shows (for people to look at).
void shoot(QWidget &w, const QString &name)
{
    const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QVERIFY(w.grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
}

// Answers the next modal widget (a message box or a dialog) once it is up.
void whenModal(std::function<void(QWidget *)> answer)
{
    QTimer::singleShot(0, [answer] { answer(QApplication::activeModalWidget()); });
}

} // namespace

class TestMainWindow : public QObject
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

    void opensDefaultLayout()
    {
        MainWindow w(nullptr, m_recovery.path());
        QFile f(QStringLiteral(":/layouts/hgx-h100-server.railyard.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString error;
        auto doc = Document::fromText(f.readAll(), QStringLiteral("default"), &error);
        QVERIFY2(doc, qPrintable(error));
        w.setDocument(std::move(doc));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // Every device of the server is on the canvas: 8 GPUs, 4 NVSwitches, 8 NICs.
        const engine::Topology &t = w.document()->topology();
        QCOMPARE(t.countOf(engine::DeviceKind::Gpu), 8);
        QCOMPARE(t.countOf(engine::DeviceKind::NvSwitch), 4);
        QCOMPARE(t.countOf(engine::DeviceKind::Nic), 8);
        for (int id = 0; id < t.deviceCount(); ++id)
            QVERIFY(w.scene()->sceneRect().contains(w.scene()->geometry().deviceRect(id)));
        QVERIFY(w.windowTitle().contains(QStringLiteral("One HGX H100 server")));
        QVERIFY(w.clusterLabel()->text().contains(QStringLiteral("8 GPUs")));
    }

    void everyExampleOpens_data()
    {
        QTest::addColumn<QString>("path");
        const QStringList examples = MainWindow::exampleLayouts();
        QVERIFY(examples.size() >= 7);
        for (const QString &p : examples)
            QTest::newRow(qPrintable(p)) << p;
    }

    void everyExampleOpens()
    {
        QFETCH(QString, path);
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
        QVERIFY(!w.document()->isModified());
        QVERIFY(w.document()->filePath().isEmpty()); // an example: Save asks where
        QVERIFY(!w.isWindowModified());
        QVERIFY(w.windowTitle().contains(QStringLiteral("[*]"))); // the marker's place
    }

    void stepTimeComesFromTheEvaluation()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        const engine::Evaluation &e = w.document()->evaluation();
        const QString text = w.stepTimeLabel()->text();
        if (e.ok) {
            QVERIFY2(text.contains(QStringLiteral(" s")) || text.contains(QStringLiteral("ms")),
                     qPrintable(text));
        } else {
            QVERIFY(text.contains(QStringLiteral("\u2014")));
            QVERIFY(w.stepTimeLabel()->toolTip().contains(QString::fromStdString(e.error)));
        }
        // A layout the engine cannot price (sizes that do not fill the cluster) shows a dash and
        // says why.
        engine::Layout l = w.document()->layout();
        l.parallel.dp = 3;
        w.document()->setLayout(l);
        QVERIFY(!w.document()->evaluation().ok);
        QVERIFY(w.stepTimeLabel()->text().contains(QStringLiteral("\u2014")));
        QVERIFY(!w.stepTimeLabel()->toolTip().isEmpty());
    }

    void badFilesKeepTheCurrentDocument_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("place");
        QTest::newRow("broken-json") << "broken-json"
                                     << "line 5, column 1";
        QTest::newRow("empty") << "empty"
                               << "line 1, column 1";
        QTest::newRow("future-version") << "future-version"
                                        << "/version";
        QTest::newRow("negative-nodes") << "negative-nodes"
                                        << "/cluster/nodes";
        QTest::newRow("billion-gpus") << "billion-gpus"
                                      << "/cluster/nodes";
        QTest::newRow("wrong-type") << "wrong-type"
                                    << "/cluster/nodes";
        QTest::newRow("unknown-gpu") << "unknown-gpu"
                                     << "/cluster/gpu";
    }

    void badFilesKeepTheCurrentDocument()
    {
        QFETCH(QString, name);
        QFETCH(QString, place);
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        Document *before = w.document();
        const std::string text = engine::layoutToText(before->layout());
        const QString path = QStringLiteral(RAILYARD_TEST_DATA "/bad/") + name
                             + QStringLiteral(".railyard.json");
        QVERIFY(!w.openFile(path));
        QCOMPARE(w.document(), before);
        QCOMPARE(engine::layoutToText(w.document()->layout()), text);
        QVERIFY2(w.lastError().startsWith(path), qPrintable(w.lastError()));
        // The message is shown without blocking: the file in its first line, then only where
        // and what is wrong with it.
        QMessageBox *box = w.findChild<QMessageBox *>();
        QVERIFY(box);
        QVERIFY(!box->isModal() || box->windowModality() == Qt::WindowModal);
        QVERIFY2(box->text().contains(name + QStringLiteral(".railyard.json")),
                 qPrintable(box->text()));
        QVERIFY2(box->informativeText().startsWith(place), qPrintable(box->informativeText()));
        QCOMPARE(box->informativeText(), w.lastError().mid(path.size() + 2));
    }

    // A broken file given on the command line (double-clicked) opens the window with the
    // default document and the reason, as main() does it.
    void badFileAtStartShowsTheWindowAndSaysWhy()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QString path = QStringLiteral(RAILYARD_TEST_DATA "/bad/negative-nodes.railyard.json");
        QVERIFY(!w.openFile(path));
        QVERIFY(w.isVisible());
        QVERIFY(w.windowTitle().contains(QStringLiteral("One HGX H100 server")));
        QCOMPARE(w.document()->topology().gpuCount(), 8);
        auto *box = w.findChild<QMessageBox *>();
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QVERIFY(box->text().contains(QStringLiteral("negative-nodes.railyard.json")));
        QVERIFY(box->informativeText().contains(QStringLiteral("/cluster/nodes")));
        QVERIFY(box->informativeText().contains(QStringLiteral("-3")));
        QVERIFY(w.statusBar()->currentMessage().contains(path));
    }

    void titleMarksUnsavedWorkAndSaveClearsIt()
    {
        MainWindow w(nullptr, m_recovery.path());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        QVERIFY(w.openFile(path));
        QVERIFY(!w.isWindowModified());
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("gmi.railyard.json")));
        w.document()->undoStack()->push(new ChangeTitle(w.document(), QStringLiteral("B")));
        QVERIFY(w.isWindowModified());
        QVERIFY(w.saveTo(path));
        QVERIFY(!w.isWindowModified());
        // Recent files remember it, newest first.
        QCOMPARE(MainWindow::recentFiles().value(0), QFileInfo(path).absoluteFilePath());
    }

    void clusterPanelEditsThroughUndo()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        auto *nodes = w.clusterPanel()->form()->findChildren<QSpinBox *>().value(0);
        QVERIFY(nodes);
        QCOMPARE(nodes->value(), 16);
        nodes->setValue(32);
        QCOMPARE(w.document()->layout().cluster.nodes, 32);
        QCOMPARE(w.document()->topology().gpuCount(), 256);
        QVERIFY(w.clusterLabel()->text().contains(QStringLiteral("256 GPUs")));
        QVERIFY(w.isWindowModified());
        w.document()->undoStack()->undo();
        QCOMPARE(nodes->value(), 16); // the panel re-synced from the document
        QCOMPARE(w.document()->topology().gpuCount(), 128);

        // An NVLink domain that does not hold whole servers: the engine's reason, no edit.
        auto *domain = w.clusterPanel()->form()->findChildren<QSpinBox *>().value(2);
        domain->setValue(12);
        QCOMPARE(w.document()->layout().cluster.nvlinkDomain, 8);
        QCOMPARE(domain->value(), 8);
        QVERIFY(w.clusterPanel()->errorText().contains(QStringLiteral("nvlink_domain")));
        QCOMPARE(w.document()->undoStack()->count(), 1);
        w.document()->undoStack()->setClean();
    }

    void newClusterDialogBuildsWithTheGenerators()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        NewClusterDialog dialog(w.document()->layout());
        auto *gpu = dialog.form()->findChild<QComboBox *>();
        gpu->setCurrentIndex(gpu->findData(QStringLiteral("GB200")));
        engine::Layout l = dialog.layout();
        QCOMPARE(l.cluster.gpusPerNode, 4);
        QCOMPARE(l.cluster.nvlinkDomain, 72);
        QCOMPARE(l.cluster.nodes % 18, 0);
        QVERIFY(dialog.errorText().isEmpty());
        QString error;
        auto doc = Document::create(l, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->topology().countOf(engine::DeviceKind::NvSwitch),
                 18 * doc->topology().shape().domainCount());
        // Too many GPUs: refused with the limit in the message.
        dialog.form()->findChildren<QSpinBox *>().value(0)->setValue(100000);
        QVERIFY(dialog.errorText().contains(QStringLiteral("262144")));
    }

    void searchSelectsAndFillsTheInspector()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.search(QStringLiteral("GPU 77")));
        QCOMPARE(w.scene()->selectedDevice(), 77);
        QVERIFY(w.inspector()->headerText().contains(QStringLiteral("GPU 77")));
        QCOMPARE(w.inspector()->linkTable()->topLevelItemCount(), 5); // 4 NVLink + PCIe
        QVERIFY(!w.search(QStringLiteral("GPU 500")));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("GPU 500")));
    }

    void zoomSliderDrivesTheView()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const double before = w.view()->zoom();
        w.zoomSlider()->setValue(w.zoomSlider()->maximum());
        QCOMPARE(w.view()->zoom(), w.view()->maxZoom());
        w.view()->fitToCluster();
        QVERIFY(std::abs(w.view()->zoom() - before) < 1e-6);
        QVERIFY(w.zoomSlider()->value() < w.zoomSlider()->maximum());
    }

    void closingAsksAboutUnsavedWork()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.document()->undoStack()->push(new ChangeTitle(w.document(), QStringLiteral("x")));
        QStringList asked;
        const auto answer = [&asked](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [&asked, button] {
                auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
                QVERIFY(box);
                asked << box->text();
                box->button(button)->click();
            });
        };
        answer(QMessageBox::Cancel);
        QVERIFY(!w.close()); // cancelled: still open, still modified
        QVERIFY(w.isVisible());
        QCOMPARE(asked.size(), 1);
        QVERIFY(asked.front().contains(QStringLiteral("unsaved changes")));
        answer(QMessageBox::Discard);
        QVERIFY(w.close());
        QCOMPARE(asked.size(), 2);
        // Closing knowingly drops the recovery copy too.
        QVERIFY(!QFile::exists(w.autoSaver()->recoveryFile()));
    }

    void crashRecoveryIsOffered()
    {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"),
                            dir.filePath(QStringLiteral("session-9-9.recovery.railyard.json"))));
        QFile meta(dir.filePath(QStringLiteral("session-9-9.recovery.meta.json")));
        QVERIFY(meta.open(QIODevice::WriteOnly));
        meta.write(R"({"original": "/tmp/where-it-was.railyard.json", "title": "gmi"})");
        meta.close();
        MainWindow w(nullptr, dir.path());
        QVERIFY(w.openFile(layoutPath("hgx-h100-server.railyard.json")));
        QVERIFY(w.offerRecovery(false));
        QCOMPARE(w.document()->topology().gpuCount(), 128);
        QVERIFY(w.document()->isModified()); // restored work is unsaved work
        QCOMPARE(w.document()->filePath(), QStringLiteral("/tmp/where-it-was.railyard.json"));
        // Taken over: the crashed session's file is gone, this session's autosave holds it.
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("session-9-9.recovery.railyard.json"))));
        QVERIFY(QFile::exists(w.autoSaver()->recoveryFile()));
        QVERIFY(!w.offerRecovery(false));
        w.document()->undoStack()->setClean();
    }

    void placementPanelsFollowTheDocument()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCoreApplication::processEvents(); // the layout's view settings apply once laid out
        for (const char *name : {"WorkloadDock", "GroupsDock", "PricingDock", "WarningsDock"})
            QVERIFY2(w.findChild<QDockWidget *>(QLatin1String(name)), name);
        // The layout says "color_by": "tp": the canvas, the toolbar and the palette agree.
        QCOMPARE(w.scene()->colourBy(), std::optional(GroupKind::Tp));
        QCOMPARE(w.colourBox()->currentText(), QStringLiteral("TP group"));
        QCOMPARE(w.palette()->kind(), GroupKind::Tp);
        QCOMPARE(w.palette()->model()->rowCount(), 16);
        // Choosing PP stage in the toolbar recolours the canvas and the chips.
        w.colourBox()->setCurrentIndex(w.colourBox()->findText(QStringLiteral("PP stage")));
        Q_EMIT w.colourBox()->activated(w.colourBox()->currentIndex());
        QCOMPARE(w.scene()->colourBy(), std::optional(GroupKind::PpStage));
        QCOMPARE(w.palette()->model()->rowCount(), 4);
        // Ctrl+L: the link-load view.
        QVERIFY(!w.scene()->isLinkLoadVisible());
        w.linkLoadAction()->trigger();
        QVERIFY(w.scene()->isLinkLoadVisible());
        QVERIFY(w.linkLoadAction()->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_L));
        w.linkLoadAction()->trigger();
        QVERIFY(!w.scene()->isLinkLoadVisible());
    }

    void dropsReachTheStatusBarAndWarningsSelectGpus()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ClusterView *view = w.view();
        view->setZoom(0.3);
        const engine::Topology &t = w.document()->topology();
        const auto at = [&](int gpu) {
            const QPointF c = w.scene()->geometry().deviceRect(t.gpuDevice(gpu)).center();
            view->centerOn(c);
            return view->mapFromScene(c);
        };
        const auto drop = [&](const QMimeData *data, const QPoint &pos) {
            QDragEnterEvent enter(pos, Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &enter);
            QDragMoveEvent move(pos, Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &move);
            QDropEvent dropEvent(QPointF(pos), Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &dropEvent);
        };
        const QString job = jobSignature(w.document()->layout());
        // Refused: the reason is in the status bar.
        std::unique_ptr<QMimeData> late(mime::encodeGroup(GroupRef{GroupKind::Tp, 1}, job));
        drop(late.get(), at(125));
        QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("ends at GPU 127")),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(!w.document()->isModified());
        // Accepted: what it did and what it cost; the pricing panel and the warnings follow.
        std::unique_ptr<QMimeData> tp0(mime::encodeGroup(GroupRef{GroupKind::Tp, 0}, job));
        drop(tp0.get(), at(4));
        QVERIFY(w.document()->isModified());
        QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("% step time")),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY(w.pricingPanel()->changeText().startsWith(QLatin1Char('+')));
        QTreeWidget *warnings = w.warningsPanel()->list();
        QVERIFY(warnings->topLevelItemCount() > 0);
        Q_EMIT warnings->itemClicked(warnings->topLevelItem(0), 0);
        QCOMPARE(w.scene()->selectedGpus().size(), std::size_t(8));
        // Edit > Undo takes the drop back in one step.
        QVERIFY(w.document()->undoStack()->canUndo());
        w.document()->undoStack()->undo();
        QVERIFY(w.document()->layout().mapping.empty());
        QVERIFY(!w.document()->isModified());
        // Ctrl+G makes a group of the palette's kind on the selected GPUs.
        w.scene()->setSelectedGpus({8, 9, 10, 11, 12, 13, 14, 15});
        QVERIFY(w.makeGroupAction()->text().contains(QStringLiteral("8 GPUs")));
        w.scene()->setSelectedGpus({4, 5, 6, 7, 8, 9, 10, 11});
        QVERIFY(w.makeGroupAction()->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_G));
        w.makeGroupAction()->trigger();
        QVERIFY(!w.document()->layout().mapping.empty());
    }

    void saveRemembersTheColouringButItIsNotAnEdit()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("view.railyard.json"));
        {
            MainWindow w(nullptr, m_recovery.path());
            QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
            QCoreApplication::processEvents();
            w.scene()->setColourBy(GroupKind::PpStage);
            w.scene()->setLinkLoadVisible(true);
            QVERIFY(!w.document()->isModified()); // looking differently changes nothing
            QVERIFY(w.saveTo(path));
        }
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(path));
        QCoreApplication::processEvents(); // view settings apply once laid out
        QCOMPARE(w.scene()->colourBy(), std::optional(GroupKind::PpStage));
        QVERIFY(w.scene()->isLinkLoadVisible());
        QVERIFY(w.linkLoadAction()->isChecked());
        // An edit and its undo keep the view as the user set it.
        w.scene()->setColourBy(GroupKind::Tp);
        w.document()->undoStack()->push(
                new ChangeTitle(w.document(), QStringLiteral("Another title")));
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->layout().view.value("color_by", std::string()), std::string("pp"));
    }

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
                      .arg(QFileInfo(path).completeBaseName()));
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

    // File > New Cluster through its dialog: unsaved work is asked about first, and the new
    // cluster opens fitted, with a workload the engine says fits.
    void newClusterAsksFirstAndStartsWithAWorkloadThatFits_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("1280x800") << QSize(1280, 800);
    }

    void newClusterAsksFirstAndStartsWithAWorkloadThatFits()
    {
        QFETCH(QSize, size);
        MainWindow w(nullptr, m_recovery.path());
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json"))); // Llama 3 70B
        w.document()->undoStack()->push(new ChangeTitle(w.document(), QStringLiteral("edited")));
        QAction *newCluster = menuAction(w, {QStringLiteral("File"), QStringLiteral("New Cluster")});
        QVERIFY(newCluster);

        // Cancel at the question: no dialog follows.
        QStringList seen;
        whenModal([&seen](QWidget *modal) {
            seen << QString::fromLatin1(modal ? modal->metaObject()->className() : "none");
            if (auto *box = qobject_cast<QMessageBox *>(modal))
                box->button(QMessageBox::Cancel)->click();
        });
        newCluster->trigger();
        QCOMPARE(seen, QStringList{QStringLiteral("QMessageBox")});
        QVERIFY(w.document()->isModified());

        // Discard: then the dialog, which states the plan; accept it.
        seen.clear();
        QString plan;
        whenModal([&](QWidget *modal) {
            seen << QString::fromLatin1(modal ? modal->metaObject()->className() : "none");
            auto *box = qobject_cast<QMessageBox *>(modal);
            if (!box)
                return;
            whenModal([&](QWidget *next) {
                seen << QString::fromLatin1(next ? next->metaObject()->className() : "none");
                if (auto *dialog = qobject_cast<NewClusterDialog *>(next)) {
                    dialog->form()->findChildren<QSpinBox *>().value(0)->setValue(4); // servers
                    plan = dialog->planText();
                    dialog->accept();
                }
            });
            box->button(QMessageBox::Discard)->click();
        });
        newCluster->trigger();
        QCOMPARE(seen,
                 (QStringList{QStringLiteral("QMessageBox"),
                              QStringLiteral("railyard::NewClusterDialog")}));
        QVERIFY(!w.document()->isModified());
        QCOMPARE(w.document()->topology().gpuCount(), 32);
        const engine::Layout &l = w.document()->layout();
        QVERIFY2(l.parallel.tp > 1, "Llama 3 70B does not fit one H200 at TP 1");
        QVERIFY(l.parallel.tp <= l.cluster.nvlinkDomain);
        const engine::Evaluation &e = w.document()->evaluation();
        QVERIFY2(e.ok, e.error.c_str());
        for (const engine::Warning &warning : e.warnings)
            QVERIFY2(warning.code != "out-of-memory", warning.message.c_str());
        for (double gib : e.memoryGiBPerStage)
            QVERIFY(gib <= e.hbmGiB);
        // The dialog said what it would start at, with the memory against HBM.
        QVERIFY2(plan.contains(QStringLiteral("TP %1").arg(l.parallel.tp)), qPrintable(plan));
        QVERIFY2(plan.contains(QStringLiteral("of 131 GiB")), qPrintable(plan));
        checkCanvas(w, QStringLiteral("new cluster"));
    }

    // A saved zoom gives way to fit when the cluster would not show whole at it.
    void savedZoomOnlyWhenTheClusterShowsWhole()
    {
        QTemporaryDir dir;
        const auto withZoom = [&](double zoom) {
            engine::Layout l = engine::readLayoutFile(
                    layoutPath("tp-across-servers.railyard.json").toStdString());
            l.view["zoom"] = zoom;
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
        QVERIFY(std::abs(w.view()->zoom() - fit) < 1e-9);
        checkCanvas(w, QStringLiteral("zoom 2"));
        // Smaller than fit: the whole cluster shows, so the file's zoom stands.
        const double small = fit * 0.7;
        QVERIFY(w.openFile(withZoom(small)));
        settle();
        QVERIFY(std::abs(w.view()->zoom() - small) < 1e-9);
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
        for (QDockWidget *d : w.dockLayout()->all()) {
            QVERIFY2(!d->isFloating(), qPrintable(d->objectName()));
            QVERIFY2(d->toggleViewAction()->isChecked(), qPrintable(d->objectName()));
        }
        QCOMPARE(w.dockWidgetArea(docks.groups), Qt::LeftDockWidgetArea);
        QCOMPARE(w.dockWidgetArea(docks.warnings), Qt::RightDockWidgetArea);
        QCOMPARE(w.tabifiedDockWidgets(docks.workload), QList<QDockWidget *>{docks.cluster});
        QCOMPARE(w.tabifiedDockWidgets(docks.groups), QList<QDockWidget *>{docks.inspector});
        QVERIFY(w.tabifiedDockWidgets(docks.warnings).isEmpty());
        QVERIFY(std::abs(docks.workload->width() - left) <= 4);
        QVERIFY(std::abs(docks.pricing->width() - right) <= 4);
        QVERIFY(std::abs(docks.pricing->height() - pricingHeight) <= 4);
        checkCanvas(w, QStringLiteral("reset"));
    }

    // Pricing and Warnings are both in view (neither behind a tab), each tall enough to read.
    void pricingAndWarningsBothShow()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(layoutPath("tp-across-servers.railyard.json")));
        settle();
        const DockLayout::Docks docks = w.dockLayout()->docks();
        QVERIFY(onShow(w, docks.warnings));
        QVERIFY(onShow(w, docks.pricing));
        QVERIFY(w.tabifiedDockWidgets(docks.warnings).isEmpty());
        // Every row in view: the two TP warnings and "where the model is unsure".
        QTreeWidget *list = w.warningsPanel()->list();
        QCOMPARE(list->topLevelItemCount(), 3);
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
        QVERIFY(text.contains(QStringLiteral("Pin as A (Ctrl+P)")));
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
            QVERIFY(toggle->isChecked());
            toggle->trigger();
            QVERIFY(d->isHidden());
            toggle->trigger();
            QVERIFY(!d->isHidden());
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
        QTreeWidget *links = w.pricingPanel()->linkChanges();
        QVERIFY(links->isVisibleTo(w.pricingPanel()));
        QVERIFY(links->topLevelItemCount() >= 6);
        const int rows = links->viewport()->height() / links->sizeHintForRow(0);
        QVERIFY2(rows >= 6, qPrintable(QString::number(rows)));
        shoot(w, QStringLiteral("pinned-1280x800-gmi-h200-cluster"));
        w.document()->undoStack()->setClean();
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
