// The stack range of a layout that names no software stack is priced off the GUI thread: an
// edit publishes the step at once, the band widens when the range lands (equal to what the
// engine gives synchronously), a later edit's range is the only one merged, every output
// finishes the range first, and a document closed while one is priced goes cleanly.
#include "base/units.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "export/diagramexport.h"
#include "panels/pricingpanel.h"
#include "scene/clusterscene.h"
#include "step/evaluate.h"

#include "testlayouts.h"
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QXmlStreamReader>

#include <algorithm>

using namespace railyard;
using railyard::test::openLayout;

namespace {

int noStackWarnings(const engine::Evaluation &e)
{
    return static_cast<int>(
            std::count_if(e.warnings.begin(), e.warnings.end(), [](const engine::Warning &w) {
                return w.code == "no-stack";
            }));
}

// The document's layout priced as the command line prices it: synchronously, the range merged.
engine::Evaluation synchronous(const Document &doc)
{
    engine::EvaluateOptions options;
    options.stackRange = true;
    return engine::evaluate(doc.layout(), doc.topology(), options);
}

engine::Evaluation withoutRange(const Document &doc)
{
    return engine::evaluate(doc.layout(), doc.topology());
}

// The band and everything the range writes are those of `expected`.
void compareBand(const engine::Evaluation &e, const engine::Evaluation &expected)
{
    QVERIFY(e.ok && expected.ok);
    QCOMPARE(e.stepTimeS, expected.stepTimeS);
    QCOMPARE(e.stackRange.stacks, expected.stackRange.stacks);
    QCOMPARE(e.stackRange.fastestS, expected.stackRange.fastestS);
    QCOMPARE(e.stackRange.slowestS, expected.stackRange.slowestS);
    QCOMPARE(e.stepTimeBand.lowS, expected.stepTimeBand.lowS);
    QCOMPARE(e.stepTimeBand.highS, expected.stepTimeBand.highS);
    QCOMPARE(e.stepTimeBand.fraction, expected.stepTimeBand.fraction);
    QCOMPARE(e.stepTimeBand.basis, expected.stepTimeBand.basis);
    QCOMPARE(e.assumptions, expected.assumptions);
    QCOMPARE(noStackWarnings(e), noStackWarnings(expected));
    QCOMPARE(e.warnings.size(), expected.warnings.size());
}

// An edit of the sequence length: one undo step, which re-prices the step.
void setSeqLen(Document *doc, int seqLen)
{
    engine::TrainingConfig t = doc->layout().training;
    t.seqLen = seqLen;
    doc->undoStack()->push(
            new ChangeWorkload(doc, doc->layout().model, t, QStringLiteral("sequence length")));
}

QLabel *stepLabel(PricingPanel &panel)
{
    for (QLabel *l : panel.findChildren<QLabel *>())
        if (l->toolTip().startsWith(QLatin1String("Step time band")))
            return l;
    return nullptr;
}

// The text of an SVG's elements, entities resolved.
QString svgText(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QXmlStreamReader xml(&f);
    QString text;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::Characters) {
            text += xml.text();
            text += QLatin1Char('\n');
        }
    return text;
}

QString percent(const engine::Evaluation &e)
{
    return QStringLiteral("\u00b1")
           + QString::fromStdString(engine::formatNumber(100 * e.stepTimeBand.fraction, 2))
           + QLatin1Char('%');
}

} // namespace

