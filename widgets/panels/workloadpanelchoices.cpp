#include "workloadpanel.h"

#include "commands/changeworkload.h"
#include "document/document.h"
#include "layout/catalog.h"
#include "layout/parallelchoices.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QStandardItemModel>

// The Workload dock's rows of named choices: which attention kernel the job runs
// (training.attention), the model's norm, positions and dropout (model.norm, model.position,
// model.dropout) and hybrid sharding's group (training.optimizer.shard_group). What runs
// where is the engine's (resolveAttention, the evaluation's checks); this file lists, shows
// and forwards.

namespace railyard {

namespace {

using engine::AttentionKernel;

// In the order the box lists them: the stack's choice first, then newest to oldest.
constexpr AttentionKernel kKernels[] = {AttentionKernel::Flash,
                                        AttentionKernel::Cudnn,
                                        AttentionKernel::FlashAttention3,
                                        AttentionKernel::FlashAttention2,
                                        AttentionKernel::FlashAttention1,
                                        AttentionKernel::FlashAttentionTriton,
                                        AttentionKernel::Materialized};

QString kernelName(AttentionKernel k)
{
    switch (k) {
    case AttentionKernel::Flash: return QObject::tr("Stack default");
    case AttentionKernel::Cudnn: return QObject::tr("cuDNN");
    case AttentionKernel::FlashAttention3: return QObject::tr("FlashAttention-3");
    case AttentionKernel::FlashAttention2: return QObject::tr("FlashAttention-2");
    case AttentionKernel::FlashAttention1: return QObject::tr("FlashAttention 1.x");
    case AttentionKernel::FlashAttentionTriton: return QObject::tr("Triton (flash-attn)");
    case AttentionKernel::Materialized: return QObject::tr("Materialized (no flash)");
    }
    return {};
}

QString kernelTip(AttentionKernel k)
{
    switch (k) {
    case AttentionKernel::Flash:
        return QObject::tr("The kernel the training stack runs on this GPU by default");
    case AttentionKernel::Cudnn:
        return QObject::tr("cuDNN's fused flash attention, as Transformer Engine runs it");
    case AttentionKernel::FlashAttention3:
        return QObject::tr("Dao-AILab's FlashAttention-3: Hopper only");
    case AttentionKernel::FlashAttention2:
        return QObject::tr("Dao-AILab's FlashAttention-2 (also PyTorch's SDPA flash backend)");
    case AttentionKernel::FlashAttention1:
        return QObject::tr("FlashAttention 1.x (CUDA): Ampere and Hopper");
    case AttentionKernel::FlashAttentionTriton:
        return QObject::tr("flash-attn's Triton kernel (llm-foundry's attn_impl triton): "
                           "Ampere and Hopper");
    case AttentionKernel::Materialized:
        return QObject::tr("The full score matrix through HBM: batched GEMMs and a fused "
                           "softmax (Megatron before flash attention)");
    }
    return {};
}

QComboBox *styleBox(QWidget *parent, std::initializer_list<QString> items)
{
    auto *box = new QComboBox(parent);
    for (const QString &item : items)
        box->addItem(item);
    return box;
}

} // namespace

void WorkloadPanel::buildStyleRows(QFormLayout *dimsForm)
{
    m_norm = styleBox(m_dims, {tr("LayerNorm"), tr("RMSNorm")});
    m_norm->setToolTip(tr("The model's norm: LayerNorm (GPT, MPT) or RMSNorm (Llama and "
                          "most models since). PyTorch runs LayerNorm as one kernel and "
                          "RMSNorm as several when not compiled"));
    m_position = styleBox(m_dims, {tr("Rotary (RoPE)"), tr("Learned")});
    m_position->setToolTip(tr("How positions enter: a rotary embedding on every query and key, "
                              "or learned position embeddings added once at the input"));
    m_dropout = new QCheckBox(tr("Dropout"), m_dims);
    m_dropout->setToolTip(tr("Dropout after attention and the MLP (GPT-3's training); most "
                             "recent models train without it"));
    dimsForm->addRow(tr("norm"), m_norm);
    dimsForm->addRow(tr("positions"), m_position);
    dimsForm->addRow(QString(), m_dropout);
    connect(m_norm, &QComboBox::activated, this, [this] { styleEdited(StyleField::Norm); });
    connect(m_position, &QComboBox::activated, this, [this] { styleEdited(StyleField::Position); });
    connect(m_dropout, &QCheckBox::toggled, this, [this] {
        if (!m_syncing)
            styleEdited(StyleField::Dropout);
    });
}

void WorkloadPanel::buildAttentionBox()
{
    m_attention = new QComboBox(this);
    for (AttentionKernel k : kKernels) {
        m_attention->addItem(kernelName(k), QString::fromLatin1(engine::toString(k)));
        m_attention->setItemData(m_attention->count() - 1, kernelTip(k), Qt::ToolTipRole);
    }
    m_attention->setToolTip(tr("The attention kernel: the stack's own, or the one the job's "
                               "configuration names"));
}

void WorkloadPanel::syncStyle(const engine::ModelDims &dims, bool haveModel)
{
    m_norm->setCurrentIndex(dims.layerNorm ? 0 : 1);
    m_position->setCurrentIndex(dims.rotary ? 0 : 1);
    m_dropout->setChecked(dims.dropout);
    for (QWidget *w : {static_cast<QWidget *>(m_norm),
                       static_cast<QWidget *>(m_position),
                       static_cast<QWidget *>(m_dropout)})
        w->setEnabled(haveModel);
}

void WorkloadPanel::syncAttention(const engine::TrainingConfig &t)
{
    const engine::Layout &l = m_document->layout();
    const engine::StackProfile *stack = engine::findStack(t.stack);
    const engine::GpuSpec *gpu = engine::Catalog::builtin().gpu(l.cluster.gpu);
    const std::string arch = gpu ? gpu->architecture : std::string();
    for (int i = 0; i < m_attention->count(); ++i) {
        const AttentionKernel k = kKernels[i];
        QString text = kernelName(k);
        QString tip = kernelTip(k);
        if (stack && gpu) {
            // What runs here: the stack's kernel for "the stack's choice", and in place of a
            // kernel this GPU cannot run.
            const AttentionKernel runs = engine::resolveAttention(*stack, k, arch);
            if (k == AttentionKernel::Flash) {
                text = tr("Default: %1").arg(kernelName(runs));
            } else if (runs != k) {
                text = tr("%1 (runs %2 here)").arg(kernelName(k), kernelName(runs));
                tip = tr("%1. It does not run on the %2; the stack's %3 does")
                              .arg(tip, QString::fromStdString(gpu->name), kernelName(runs));
            }
        }
        m_attention->setItemText(i, text);
        m_attention->setItemData(i, tip, Qt::ToolTipRole);
    }
    const int index = m_attention->findData(QString::fromLatin1(engine::toString(t.attention)));
    m_attention->setCurrentIndex(std::max(0, index));
}

void WorkloadPanel::syncShardGroup()
{
    // Every data-parallel rank, or a divisor of them (hybrid sharding); a file's value that
    // divides nothing is listed too, as it is in force (the evaluation says why it is refused).
    const engine::Layout &l = m_document->layout();
    const engine::OptimizerConfig &o = l.training.optimizer;
    const int ranks = engine::dataParallelRanks(l);
    m_shardGroup->clear();
    for (const engine::SizeChoice &c : engine::shardGroupChoices(l)) {
        QString text
                = c.value == 0 ? tr("All %1 ranks").arg(ranks)
                  : c.value == 1
                          ? tr("1 rank (replicated %1\u00d7)").arg(ranks)
                          : tr("%1 ranks (replicated %2\u00d7)").arg(c.value).arg(ranks / c.value);
        if (!c.valid)
            text = tr("%1 ranks \u26a0").arg(c.value);
        m_shardGroup->addItem(text, c.value);
        if (!c.valid)
            m_shardGroup->setItemData(m_shardGroup->count() - 1,
                                      QString::fromStdString(c.reason),
                                      Qt::ToolTipRole);
    }
    m_shardGroup->setCurrentIndex(std::max(0, m_shardGroup->findData(o.shardGroup)));
    m_shardGroup->setEnabled(engine::shardsWeights(o) || o.shardGroup > 0);
}

void WorkloadPanel::styleEdited(StyleField field)
{
    if (!m_document || !m_document->layout().model)
        return;
    engine::ModelConfig m = *m_document->layout().model;
    std::optional<bool> *slot = nullptr;
    bool value = false;
    QString text;
    switch (field) {
    case StyleField::Norm:
        slot = &m.layerNorm;
        value = m_norm->currentIndex() == 0;
        text = tr("Change norm to %1").arg(m_norm->currentText());
        break;
    case StyleField::Position:
        slot = &m.rotary;
        value = m_position->currentIndex() == 0;
        text = tr("Change positions to %1").arg(m_position->currentText());
        break;
    case StyleField::Dropout:
        slot = &m.dropout;
        value = m_dropout->isChecked();
        text = value ? tr("Turn dropout on") : tr("Turn dropout off");
        break;
    }
    // Back to what the model brings without it (its preset, or its MLP's style): no override.
    slot->reset();
    const engine::ResolvedModel plain = engine::resolveModel(m);
    const bool own = field == StyleField::Norm       ? plain.dims.layerNorm
                     : field == StyleField::Position ? plain.dims.rotary
                                                     : plain.dims.dropout;
    if (own != value)
        *slot = value;
    pushWorkload(m, m_document->layout().training, text, QString());
}

} // namespace railyard
