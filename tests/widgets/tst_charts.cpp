// The charts (Qt Charts, widgets/charts): the memory chart numbers every pipeline stage it
// labels in full, with as many labels as fit the width it is given (16 stages of the 16,384-GPU
// preset at the Pricing dock's default width).
#include "charts/memorychart.h"
#include "document/document.h"

#include "testlayouts.h"
#include <QImage>

#include <QTest>

#include <cmath>

using namespace railyard;

namespace {

bool close(const QColor &a, const QColor &b)
{
    return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green())
                   + std::abs(a.blue() - b.blue())
           < 30;
}

// The bars of `colour` the chart drew: on the scan line where most of its pixels are, the runs
// of that colour, and the number of its pixels in the whole image.
struct Bars
{
    int runs = 0;
    int pixels = 0;
};

Bars barsOf(const QImage &img, const QColor &colour)
{
    Bars b;
    int bestRow = -1, bestCount = 0;
    for (int y = 0; y < img.height(); ++y) {
        int n = 0;
        for (int x = 0; x < img.width(); ++x)
            n += close(img.pixelColor(x, y), colour) ? 1 : 0;
        b.pixels += n;
        if (n > bestCount) {
            bestCount = n;
            bestRow = y;
        }
    }
    if (bestRow < 0)
        return b;
    bool in = false;
    for (int x = 0; x < img.width(); ++x) {
        const bool on = close(img.pixelColor(x, bestRow), colour);
        if (on && !in)
            ++b.runs;
        in = on;
    }
    return b;
}

const QColor kFits(0x3b, 0x82, 0xc4); // memorychart.cpp: a stage that fits
const QColor kOver(0xdc, 0x26, 0x26); // one that does not

} // namespace

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
        // Every stage fits in 80 GiB: one blue bar per stage (where a bar is wider than a
        // pixel and a gap), none red.
        const Bars fits = barsOf(img, kFits);
        QVERIFY(fits.pixels > 100);
        if (width / stages >= 8)
            QCOMPARE(fits.runs, stages);
        QCOMPARE(barsOf(img, kOver).pixels, 0);

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
        // Laid out and painted as on screen: 16 bars, each stage within its HBM (blue).
        const QImage img = chart.grab().toImage();
        QCOMPARE(barsOf(img, kFits).runs, 16);
        QCOMPARE(barsOf(img, kOver).pixels, 0);
        QCOMPARE(chart.stageCount(), 16);
        QVERIFY(chart.stageLabels().contains(QStringLiteral("14")));
        for (const QString &t : chart.drawnAxisTexts())
            QVERIFY2(!t.contains(QStringLiteral("...")), qPrintable(t));
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
