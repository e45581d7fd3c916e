#include "workloadpanel.h"
#include "workloadpanel_p.h"

#include "commands/changemapping.h"
#include "commands/changeparallelsizes.h"
#include "commands/changerankorder.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "document/groupref.h"
#include "layout/parallelchoices.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QUndoStack>

#include <algorithm>

// The Workload dock's edits: each one checked against the layout's rules and pushed as one undo
// command (or refused, with the reason shown).

namespace railyard {

using engine::Dim;
using namespace workloadfields;

void WorkloadPanel::pushWorkload(const std::optional<engine::ModelConfig> &model,
                                 const engine::TrainingConfig &training,
                                 const QString &text,
                                 const QString &mergeKey)
{
    engine::Layout after = m_document->layout();
    after.model = model;
    after.training = training;
    if (after.sameContent(m_document->layout()))
        return;
    if (!accepts(after, &WorkloadPanel::sync))
        return;
    m_document->undoStack()->push(new ChangeWorkload(m_document, model, training, text, mergeKey));
}

bool WorkloadPanel::accepts(const engine::Layout &after, void (WorkloadPanel::*resync)())
{
    // An edit the engine would refuse never lands: say why and show what the document holds.
    const QString problem = Document::checkLayout(after);
    showError(problem);
    if (!problem.isEmpty())
        (this->*resync)();
    return problem.isEmpty();
}

void WorkloadPanel::pushParallel(const engine::ParallelConfig &parallel, const QString &text)
{
    engine::Layout after = m_document->layout();
    after.parallel = parallel;
    if (after.sameContent(m_document->layout()))
        return;
    if (!accepts(after, &WorkloadPanel::syncParallel))
        return;
    auto *command = new ChangeParallelSizes(m_document, parallel);
    command->setText(text);
    m_document->undoStack()->push(command);
}

void WorkloadPanel::presetChosen(int index)
{
    if (!m_document || index < 0)
        return;
    const QString key = m_preset->itemData(index).toString();
    const engine::Layout &l = m_document->layout();
    std::optional<engine::ModelConfig> model;
    QString text;
    if (key.isEmpty()) {
        text = tr("Remove the model");
    } else if (key == QStringLiteral("\x01custom")) {
        // Custom: the dimensions in force, written out, so they can be edited freely.
        engine::ModelDims d;
        if (l.model)
            d = engine::resolveModel(*l.model).dims;
        else if (!engine::modelPresets().empty())
            d = engine::modelPresets().front();
        model = engine::customModelConfig(d);
        text = tr("Use custom model dimensions");
        m_dimsToggle->setChecked(true);
    } else {
        engine::ModelConfig m;
        m.preset = key.toStdString();
        model = m;
        text = tr("Change model to %1").arg(key);
    }
    pushWorkload(model, l.training, text, QString());
}

void WorkloadPanel::dimensionEdited(int field, int value)
{
    if (!m_document || !m_document->layout().model)
        return;
    engine::ModelConfig m = *m_document->layout().model;
    std::optional<int> v = value;
    if (!m.preset.empty())
        if (const engine::ModelDims *preset = engine::findModelPreset(m.preset);
            preset && dimValue(*preset, field) == value)
            v.reset(); // back to the preset's own value: no override
    setOverride(m, field, v);
    pushWorkload(m,
                 m_document->layout().training,
                 tr("Change %1 to %2").arg(tr(kDimNames[field])).arg(value),
                 QStringLiteral("model-%1").arg(field));
}

void WorkloadPanel::trainingEdited(const QString &field)
{
    if (!m_document)
        return;
    engine::TrainingConfig t = m_document->layout().training;
    t.seqLen = m_seqLen->value();
    t.globalBatch = m_globalBatch->value();
    t.microBatch = m_microBatch->value();
    t.precision = m_precision->currentIndex() == 1 ? engine::Precision::Fp8
                                                   : engine::Precision::Bf16;
    t.recompute = static_cast<engine::Recompute>(m_recompute->currentIndex());
    t.optimizer.distributed = m_distributed->isChecked();
    t.optimizer.zeroStage = m_zero->currentIndex();
    t.optimizer.fsdp = m_fsdp->isChecked();
    t.offloadLayers = m_offload->value();
    t.recomputeLayers = m_recomputeLayers->value();
    t.recomputeModules = 0;
    for (const QAction *a : m_recomputeModules->menu()->actions())
        if (a->isChecked())
            t.recomputeModules |= a->data().toUInt();
    t.optimizer.shardGroup = m_shardGroup->currentData().toInt();
    if (m_compile->isEnabled())
        t.compile = m_compile->isChecked();
    engine::attentionKernelFromString(m_attention->currentData().toString().toStdString(),
                                      t.attention);
    t.overlap.dp = m_overlap[0]->isChecked();
    t.overlap.tp = m_overlap[1]->isChecked();
    t.overlap.pp = m_overlap[2]->isChecked();
    t.overlap.ep = m_overlap[3]->isChecked();
    if (field == QStringLiteral("stack")) {
        // A named stack brings its defaults (attention, overlap, gradient type); back to none
        // keeps what is set.
        const std::string id = m_stack->currentData().toString().toStdString();
        if (const engine::StackProfile *p = engine::findStack(id); p && !id.empty())
            engine::applyStackDefaults(t, *p);
        else
            t.stack.clear();
    }
    static const QHash<QString, QString> names = {
            {QStringLiteral("seq_len"), tr("sequence length")},
            {QStringLiteral("global_batch"), tr("global batch")},
            {QStringLiteral("micro_batch"), tr("micro batch")},
            {QStringLiteral("stack"), tr("stack")},
            {QStringLiteral("precision"), tr("precision")},
            {QStringLiteral("recompute"), tr("recompute")},
            {QStringLiteral("optimizer"), tr("distributed optimizer")},
            {QStringLiteral("zero_stage"), tr("ZeRO stage")},
            {QStringLiteral("fsdp"), tr("FSDP")},
            {QStringLiteral("compile"), tr("torch.compile")},
            {QStringLiteral("attention"), tr("attention kernel")},
            {QStringLiteral("cpu_offload_layers"), tr("CPU offload")},
            {QStringLiteral("shard_group"), tr("shard group")},
            {QStringLiteral("recompute_layers"), tr("recomputed layers")},
            {QStringLiteral("recompute_modules"), tr("recomputed modules")},
            {QStringLiteral("overlap"), tr("overlap")},
    };
    // Spin boxes stepped through many values merge into one undo step.
    const bool spinner = field == QStringLiteral("seq_len")
                         || field == QStringLiteral("global_batch")
                         || field == QStringLiteral("micro_batch")
                         || field == QStringLiteral("cpu_offload_layers")
                         || field == QStringLiteral("recompute_layers");
    pushWorkload(m_document->layout().model,
                 t,
                 tr("Change %1").arg(names.value(field, field)),
                 spinner ? field : QString());
}

void WorkloadPanel::sizeChosen(Dim dim, int index)
{
    if (!m_document || index < 0)
        return;
    QComboBox *box = sizeBox(dim);
    const int value = box->itemData(index).toInt();
    // The engine says what follows (DP from the GPU count, VP only with a pipeline).
    const engine::Layout &l = m_document->layout();
    const engine::ParallelConfig p = engine::withParallelSize(l.parallel,
                                                              l.cluster.gpuCount(),
                                                              dim,
                                                              value);
    pushParallel(p,
                 tr("Change %1 to %2").arg(QString::fromLatin1(engine::dimLabel(dim))).arg(value));
}

void WorkloadPanel::orderChosen(int index)
{
    if (!m_document)
        return;
    const engine::Layout &l = m_document->layout();
    std::string order;
    if (index == Custom) {
        bool ok = false;
        const QString text = QInputDialog::getText(
                this,
                tr("Custom Rank Order"),
                tr("Dimensions from fastest to slowest, joined by '-' (TP, CP, DP and PP once "
                   "each, EP optional).\nTopology-aware: %1; naive: %2.")
                        .arg(QString::fromLatin1(engine::kTopologyAwareOrder),
                             QString::fromLatin1(engine::kNaiveOrder)),
                QLineEdit::Normal,
                QString::fromStdString(l.parallel.order),
                &ok);
        if (!ok) {
            syncParallel();
            return;
        }
        order = text.trimmed().toLower().toStdString();
    } else {
        order = m_order->itemData(index).toString().toStdString();
    }
    const engine::Layout after = ChangeRankOrder::apply(l, order);
    if (after.sameContent(l)) {
        syncParallel();
        return;
    }
    if (!accepts(after, &WorkloadPanel::syncParallel))
        return;
    m_document->undoStack()->push(new ChangeRankOrder(m_document, order));
}

void WorkloadPanel::resetPlacement()
{
    if (!m_document || m_document->layout().mapping.empty())
        return;
    m_document->undoStack()->push(new ChangeMapping(m_document, {}, tr("Reset placement")));
}

} // namespace railyard
