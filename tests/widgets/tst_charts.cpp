// The charts (Qt Charts, widgets/charts): the memory chart numbers every pipeline stage it
// labels in full, with as many labels as fit the width it is given (16 stages of the 16,384-GPU
// preset at the Pricing dock's default width).
#include "charts/memorychart.h"
#include "document/document.h"

#include "testlayouts.h"
#include <QImage>

#include <QTest>

using namespace railyard;

class TestCharts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void memoryChartLabelsEveryStageItNumbersInFull_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("stages");
        // 390 px: the chart in the Pricing dock at its default width (420 px, less margins).
        QTest::newRow("16 stages, dock width") << 390 << 16;
        QTest::newRow("16 stages, narrow dock") << 260 << 16;
        QTest::newRow("16 stages, wide dock") << 700 << 16;
        QTest::newRow("64 stages, dock width") << 390 << 64;
        QTest::newRow("4 stages, dock width") << 390 << 4;
    }

    void memoryChartLabelsEveryStageItNumbersInFull()
    {
        QFETCH(int, width);
        QFETCH(int, stages);
        MemoryChart chart;
        chart.setAttribute(Qt::WA_DontShowOnScreen);
        chart.resize(width, 150);
        chart.show();
        std::vector<double> gib(static_cast<std::size_t>(stages));
        for (int s = 0; s < stages; ++s)
            gib[static_cast<std::size_t>(s)] = 20 + s % 3;
        chart.setMemory(gib, 80);
        QCoreApplication::processEvents();
        const QImage img = chart.grab().toImage();
        QCOMPARE(img.width(), width);

        // The labels are stage numbers from 0 at one even step, and the step is the smallest
        // that fits: every stage where there is room.
        const QStringList labels = chart.stageLabels();
        const int step = chart.labelStep();
        QVERIFY(step >= 1);
        QCOMPARE(labels.size(), (stages + step - 1) / step);
        for (int i = 0; i < labels.size(); ++i)
            QCOMPARE(labels[i], QString::number(i * step));
        if (width >= 390 && stages <= 16)
            QVERIFY2(step <= 2, qPrintable(QString::number(step)));
        if (stages <= 4)
            QCOMPARE(step, 1);
        // What the chart drew: each label whole (no "..."), and every one of them drawn.
        const QStringList drawn = chart.drawnAxisTexts();
        for (const QString &t : drawn)
            QVERIFY2(!t.contains(QStringLiteral("...")) && !t.contains(QChar(0x2026)),
                     qPrintable(drawn.join(QLatin1Char('|'))));
        for (const QString &l : labels)
            QVERIFY2(drawn.contains(l),
                     qPrintable(l + QStringLiteral(" not in ") + drawn.join(QLatin1Char('|'))));
        QCOMPARE(chart.stageCount(), stages);
    }

    void memoryChartOfThe16kPreset()
    {
        // The preset's own numbers: TP8 PP16, so 16 stages, the last ones lighter.
        auto doc = test::openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        const engine::Evaluation &e = doc->evaluation();
        QVERIFY(e.ok);
        QCOMPARE(static_cast<int>(e.memoryGiBPerStage.size()), 16);
        MemoryChart chart;
        chart.setAttribute(Qt::WA_DontShowOnScreen);
        chart.resize(390, 150);
        chart.show();
        chart.setMemory(e.memoryGiBPerStage, e.hbmGiB);
        QCoreApplication::processEvents();
        QVERIFY(!chart.grab().isNull()); // laid out and painted as on screen
        QCOMPARE(chart.stageCount(), 16);
        QVERIFY(chart.stageLabels().contains(QStringLiteral("14")));
        for (const QString &t : chart.drawnAxisTexts())
            QVERIFY2(!t.contains(QStringLiteral("...")), qPrintable(t));
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
