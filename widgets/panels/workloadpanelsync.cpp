// The workload panel following the document (workloadpanel.h): the model, training and
// parallel fields set from the layout, and the size choices with the reasons the invalid ones
// carry.
#include "workloadpanel.h"
#include "workloadpanel_p.h"

#include "document/document.h"
#include "document/groupref.h"
#include "layout/parallelchoices.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "servingform.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>

#include <algorithm>

namespace railyard {

using engine::Dim;
using namespace workloadfields;

namespace {

using enum WorkloadPanel::Dimension;

QString params(double n)
{
    if (n >= 1e12)
        return QObject::tr("%1 T").arg(n / 1e12, 0, 'f', 2);
    if (n >= 1e9)
        return QObject::tr("%1 B").arg(n / 1e9, 0, 'f', 1);
    return QObject::tr("%1 M").arg(n / 1e6, 0, 'f', 0);
}

// Fills a combo with choices, the invalid ones disabled with their reason.
void fillChoices(QComboBox *box, const std::vector<engine::SizeChoice> &choices, int current)
{
    auto *model = qobject_cast<QStandardItemModel *>(box->model());
    model->clear();
    int currentRow = -1;
    bool listed = false;
    for (const engine::SizeChoice &c : choices)
        listed = listed || c.value == current;
    std::vector<engine::SizeChoice> all = choices;
    if (!listed) {
        // The file's value is not a power of two: still show it, as it is in force.
        engine::SizeChoice c;
        c.value = current;
        all.push_back(c);
        std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
            return a.value < b.value;
        });
    }
    for (const engine::SizeChoice &c : all) {
        auto *item = new QStandardItem;
        const QString reason = QString::fromStdString(c.reason);
        // The value in force stays short (the box shows it); the others carry their reason.
        item->setText(c.valid ? QString::number(c.value)
                      : c.value == current
                              ? QStringLiteral("%1 \u26a0").arg(c.value)
                              : QStringLiteral("%1 \u2014 %2").arg(c.value).arg(reason));
        item->setData(c.value, Qt::UserRole);
        item->setToolTip(c.valid ? QString() : reason);
        if (!c.valid && c.value != current)
            item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
        if (!c.valid)
            item->setForeground(QColor(0x9a, 0x4b, 0x4b));
        model->appendRow(item);
        if (c.value == current)
            currentRow = model->rowCount() - 1;
    }
    box->setCurrentIndex(currentRow);
    box->setToolTip([&] {
        for (const auto &c : all)
            if (c.value == current && !c.valid)
                return QString::fromStdString(c.reason);
        return QString();
    }());
}

} // namespace

void WorkloadPanel::sync()
{
    if (!m_document)
        return;
    // A serving layout has no training settings, and its pools are the serving form's.
    const bool serving = m_document->isServing();
    m_trainingBox->setVisible(!serving);
    m_parallelBox->setVisible(!serving);
    m_serving->setVisible(serving);
    if (serving)
        m_serving->sync();
    m_syncing = true;
    syncModel();
    syncTraining();
    m_syncing = false;
    syncParallel();
}

void WorkloadPanel::syncModel()
{
    const engine::Layout &l = m_document->layout();
    int index = 0;
    if (l.model) {
        const engine::ModelConfig &m = *l.model;
        index = m.preset.empty() ? m_preset->count() - 1
                                 : m_preset->findData(QString::fromStdString(m.preset));
    }
    m_preset->setCurrentIndex(std::max(0, index));
    engine::ModelDims dims;
    QString summary;
    if (l.model) {
        const engine::ResolvedModel r = engine::resolveModel(*l.model);
        dims = r.dims;
        if (!r.error.empty()) {
            summary = QString::fromStdString(r.error);
        } else {
            summary = tr("%1 parameters, %2 layers, hidden %3")
                              .arg(params(dims.totalParams()))
                              .arg(dims.layers)
                              .arg(QLocale().toString(dims.hidden));
            if (dims.isMoe())
                summary += tr("; MoE: %1 experts, %2 per token (%3 active)")
                                   .arg(dims.experts)
                                   .arg(dims.topK)
                                   .arg(params(dims.activeParams()));
            engine::ModelConfig plain;
            plain.preset = l.model->preset;
            const bool overrides = !l.model->preset.empty() && !(*l.model == plain);
            if (overrides)
                summary += tr(" \u2014 preset with your changes");
        }
    } else {
        summary = tr("No model: the cluster alone, nothing to price.");
    }
    m_modelSummary->setText(summary);
    m_dimsToggle->setEnabled(l.model.has_value());
    for (int f = 0; f < static_cast<int>(m_dim.size()); ++f) {
        QSpinBox *s = m_dim[static_cast<std::size_t>(f)];
        s->setValue(dimValue(dims, f));
        s->setEnabled(l.model.has_value());
    }
    syncStyle(dims, l.model.has_value() && engine::resolveModel(*l.model).error.empty());
}

