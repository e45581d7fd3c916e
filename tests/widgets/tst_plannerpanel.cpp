// The Planner dock: a search off the GUI thread that lists the engine's ranked plans and Pareto
// front, applies one as a single undo step, says when the document changed since, and cancels.
#include "base/units.h"
#include "charts/paretochart.h"
#include "document/document.h"
#include "panels/plannerpanel.h"
#include "testlayouts.h"

#include "comparenear.h"
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace railyard;
using railyard::test::openLayout;

namespace {

// Runs the panel's search on `doc` and waits for it (two minutes at most): whether it ended
// with plans.
bool searched(PlannerPanel &panel, Document *doc)
{
    panel.setDocument(doc);
    QSignalSpy done(&panel, &PlannerPanel::searchFinished);
    panel.search();
    return (done.count() == 1 || done.wait(120000)) && panel.result().ok;
}

} // namespace

class TestPlannerPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Before any search: an empty chart with plain axes (not a step axis of 0 to 1e-06 s) and
    // a "Run a search" placeholder over it, gone once the plans are drawn.
    void chartBeforeASearch()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        PlannerPanel panel;
        panel.setAttribute(Qt::WA_DontShowOnScreen);
        panel.setDocument(doc.get());
        panel.resize(560, 820);
        panel.show();
        const ParetoChart *chart = panel.chart();
        QVERIFY(chart->isEmpty());
        QCOMPARE(chart->stepAxisMin(), 0.0);
        QVERIFY2(chart->stepAxisMax() >= 1, qPrintable(QString::number(chart->stepAxisMax())));
        QVERIFY(chart->placeholderLabel()->isVisible());
        // Drawn over the plot (not under the chart view): the panel's picture has its text.
        const QLabel *placeholder = chart->placeholderLabel();
        const QImage shown = panel.grab().toImage();
        const QRect at(placeholder->mapTo(&panel, QPoint(0, 0)), placeholder->size());
        int dark = 0;
        const QImage there = shown.copy(at); // offscreen: one pixel a unit
        for (int y = 0; y < there.height(); ++y)
            for (int x = 0; x < there.width(); ++x)
                dark += qGray(there.pixel(x, y)) < 160;
        QVERIFY2(dark > 50, qPrintable(QString::number(dark)));
        QVERIFY(chart->placeholderLabel()->text().startsWith(QStringLiteral("Run a search")));
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty())
            panel.grab().save(dir + QStringLiteral("/planner-before-search.png"));
        QSignalSpy done(&panel, &PlannerPanel::searchFinished);
        panel.search();
        QVERIFY(done.count() == 1 || done.wait(120000));
        QVERIFY(!chart->isEmpty());
        QVERIFY(!chart->placeholderLabel()->isVisible());
    }

    void searchListsAndApplies()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        PlannerPanel panel;
        panel.setDocument(doc.get());
        QSignalSpy done(&panel, &PlannerPanel::searchFinished);
        panel.searchButton()->click();
        QVERIFY(panel.isSearching() || done.count() == 1);
        QVERIFY(done.count() == 1 || done.wait(120000));
        const engine::PlanSearch &r = panel.result();
        QVERIFY(r.ok);
        QVERIFY(r.fitting > 0);
        QCOMPARE(panel.table()->rowCount(), int(std::min<std::int64_t>(20, r.fitting)));
        // The step time with the model's uncertainty band for the plan's regime, and its basis.
        const engine::PlanPrice &first = r.plans[0].price;
        // (Columns: #, the plan with its training settings under it, the step with its band
        // under it, MFU, GiB per GPU.)
        QCOMPARE(panel.table()->columnCount(), 5);
        QCOMPARE(panel.table()->item(0, 2)->text(),
                 QString::fromStdString(engine::formatSeconds(first.stepTimeS))
                         + QStringLiteral("\n\u00b1%1%").arg(100 * first.bandFraction, 0, 'f', 0));
        QVERIFY(panel.table()->item(0, 1)->text().contains(
                QStringLiteral("micro-batch %1").arg(r.plans[0].choice.microBatch)));
        QVERIFY(first.bandFraction > 0);
        QVERIFY(panel.table()->item(0, 2)->toolTip().contains(
                QString::fromStdString(r.bandBases[std::size_t(first.bandBasis)])));
        QCOMPARE(panel.chart()->frontCount(), int(r.pareto.size()));
        QVERIFY(!r.pareto.empty());
        QCOMPARE(panel.chart()->rankedCount(), panel.table()->rowCount());
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("fit")));
        // With RAILYARD_SHOTS_DIR set, save what the dock shows, to look at.
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty()) {
            panel.resize(560, 820);
            panel.show();
            QTest::qWait(50);
            panel.grab().save(dir + QStringLiteral("/planner-dock.png"));
        }

        // Apply the best: one undo step; the document now prices what the planner said.
        const double before = doc->evaluation().stepTimeS;
        const int undoCount = doc->undoStack()->count();
        panel.table()->selectRow(0);
        QVERIFY(panel.applyButton()->isEnabled());
        panel.applyButton()->click();
        QCOMPARE(doc->undoStack()->count(), undoCount + 1);
        const engine::PlanChoice &best = r.plans[0].choice;
        const auto &sizes = doc->layout().parallel;
        QCOMPARE(sizes.tp, best.tp);
        QCOMPARE(sizes.pp, best.pp);
        QCOMPARE(sizes.dp, best.dp);
        QCOMPARE(sizes.order, std::string(engine::toString(best.order)));
        const double after = doc->evaluation().stepTimeS;
        RAILYARD_COMPARE_NEAR(after, r.plans[0].price.stepTimeS, 0.005);
        QVERIFY(after <= before * 1.005); // the best plan is no slower than the preset's
        QVERIFY(doc->undoStack()->undoText().startsWith(QStringLiteral("Apply plan")));
        doc->undoStack()->undo();
        QCOMPARE(doc->evaluation().stepTimeS, before);

        // The undo changed the document: the results are for another state now.
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("changed since")));
        QVERIFY(!panel.applyButton()->isEnabled());
        QVERIFY(!panel.applyPlan(0));
    }

    // Where the stack offers activation offload, a plan may offload layers to host memory: the
    // row says how many, and applying it sets the Workload's CPU offload in the same undo step.
    void offloadedPlanSaysSoAndApplies()
    {
        QString error;
        auto doc = Document::load(QStringLiteral(RAILYARD_TEST_DATA
                                                 "/gb200-llama70b-nemo.railyard.json"),
                                  &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->layout().training.offloadLayers, 0);
        PlannerPanel panel;
        QVERIFY(searched(panel, doc.get()));
        const engine::PlanSearch &r = panel.result();
        int row = -1;
        for (int i = 0; i < panel.table()->rowCount() && row < 0; ++i)
            if (r.plans[std::size_t(i)].choice.offloadLayers > 0)
                row = i;
        QVERIFY(row >= 0);
        const int k = r.plans[std::size_t(row)].choice.offloadLayers;
        QVERIFY2(panel.table()->item(row, 1)->text().contains(
                         QStringLiteral("%1 layers offloaded to CPU").arg(k)),
                 qPrintable(panel.table()->item(row, 1)->text()));
        if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty()) {
            panel.resize(560, 820);
            panel.show();
            QTest::qWait(50);
            panel.grab().save(dir + QStringLiteral("/planner-offload.png"));
        }
        const int undoCount = doc->undoStack()->count();
        panel.table()->selectRow(row);
        panel.applyButton()->click();
        QCOMPARE(doc->undoStack()->count(), undoCount + 1);
        QCOMPARE(doc->layout().training.offloadLayers, k);
        QCOMPARE(doc->layout().training.recompute, engine::Recompute::None);
        RAILYARD_COMPARE_NEAR(doc->evaluation().stepTimeS,
                              r.plans[std::size_t(row)].price.stepTimeS,
                              0.005);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().training.offloadLayers, 0);
    }

    // Nothing fits Llama 3 70B on one tray of four GB200 under NeMo: the dock says what the
    // closest configuration needs with as much of its activations offloaded as offload takes.
    void nothingFitsSaysWhatOffloadWouldNeed()
    {
        QFile in(QStringLiteral(RAILYARD_TEST_DATA "/gb200-llama70b-nemo.railyard.json"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject o = QJsonDocument::fromJson(in.readAll()).object();
        QJsonObject cluster = o.value(QStringLiteral("cluster")).toObject();
        cluster[QStringLiteral("nodes")] = 1;
        cluster[QStringLiteral("nvlink_domain")] = 4;
        o[QStringLiteral("cluster")] = cluster;
        QJsonObject training = o.value(QStringLiteral("training")).toObject();
        training[QStringLiteral("global_batch")] = 48;
        o[QStringLiteral("training")] = training;
        QJsonObject parallel = o.value(QStringLiteral("parallel")).toObject();
        parallel[QStringLiteral("dp")] = 4;
        o[QStringLiteral("parallel")] = parallel;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("one-tray.railyard.json"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        QVERIFY(out.write(QJsonDocument(o).toJson()) > 0);
        out.close();
        QString error;
        auto doc = Document::load(path, &error);
        QVERIFY2(doc, qPrintable(error));
        PlannerPanel panel;
        QVERIFY(searched(panel, doc.get()));
        QVERIFY(panel.result().plans.empty());
        QCOMPARE(panel.table()->rowCount(), 0);
        const QString status = panel.statusLabel()->text();
        QVERIFY2(status.contains(
                         QStringLiteral("with 79 layers' activations offloaded to host memory")),
                 qPrintable(status));
        // The chart says why it is empty, not "run a search".
        QVERIFY(panel.chart()->isEmpty());
        QVERIFY2(panel.chart()->placeholderLabel()->text().startsWith(
                         QStringLiteral("Nothing fits in 184.0 GiB")),
                 qPrintable(panel.chart()->placeholderLabel()->text()));
        if (const QString shots = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !shots.isEmpty()) {
            panel.resize(560, 820);
            panel.show();
            QTest::qWait(50);
            panel.grab().save(shots + QStringLiteral("/planner-nothing-fits.png"));
        }
    }

    // On the 16k preset the front runs from the best plan (about 6 s) to plans that barely fit
    // and take 1,000 times as long: the step axis stops at ParetoChart::kSpan times the best,
    // and the chart says how many points are off the top and how slow they are.
    void paretoAxisFollowsTheFront()
    {
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        PlannerPanel panel;
        QVERIFY(searched(panel, doc.get()));
        const engine::PlanSearch &r = panel.result();
        QVERIFY(!r.pareto.empty());
        double best = r.plans.front().price.stepTimeS, slowest = 0;
        for (const engine::Plan &p : r.pareto) {
            best = std::min(best, p.price.stepTimeS);
            slowest = std::max(slowest, p.price.stepTimeS);
        }
        QVERIFY2(slowest > 100 * best, qPrintable(QString::number(slowest)));
        const ParetoChart *chart = panel.chart();
        QVERIFY(chart->stepAxisMin() <= best);
        QVERIFY2(chart->stepAxisMax() >= ParetoChart::kSpan * best * 0.95
                         && chart->stepAxisMax() <= ParetoChart::kSpan * best * 1.3,
                 qPrintable(QStringLiteral("axis to %1 s, best %2 s")
                                    .arg(chart->stepAxisMax())
                                    .arg(best)));
        int off = 0;
        for (const engine::Plan &p : r.pareto)
            off += p.price.stepTimeS > chart->stepAxisMax();
        QVERIFY(off > 0);
        const QString note = chart->noteText();
        QVERIFY2(note.contains(QStringLiteral("%1 points of the front").arg(off)), qPrintable(note));
        QVERIFY2(note.contains(QLocale().toString(slowest, 'f', 0) + QStringLiteral(" s")),
                 qPrintable(note));
        // Every ranked plan is on the chart.
        for (const engine::Plan &p : r.plans)
            QVERIFY(p.price.stepTimeS <= chart->stepAxisMax());
    }

    void cancelStopsTheSearch()
    {
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        PlannerPanel panel;
        panel.setDocument(doc.get());
        QSignalSpy done(&panel, &PlannerPanel::searchFinished);
        panel.search();
        panel.cancel();
        QVERIFY(!panel.isSearching());
        QVERIFY(panel.searchButton()->isEnabled());
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("cancelled")));
        QTest::qWait(50); // a result already queued is dropped
        QCOMPARE(done.count(), 0);
        QCOMPARE(panel.table()->rowCount(), 0);
    }
};

QTEST_MAIN(TestPlannerPanel)
#include "tst_plannerpanel.moc"
