// The panels around the canvas: the Workload panel (every change one undo command, valid sizes
// offered and the others disabled with the reason, rank-order presets, refused edits shown and
// not applied), the Pricing panel (numbers from the evaluation, the change against the state
// before the edit, the step-time and memory charts, A/B compare with the links whose load
// changed most) and the Warnings panel (costs, worst first, clicking selects the GPUs).
#include "base/units.h"
#include "charts/memorychart.h"
#include "charts/stepchart.h"
#include "commands/changemapping.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "layout/placement.h"
#include "layout/softwarestack.h"
#include "panels/clusterpanel.h"
#include "panels/pricingpanel.h"
#include "panels/warningspanel.h"
#include "panels/workloadpanel.h"
#include "step/evaluationdiff.h"

#include "evaluatetext.h"
#include "testlayouts.h"
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>

#include "layout/softwarestack.h"

#include <QTest>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoStack>

using namespace railyard;
using engine::Dim;

namespace {

using test::openLayout;

// The combo row holding `value`, or -1.
int rowOf(QComboBox *box, int value)
{
    for (int i = 0; i < box->count(); ++i)
        if (box->itemData(i).toInt() == value)
            return i;
    return -1;
}

bool enabled(QComboBox *box, int row)
{
    const auto *model = qobject_cast<QStandardItemModel *>(box->model());
    return model->item(row)->isEnabled();
}

// What a user does when choosing a row of a combo box.
void choose(QComboBox *box, int row)
{
    box->setCurrentIndex(row);
    Q_EMIT box->activated(row);
}

// TP group 0 of the H200 preset moved onto GPUs 4-11, across servers 0 and 1.
void moveTpAcross(Document *doc)
{
    const engine::MappingEdit e = engine::placeGroup(doc->layout(),
                                                     Dim::TP,
                                                     0,
                                                     {4, 5, 6, 7, 8, 9, 10, 11});
    QVERIFY(e.ok());
    doc->undoStack()->push(new ChangeMapping(doc, e.mapping, QStringLiteral("Place TP group 0")));
}

} // namespace