void WorkloadPanel::syncTraining()
{
    const engine::TrainingConfig &t = m_document->layout().training;
    m_seqLen->setValue(t.seqLen);
    m_globalBatch->setValue(t.globalBatch);
    m_microBatch->setValue(t.microBatch);
    m_stack->setCurrentIndex(std::max(0, m_stack->findData(QString::fromStdString(t.stack))));
    // A narrow dock cuts the chosen stack's name short: the tooltip names it in full.
    m_stack->setToolTip(tr("The training framework that runs the job: its kernels, what it "
                           "overlaps and how it shards; choosing one sets its defaults")
                        + QStringLiteral("\n\n") + m_stack->currentText() + QStringLiteral(": ")
                        + m_stack->currentData(Qt::ToolTipRole).toString());
    m_precision->setCurrentIndex(t.precision == engine::Precision::Fp8 ? 1 : 0);
    m_recompute->setCurrentIndex(static_cast<int>(t.recompute));
    m_distributed->setChecked(t.optimizer.distributed);
    m_zero->setCurrentIndex(std::clamp(t.optimizer.zeroStage, 0, 3));
    m_fsdp->setChecked(t.optimizer.fsdp);
    m_offload->setValue(t.offloadLayers);
    m_recomputeLayers->setValue(t.recomputeLayers);
    m_recomputeLayers->setEnabled(t.recompute == engine::Recompute::Full);
    for (QAction *a : m_recomputeModules->menu()->actions())
        a->setChecked(t.recomputeModules & a->data().toUInt());
    const bool selective = t.recompute == engine::Recompute::Selective;
    m_recomputeModules->setEnabled(selective);
    m_recomputeModules->setText(
            !selective ? tr("-")
            : t.recomputeModules == 0
                    ? tr("None")
                    : QString::fromStdString(engine::recomputeModulesText(t.recomputeModules)));
    syncShardGroup();
    // Only a PyTorch stack's element-wise operations can run eagerly; the others fuse them.
    const engine::StackProfile *stack = engine::findStack(t.stack);
    const bool eagerStack = stack && stack->eagerElementwise;
    m_compile->setEnabled(eagerStack);
    m_compile->setChecked(eagerStack ? t.compile : true);
    m_compile->setToolTip(eagerStack ? tr("Compile the model: the norms, rotary embedding, "
                                          "activation and residual adds run fused; off, PyTorch "
                                          "runs each as a kernel of its own")
                                     : tr("This stack runs fused element-wise kernels of its own "
                                          "(Transformer Engine, apex)"));
    m_overlap[0]->setChecked(t.overlap.dp);
    m_overlap[1]->setChecked(t.overlap.tp);
    m_overlap[2]->setChecked(t.overlap.pp);
    m_overlap[3]->setChecked(t.overlap.ep);
    syncAttention(t);
}

void WorkloadPanel::syncParallel()
{
    if (!m_document)
        return;
    const bool was = m_syncing;
    m_syncing = true;
    const engine::Layout &l = m_document->layout();
    const engine::ParallelConfig &p = l.parallel;
    for (Dim dim : engine::kAllDims) {
        const int current = dim == Dim::DP   ? l.dataParallel()
                            : dim == Dim::TP ? p.tp
                            : dim == Dim::CP ? p.cp
                            : dim == Dim::EP ? p.ep
                                             : p.pp;
        fillChoices(sizeBox(dim), engine::sizeChoices(l, dim), current);
    }
    // VP: virtual stages per pipeline rank (the engine says which split the layers evenly);
    // only the useful invalid ones are worth listing, to keep the list short.
    {
        std::vector<engine::SizeChoice> choices;
        for (const engine::SizeChoice &c : engine::vpChoices(l))
            if (c.value <= 32 && (c.valid || c.value <= 8 || c.value == p.vp))
                choices.push_back(c);
        fillChoices(m_vp, choices, p.vp);
    }
    m_sequenceParallel->setChecked(l.sequenceParallelOn());
    m_sequenceParallel->setEnabled(p.tp > 1);

    const bool handPlaced = !l.mapping.empty();
    int order = Custom;
    if (p.order == engine::kTopologyAwareOrder)
        order = TopologyAware;
    else if (p.order == engine::kNaiveOrder)
        order = Naive;
    if (handPlaced)
        order = Custom;
    m_order->setCurrentIndex(order);
    m_order->setItemText(Custom,
                         handPlaced        ? tr("Custom (hand-placed)")
                         : order == Custom ? tr("Custom (%1)").arg(QString::fromStdString(p.order))
                                           : tr("Custom\u2026"));

    QString summary;
    if (const engine::RankLayout *r = m_document->ranks()) {
        const engine::RankLayout &ranks = *r;
        summary = tr("%1 GPUs = TP %2 \u00d7 CP %3 \u00d7 PP %4 \u00d7 DP %5")
                          .arg(QLocale().toString(ranks.worldSize()))
                          .arg(p.tp)
                          .arg(p.cp)
                          .arg(p.pp)
                          .arg(l.dataParallel());
        if (p.ep > 1)
            summary += tr("<br>EP %1 is carved out of each stage's %2 ranks")
                               .arg(p.ep)
                               .arg(ranks.worldSize() / p.pp);
        int moved = 0;
        for (int r = 0; r < ranks.worldSize(); ++r)
            moved += ranks.gpuOfRank(r) != r;
        m_placement->setText(handPlaced ? tr("Placed by hand: %1 moved from where the order "
                                             "puts them.")
                                                  .arg(counted(moved, tr("rank"), tr("ranks")))
                                        : tr("Placed by the rank order."));
    } else {
        summary = QStringLiteral("<span style='color:#b91c1c'>%1</span>")
                          .arg(QString::fromStdString(m_document->ranksError()).toHtmlEscaped());
        m_placement->setText(tr("No ranks to place until the sizes fill the cluster."));
    }
    m_parallelSummary->setText(summary);
    m_resetPlacement->setEnabled(handPlaced);
    m_syncing = was;
}

} // namespace railyard
