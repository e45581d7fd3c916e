#include "document/document.h"
#include "items/deviceitem.h"
#include "mainwindow.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QTest>
#include <QTimer>

using namespace railyard;

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void opensDefaultLayout()
    {
        MainWindow w;
        QFile f(QStringLiteral(":/layouts/hgx-h100-server.railyard.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString error;
        auto doc = Document::fromText(f.readAll(), QStringLiteral("default"), &error);
        QVERIFY2(doc, qPrintable(error));
        w.setDocument(std::move(doc));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));

        // Every device of the server is on the canvas: 8 GPUs, 4 NVSwitches, 8 NICs.
        int gpus = 0, nvswitches = 0, nics = 0;
        for (QGraphicsItem *item : w.scene()->items()) {
            if (auto *d = qgraphicsitem_cast<DeviceItem *>(item)) {
                gpus += d->kind() == engine::DeviceKind::Gpu;
                nvswitches += d->kind() == engine::DeviceKind::NvSwitch;
                nics += d->kind() == engine::DeviceKind::Nic;
                QVERIFY(w.scene()->sceneRect().contains(d->sceneBoundingRect()));
            }
        }
        QCOMPARE(gpus, 8);
        QCOMPARE(nvswitches, 4);
        QCOMPARE(nics, 8);
        QVERIFY(w.windowTitle().contains(QStringLiteral("One HGX H100 server")));
    }

    void rendersSomethingWithALegend()
    {
        MainWindow w;
        w.resize(1200, 800);
        QVERIFY(w.openFile(QStringLiteral(":/layouts/hgx-h100-server.railyard.json")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QImage img = w.view()->viewport()->grab().toImage();
        // Not blank: many distinct colours, including the GPU green and the NVLink green.
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 3)
            for (int x = 0; x < img.width(); x += 3)
                colours.insert(img.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        // The legend box sits at the bottom left: it is near-white with dark text.
        const QColor corner = img.pixelColor(20, img.height() - 20);
        QVERIFY(corner.lightness() > 200);
    }

    void badFileKeepsCurrentDocument()
    {
        MainWindow w;
        QVERIFY(w.openFile(QStringLiteral(":/layouts/hgx-h100-server.railyard.json")));
        Document *before = w.document();
        // A message box would block: make the failure path testable by closing it at once.
        QTimer::singleShot(0, [] {
            for (QWidget *top : QApplication::topLevelWidgets())
                if (top->inherits("QMessageBox"))
                    top->close();
        });
        QVERIFY(!w.openFile(QStringLiteral(RAILYARD_TEST_DATA "/bad/broken-json.railyard.json")));
        QCOMPARE(w.document(), before);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