class TestPanels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sizesOfferTheValidChoicesAndSayWhyNot()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json"); // Llama 3 70B, 128 GPUs, PP4
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *tp = panel.sizeBox(Dim::TP);
        QCOMPARE(tp->currentData().toInt(), 8);
        // TP 4 and 16 are fine; TP 64 x PP 4 is more than the 128 GPUs; TP 128 does not divide
        // the 64 heads.
        QVERIFY(enabled(tp, rowOf(tp, 4)));
        QVERIFY(enabled(tp, rowOf(tp, 16)));
        const int tp64 = rowOf(tp, 64);
        QVERIFY(!enabled(tp, tp64));
        QVERIFY2(tp->itemData(tp64, Qt::ToolTipRole).toString().contains(QStringLiteral("divide")),
                 qPrintable(tp->itemData(tp64, Qt::ToolTipRole).toString()));
        QVERIFY(tp->itemText(tp64).contains(QStringLiteral("does not divide")));
        const int tp128 = rowOf(tp, 128);
        QVERIFY(!enabled(tp, tp128));
        // PP above the 80 layers is refused with the reason.
        QComboBox *pp = panel.sizeBox(Dim::PP);
        QVERIFY(enabled(pp, rowOf(pp, 8)));
        // EP: Llama 3 70B has no experts.
        QComboBox *ep = panel.sizeBox(Dim::EP);
        QVERIFY(!enabled(ep, rowOf(ep, 2)));
        QVERIFY(ep->itemData(rowOf(ep, 2), Qt::ToolTipRole)
                        .toString()
                        .contains(QStringLiteral("no experts")));
        // DP follows from the GPU count: only 4 fits TP8 x PP4.
        QComboBox *dp = panel.sizeBox(Dim::DP);
        QCOMPARE(dp->currentData().toInt(), 4);
        QVERIFY(!enabled(dp, rowOf(dp, 8)));
        // VP 5 is in force; VP 3 does not split 80 layers into 4 x 3 virtual stages.
        QCOMPARE(panel.vpBox()->currentData().toInt(), 5);
        QVERIFY(!enabled(panel.vpBox(), rowOf(panel.vpBox(), 3)));
        QVERIFY(panel.parallelSummary()->text().contains(QStringLiteral("TP 8")));
    }

    void choosingASizeIsOneUndoStepAndKeepsTheClusterFilled()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *tp = panel.sizeBox(Dim::TP);
        choose(tp, rowOf(tp, 4));
        QCOMPARE(doc->layout().parallel.tp, 4);
        QCOMPARE(doc->layout().dataParallel(), 8); // 128 / (TP4 x PP4)
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change TP to 4"));
        QVERIFY(doc->evaluation().ok);
        // The panel follows the document, also on undo.
        QCOMPARE(panel.sizeBox(Dim::DP)->currentData().toInt(), 8);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().parallel.tp, 8);
        QCOMPARE(doc->layout().dataParallel(), 4);
        QCOMPARE(tp->currentData().toInt(), 8);
        // PP 1 drops VP, which means nothing without a pipeline.
        QComboBox *pp = panel.sizeBox(Dim::PP);
        choose(pp, rowOf(pp, 1));
        QCOMPARE(doc->layout().parallel.pp, 1);
        QCOMPARE(doc->layout().parallel.vp, 1);
        QCOMPARE(doc->layout().dataParallel(), 16);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().parallel.vp, 5);
    }

    void trainingEditsAreUndoableAndSpinBoxesMerge()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        const double step = doc->evaluation().stepTimeS;
        panel.seqLenBox()->setValue(4096);
        panel.seqLenBox()->setValue(2048);
        QCOMPARE(doc->layout().training.seqLen, 2048);
        QCOMPARE(doc->undoStack()->count(), 1); // stepping through values is one step
        QVERIFY(doc->evaluation().stepTimeS < step);
        choose(panel.precisionBox(), 1);
        QCOMPARE(doc->layout().training.precision, engine::Precision::Fp8);
        choose(panel.recomputeBox(), 2);
        QCOMPARE(doc->layout().training.recompute, engine::Recompute::Full);
        choose(panel.zeroBox(), 3);
        QCOMPARE(doc->layout().training.optimizer.zeroStage, 3);
        panel.distributedBox()->setChecked(false);
        QVERIFY(!doc->layout().training.optimizer.distributed);
        panel.microBatchBox()->setValue(2);
        QCOMPARE(doc->layout().training.microBatch, 2);
        QCOMPARE(doc->undoStack()->count(), 6);
        while (doc->undoStack()->canUndo())
            doc->undoStack()->undo();
        QCOMPARE(doc->layout().training.seqLen, 8192);
        QCOMPARE(panel.seqLenBox()->value(), 8192);
        QCOMPARE(doc->evaluation().stepTimeS, step);
        QVERIFY(!doc->isModified());
    }

    // Naming the training stack is one undo step that brings the stack's defaults, prices the
    // step as that stack and drops the band's "no stack named" widening.
    void stackChoiceIsOneUndoStep()
    {
        auto doc = openLayout("zero3-scaling.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *stack = panel.stackBox();
        QCOMPARE(stack->currentIndex(), 0); // not named
        // The range is priced off the GUI thread: the band widens when it lands.
        QTRY_VERIFY(!doc->isStackRangePending());
        const engine::Evaluation before = doc->evaluation();
        QVERIFY(before.stackRange.stacks > 0);
        const auto noStack = [](const engine::Evaluation &e) {
            return test::findWarning(e, "no-stack") != nullptr;
        };
        QVERIFY(noStack(before));
        const int row = stack->findData(QStringLiteral("torchtitan"));
        QVERIFY(row > 0);
        QVERIFY(!stack->itemData(row, Qt::ToolTipRole).toString().isEmpty());
        choose(stack, row);
        QCOMPARE(doc->undoStack()->count(), 1);
        const engine::TrainingConfig &t = doc->layout().training;
        QCOMPARE(t.stack, std::string("torchtitan"));
        const engine::StackProfile *titan = engine::findStack("torchtitan");
        // A narrow dock may cut the name short: the box's tooltip names the chosen stack.
        QVERIFY2(stack->toolTip().contains(QStringLiteral("torchtitan: ")
                                           + QString::fromStdString(titan->description)),
                 qPrintable(stack->toolTip()));
        QCOMPARE(t.overlap.tp, titan->overlap.tp);
        QCOMPARE(t.overlap.pp, titan->overlap.pp);
        const engine::Evaluation named = doc->evaluation();
        QVERIFY(!doc->isStackRangePending()); // a named stack has no range to price
        QCOMPARE(named.stackRange.stacks, 0);
        QVERIFY(!noStack(named));
        QVERIFY(named.stepTimeS != before.stepTimeS);
        // The step is the one the range gave for that stack (between its ends).
        QVERIFY(named.stepTimeS >= before.stackRange.fastestS - 1e-9);
        QVERIFY(named.stepTimeS <= before.stackRange.slowestS + 1e-9);
        doc->undoStack()->undo();
        QVERIFY(doc->layout().training.stack.empty());
        QCOMPARE(stack->currentIndex(), 0);
        QCOMPARE(doc->evaluation().stepTimeS, before.stepTimeS);
        QTRY_VERIFY(!doc->isStackRangePending());
        QCOMPARE(doc->evaluation().stepTimeBand.highS, before.stepTimeBand.highS);
        QVERIFY(!doc->isModified());
    }

    // torch.compile is offered where the stack's element-wise operations are PyTorch's own:
    // on torchtitan (eager by default) switching it on is one undo step and prices the step
    // faster; on the generic stack it is off limits (fused kernels).
    void compileIsOneUndoStepOnPyTorchStacks()
    {
        auto doc = openLayout("hgx-h100-server.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QCheckBox *compile = panel.compileBox();
        QVERIFY(!compile->isEnabled()); // no stack named: fused
        QVERIFY(compile->isChecked());
        choose(panel.stackBox(), panel.stackBox()->findData(QStringLiteral("torchtitan")));
        QVERIFY(compile->isEnabled());
        QVERIFY(!compile->isChecked()); // torchtitan's configs leave it off
        QVERIFY(!doc->layout().training.compile);
        const double eager = doc->evaluation().stepTimeS;
        const int steps = doc->undoStack()->count();
        compile->click();
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change torch.compile"));
        QVERIFY(doc->layout().training.compile);
        QVERIFY2(doc->evaluation().stepTimeS < eager,
                 qPrintable(QString::number(doc->evaluation().stepTimeS)));
        doc->undoStack()->undo();
        QVERIFY(!doc->layout().training.compile);
        QVERIFY(!compile->isChecked());
        QCOMPARE(doc->evaluation().stepTimeS, eager);
    }

    // The attention kernel: the stack's default says which kernel that is on this GPU; naming
    // another is one undo step and reprices the step (FlashAttention-2 on Hopper is slower than
    // the generic stack's cuDNN); a stack brings its own default back; a kernel the GPU cannot
    // run says which runs instead.
    void attentionKernelIsOneUndoStep()
    {
        auto doc = openLayout("hgx-h100-server.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *box = panel.attentionBox();
        QCOMPARE(box->currentData().toString(), QStringLiteral("flash"));
        QCOMPARE(box->currentText(), QStringLiteral("Default: cuDNN"));
        const double cudnn = doc->evaluation().stepTimeS;
        const int steps = doc->undoStack()->count();
        choose(box, box->findData(QStringLiteral("fa2")));
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change attention kernel"));
        QCOMPARE(doc->layout().training.attention, engine::AttentionKernel::FlashAttention2);
        const double fa2 = doc->evaluation().stepTimeS;
        QVERIFY2(fa2 > cudnn, qPrintable(QStringLiteral("%1 vs %2 s").arg(fa2).arg(cudnn)));
        choose(box, box->findData(QStringLiteral("triton")));
        QVERIFY(doc->evaluation().stepTimeS > fa2); // flash-attn's Triton kernel: slower still
        doc->undoStack()->undo();
        QCOMPARE(box->currentData().toString(), QStringLiteral("fa2"));
        QCOMPARE(doc->evaluation().stepTimeS, fa2);
        // torchtitan brings its default (the stack's choice: FlashAttention-2 through SDPA).
        choose(panel.stackBox(), panel.stackBox()->findData(QStringLiteral("torchtitan")));
        QCOMPARE(doc->layout().training.attention, engine::AttentionKernel::Flash);
        QCOMPARE(box->currentText(), QStringLiteral("Default: FlashAttention-2"));
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().training.attention, engine::AttentionKernel::FlashAttention2);

        // On Blackwell, FlashAttention 1.x and FlashAttention-3 do not run.
        auto rack = openLayout("gb200-nvl72-rack.railyard.json");
        QVERIFY(rack);
        panel.setDocument(rack.get());
        const QString fa1 = box->itemText(box->findData(QStringLiteral("fa1")));
        QVERIFY2(fa1.startsWith(QStringLiteral("FlashAttention 1.x (runs ")), qPrintable(fa1));
        QVERIFY(box->itemText(box->findData(QStringLiteral("fa3")))
                        .contains(QStringLiteral("(runs ")));
        QVERIFY(!box->itemText(box->findData(QStringLiteral("cudnn")))
                         .contains(QStringLiteral("(runs ")));
    }

    // The model's norm, positions and dropout: each one undo step, written as an override
    // only where it differs from what the preset brings, and priced (PyTorch eager runs
    // RMSNorm as several kernels and LayerNorm as one; learned positions have no rotary
    // embedding).
    void modelStyleIsOneUndoStep()
    {
        auto doc = openLayout("hgx-h100-server.railyard.json"); // Llama 3 8B
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QCOMPARE(panel.normBox()->currentText(), QStringLiteral("RMSNorm"));
        QCOMPARE(panel.positionBox()->currentText(), QStringLiteral("Rotary (RoPE)"));
        QVERIFY(!panel.dropoutBox()->isChecked());
        choose(panel.stackBox(), panel.stackBox()->findData(QStringLiteral("torchtitan")));
        const double rms = doc->evaluation().stepTimeS;
        const int steps = doc->undoStack()->count();
        choose(panel.normBox(), 0);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change norm to LayerNorm"));
        QCOMPARE(doc->layout().model->layerNorm, std::optional<bool>(true));
        QVERIFY(panel.modelSummary()->text().contains(QStringLiteral("your changes")));
        const double layer = doc->evaluation().stepTimeS;
        QVERIFY2(layer < rms, qPrintable(QStringLiteral("%1 vs %2 s").arg(layer).arg(rms)));
        choose(panel.positionBox(), 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change positions to Learned"));
        QCOMPARE(doc->layout().model->rotary, std::optional<bool>(false));
        QVERIFY(doc->evaluation().stepTimeS < layer);
        panel.dropoutBox()->click();
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Turn dropout on"));
        QCOMPARE(doc->layout().model->dropout, std::optional<bool>(true));
        QCOMPARE(doc->undoStack()->count(), steps + 3);
        if (auto *toggle = panel.findChild<QToolButton *>(); toggle && !toggle->isChecked()) {
            toggle->click(); // open the Dimensions section, to look at
            panel.resize(360, 1180);
            if (const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR"); !dir.isEmpty())
                QVERIFY(panel.grab().save(dir + QStringLiteral("/workload-model-style.png")));
        }
        // Back to the preset's own values: no override left.
        choose(panel.normBox(), 1);
        choose(panel.positionBox(), 0);
        panel.dropoutBox()->click();
        QVERIFY(!doc->layout().model->layerNorm && !doc->layout().model->rotary
                && !doc->layout().model->dropout);
        QVERIFY(!panel.modelSummary()->text().contains(QStringLiteral("your changes")));
        QCOMPARE(doc->evaluation().stepTimeS, rms);
        for (int i = 0; i < 6; ++i)
            doc->undoStack()->undo();
        QCOMPARE(doc->layout().model->layerNorm, std::nullopt);
        QCOMPARE(panel.normBox()->currentText(), QStringLiteral("RMSNorm"));
        QCOMPARE(doc->evaluation().stepTimeS, rms);
    }

    // Hybrid sharding: offered with FSDP or ZeRO 3, listing every divisor of the
    // data-parallel ranks; choosing one is one undo step and reprices the memory (the state
    // sharded over 8 ranks, not 16).
    void shardGroupIsOneUndoStep()
    {
        auto doc = openLayout("zero3-scaling.railyard.json"); // 16 H100, ZeRO 3
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *box = panel.shardGroupBox();
        QVERIFY(box->isEnabled());
        QCOMPARE(box->currentText(), QStringLiteral("All 16 ranks"));
        QStringList sizes;
        for (int i = 0; i < box->count(); ++i)
            sizes << box->itemData(i).toString();
        QCOMPARE(sizes, QStringList({"0", "8", "4", "2", "1"}));
        const double full = doc->evaluation().memory.optimizerGiB;
        const int steps = doc->undoStack()->count();
        choose(box, box->findData(8));
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change shard group"));
        QCOMPARE(doc->layout().training.optimizer.shardGroup, 8);
        QCOMPARE(box->currentText(), QStringLiteral("8 ranks (replicated 2\u00d7)"));
        QCOMPARE(doc->evaluation().memory.optimizerGiB, 2 * full);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().training.optimizer.shardGroup, 0);
        QCOMPARE(box->currentText(), QStringLiteral("All 16 ranks"));
        // A file's group that divides nothing is listed, marked, and says why.
        engine::TrainingConfig odd = doc->layout().training;
        odd.optimizer.shardGroup = 3;
        doc->undoStack()->push(
                new ChangeWorkload(doc.get(), doc->layout().model, odd, QStringLiteral("odd")));
        QCOMPARE(box->currentText(), QStringLiteral("3 ranks \u26a0"));
        QVERIFY2(box->currentData(Qt::ToolTipRole)
                         .toString()
                         .contains(QStringLiteral("does not divide DP x CP = 16")),
                 qPrintable(box->currentData(Qt::ToolTipRole).toString()));
        doc->undoStack()->undo();
        QCOMPARE(box->currentText(), QStringLiteral("All 16 ranks"));
        // Without sharded weights there is nothing to shard in groups.
        choose(panel.zeroBox(), 1);
        QVERIFY(!box->isEnabled());
    }

    // Full recomputation of some layers: the count is offered with full recomputation only;
    // setting it is one undo step and prices the step between none and all.
    void recomputeLayersIsOneUndoStep()
    {
        auto doc = openLayout("hgx-h100-server.railyard.json"); // Llama 3 8B, selective
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QSpinBox *layers = panel.recomputeLayersBox();
        QVERIFY(!layers->isEnabled());
        choose(panel.recomputeBox(), static_cast<int>(engine::Recompute::Full));
        QVERIFY(layers->isEnabled());
        QCOMPARE(layers->text(), QStringLiteral("All layers"));
        const double all = doc->evaluation().stepTimeS;
        const int steps = doc->undoStack()->count();
        layers->setValue(16);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change recomputed layers"));
        QCOMPARE(doc->layout().training.recomputeLayers, 16);
        QVERIFY(doc->evaluation().stepTimeS < all);
        doc->undoStack()->undo();
        QCOMPARE(layers->value(), 0);
        QCOMPARE(doc->evaluation().stepTimeS, all);
    }

    // Megatron's recompute modules: offered with selective recomputation only, one undo step a
    // module; recomputing the whole MoE layer frees activations and slows the step.
    void recomputeModulesIsOneUndoStep()
    {
        auto doc = openLayout("moe-h200-ib.railyard.json"); // selective: core_attn
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QToolButton *button = panel.recomputeModulesButton();
        QVERIFY(button->isEnabled());
        QCOMPARE(button->text(), QStringLiteral("core_attn"));
        QAction *moe = nullptr;
        for (QAction *a : button->menu()->actions())
            if (a->text() == QStringLiteral("moe"))
                moe = a;
        QVERIFY(moe && !moe->isChecked());
        const double step = doc->evaluation().stepTimeS;
        const double activations = doc->evaluation().memory.activationsGiB;
        const int steps = doc->undoStack()->count();
        moe->trigger();
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change recomputed modules"));
        QCOMPARE(doc->layout().training.recomputeModules,
                 unsigned(engine::kRecomputeCoreAttn | engine::kRecomputeMoe));
        QCOMPARE(button->text(), QStringLiteral("core_attn+moe"));
        QVERIFY(doc->evaluation().stepTimeS > step);
        QVERIFY(doc->evaluation().memory.activationsGiB < activations);
        doc->undoStack()->undo();
        QVERIFY(!moe->isChecked());
        QCOMPARE(doc->evaluation().stepTimeS, step);
        choose(panel.recomputeBox(), static_cast<int>(engine::Recompute::Full));
        QVERIFY(!button->isEnabled());
    }

    // CPU offload: one undo step; with recomputation it is said not to apply, without it the
    // activations leave HBM.
    void cpuOffloadIsOneUndoStep()
    {
        auto doc = openLayout("hgx-h100-server.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QSpinBox *offload = panel.offloadBox();
        QCOMPARE(offload->value(), 0);
        QCOMPARE(offload->text(), QStringLiteral("Off"));
        const auto warned = [&](const char *code) {
            return test::findWarning(doc->evaluation(), code) != nullptr;
        };
        const int steps = doc->undoStack()->count();
        offload->setValue(16);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change CPU offload"));
        QCOMPARE(doc->layout().training.offloadLayers, 16);
        QVERIFY(warned("offload-not-applied")); // the layout recomputes selectively
        const double held = doc->evaluation().memory.activationsGiB;
        choose(panel.recomputeBox(), static_cast<int>(engine::Recompute::None));
        QVERIFY(!warned("offload-not-applied"));
        QCOMPARE(doc->layout().training.offloadLayers, 16);
        const double offloaded = doc->evaluation().memory.activationsGiB;
        doc->undoStack()->undo(); // the recompute change
        doc->undoStack()->undo(); // the offload
        QCOMPARE(doc->layout().training.offloadLayers, 0);
        QCOMPARE(offload->value(), 0);
        QVERIFY(!warned("offload-not-applied"));
        choose(panel.recomputeBox(), static_cast<int>(engine::Recompute::None));
        const double kept = doc->evaluation().memory.activationsGiB;
        QVERIFY2(offloaded < 0.7 * kept,
                 qPrintable(QStringLiteral("%1 of %2 GiB").arg(offloaded).arg(kept)));
        QVERIFY(held > 0);
    }

    void modelPresetsAndDimensions()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *preset = panel.presetBox();
        QCOMPARE(preset->currentText(), QStringLiteral("llama3-70b"));
        choose(preset, preset->findText(QStringLiteral("llama3-8b")));
        QCOMPARE(doc->layout().model->preset, std::string("llama3-8b"));
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change model to llama3-8b"));
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().model->preset, std::string("llama3-70b"));
        // A dimension that cannot be is refused with the reason, and the document keeps its own.
        const std::string before = engine::layoutToText(doc->layout());
        QSpinBox *kvHeads = panel.dimensionBox(WorkloadPanel::KvHeads);
        QCOMPARE(kvHeads->value(), 8);
        kvHeads->setValue(7);
        QVERIFY2(panel.errorText().contains(QStringLiteral("kv_heads (7) must divide heads (64)")),
                 qPrintable(panel.errorText()));
        QCOMPARE(engine::layoutToText(doc->layout()), before);
        QCOMPARE(kvHeads->value(), 8);
        // A valid change: 40 layers, kept as an override of the preset.
        panel.dimensionBox(WorkloadPanel::Layers)->setValue(40);
        QVERIFY(panel.errorText().isEmpty());
        QCOMPARE(doc->layout().model->preset, std::string("llama3-70b"));
        QCOMPARE(doc->layout().model->layers, std::optional<int>(40));
        QVERIFY(panel.modelSummary()->text().contains(QStringLiteral("your changes")));
        // Back to the preset's own 80: no override left.
        panel.dimensionBox(WorkloadPanel::Layers)->setValue(80);
        QVERIFY(!doc->layout().model->layers.has_value());
        // Stepped to 40 and back to 80: one merged step that ends where it began, so none.
        QCOMPARE(doc->undoStack()->count(), 0);
        QVERIFY(!doc->isModified());
    }

    void rankOrderPresetsAndResetPlacement()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        WorkloadPanel panel;
        panel.setDocument(doc.get());
        QComboBox *order = panel.orderBox();
        QCOMPARE(order->currentIndex(), int(WorkloadPanel::TopologyAware));
        const double inside = doc->evaluation().exposed.tp;
        // Naive: DP innermost, so each TP group strides across servers.
        choose(order, WorkloadPanel::Naive);
        QCOMPARE(doc->layout().parallel.order, std::string(engine::kNaiveOrder));
        QVERIFY(doc->evaluation().exposed.tp > inside * 1.2);
        bool warned = false;
        for (const engine::Warning &w : doc->evaluation().warnings)
            warned = warned || w.code == "tp-placement";
        QVERIFY(warned);
        doc->undoStack()->undo();
        QCOMPARE(doc->layout().parallel.order, std::string(engine::kTopologyAwareOrder));
        // A hand placement shows as custom; Reset Placement drops it in one step.
        QVERIFY(!panel.resetPlacementButton()->isEnabled());
        moveTpAcross(doc.get());
        QCOMPARE(order->currentIndex(), int(WorkloadPanel::Custom));
        QVERIFY(order->currentText().contains(QStringLiteral("hand")));
        QVERIFY(panel.resetPlacementButton()->isEnabled());
        panel.resetPlacementButton()->click();
        QVERIFY(doc->layout().mapping.empty());
        QCOMPARE(doc->evaluation().exposed.tp, inside);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Reset placement"));
        doc->undoStack()->undo();
        QVERIFY(!doc->layout().mapping.empty());
        // Choosing topology-aware again also goes back to the order's placement.
        choose(order, WorkloadPanel::TopologyAware);
        QVERIFY(doc->layout().mapping.empty());
    }

    void pricingShowsTheNumbersAndTheChange()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        PricingPanel panel;
        panel.setDocument(doc.get());
        const engine::Evaluation inside = doc->evaluation();
        QVERIFY(panel.stepText().contains(
                QString::fromStdString(engine::formatSeconds(inside.stepTimeS))));
        QTableWidget *m = panel.metrics();
        QCOMPARE(m->item(0, 1)->text(),
                 QString::fromStdString(engine::formatSeconds(inside.stepTimeS)));
        QVERIFY(m->isColumnHidden(0)); // nothing to compare with yet
        QCOMPARE(panel.stepChart()->rowCount(), 1);
        QCOMPARE(panel.stepChart()->exposedValue(0, StepChart::Tp), inside.exposed.tp); // seconds
        QVERIFY(panel.stepChart()->legendEntries().contains(QStringLiteral("TP")));
        QVERIFY(panel.stepChart()->legendEntries().contains(QStringLiteral("Compute")));
        QVERIFY(!panel.stepChart()->legendEntries().contains(QStringLiteral("EP")));
        // Memory: one bar per stage against HBM.
        QCOMPARE(panel.memoryChart()->stageCount(), 4);
        QCOMPARE(panel.memoryChart()->hbmLine(), inside.hbmGiB);
        QCOMPARE(panel.memoryChart()->fitsValue(0), inside.memoryGiBPerStage[0]);

        moveTpAcross(doc.get());
        const engine::Evaluation across = doc->evaluation();
        const QString change = QString::fromStdString(
                engine::describeChange(inside.stepTimeS, across.stepTimeS, "step time"));
        QVERIFY(change.startsWith(QLatin1Char('+')));
        QCOMPARE(panel.changeText(), change);
        QVERIFY(!m->isColumnHidden(0));
        QCOMPARE(m->horizontalHeaderItem(0)->text(), QStringLiteral("Before"));
        QCOMPARE(m->item(0, 0)->text(),
                 QString::fromStdString(engine::formatSeconds(inside.stepTimeS)));
        QVERIFY(m->item(0, 2)->text().startsWith(QLatin1Char('+')));
        QCOMPARE(panel.stepChart()->rowCount(), 2);
        QCOMPARE(panel.stepChart()->exposedValue(0, StepChart::Tp), inside.exposed.tp);
        QCOMPARE(panel.stepChart()->exposedValue(1, StepChart::Tp), across.exposed.tp);
        // Undo is a change too: it compares with the state before the undo.
        doc->undoStack()->undo();
        QVERIFY(panel.changeText().startsWith(QLatin1Char('-')));
    }

    // FP8 runs can pass 100% MFU against the BF16 peak (the convention); a row beside it says
    // their share of the FP8 peak, and a BF16 layout does not show the row.
    void fp8RunsShowTheirShareOfTheFp8Peak()
    {
        const auto rowOf = [](QTableWidget *m, const QString &name) {
            for (int r = 0; r < m->rowCount(); ++r)
                if (m->verticalHeaderItem(r)->text() == name)
                    return r;
            return -1;
        };
        auto fp8 = openLayout("mlperf5-llama405b-gb200-512.railyard.json");
        QVERIFY(fp8);
        PricingPanel panel;
        panel.setDocument(fp8.get());
        const engine::Evaluation e = fp8->evaluation();
        QVERIFY(e.ok && e.mfuOfFp8Peak > 0);
        QTableWidget *m = panel.metrics();
        const int row = rowOf(m, QStringLiteral("MFU, FP8 peak"));
        QVERIFY(row >= 0);
        QVERIFY(!m->isRowHidden(row));
        QCOMPARE(m->item(row, 1)->text(),
                 QString::number(100 * e.mfuOfFp8Peak, 'f', 1) + QStringLiteral("%"));
        QVERIFY(e.mfuOfFp8Peak < e.mfu); // the FP8 peak is the larger
        QVERIFY(m->verticalHeaderItem(row)->toolTip().contains(QStringLiteral("BF16 peak")));
        // Switched to BF16 after the FP8 state: the row keeps the FP8 side, the new side has
        // none, and no change is claimed.
        WorkloadPanel workload;
        workload.setDocument(fp8.get());
        choose(workload.precisionBox(), 0);
        QCOMPARE(fp8->layout().training.precision, engine::Precision::Bf16);
        QVERIFY(!m->isRowHidden(row));
        QCOMPARE(m->item(row, 0)->text(),
                 QString::number(100 * e.mfuOfFp8Peak, 'f', 1) + QStringLiteral("%"));
        QCOMPARE(m->item(row, 1)->text(), QStringLiteral("\u2014"));
        QVERIFY(m->item(row, 2)->text().isEmpty());

        auto bf16 = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(bf16);
        PricingPanel other;
        other.setDocument(bf16.get());
        QCOMPARE(bf16->evaluation().mfuOfFp8Peak, 0.0);
        QVERIFY(other.metrics()->isRowHidden(
                rowOf(other.metrics(), QStringLiteral("MFU, FP8 peak"))));
        QVERIFY(!other.metrics()->isRowHidden(rowOf(other.metrics(), QStringLiteral("MFU"))));
    }

    void pinnedAComparesWithNowAndRestores()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        PricingPanel panel;
        panel.setDocument(doc.get());
        const engine::Evaluation a = doc->evaluation();
        QVERIFY(panel.restoreButton()->isHidden());
        panel.pinButton()->click();
        QVERIFY(doc->pinned());
        QVERIFY(!panel.restoreButton()->isHidden());
        moveTpAcross(doc.get());
        // Now the baseline is A, whatever the last edit was.
        moveTpAcross(doc.get()); // a no-op move: the mapping does not change
        QCOMPARE(panel.metrics()->horizontalHeaderItem(0)->text(), QStringLiteral("A"));
        QCOMPARE(panel.metrics()->horizontalHeaderItem(1)->text(), QStringLiteral("B"));
        QVERIFY(panel.changeText().contains(QStringLiteral("vs A")));
        QCOMPARE(panel.stepChart()->exposedValue(0, StepChart::Tp), a.exposed.tp);
        // The links whose load changed most: the NICs TP group 0 now uses, among them.
        QTreeWidget *links = panel.linkChanges();
        QVERIFY(!links->isHidden());
        QVERIFY(links->topLevelItemCount() > 0);
        const auto expected = engine::mostChangedLinks(a, doc->evaluation(), 12);
        QCOMPARE(links->topLevelItemCount(), static_cast<int>(expected.size()));
        QCOMPARE(links->topLevelItem(0)->data(0, Qt::UserRole).toInt(), expected.front().link);
        bool nic = false;
        for (int i = 0; i < links->topLevelItemCount(); ++i)
            nic = nic || links->topLevelItem(i)->text(0).contains(QStringLiteral("NIC"));
        QVERIFY(nic);
        QSignalSpy activated(&panel, &PricingPanel::linkActivated);
        Q_EMIT links->itemClicked(links->topLevelItem(0), 0);
        QCOMPARE(activated.count(), 1);
        // Restore A: one undo step back to A's placement.
        panel.restoreButton()->click();
        QVERIFY(doc->layout().mapping.empty());
        QCOMPARE(doc->evaluation().stepTimeS, a.stepTimeS);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Restore A"));
        panel.unpin();
        QVERIFY(!doc->pinned());
        QVERIFY(links->isHidden());
    }

    void outOfMemoryShowsAboveHbm()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        PricingPanel pricing;
        pricing.setDocument(doc.get());
        WorkloadPanel workload;
        workload.setDocument(doc.get());
        choose(workload.recomputeBox(), 0); // keep every activation
        workload.microBatchBox()->setValue(8);
        const engine::Evaluation &e = doc->evaluation();
        QVERIFY(e.ok);
        QVERIFY2(e.memory.totalGiB() > e.hbmGiB, qPrintable(QString::number(e.memory.totalGiB())));
        MemoryChart *chart = pricing.memoryChart();
        double over = 0;
        for (int s = 0; s < chart->stageCount(); ++s) {
            QVERIFY(chart->fitsValue(s) <= e.hbmGiB + 1e-9);
            over = std::max(over, chart->overValue(s));
        }
        QVERIFY(over > 0);
        // And the warnings say so, with the stage's GPUs to select.
        WarningsPanel warnings;
        warnings.setDocument(doc.get());
        bool oom = false;
        for (int i = 0; i < warnings.list()->topLevelItemCount(); ++i)
            oom = oom
                  || warnings.list()->topLevelItem(i)->data(0, Qt::UserRole).toString()
                             == QStringLiteral("out-of-memory");
        QVERIFY(oom);
    }

    void warningsCarryTheirCostAndSelectTheirGpus()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        WarningsPanel panel;
        QSignalSpy count(&panel, &WarningsPanel::countChanged);
        panel.setDocument(doc.get());
        QCOMPARE(panel.warningCount(), 0);
        moveTpAcross(doc.get());
        QVERIFY(panel.warningCount() >= 2);
        QVERIFY(!count.isEmpty());
        QTreeWidget *list = panel.list();
        // Worst first: the TP groups that straddle servers, each with what it costs a step.
        QTreeWidgetItem *first = list->topLevelItem(0);
        QVERIFY2(first->text(0).contains(QStringLiteral("spans 2 NVLink domains")),
                 qPrintable(first->text(0)));
        QVERIFY(first->text(1).startsWith(QLatin1Char('+')));
        const double cost = first->data(1, Qt::UserRole).toDouble();
        // The two straddling groups together account for the TP time the move added.
        const engine::Evaluation *before = doc->previousEvaluation();
        QVERIFY(before);
        const double added = doc->evaluation().exposed.tp - before->exposed.tp;
        QVERIFY2(cost > 0.5 * added && cost < 1.5 * added,
                 qPrintable(QStringLiteral("%1 vs %2").arg(cost).arg(added)));
        QSignalSpy selected(&panel, &WarningsPanel::gpusActivated);
        Q_EMIT list->itemClicked(first, 0);
        QCOMPARE(selected.count(), 1);
        const auto gpus = selected.first().first().value<std::vector<int>>();
        QCOMPARE(gpus.size(), std::size_t(8));
        doc->undoStack()->undo();
        QCOMPARE(panel.warningCount(), 0);
    }
    // Every panel fits the dock it lives in at 1280x800 whatever is open (the main window's
    // default docks there: 270 px on the left, 320 on the right, less a vertical scroll bar):
    // long combo entries elide, a row too wide puts its field under its label, and the A/B
    // table's columns take what their numbers need. A panel wider than its dock is cut off or
    // scrolls sideways.
    void panelsFitANarrowDock_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *n : {"hgx-h100-server.railyard.json",
                              "gb200-nvl72-two-racks-ib.railyard.json",
                              "llama3.1-405b-16k-h100.railyard.json",
                              "dgx-h100-superpod-su.railyard.json"})
            QTest::newRow(n) << QString::fromLatin1(n);
    }

    void panelsFitANarrowDock()
    {
        QFETCH(QString, name);
        auto doc = openLayout(qPrintable(name));
        QVERIFY(doc);
        constexpr int kScrollBar = 16;
        constexpr int kLeft = 270 - kScrollBar;
        constexpr int kRight = 320 - kScrollBar;
        WorkloadPanel workload;
        workload.setDocument(doc.get());
        ClusterPanel cluster;
        cluster.setDocument(doc.get());
        WarningsPanel warnings;
        warnings.setDocument(doc.get());
        PricingPanel pricing;
        pricing.setDocument(doc.get());
        pricing.pinA();
        const engine::MappingEdit swap = engine::swapGpus(doc->layout(),
                                                          0,
                                                          doc->topology().gpuCount() - 1);
        QVERIFY(swap.ok());
        doc->undoStack()->push(new ChangeMapping(doc.get(), swap.mapping, QStringLiteral("Swap")));
        for (const auto &[panel, most] : {std::pair<QWidget *, int>{&workload, kLeft},
                                          {&cluster, kLeft},
                                          {&warnings, kRight},
                                          {&pricing, kRight}})
            QVERIFY2(panel->minimumSizeHint().width() <= most,
                     qPrintable(QStringLiteral("%1: %2 px")
                                        .arg(QLatin1String(panel->metaObject()->className()))
                                        .arg(panel->minimumSizeHint().width())));
        // At that width the A/B numbers show whole: no column elides its text.
        pricing.resize(kRight, 900);
        pricing.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pricing));
        QTableWidget *m = pricing.metrics();
        QCOMPARE(m->horizontalHeader()->count(), 3);
        for (int c = 0; c < 3; ++c)
            QVERIFY2(m->columnViewportPosition(c) + m->columnWidth(c) <= m->viewport()->width(),
                     qPrintable(QStringLiteral("column %1 ends at %2 of %3 px")
                                        .arg(c)
                                        .arg(m->columnViewportPosition(c) + m->columnWidth(c))
                                        .arg(m->viewport()->width())));
        for (int r = 0; r < m->rowCount(); ++r)
            for (int c = 0; c < 3; ++c) {
                const QString text = m->item(r, c)->text();
                QVERIFY2(m->columnWidth(c) >= m->fontMetrics().horizontalAdvance(text),
                         qPrintable(QStringLiteral("row %1 column %2: %3 in %4 px")
                                            .arg(r)
                                            .arg(c)
                                            .arg(text)
                                            .arg(m->columnWidth(c))));
            }
        // The links whose load changed: several rows, not one.
        QTreeWidget *links = pricing.linkChanges();
        QVERIFY(!links->isHidden());
        QVERIFY(links->height() >= links->header()->height() + 5 * links->sizeHintForRow(0));
    }
};

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
