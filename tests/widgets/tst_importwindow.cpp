// File > Import...: a cluster's own file becomes a new untitled document that prices, and a bad
// file leaves the open document alone with a message naming the file and the line.
#include "document/document.h"
#include "mainwindow.h"
#include "windowtest.h"

#include <QAction>
#include <QFile>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

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
        QVERIFY(doc->layout().original.contains("imported"));
        QVERIFY(QString::fromStdString(doc->layout().notes).contains(QStringLiteral("Calibrated")));

        // A topology file too: the H800's 8 GPUs and its NV8.
        QVERIFY2(w.importFile(fixture("topo-m/hgx-h800-8gpu-nv8-9nic-sglang28424.txt")),
                 qPrintable(w.lastError()));
        QCOMPARE(w.document()->layout().cluster.gpu, std::string("H800-SXM"));
        QCOMPARE(w.document()->topology().gpuCount(), 8);
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
