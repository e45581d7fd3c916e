// The main window as a user meets it: examples open, bad files leave the open document alone
// with the engine's message (at start too), the status bar shows the cluster and the step time,
// the title marks unsaved work, the Cluster panel edits through undo, New Cluster asks first and
// starts at a workload that fits, search, recent files, recovery. The docks, the canvas's share
// and the Help menu are in tst_windowlayout.
#include "base/jsoncursor.h"
#include "commands/changetitle.h"
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
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include "windowtest.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>

#include "comparenear.h"
#include <algorithm>
#include <functional>

using namespace railyard;
using namespace railyard::test;

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
        // One domain in the singular (it read "1 NVLink domain(s) of 8").
        QVERIFY2(w.clusterLabel()->text().contains(
                         QStringLiteral("\u00b7 1 NVLink domain of 8 \u00b7")),
                 qPrintable(w.clusterLabel()->text()));
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
        QVERIFY2(w.clusterLabel()->text().contains(QStringLiteral("32 NVLink domains of 8")),
                 qPrintable(w.clusterLabel()->text()));
        const auto labels = w.clusterPanel()->form()->findChildren<QLabel *>();
        QVERIFY(std::any_of(labels.begin(), labels.end(), [](const QLabel *l) {
            return l->text() == QStringLiteral("256 GPUs in 32 NVLink domains of 8");
        }));
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
        RAILYARD_COMPARE_ABS(w.view()->zoom(), before, 1e-6);
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
        // An edit and its undo keep the view as the user set it: the document's view follows
        // the colouring shown (issue 18: an autosave writes it), through an edit and its undo.
        w.scene()->setColourBy(GroupKind::Tp);
        w.document()->undoStack()->push(
                new ChangeTitle(w.document(), QStringLiteral("Another title")));
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->layout().view.get().value("color_by", std::string()),
                 std::string("tp"));
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
        QVERIFY2(plan.contains(QStringLiteral("of 140 GiB")), qPrintable(plan));
        checkCanvas(w, QStringLiteral("new cluster"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
