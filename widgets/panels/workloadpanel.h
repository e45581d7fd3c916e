#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"

#include <QPointer>
#include <QWidget>

#include <array>
#include <optional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace railyard {

class Document;
class ServingForm;

// The Workload dock: what is trained and how it is split (or, for a serving layout, what is
// served and on which pools: ServingForm). The model (a preset, or its
// dimensions, norm, positions and dropout), sequence length, global and micro batch,
// precision, recompute, the attention kernel, optimizer sharding and overlap; the parallel sizes TP, CP, EP, PP, VP and DP, offering the valid sizes
// and saying why the others are not; the rank order (topology-aware, naive, or custom). Every
// change is one undo command (a spin box stepped through values is one step); a change the
// layout would refuse is shown with the reason and not applied.
class WorkloadPanel : public QWidget
{
    Q_OBJECT

public:
    explicit WorkloadPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);
    QString errorText() const;

    QComboBox *presetBox() const { return m_preset; }
    QComboBox *sizeBox(engine::Dim dim) const { return m_size[static_cast<std::size_t>(dim)]; }
    QComboBox *vpBox() const { return m_vp; }
    QComboBox *orderBox() const { return m_order; }
    QComboBox *stackBox() const { return m_stack; }
    QComboBox *precisionBox() const { return m_precision; }
    QComboBox *recomputeBox() const { return m_recompute; }
    QComboBox *zeroBox() const { return m_zero; }
    QCheckBox *compileBox() const { return m_compile; }
    // training.attention: the stack's choice or a named kernel (each item's data is the
    // layout's name for it).
    QComboBox *attentionBox() const { return m_attention; }
    // The model's norm (LayerNorm, RMSNorm), positions (rotary, learned) and dropout.
    QComboBox *normBox() const { return m_norm; }
    QComboBox *positionBox() const { return m_position; }
    QCheckBox *dropoutBox() const { return m_dropout; }
    QSpinBox *seqLenBox() const { return m_seqLen; }
    QSpinBox *globalBatchBox() const { return m_globalBatch; }
    QSpinBox *microBatchBox() const { return m_microBatch; }
    QSpinBox *offloadBox() const { return m_offload; }
    // training.recompute_layers: with full recomputation, the layers of a stage that recompute
    // (0, "All layers").
    QSpinBox *recomputeLayersBox() const { return m_recomputeLayers; }
    QToolButton *recomputeModulesButton() const { return m_recomputeModules; }
    // optimizer.shard_group: hybrid sharding's group, each item's data its size (0: every
    // data-parallel rank).
    QComboBox *shardGroupBox() const { return m_shardGroup; }
    QCheckBox *distributedBox() const { return m_distributed; }
    QPushButton *resetPlacementButton() const { return m_resetPlacement; }
    QLabel *parallelSummary() const { return m_parallelSummary; }
    // A serving layout's settings, shown instead of the training and parallelism sections.
    ServingForm *servingForm() const { return m_serving; }

    // Rank order presets, as the order combo lists them.
    enum OrderChoice { TopologyAware, Naive, Custom };
    // The model's dimensions, as the Dimensions section lists them.
    enum Dimension {
        Layers,
        Hidden,
        Ffn,
        Heads,
        KvHeads,
        Vocab,
        Experts,
        TopK,
        ExpertFfn,
        MoeLayers,
        DimensionCount
    };
    QSpinBox *dimensionBox(Dimension d) const { return m_dim[static_cast<std::size_t>(d)]; }
    QLabel *modelSummary() const { return m_modelSummary; }

public Q_SLOTS:
    // Puts the ranks back where the order places them (drops a hand-made placement).
    void resetPlacement();

private:
    void sync();
    void syncModel();
    void syncTraining();
    void syncParallel();
    void pushWorkload(const std::optional<engine::ModelConfig> &model,
                      const engine::TrainingConfig &training,
                      const QString &text,
                      const QString &mergeKey);
    void pushParallel(const engine::ParallelConfig &parallel, const QString &text);
    void presetChosen(int index);
    void dimensionEdited(int field, int value);
    void sizeChosen(engine::Dim dim, int index);
    void orderChosen(int index);
    void trainingEdited(const QString &field);
    // The attention kernel, the model's norm, positions and dropout, and the shard group
    // (workloadpanelchoices.cpp).
    void buildStyleRows(QFormLayout *dimsForm);
    void buildAttentionBox();
    void syncStyle(const engine::ModelDims &dims, bool haveModel);
    void syncAttention(const engine::TrainingConfig &training);
    void syncShardGroup();
    enum class StyleField { Norm, Position, Dropout };
    void styleEdited(StyleField field);
    void showError(const QString &text);
    // Whether the document would take `after`; if not, shows why and re-syncs with `resync`.
    bool accepts(const engine::Layout &after, void (WorkloadPanel::*resync)());

    QPointer<Document> m_document;
    bool m_syncing = false;
    // Model
    QComboBox *m_preset;
    QLabel *m_modelSummary;
    QToolButton *m_dimsToggle;
    QWidget *m_dims;
    std::array<QSpinBox *, DimensionCount> m_dim{};
    QComboBox *m_norm = nullptr;
    QComboBox *m_position = nullptr;
    QCheckBox *m_dropout = nullptr;
    // Training
    QSpinBox *m_seqLen;
    QSpinBox *m_globalBatch;
    QSpinBox *m_microBatch;
    QComboBox *m_stack;
    QComboBox *m_precision;
    QComboBox *m_recompute;
    QCheckBox *m_distributed;
    QComboBox *m_zero;
    QCheckBox *m_fsdp;
    QCheckBox *m_compile;
    QComboBox *m_attention = nullptr;
    QSpinBox *m_offload; // training.cpu_offload_layers
    QSpinBox *m_recomputeLayers;
    QToolButton *m_recomputeModules; // training.recompute_modules, a menu of checkable modules
    QComboBox *m_shardGroup;
    std::array<QCheckBox *, 4> m_overlap{};
    // Parallelism
    std::array<QComboBox *, 5> m_size{};
    QComboBox *m_vp;
    QCheckBox *m_sequenceParallel;
    QComboBox *m_order;
    QLabel *m_parallelSummary;
    QLabel *m_placement;
    QPushButton *m_resetPlacement;
    QLabel *m_error;
    QWidget *m_trainingBox = nullptr;
    QWidget *m_parallelBox = nullptr;
    ServingForm *m_serving;
};

} // namespace railyard
