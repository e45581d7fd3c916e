// The window on a serving layout (one with `serving`, DESIGN.md "Serving (inference)
// workloads"): the document prices it with the serving engine; Pricing shows TTFT, TPOT,
// tokens/s per user and per GPU, memory and the concurrency the KV cache holds, against the
// state before an edit or a pinned A; Warnings lists the serving warnings with their cost; the
// Workload dock edits the serving settings and pools (one undo step each, bad values refused
// with the reason); the canvas colours by the serving engine's TP groups, replicas and
// prefill/decode pools, and moving a TP8 group across two servers makes every token slower;
// Link Load and the timeline show one decode step.
#include "base/units.h"
#include "commands/changemapping.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "layout/groupplacement.h"
#include "panels/ganttview.h"
#include "panels/hottestlinkspanel.h"
#include "panels/inspectorpanel.h"
#include "panels/plannerpanel.h"
#include "panels/pricingpanel.h"
#include "panels/servingform.h"
#include "panels/servingplanner.h"
#include "panels/servingpricing.h"
#include "panels/timelinepanel.h"
#include "panels/warningspanel.h"
#include "panels/workloadpanel.h"
#include "render/legend.h"
#include "scene/clusterscene.h"
#include "scene/faultmenu.h"
#include "serving/servingevaluate.h"

#include "testlayouts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>

using namespace railyard;

namespace {

using test::openLayout;

constexpr const char *kTp8 = "serving-llama70b-tp8-h100.railyard.json";
constexpr const char *kTp16 = "serving-llama70b-tp16-two-servers.railyard.json";
constexpr const char *kDisaggNvl72 = "serving-disaggregated-gb200-nvl72.railyard.json";

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

// The text of the metric row `name` in column `column` (0: before or A, 1: now).
QString metric(const ServingPricing *p, const char *name, int column = 1)
{
    const int row = p->metricRow(QString::fromLatin1(name));
    return row < 0 ? QStringLiteral("<no row %1>").arg(QLatin1String(name))
                   : p->metrics()->item(row, column)->text();
}

// TP group 0 of the layout moved onto GPUs 4-11: half on server 0, half on server 1.
void moveTpGroupAcrossServers(Document *doc)
{
    const engine::MappingEdit e = engine::placeGroup(doc->layout(),
                                                     engine::GroupRef{engine::GroupKind::Tp, 0},
                                                     {4, 5, 6, 7, 8, 9, 10, 11});
    QVERIFY2(e.ok(), e.error.c_str());
    doc->undoStack()->push(new ChangeMapping(doc, e.mapping, QStringLiteral("Place TP group 0")));
}

const QTreeWidgetItem *warningWithCode(const WarningsPanel &panel, const QString &code)
{
    QTreeWidget *list = panel.list();
    for (int i = 0; list && i < list->topLevelItemCount(); ++i)
        if (list->topLevelItem(i)->data(0, Qt::UserRole).toString() == code)
            return list->topLevelItem(i);
    return nullptr;
}

} // namespace

