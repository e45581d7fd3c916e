#include "workloadpanel.h"
#include "workloadpanel_p.h"

#include "document/document.h"
#include "layout/parallel.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "servingform.h"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

namespace railyard {

using engine::Dim;
using namespace workloadfields;

namespace {

using enum WorkloadPanel::Dimension;

QSpinBox *spin(QWidget *parent, int lo, int hi, int step = 1)
{
    auto *s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setSingleStep(step);
    s->setKeyboardTracking(false); // one value when typing is done, not one per key
    s->setGroupSeparatorShown(true);
    s->setAccelerated(true);
    return s;
}

QComboBox *choiceBox(QWidget *parent)
{
    auto *box = new QComboBox(parent);
    box->setModel(new QStandardItemModel(box));
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(4);
    // The reasons are long: let the list be wider than the box.
    box->view()->setMinimumWidth(340);
    box->view()->setTextElideMode(Qt::ElideNone);
    return box;
}

} // namespace

WorkloadPanel::WorkloadPanel(QWidget *parent)
    : QWidget(parent)
    , m_preset(new QComboBox(this))
    , m_modelSummary(new QLabel(this))
    , m_dimsToggle(new QToolButton(this))
    , m_dims(new QWidget(this))
    , m_seqLen(spin(this, 128, 1 << 24, 1024))
    , m_globalBatch(spin(this, 1, 1 << 26, 32))
    , m_microBatch(spin(this, 1, 1 << 20))
    , m_stack(new QComboBox(this))
    , m_precision(new QComboBox(this))
    , m_recompute(new QComboBox(this))
    , m_distributed(new QCheckBox(tr("Distributed optimizer"), this))
    , m_zero(new QComboBox(this))
    , m_fsdp(new QCheckBox(tr("FSDP"), this))
    , m_compile(new QCheckBox(tr("torch.compile"), this))
    , m_offload(spin(this, 0, 4096))
    , m_recomputeLayers(spin(this, 0, 4096)) // beyond a stage's layers: all of them
    , m_recomputeModules(new QToolButton(this))
    , m_shardGroup(new QComboBox(this))
    , m_vp(choiceBox(this))
    , m_sequenceParallel(new QCheckBox(tr("Sequence parallel"), this))
    , m_order(new QComboBox(this))
    , m_parallelSummary(new QLabel(this))
    , m_placement(new QLabel(this))
    , m_resetPlacement(new QPushButton(tr("Reset Placement"), this))
    , m_error(new QLabel(this))
    , m_serving(new ServingForm(this))
{
    // Model
    m_preset->addItem(tr("None (cluster only)"), QString());
    for (const engine::ModelDims &d : engine::modelPresets())
        m_preset->addItem(QString::fromStdString(d.name), QString::fromStdString(d.name));
    m_preset->addItem(tr("Custom dimensions"), QStringLiteral("\x01custom"));
    m_preset->setMaxVisibleItems(20);
    connect(m_preset, &QComboBox::activated, this, &WorkloadPanel::presetChosen);
    m_modelSummary->setWordWrap(true);
    m_modelSummary->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_dimsToggle->setText(tr("Dimensions"));
    m_dimsToggle->setCheckable(true);
    m_dimsToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_dimsToggle->setArrowType(Qt::RightArrow);
    m_dimsToggle->setAutoRaise(true);
    auto *dimsForm = new QFormLayout(m_dims);
    dimsForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    dimsForm->setContentsMargins(12, 0, 0, 0);
    for (int f = 0; f < static_cast<int>(m_dim.size()); ++f) {
        auto *s = spin(m_dims, f == Experts || f == MoeLayers ? 0 : 1, 1 << 24);
        m_dim[static_cast<std::size_t>(f)] = s;
        dimsForm->addRow(tr(kDimNames[f]), s);
        connect(s, &QSpinBox::valueChanged, this, [this, f](int v) {
            if (!m_syncing)
                dimensionEdited(f, v);
        });
    }
    buildStyleRows(dimsForm);
    m_dims->setVisible(false);
    connect(m_dimsToggle, &QToolButton::toggled, this, [this](bool on) {
        m_dims->setVisible(on);
        m_dimsToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    });
    auto *modelBox = new QGroupBox(tr("Model"), this);
    auto *modelLayout = new QVBoxLayout(modelBox);
    modelLayout->addWidget(m_preset);
    modelLayout->addWidget(m_modelSummary);
    modelLayout->addWidget(m_dimsToggle);
    modelLayout->addWidget(m_dims);

    // Training
    m_stack->addItem(tr("Not named"), QString());
    m_stack->setItemData(0,
                         tr("The engine's generic defaults; the step-time band widens to hold "
                            "what the stacks it may be running give"),
                         Qt::ToolTipRole);
    for (const engine::StackProfile &p : engine::stackProfiles()) {
        if (p.id.empty())
            continue;
        m_stack->addItem(QString::fromStdString(p.id), QString::fromStdString(p.id));
        m_stack->setItemData(m_stack->count() - 1,
                             QString::fromStdString(p.description),
                             Qt::ToolTipRole);
    }
    m_precision->addItem(tr("BF16"));
    m_precision->addItem(tr("FP8"));
    m_recompute->addItem(tr("None"));
    m_recompute->addItem(tr("Selective"));
    m_recompute->addItem(tr("Full"));
    m_recompute->setToolTip(tr("Recompute activations in the backward pass: less memory, more "
                               "compute"));
    for (int z = 0; z <= 3; ++z)
        m_zero->addItem(z == 0 ? tr("ZeRO 0 (none)") : tr("ZeRO %1").arg(z));
    m_zero->setToolTip(tr("How much of the optimizer state, gradients (2) and weights (3) is "
                          "sharded over data parallelism"));
    const auto onTraining = [this](const QString &field) {
        return [this, field] {
            if (!m_syncing)
                trainingEdited(field);
        };
    };
    connect(m_seqLen, &QSpinBox::valueChanged, this, onTraining(QStringLiteral("seq_len")));
    connect(m_globalBatch,
            &QSpinBox::valueChanged,
            this,
            onTraining(QStringLiteral("global_batch")));
    connect(m_microBatch, &QSpinBox::valueChanged, this, onTraining(QStringLiteral("micro_batch")));
    connect(m_stack, &QComboBox::activated, this, onTraining(QStringLiteral("stack")));
    connect(m_precision, &QComboBox::activated, this, onTraining(QStringLiteral("precision")));
    connect(m_recompute, &QComboBox::activated, this, onTraining(QStringLiteral("recompute")));
    m_recomputeLayers->setSpecialValueText(tr("All layers"));
    m_recomputeLayers->setSuffix(tr(" layers"));
    m_recomputeLayers->setToolTip(tr("With full recomputation: how many layers of each pipeline "
                                     "stage recompute (Megatron's --recompute-num-layers with the "
                                     "block method); the others keep their activations"));
    connect(m_recomputeLayers,
            &QSpinBox::valueChanged,
            this,
            onTraining(QStringLiteral("recompute_layers")));
    m_recomputeModules->setPopupMode(QToolButton::InstantPopup);
    m_recomputeModules->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_recomputeModules->setToolTip(tr("With selective recomputation: what runs again in the "
                                      "backward pass (Megatron's --recompute-modules): the "
                                      "attention kernel, the norms, the experts' activation, the "
                                      "whole MoE layer with its all-to-alls, a dense MLP, MLA's "
                                      "up-projections, the shared experts"));
    auto *modules = new QMenu(m_recomputeModules);
    for (const auto &[name, bit] : engine::recomputeModuleNames()) {
        QAction *a = modules->addAction(QString::fromStdString(name));
        a->setCheckable(true);
        a->setData(bit);
        connect(a, &QAction::triggered, this, onTraining(QStringLiteral("recompute_modules")));
    }
    m_recomputeModules->setMenu(modules);
    connect(m_distributed, &QCheckBox::toggled, this, onTraining(QStringLiteral("optimizer")));
    connect(m_zero, &QComboBox::activated, this, onTraining(QStringLiteral("zero_stage")));
    connect(m_fsdp, &QCheckBox::toggled, this, onTraining(QStringLiteral("fsdp")));
    connect(m_compile, &QCheckBox::toggled, this, onTraining(QStringLiteral("compile")));
    buildAttentionBox();
    connect(m_attention, &QComboBox::activated, this, onTraining(QStringLiteral("attention")));
    m_offload->setSpecialValueText(tr("Off"));
    m_offload->setSuffix(tr(" layers"));
    m_offload->setToolTip(tr("Activation offload to host memory (Megatron-Core's "
                             "cpu_offloading_num_layers): the first N layers keep their "
                             "activations in the CPU's memory between forward and backward, "
                             "copied over PCIe or NVLink-C2C behind the compute. Applies "
                             "without pipeline parallelism and without recomputation"));
    connect(m_offload,
            &QSpinBox::valueChanged,
            this,
            onTraining(QStringLiteral("cpu_offload_layers")));
    m_shardGroup->setToolTip(tr("Hybrid sharding (FSDP's HYBRID_SHARD): shard the weights, "
                                "gradients and optimizer state within groups of this many "
                                "data-parallel ranks (a server's GPUs, say) and replicate across "
                                "the groups, which all-reduce their gradient shards. With FSDP or "
                                "ZeRO 3 only"));
    connect(m_shardGroup, &QComboBox::activated, this, onTraining(QStringLiteral("shard_group")));
    auto *overlapRow = new QHBoxLayout;
    const char *overlapNames[] = {"DP", "TP", "PP", "EP"};
    for (int i = 0; i < 4; ++i) {
        auto *b = new QCheckBox(tr(overlapNames[i]), this);
        b->setToolTip(tr("Overlap %1 communication with compute").arg(tr(overlapNames[i])));
        m_overlap[static_cast<std::size_t>(i)] = b;
        overlapRow->addWidget(b);
        connect(b, &QCheckBox::toggled, this, onTraining(QStringLiteral("overlap")));
    }
    overlapRow->addStretch(1);
    auto *trainingBox = new QGroupBox(tr("Training"), this);
    m_trainingBox = trainingBox;
    auto *trainingForm = new QFormLayout(trainingBox);
    trainingForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    trainingForm->addRow(tr("Stack"), m_stack);
    trainingForm->addRow(tr("Sequence length"), m_seqLen);
    trainingForm->addRow(tr("Global batch"), m_globalBatch);
    trainingForm->addRow(tr("Micro batch"), m_microBatch);
    trainingForm->addRow(tr("Precision"), m_precision);
    trainingForm->addRow(tr("Recompute"), m_recompute);
    trainingForm->addRow(tr("Recomputed"), m_recomputeLayers);
    trainingForm->addRow(tr("Modules"), m_recomputeModules);
    trainingForm->addRow(tr("Kernels"), m_compile);
    trainingForm->addRow(tr("Attention"), m_attention);
    trainingForm->addRow(tr("CPU offload"), m_offload);
    auto *optimizerRow = new QHBoxLayout;
    optimizerRow->addWidget(m_zero);
    optimizerRow->addWidget(m_fsdp);
    trainingForm->addRow(m_distributed);
    trainingForm->addRow(tr("Sharding"), optimizerRow);
    trainingForm->addRow(tr("Shard over"), m_shardGroup);
    trainingForm->addRow(tr("Overlap"), overlapRow);

    // Parallelism
    auto *parallelBox = new QGroupBox(tr("Parallelism"), this);
    m_parallelBox = parallelBox;
    auto *parallelForm = new QFormLayout(parallelBox);
    parallelForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    const std::array<Dim, 5> dims = {Dim::TP, Dim::CP, Dim::EP, Dim::PP, Dim::DP};
    const std::array<const char *, 5> tips = {
            "Tensor parallel: splits every layer's matrices; its all-gathers and reduce-scatters "
            "run every layer and belong inside the NVLink domain",
            "Context parallel: splits the sequence (ring attention)",
            "Expert parallel: spreads the experts of an MoE layer; an all-to-all per layer",
            "Pipeline parallel: splits the layers into stages; send/recv between stages and a "
            "bubble",
            "Data parallel: copies of the model; one gradient all-reduce per step, which overlaps "
            "compute"};
    for (std::size_t i = 0; i < dims.size(); ++i) {
        QComboBox *box = choiceBox(this);
        const Dim dim = dims[i];
        m_size[static_cast<std::size_t>(dim)] = box;
        box->setWhatsThis(tr(tips[i]));
        box->setStatusTip(tr(tips[i]));
        connect(box, &QComboBox::activated, this, [this, dim](int index) {
            sizeChosen(dim, index);
        });
        if (dim == Dim::PP) {
            auto *row = new QHBoxLayout;
            row->addWidget(box, 1);
            row->addWidget(new QLabel(tr("VP"), this));
            row->addWidget(m_vp, 1);
            parallelForm->addRow(QString::fromLatin1(engine::dimLabel(dim)), row);
        } else {
            parallelForm->addRow(QString::fromLatin1(engine::dimLabel(dim)), box);
        }
    }
    m_vp->setStatusTip(tr("Virtual pipeline stages per GPU (interleaved 1F1B): a smaller bubble "
                          "for more send/recv"));
    connect(m_vp, &QComboBox::activated, this, [this](int index) {
        if (!m_document || index < 0)
            return;
        engine::ParallelConfig p = m_document->layout().parallel;
        p.vp = m_vp->itemData(index).toInt();
        pushParallel(p, tr("Change VP to %1").arg(p.vp));
    });
    connect(m_sequenceParallel, &QCheckBox::toggled, this, [this](bool on) {
        if (m_syncing || !m_document)
            return;
        engine::ParallelConfig p = m_document->layout().parallel;
        p.sequenceParallel = on;
        pushParallel(p,
                     on ? tr("Turn sequence parallelism on") : tr("Turn sequence parallelism off"));
    });
    parallelForm->addRow(m_sequenceParallel);
    m_order->addItem(tr("Topology-aware (TP innermost)"),
                     QString::fromLatin1(engine::kTopologyAwareOrder));
    m_order->addItem(tr("Naive (DP innermost)"), QString::fromLatin1(engine::kNaiveOrder));
    m_order->addItem(tr("Custom\u2026"), QString());
    m_order->setItemData(TopologyAware,
                         tr("%1: consecutive ranks fill a TP group first, so TP groups sit "
                            "inside a server")
                                 .arg(QString::fromLatin1(engine::kTopologyAwareOrder)),
                         Qt::ToolTipRole);
    m_order->setItemData(Naive,
                         tr("%1: consecutive ranks are DP replicas, so TP groups stride across "
                            "servers")
                                 .arg(QString::fromLatin1(engine::kNaiveOrder)),
                         Qt::ToolTipRole);
    m_order->setItemData(Custom,
                         tr("Your own order (e.g. tp-dp-cp-ep-pp), or a placement made by hand on "
                            "the canvas"),
                         Qt::ToolTipRole);
    connect(m_order, &QComboBox::activated, this, &WorkloadPanel::orderChosen);
    parallelForm->addRow(tr("Rank order"), m_order);
    m_parallelSummary->setWordWrap(true);
    m_parallelSummary->setTextFormat(Qt::RichText);
    parallelForm->addRow(m_parallelSummary);
    m_placement->setWordWrap(true);
    m_resetPlacement->setToolTip(tr("Put every rank back where the rank order places it"));
    connect(m_resetPlacement, &QPushButton::clicked, this, &WorkloadPanel::resetPlacement);
    auto *placementRow = new QHBoxLayout;
    placementRow->addWidget(m_resetPlacement);
    placementRow->addStretch(1);
    parallelForm->addRow(m_placement);
    parallelForm->addRow(placementRow);

    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    // The dock's width is the user's: long choices elide in the closed box (the list shows them
    // whole), and a row too wide for the dock puts its field under its label.
    for (QComboBox *box :
         {m_preset, m_stack, m_precision, m_recompute, m_zero, m_order, m_attention, m_shardGroup}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(box == m_preset || box == m_order ? 10 : 5);
        box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0) + 24);
    }

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(modelBox);
    layout->addWidget(trainingBox);
    layout->addWidget(m_serving);
    layout->addWidget(parallelBox);
    m_serving->hide();
    layout->addWidget(m_error);
    layout->addStretch(1);
    setEnabled(false);
}

void WorkloadPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    setEnabled(document != nullptr);
    if (!document)
        return;
    connect(document, &Document::workloadChanged, this, &WorkloadPanel::sync);
    connect(document, &Document::clusterChanged, this, &WorkloadPanel::sync);
    connect(document, &Document::mappingChanged, this, &WorkloadPanel::syncParallel);
    m_serving->setDocument(document);
    m_error->hide();
    sync();
}

QString WorkloadPanel::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

void WorkloadPanel::showError(const QString &text)
{
    m_error->setText(text);
    m_error->setVisible(!text.isEmpty());
}

} // namespace railyard