class TestStackRangeAsync : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // (a) An edit publishes the step without the range; the range lands later and the band
    // then holds its fastest and slowest, as the synchronous engine gives them. The Pricing
    // dock says the stacks are being priced until then, and no longer after.
    void rangeLandsAfterTheEdit()
    {
        auto doc = openLayout("zero3-scaling.railyard.json");
        QVERIFY(doc);
        QVERIFY(doc->layout().training.stack.empty());
        QTRY_VERIFY(!doc->isStackRangePending()); // the range of the file as opened
        compareBand(doc->evaluation(), synchronous(*doc));
        PricingPanel panel;
        panel.setDocument(doc.get());
        QSignalSpy evaluated(doc.get(), &Document::evaluationChanged);
        QSignalSpy ranged(doc.get(), &Document::stackRangeChanged);

        setSeqLen(doc.get(), 2048);
        QCOMPARE(evaluated.count(), 1);
        QCOMPARE(ranged.count(), 0);
        QVERIFY(doc->isStackRangePending());
        const engine::Evaluation published = doc->evaluation();
        QCOMPARE(published.stackRange.stacks, 0);
        QCOMPARE(noStackWarnings(published), 0);
        compareBand(published, withoutRange(*doc));
        QLabel *step = stepLabel(panel);
        QVERIFY(step);
        QVERIFY2(step->toolTip().contains(QLatin1String("being priced")),
                 qPrintable(step->toolTip()));
        QVERIFY(!step->toolTip().contains(QLatin1String("stacks it may be running price")));

        QTRY_COMPARE(ranged.count(), 1);
        QCOMPARE(evaluated.count(), 1); // the narrower signal only
        QVERIFY(!doc->isStackRangePending());
        const engine::Evaluation &e = doc->evaluation();
        const engine::Evaluation expected = synchronous(*doc);
        compareBand(e, expected);
        QCOMPARE(e.stackRange.stacks, 6);
        QCOMPARE(noStackWarnings(e), 1);
        QVERIFY(e.stepTimeBand.lowS <= e.stackRange.fastestS);
        QVERIFY(e.stepTimeBand.highS >= e.stackRange.slowestS);
        QVERIFY(e.stepTimeBand.highS > published.stepTimeBand.highS); // it widened
        QVERIFY(!step->toolTip().contains(QLatin1String("being priced")));
        QVERIFY(step->toolTip().contains(QLatin1String("no software stack named")));
        QVERIFY(step->text().contains(QString::number(qRound(100 * e.stepTimeBand.fraction))));
    }

    // (b) Two edits in a row: the first one's range is never merged; the band is the last
    // layout's, and it lands once.
    void onlyTheLastEditsRangeLands()
    {
        auto doc = openLayout("zero3-scaling.railyard.json");
        QVERIFY(doc);
        QTRY_VERIFY(!doc->isStackRangePending());
        QSignalSpy ranged(doc.get(), &Document::stackRangeChanged);
        setSeqLen(doc.get(), 4096);
        const engine::Evaluation first = synchronous(*doc);
        setSeqLen(doc.get(), 512);
        const engine::Evaluation last = synchronous(*doc);
        // The two ranges differ, so merging the first would show.
        QVERIFY(first.stackRange.slowestS != last.stackRange.slowestS);
        QTRY_VERIFY(!doc->isStackRangePending());
        QTest::qWait(100); // a stale result would land by now
        QCOMPARE(ranged.count(), 1);
        compareBand(doc->evaluation(), last);
        // Undo is an edit too: its own range, the first layout's.
        doc->undoStack()->undo();
        QTRY_COMPARE(ranged.count(), 2);
        compareBand(doc->evaluation(), first);
    }

    // (c) Output taken right after an edit holds the widened band: the report, the diagram's
    // title block and a pin finish the range first.
    void outputRightAfterAnEditHoldsTheWholeBand()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto doc = openLayout("zero3-scaling.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());

        setSeqLen(doc.get(), 2048);
        QVERIFY(doc->isStackRangePending());
        const engine::Evaluation narrow = withoutRange(*doc);
        const engine::Evaluation whole = synchronous(*doc);
        QVERIFY(whole.stepTimeBand.highS > narrow.stepTimeBand.highS);
        QString error;
        const QString json = dir.filePath(QStringLiteral("report.json"));
        QVERIFY2(exportReport(*doc, json, &error), qPrintable(error));
        QVERIFY(!doc->isStackRangePending());
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject report = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonArray band = report.value(QLatin1String("step_time_band_s")).toArray();
        QCOMPARE(band.size(), 2);
        QCOMPARE(band.at(0).toDouble(), whole.stepTimeBand.lowS);
        QCOMPARE(band.at(1).toDouble(), whole.stepTimeBand.highS);
        QVERIFY(report.value(QLatin1String("step_time_band_basis"))
                        .toString()
                        .contains(QLatin1String("no software stack named")));

        setSeqLen(doc.get(), 512);
        QVERIFY(doc->isStackRangePending());
        const engine::Evaluation wholeSvg = synchronous(*doc);
        QVERIFY(percent(wholeSvg) != percent(withoutRange(*doc)));
        const QString svg = dir.filePath(QStringLiteral("cluster.svg"));
        QVERIFY2(exportDiagram(scene, svg, {}, &error), qPrintable(error));
        QVERIFY(!doc->isStackRangePending());
        const QString text = svgText(svg);
        QVERIFY2(text.contains(percent(wholeSvg)), qPrintable(percent(wholeSvg)));
        QVERIFY(!text.contains(percent(withoutRange(*doc))));

        setSeqLen(doc.get(), 1024);
        QVERIFY(doc->isStackRangePending());
        doc->pin();
        QVERIFY(doc->pinned());
        compareBand(doc->pinned()->evaluation, synchronous(*doc));
    }

    // (d) Closing a document while its range is priced neither crashes nor hangs, nor does an
    // edit of the cluster (a new topology) while one is priced. The 16,384-GPU preset, whose
    // range takes long enough to be caught running.
    void closingWhilePricedIsClean()
    {
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        QVERIFY(doc->layout().training.stack.empty());
        QVERIFY(doc->isStackRangePending());
        QTRY_VERIFY_WITH_TIMEOUT(!doc->isStackRangePending(), 30000);
        QVERIFY(doc->evaluation().stackRange.stacks > 0);
        setSeqLen(doc.get(), 4096);
        QVERIFY(doc->isStackRangePending());
        QTest::qWait(5); // let the pool start it
        QElapsedTimer closing;
        closing.start();
        doc.reset();
        qInfo("closed a 16,384-GPU document with its range pending in %lld ms", closing.elapsed());
        QTest::qWait(50); // nothing lands on a document that is gone

        // A cluster edit while the range is priced: the old topology lives on for it.
        auto small = openLayout("zero3-scaling.railyard.json");
        QVERIFY(small);
        engine::Layout l = small->layout();
        l.cluster.nodes = 4; // DP 32, the same global batch
        QVERIFY2(Document::checkLayout(l).isEmpty(), qPrintable(Document::checkLayout(l)));
        small->setLayout(l);
        QVERIFY(small->isStackRangePending());
        QTRY_VERIFY(!small->isStackRangePending());
        compareBand(small->evaluation(), synchronous(*small));
    }
};

QTEST_MAIN(TestStackRangeAsync)
#include "tst_stackrangeasync.moc"