class TestServingGui : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void documentPricesServingWithTheServingEngine()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        QVERIFY(doc->isServing());
        const engine::ServingEvaluation *s = doc->servingEvaluation();
        QVERIFY(s);
        QVERIFY2(s->ok, s->error.c_str());
        QVERIFY(doc->isPriced());
        // The numbers are the engine's for this layout (what `railyard evaluate` prints).
        const engine::ServingEvaluation direct = engine::evaluateServing(doc->layout(),
                                                                         doc->topology());
        QCOMPARE(s->tpotS, direct.tpotS);
        QCOMPARE(s->ttftS, direct.ttftS);
        QCOMPARE(s->outputTokensPerSPerGpu, direct.outputTokensPerSPerGpu);
        // Link load and playback read one decode step.
        QVERIFY(doc->linkLoads());
        QVERIFY(doc->linkLoads()->utilization == s->links->decodeStep.utilization);
        QVERIFY(doc->linkLoads()->loaded > 0);
        QVERIFY(doc->timeline().stepS > 0);
        QCOMPARE(doc->timeline().stepS, s->decodeTimeline.stepS);
        QVERIFY(s->requestTimeline.stepS > s->decodeTimeline.stepS);

        // A training layout has no serving numbers.
        auto training = openLayout("hgx-h100-server.railyard.json");
        QVERIFY(training);
        QVERIFY(!training->servingEvaluation());
        QVERIFY(training->linkLoads() == training->evaluation().links);
    }

    void pricingShowsTheServingNumbers()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        const engine::ServingEvaluation &s = *doc->servingEvaluation();
        PricingPanel panel;
        panel.resize(420, 900);
        panel.setDocument(doc.get());
        ServingPricing *sp = panel.serving();
        QVERIFY(sp->isVisibleTo(&panel));
        QVERIFY(!panel.metrics()->isVisibleTo(&panel)); // the training table
        QVERIFY2(panel.stepText().startsWith(QStringLiteral("TPOT ")), qPrintable(panel.stepText()));
        QVERIFY(panel.stepText().contains(seconds(s.tpotS)));
        QVERIFY(!panel.stepText().contains(QStringLiteral("Step")));
        QCOMPARE(metric(sp, "TTFT"), seconds(s.ttftS));
        QCOMPARE(metric(sp, "TPOT"), seconds(s.tpotS));
        QCOMPARE(metric(sp, "KV cache holds"), QLocale().toString(double(s.maxConcurrency), 'f', 0));
        QVERIFY(s.maxConcurrency > 32); // the 32 in flight fit
        // Tokens/s per user is 1 / TPOT (one token accepted per decode step here).
        const double perUser = QLocale().toDouble(metric(sp, "Tokens/s per user"));
        QVERIFY2(std::abs(perUser * s.tpotS - 1) < 0.01,
                 qPrintable(metric(sp, "Tokens/s per user")));
        QVERIFY(metric(sp, "$ per M output tokens").startsWith(QLatin1Char('$')));
        // Memory per GPU: weights, KV cache, activations, against HBM.
        const QString mem = sp->memoryText();
        QVERIFY2(mem.contains(QStringLiteral("weights %1 GiB")
                                      .arg(QLocale().toString(s.memory.weightsGiB, 'f', 1))),
                 qPrintable(mem));
        QVERIFY(mem.contains(QStringLiteral("KV cache")));
        QVERIFY(mem.contains(QStringLiteral("activations")));
        QVERIFY(mem.contains(QStringLiteral("holds %1 requests").arg(s.maxConcurrency)));
        // The decode step's parts: its TP all-reduces are there.
        QVERIFY(s.decode.tp > 0);
        bool tpRow = false;
        for (int r = 0; r < sp->breakdown()->rowCount(); ++r)
            if (sp->breakdown()->verticalHeaderItem(r)->text() == QStringLiteral("TP all-reduce"))
                tpRow = sp->breakdown()->item(r, 0)->text() == seconds(s.decode.tp);
        QVERIFY(tpRow);
        // A part neither phase spends time on takes no row (aggregated: no KV transfer).
        QCOMPARE(s.decode.kvTransfer + s.prefill.kvTransfer, 0.0);
        for (int r = 0; r < sp->breakdown()->rowCount(); ++r) {
            const QString dash = QStringLiteral("\u2014");
            const bool idle = sp->breakdown()->item(r, 0)->text() == dash
                              && sp->breakdown()->item(r, 1)->text() == dash;
            QCOMPARE(sp->breakdown()->isRowHidden(r), idle);
            if (sp->breakdown()->verticalHeaderItem(r)->text() == QStringLiteral("KV transfer"))
                QVERIFY(idle);
        }
        // Before an edit there is nothing to compare with.
        QVERIFY(sp->metrics()->isColumnHidden(0));
    }

    void pinnedAComparesServingNumbers()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        PricingPanel panel;
        panel.setDocument(doc.get());
        panel.pinA();
        QVERIFY(doc->pinned() && doc->pinned()->serving);
        const double tpotA = doc->servingEvaluation()->tpotS;
        WorkloadPanel workload;
        workload.setDocument(doc.get());
        workload.servingForm()->concurrencyBox()->setValue(128);
        QCOMPARE(doc->layout().serving->concurrency.value_or(0), 128);
        const double tpotB = doc->servingEvaluation()->tpotS;
        QVERIFY(tpotB > tpotA); // a larger decode batch: a slower step
        ServingPricing *sp = panel.serving();
        QVERIFY(!sp->metrics()->isColumnHidden(0));
        QCOMPARE(sp->metrics()->horizontalHeaderItem(0)->text(), QStringLiteral("A"));
        QCOMPARE(metric(sp, "TPOT", 0), seconds(tpotA));
        QCOMPARE(metric(sp, "TPOT", 1), seconds(tpotB));
        QVERIFY(metric(sp, "TPOT", 2).startsWith(QLatin1Char('+')));
        QVERIFY2(panel.changeText().contains(QStringLiteral("vs A")),
                 qPrintable(panel.changeText()));
    }

    void warningsListServingWarningsWithTheirCost()
    {
        auto doc = openLayout(kTp16);
        QVERIFY(doc);
        WarningsPanel panel;
        panel.setDocument(doc.get());
        const engine::ServingEvaluation &s = *doc->servingEvaluation();
        QVERIFY(s.ok);
        const engine::Warning *w = nullptr;
        for (const engine::Warning &x : s.warnings)
            if (x.code == "tp-spans-domains")
                w = &x;
        QVERIFY(w);
        const QTreeWidgetItem *item = warningWithCode(panel, QStringLiteral("tp-spans-domains"));
        QVERIFY(item);
        QCOMPARE(item->text(0), QString::fromStdString(w->message));
        QCOMPARE(item->text(1), QStringLiteral("+") + seconds(w->costS));
        QVERIFY(!item->toolTip(0).contains(QStringLiteral("of the step")));
        QVERIFY(panel.warningCount() > 0);
        // Nothing says the layout cannot be priced.
        QTreeWidget *list = panel.list();
        for (int i = 0; i < list->topLevelItemCount(); ++i)
            QVERIFY(!list->topLevelItem(i)->text(0).contains(QStringLiteral("cannot be priced")));
    }

    void workloadShowsServingFieldsAndEachEditIsOneUndoStep()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        ServingForm *form = panel.servingForm();
        QVERIFY(form->isVisibleTo(&panel));
        QVERIFY(!panel.seqLenBox()->isVisibleTo(&panel));      // training settings
        QVERIFY(!panel.globalBatchBox()->isVisibleTo(&panel)); // hidden
        QCOMPARE(form->inputTokensBox()->value(), 1024);
        QCOMPARE(form->outputTokensBox()->value(), 1024);
        QCOMPARE(form->concurrencyBox()->value(), 32);
        QCOMPARE(form->stackBox()->currentText(), QStringLiteral("vllm"));
        QCOMPARE(form->precisionBox()->currentText(), QStringLiteral("FP8"));
        QCOMPARE(form->poolBox(ServingForm::Aggregated, ServingForm::Tp)->value(), 8);
        QCOMPARE(form->poolBox(ServingForm::Aggregated, ServingForm::Replicas)->value(), 2);
        QVERIFY(!form->poolBox(ServingForm::Prefill, ServingForm::Tp)->isVisibleTo(form));

        QUndoStack *undo = doc->undoStack();
        const double ttft = doc->servingEvaluation()->ttftS;
        form->inputTokensBox()->setValue(4096);
        QCOMPARE(undo->count(), 1);
        QCOMPARE(doc->layout().serving->inputTokens, 4096);
        QVERIFY(doc->servingEvaluation()->ttftS > ttft); // a longer prompt: a later first token
        // A spin box stepped through values is one step.
        form->outputTokensBox()->stepUp();
        form->outputTokensBox()->stepUp();
        form->outputTokensBox()->stepUp();
        QCOMPARE(undo->count(), 2);
        QCOMPARE(doc->layout().serving->outputTokens, 1027);
        // The KV cache in FP8 is the default with FP8 weights: BF16 halves what it holds.
        const int held = doc->servingEvaluation()->maxConcurrency;
        QComboBox *kv = form->kvPrecisionBox();
        kv->setCurrentIndex(1); // BF16
        Q_EMIT kv->activated(1);
        QCOMPARE(undo->count(), 3);
        QVERIFY(doc->layout().serving->kvPrecision == engine::Precision::Bf16);
        QVERIFY(doc->servingEvaluation()->maxConcurrency < held);
        undo->undo();
        undo->undo();
        undo->undo();
        QCOMPARE(doc->layout().serving->inputTokens, 1024);
        QCOMPARE(form->inputTokensBox()->value(), 1024); // the form follows undo
        QVERIFY(!doc->layout().serving->kvPrecision);
    }

    void badValuesAreRefusedWithTheReason()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        ServingForm *form = panel.servingForm();
        const engine::Layout before = doc->layout();
        // Five replicas of TP8 need 40 GPUs; the cluster has 16.
        form->poolBox(ServingForm::Aggregated, ServingForm::Replicas)->setValue(5);
        QVERIFY2(form->errorText().contains(QStringLiteral("the cluster has 16")),
                 qPrintable(form->errorText()));
        QVERIFY(doc->layout().sameContent(before));
        QCOMPARE(doc->undoStack()->count(), 0);
        QCOMPARE(form->poolBox(ServingForm::Aggregated, ServingForm::Replicas)->value(), 2);
        // A good value afterwards clears the reason.
        form->concurrencyBox()->setValue(16);
        QVERIFY(form->errorText().isEmpty());
        QCOMPARE(doc->undoStack()->count(), 1);

        // A disaggregated split that needs more GPUs than the cluster has.
        auto split = openLayout(kDisaggNvl72);
        QVERIFY(split);
        panel.setDocument(split.get());
        form->poolBox(ServingForm::Decode, ServingForm::Replicas)->setValue(9);
        QVERIFY2(form->errorText().contains(QStringLiteral("disaggregated")),
                 qPrintable(form->errorText()));
        QCOMPARE(split->layout().serving->disaggregated->decode.replicas, 7);
        QCOMPARE(split->undoStack()->count(), 0);
    }

    void disaggregationIsOneUndoStep()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        ServingForm *form = panel.servingForm();
        form->disaggregatedBox()->setChecked(true);
        QCOMPARE(doc->undoStack()->count(), 1);
        QVERIFY(doc->layout().serving->disaggregated);
        QCOMPARE(doc->layout().serving->disaggregated->prefill.tp, 8);
        QCOMPARE(doc->layout().serving->disaggregated->prefill.replicas, 1);
        QCOMPARE(doc->layout().serving->disaggregated->decode.replicas, 1);
        QVERIFY2(doc->servingEvaluation()->ok, doc->servingEvaluation()->error.c_str());
        QVERIFY(doc->servingEvaluation()->disaggregated);
        QVERIFY(doc->servingEvaluation()->prefill.kvTransfer > 0);
        QVERIFY(form->poolBox(ServingForm::Decode, ServingForm::Tp)->isVisibleTo(form));
        QVERIFY(!form->poolBox(ServingForm::Aggregated, ServingForm::Tp)->isVisibleTo(form));
        doc->undoStack()->undo();
        QVERIFY(!doc->layout().serving->disaggregated);
        QVERIFY(!form->disaggregatedBox()->isChecked());
    }

    // FP8 scaling (serving.fp8_scaling): per 128-block prices what the engine prices for a
    // block-scaled checkpoint, one undo step; it is a choice of FP8 weights only, and leaving FP8
    // takes it back to per tensor in the same step, so no layout the engine refuses is made.
    void fp8ScalingIsOneUndoStepAndFollowsThePrecision()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        ServingForm *form = panel.servingForm();
        QComboBox *scaling = form->fp8ScalingBox();
        QVERIFY(scaling->isVisibleTo(&panel));
        QVERIFY(scaling->isEnabled());
        QCOMPARE(scaling->currentIndex(), 0);
        QVERIFY(!doc->layout().serving->fp8BlockScaled);
        QUndoStack *undo = doc->undoStack();
        const double tpot = doc->servingEvaluation()->tpotS;

        // The engine's number for the same layout with a block-scaled checkpoint.
        engine::Layout block = doc->layout();
        block.serving->fp8BlockScaled = true;
        const engine::ServingEvaluation expected = engine::evaluateServing(block, doc->topology());
        QVERIFY2(expected.ok, expected.error.c_str());
        QVERIFY(expected.tpotS > tpot); // activations quantized by kernels of their own

        QSignalSpy workload(doc.get(), &Document::workloadChanged);
        scaling->setCurrentIndex(1);
        Q_EMIT scaling->activated(1);
        QCOMPARE(undo->count(), 1);
        QCOMPARE(undo->text(0), QStringLiteral("Change FP8 scaling"));
        QCOMPARE(workload.count(), 1);
        QVERIFY(doc->layout().serving->fp8BlockScaled);
        QCOMPARE(doc->servingEvaluation()->tpotS, expected.tpotS);
        qInfo("TPOT per tensor %.3f ms, per 128-block %.3f ms",
              1e3 * tpot,
              1e3 * doc->servingEvaluation()->tpotS);
        undo->undo();
        QVERIFY(!doc->layout().serving->fp8BlockScaled);
        QCOMPARE(doc->servingEvaluation()->tpotS, tpot);
        QCOMPARE(scaling->currentIndex(), 0); // the form follows undo
        undo->redo();
        QCOMPARE(scaling->currentIndex(), 1);

        // BF16 weights: no scaling to choose; the block scaling goes in the same step.
        QComboBox *precision = form->precisionBox();
        precision->setCurrentIndex(0); // BF16
        Q_EMIT precision->activated(0);
        QCOMPARE(undo->count(), 2);
        QCOMPARE(undo->text(1), QStringLiteral("Change precision (FP8 scaling back to per tensor)"));
        QVERIFY(doc->layout().serving->precision == engine::Precision::Bf16);
        QVERIFY(!doc->layout().serving->fp8BlockScaled);
        QVERIFY2(doc->servingEvaluation()->ok, doc->servingEvaluation()->error.c_str());
        QVERIFY(Document::checkLayout(doc->layout()).isEmpty());
        QVERIFY(!scaling->isEnabled());
        QCOMPARE(scaling->currentIndex(), 0);
        QVERIFY2(scaling->toolTip().contains(QStringLiteral("the weights are BF16")),
                 qPrintable(scaling->toolTip()));
        // Ctrl+Z: FP8 with the block scaling again, the control enabled.
        undo->undo();
        QVERIFY(doc->layout().serving->precision == engine::Precision::Fp8);
        QVERIFY(doc->layout().serving->fp8BlockScaled);
        QVERIFY(scaling->isEnabled());
        QCOMPARE(scaling->currentIndex(), 1);
        QCOMPARE(doc->servingEvaluation()->tpotS, expected.tpotS);
    }

    void canvasColoursByTheServingGroups()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        // Prefill and decode pools: the first 44 GPUs prefill, the next 28 decode.
        scene.setColourBy(engine::GroupKind::Cp);
        const CanvasState &st = scene.canvasState();
        QCOMPARE(st.groupCount, 2);
        QCOMPARE(st.gpuGroup.size(), std::size_t(72));
        for (int g = 0; g < 72; ++g)
            QCOMPARE(st.gpuGroup[static_cast<std::size_t>(g)], g < 44 ? 0 : 1);
        QCOMPARE(st.gpuCaption(0).left(7), QStringLiteral("prefill"));
        QCOMPARE(st.gpuCaption(50).left(6), QStringLiteral("decode"));
        QVERIFY(st.gpuFill(0) != st.gpuFill(50));
        // The legend says what the colours mean.
        const render::Legend legend(doc->topology(), st, QFont(), 900);
        QStringList texts;
        for (const render::PlacedText &t : legend.texts())
            texts << t.text;
        QVERIFY2(texts.contains(QStringLiteral("Prefill/decode pools")),
                 qPrintable(texts.join('|')));
        QVERIFY(texts.contains(QStringLiteral("prefill")));
        QVERIFY(texts.contains(QStringLiteral("decode")));
        // TP groups: 11 prefill and 7 decode instances of TP4.
        scene.setColourBy(engine::GroupKind::Tp);
        QCOMPARE(st.groupCount, 18);
        QCOMPARE(st.gpuGroup[0], st.gpuGroup[3]);
        QVERIFY(st.gpuGroup[3] != st.gpuGroup[4]);
        QCOMPARE(st.gpuGroup[44], 11); // the first decode instance
        // Replicas of the aggregated layout: two of eight GPUs.
        auto tp8 = openLayout(kTp8);
        ViewState view8(tp8.get());
        ClusterScene scene8(tp8.get());
        scene8.setViewState(&view8);
        scene8.setColourBy(engine::GroupKind::DpReplica);
        QCOMPARE(scene8.canvasState().groupCount, 2);
        QCOMPARE(scene8.canvasState().gpuGroup[7], 0);
        QCOMPARE(scene8.canvasState().gpuGroup[8], 1);
    }

    void stragglerNamesTheSlowestReplica()
    {
        // GPU 45 (decode replica 0 of the disaggregated NVL72 layout) twice as slow: the
        // Warnings dock names that replica with what its requests pay per token, and Pricing's
        // breakdown says it is that replica's (the headline TPOT is the mean a request sees).
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        PricingPanel pricing;
        pricing.setDocument(doc.get());
        WarningsPanel warnings;
        warnings.setDocument(doc.get());
        const auto title = [&] { return pricing.serving()->breakdownTitle()->text(); };
        QVERIFY(!warningWithCode(warnings, QStringLiteral("slow-replica")));
        QVERIFY2(!title().contains(QStringLiteral("slowest")), qPrintable(title()));
        engine::Fault f;
        f.device = "GPU 45";
        f.state = engine::FaultState::Degraded;
        f.slowdown = 2.0;
        QVERIFY(faultmenu::applyFaults(doc.get(), {f}, QStringLiteral("Slow down GPU 45"), nullptr));
        const QTreeWidgetItem *slow = warningWithCode(warnings, QStringLiteral("slow-replica"));
        QVERIFY(slow);
        QVERIFY2(slow->text(0).contains(QStringLiteral("decode replica 0 (GPUs 44-47")),
                 qPrintable(slow->text(0)));
        QVERIFY2(title().contains(QStringLiteral("in the slowest replica")), qPrintable(title()));
        doc->undoStack()->undo();
        QVERIFY(!warningWithCode(warnings, QStringLiteral("slow-replica")));
        QVERIFY(!title().contains(QStringLiteral("slowest")));
    }

    void tpGroupAcrossServersMakesEveryTokenSlower()
    {
        auto doc = openLayout(kTp8);
        QVERIFY(doc);
        PricingPanel pricing;
        pricing.setDocument(doc.get());
        WarningsPanel warnings;
        warnings.setDocument(doc.get());
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        scene.setColourBy(engine::GroupKind::Tp);
        const double inside = doc->servingEvaluation()->tpotS;
        QVERIFY(!warningWithCode(warnings, QStringLiteral("tp-spans-domains")));

        moveTpGroupAcrossServers(doc.get());
        const engine::ServingEvaluation &across = *doc->servingEvaluation();
        QVERIFY(across.ok);
        // Two all-reduces per layer over the NICs instead of NVLink: every token is slower.
        QVERIFY2(across.tpotS > 1.2 * inside,
                 qPrintable(QStringLiteral("%1 -> %2").arg(inside).arg(across.tpotS)));
        QVERIFY(across.decode.tp > 0);
        QVERIFY2(pricing.changeText().startsWith(QLatin1Char('+')),
                 qPrintable(pricing.changeText()));
        QVERIFY(pricing.changeText().contains(QStringLiteral("time per output token")));
        QVERIFY(warningWithCode(warnings, QStringLiteral("tp-spans-domains")));
        // The canvas colours TP group 0 where it went.
        const CanvasState &st = scene.canvasState();
        QCOMPARE(st.gpuGroup[4], st.gpuGroup[11]);
        QVERIFY(st.gpuGroup[4] != st.gpuGroup[0]);
        doc->undoStack()->undo();
        QCOMPARE(doc->servingEvaluation()->tpotS, inside);
    }

    void linkLoadAndHottestLinksShowTheDecodeStep()
    {
        auto doc = openLayout(kTp16);
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        view.setLinkLoad(true);
        const CanvasState &st = scene.canvasState();
        QVERIFY(st.showLoads());
        // TP16 across two servers: its all-reduces load the NICs every decode step.
        const engine::Topology &t = doc->topology();
        double nicLoad = 0;
        for (std::size_t l = 0; l < t.links().size(); ++l)
            if (t.links()[l].kind == engine::LinkKind::Ib)
                nicLoad = std::max(nicLoad, st.load(static_cast<int>(l)));
        QVERIFY(nicLoad > 0);
        HottestLinksPanel hottest;
        hottest.setDocument(doc.get(), &view);
        QVERIFY2(hottest.headerText().contains(QStringLiteral("decode-step")),
                 qPrintable(hottest.headerText()));
        QVERIFY(view.stepLength() > 0);
        QCOMPARE(view.stepLength(), doc->servingEvaluation()->decodeTimeline.stepS);
    }

    // The Inspector's page of a link on a serving layout reads the serving evaluation: the
    // bytes of one decode step (the training engine prices nothing here) and per request.
    void inspectorShowsTheServingLoadOfALink()
    {
        auto doc = openLayout(kTp16);
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        InspectorPanel inspector;
        inspector.setScene(&scene);
        const engine::ServingEvaluation *e = doc->servingEvaluation();
        QVERIFY(e && e->ok && e->links);
        // The busiest NIC link of a decode step (TP16's all-reduces cross the NICs).
        const engine::Topology &t = doc->topology();
        const engine::LinkLoads &d = e->links->decodeStep;
        int link = -1;
        for (std::size_t l = 0; l < t.links().size(); ++l)
            if (t.links()[l].kind == engine::LinkKind::Ib
                && (link < 0 || d.utilization[l] > d.utilization[std::size_t(link)]))
                link = static_cast<int>(l);
        QVERIFY(link >= 0 && d.utilization[std::size_t(link)] > 0);
        scene.setSelectedLink(link);
        const QString page = inspector.headerText();
        QVERIFY2(page.contains(QStringLiteral("per decode step")), qPrintable(page));
        QVERIFY2(!page.contains(QStringLiteral("idle")), qPrintable(page));
        // The utilization as the engine has it, in percent.
        const double u = 100.0 * d.utilization[std::size_t(link)];
        QVERIFY2(page.contains(
                         QStringLiteral("%1% decode-step average").arg(u, 0, 'f', u < 10 ? 1 : 0)),
                 qPrintable(page));
    }

    void timelinePlaysADecodeStepOrOneRequest()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        ViewState view(doc.get());
        TimelinePanel panel(doc.get(), &view);
        const engine::ServingEvaluation &s = *doc->servingEvaluation();
        QVERIFY(panel.servingTimelineBox()->isVisibleTo(&panel));
        QCOMPARE(view.stepLength(), s.decodeTimeline.stepS);
        QVERIFY2(panel.statusText().startsWith(QStringLiteral("Decode step")),
                 qPrintable(panel.statusText()));
        // The lane is labelled with what plays: the decode step, then the request.
        GanttView gantt(doc.get(), &view);
        QVERIFY2(gantt.stepLabel().startsWith(QStringLiteral("decode")),
                 qPrintable(gantt.stepLabel()));
        QComboBox *which = panel.servingTimelineBox();
        which->setCurrentIndex(1);
        Q_EMIT which->activated(1);
        QCOMPARE(view.servingTimeline(), ViewState::ServingTimeline::Request);
        // One request's life: it waits, prefills, sends its KV cache, then decodes.
        QCOMPARE(view.stepLength(), s.requestTimeline.stepS);
        QVERIFY(view.stepLength() > s.ttftS);
        QVERIFY2(panel.statusText().startsWith(QStringLiteral("One request")),
                 qPrintable(panel.statusText()));
        QCOMPARE(gantt.stepLabel(), QStringLiteral("request"));
        // Half way through the prefill, the prefill runs; the canvas shows that moment's loads.
        const engine::ServingBreakdown &p = s.prefill;
        view.setPlaybackTime(s.ttftWaitS
                             + 0.5 * (p.compute + p.weightsRead + p.attention + p.overhead));
        QVERIFY(!view.moment().empty());
        QVERIFY2(panel.runningText().contains(QStringLiteral("prefill"), Qt::CaseInsensitive),
                 qPrintable(panel.runningText()));
        // A training layout shows no serving choice.
        auto training = openLayout("hgx-h100-server.railyard.json");
        ViewState trainingView(training.get());
        TimelinePanel trainingPanel(training.get(), &trainingView);
        QVERIFY(!trainingPanel.servingTimelineBox()->isVisibleTo(&trainingPanel));
        QCOMPARE(GanttView(training.get(), &trainingView).stepLabel(), QStringLiteral("step"));
    }

    void plannerFindsTheFrontAndAppliesAPointAsOneUndoStep()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        PlannerPanel panel;
        panel.setDocument(doc.get());
        ServingPlanner *planner = panel.serving();
        QVERIFY(planner->isVisibleTo(&panel));
        QSignalSpy done(&panel, &PlannerPanel::searchFinished);
        panel.search();
        QVERIFY(done.wait(300000));
        const engine::ServingPlanResult &r = planner->result();
        QVERIFY2(r.ok, r.error.c_str());
        QVERIFY(r.front.size() >= 2);
        QCOMPARE(planner->table()->rowCount(), int(r.front.size()));
        // A Pareto front: faster per user, fewer tokens per GPU.
        for (std::size_t i = 1; i < r.front.size(); ++i) {
            QVERIFY(r.front[i].tokensPerSPerUser <= r.front[i - 1].tokensPerSPerUser);
            QVERIFY(r.front[i].outputTokensPerSPerGpu >= r.front[i - 1].outputTokensPerSPerGpu);
        }
        QCOMPARE(planner->table()->item(0, 3)->text(),
                 QLocale().toString(r.front[0].outputTokensPerSPerGpu, 'f', 0));
        // The point with the most tokens per GPU, applied: the document prices what the
        // planner priced (the same engine; 1% for the planner's own shortcuts).
        const int last = int(r.front.size()) - 1;
        const engine::ServingPlanPoint point = r.front[std::size_t(last)];
        QVERIFY(panel.applyPlan(last));
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().serving->concurrency.value_or(0), point.concurrency);
        const engine::ServingEvaluation &now = *doc->servingEvaluation();
        QVERIFY2(now.ok, now.error.c_str());
        QVERIFY2(std::abs(now.outputTokensPerSPerGpu / point.outputTokensPerSPerGpu - 1) < 0.01,
                 qPrintable(QStringLiteral("%1 vs %2")
                                    .arg(now.outputTokensPerSPerGpu)
                                    .arg(point.outputTokensPerSPerGpu)));
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().serving->concurrency.value_or(0), 48);

        // A TPOT limit drops the slower points.
        const double limit = r.front[std::size_t(last)].tpotS * 0.5;
        planner->tpotLimitBox()->setValue(limit * 1e3);
        panel.search();
        QVERIFY(done.wait(300000));
        QVERIFY(!planner->result().front.empty());
        for (const engine::ServingPlanPoint &p : planner->result().front)
            QVERIFY(p.tpotS <= limit * (1 + 1e-9) + 5e-5); // the box keeps 0.1 ms
    }

    // Cancel stops a serving search: the dock says so, the Search button comes back, the
    // front found before stays (in the planner and in its table), and the stopped search's
    // result never arrives.
    void cancelKeepsTheFrontFoundBefore()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        PlannerPanel panel;
        panel.setDocument(doc.get());
        ServingPlanner *planner = panel.serving();
        QSignalSpy done(planner, &ServingPlanner::searchFinished);
        planner->search();
        QVERIFY(done.wait(300000));
        const engine::ServingPlanResult before = planner->result();
        QVERIFY(before.ok && !before.cancelled && before.front.size() >= 2);
        QStringList rows;
        for (int row = 0; row < planner->table()->rowCount(); ++row)
            rows << planner->table()->item(row, 1)->text();
        QCOMPARE(rows.size(), int(before.front.size()));

        planner->search();
        QVERIFY(planner->isSearching());
        QVERIFY(!planner->searchButton()->isEnabled());
        QVERIFY(planner->cancelButton()->isVisibleTo(planner));
        QVERIFY(planner->progressBar()->isVisibleTo(planner));
        planner->cancelButton()->click();
        QVERIFY(!planner->isSearching());
        QVERIFY(planner->searchButton()->isEnabled());
        QVERIFY(!planner->cancelButton()->isVisibleTo(planner));
        QVERIFY(!planner->progressBar()->isVisibleTo(planner));
        QCOMPARE(planner->statusLabel()->text(), QStringLiteral("Search cancelled."));
        QTest::qWait(50); // a result already queued is dropped
        QCOMPARE(done.count(), 1);
        const engine::ServingPlanResult &after = planner->result();
        QCOMPARE(after.evaluated, before.evaluated);
        QCOMPARE(after.front.size(), before.front.size());
        for (std::size_t i = 0; i < before.front.size(); ++i) {
            QCOMPARE(after.front[i].concurrency, before.front[i].concurrency);
            QCOMPARE(after.front[i].tokensPerSPerUser, before.front[i].tokensPerSPerUser);
            QCOMPARE(after.front[i].outputTokensPerSPerGpu, before.front[i].outputTokensPerSPerGpu);
        }
        QCOMPARE(planner->table()->rowCount(), rows.size());
        for (int row = 0; row < rows.size(); ++row)
            QCOMPARE(planner->table()->item(row, 1)->text(), rows[row]);
        // The front still applies.
        QVERIFY(planner->applyButton()->isEnabled());
        QVERIFY(panel.applyPlan(0));
        QCOMPARE(doc->undoStack()->count(), 1);
    }
};

QTEST_MAIN(TestServingGui)
#include "tst_servinggui.moc"
