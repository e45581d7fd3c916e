// File > Import...: a cluster's own file becomes a new untitled document that prices, and a bad
// file leaves the open document alone with a message naming the file and the line.
#include "base/jsoncursor.h"
#include "charts/calibrationchart.h"
#include "commands/changecluster.h"
#include "document/document.h"
#include "mainwindow.h"
#include "panels/clusterpanel.h"
#include "windowtest.h"

#include <QAction>
#include <QFile>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "comparenear.h"
#include <cmath>

using namespace railyard;
using namespace railyard::test;

class TestImportWindow : public QObject
{
    Q_OBJECT
    QTemporaryDir m_recovery;

    static QString fixture(const char *name)
    {
        return QStringLiteral(RAILYARD_TEST_DATA "/import/") + QLatin1String(name);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }
    void cleanup() { closeMessageBoxes(); }

    void importOpensAnUntitledDocument()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.action(QStringLiteral("actionImport")));
        QString prompted;
        w.setPathPrompts({{}, {}, [&](QWidget *) {
                              prompted = fixture(
                                      "nccl-tests/h100-2node-16gpu-allreduce-srun-prefixed-"
                                      "nccltests290.txt");
                              return prompted;
                          }});
        w.action(QStringLiteral("actionImport"))->trigger();
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        Document *doc = w.document();
        QVERIFY(doc);
        QVERIFY(doc->filePath().isEmpty()); // untitled: Save asks where
        QCOMPARE(doc->topology().gpuCount(), 16);
        QCOMPARE(doc->layout().cluster.nodes, 2);
        QVERIFY(doc->layout().cluster.tuning.efficiency.has_value());
        QVERIFY(doc->layout().original.get().contains("imported"));
        QVERIFY(QString::fromStdString(doc->layout().notes).contains(QStringLiteral("Calibrated")));

        // A topology file too: the H800's 8 GPUs and its NV8.
        QVERIFY2(w.importFile(fixture("topo-m/hgx-h800-8gpu-nv8-9nic-sglang28424.txt")),
                 qPrintable(w.lastError()));
        QCOMPARE(w.document()->layout().cluster.gpu, std::string("H800-SXM"));
        QCOMPARE(w.document()->topology().gpuCount(), 8);
    }

    // An nccl-tests log: the Cluster panel charts its bus bandwidth against the model's on the
    // imported cluster, and an edit of the cluster moves the model's line, not the log's.
    void calibrationChartFollowsTheCluster()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY2(w.importFile(fixture("nccl-tests/gcp-a3mega-h100-2node-allreduce.txt")),
                 qPrintable(w.lastError()));
        ClusterPanel *panel = w.clusterPanel();
        CalibrationChart *chart = panel->calibrationChart();
        const QList<QPointF> measured = chart->measuredPoints();
        QCOMPARE(measured.size(), 31);
        QCOMPARE(measured.last(), QPointF(33.0, 338.82)); // 8 GiB = 2^33 bytes
        const QList<QPointF> before = chart->modelledPoints();
        QCOMPARE(before.size(), 31);
        RAILYARD_COMPARE_NEAR(before.last().y(), 338.82, 0.01);
        QVERIFY2(panel->calibrationText().contains(QStringLiteral("338.82"))
                         || panel->calibrationText().contains(QStringLiteral("339")),
                 qPrintable(panel->calibrationText()));
        QVERIFY(panel->calibrationText().contains(QStringLiteral("gcp-a3mega")));
        // With RAILYARD_SHOTS_DIR set, save the panel as the dock shows it, to look at.
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty()) {
            panel->resize(380, 900);
            panel->grab().save(dir + QStringLiteral("/calibration-panel.png"));
        }
        // Half the achieved efficiency: the modelled line drops, the measured stays.
        engine::ClusterConfig c = w.document()->layout().cluster;
        c.tuning.efficiency = *c.tuning.efficiency / 2;
        w.document()->undoStack()->push(new ChangeCluster(w.document(), c, "halve", "tuning"));
        QCOMPARE(chart->measuredPoints(), measured);
        QVERIFY(chart->modelledPoints().last().y() < 0.6 * before.last().y());
        w.document()->undoStack()->undo();
        QCOMPARE(chart->modelledPoints(), before);
        // A layout without a log shows no chart.
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        QVERIFY(w.clusterPanel()->calibrationText().isEmpty());
    }

    void badImportKeepsTheDocument()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layoutPath("gmi-h200-cluster.railyard.json")));
        Document *before = w.document();
        const std::string text = engine::layoutToText(before->layout());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken-topo.txt"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-7\n");
        f.close();
        QVERIFY(!w.importFile(path));
        QCOMPARE(w.document(), before);
        QCOMPARE(engine::layoutToText(w.document()->layout()), text);
        QVERIFY2(w.lastError().startsWith(path + QStringLiteral(": line 3")),
                 qPrintable(w.lastError()));
        QMessageBox *box = w.findChild<QMessageBox *>();
        QVERIFY(box);
        QVERIFY2(box->text().contains(QStringLiteral("broken-topo.txt")), qPrintable(box->text()));
        QVERIFY2(box->informativeText().startsWith(QStringLiteral("line 3")),
                 qPrintable(box->informativeText()));
    }
};

QTEST_MAIN(TestImportWindow)
#include "tst_importwindow.moc"
