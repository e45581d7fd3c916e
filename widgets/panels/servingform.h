#pragma once

#include "layout/layout.h"

#include <QGroupBox>
#include <QPointer>

#include <array>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QSpinBox;

namespace railyard {

class Document;

// The Workload dock's half for a serving layout (one with `serving`), shown instead of the
// training settings and the training parallelism: the stack, the precisions of the weights (and
// how FP8 weights are scaled) and of the KV cache, input and output tokens per request, the load (requests in flight per
// replica, or a request rate), the chunked-prefill budget, and the pools: one (TP, EP, PP,
// replicas, attention DP) or, disaggregated, a prefill pool and a decode pool. Every edit is one
// undo step (ChangeServing; a spin box stepped through values merges into one); a value the
// layout refuses is not applied and the form says why; what the serving engine refuses (a model
// that does not fit, say) is said under the form.
class ServingForm : public QGroupBox
{
    Q_OBJECT

public:
    explicit ServingForm(QWidget *parent = nullptr);

    void setDocument(Document *document);
    void sync();

    // Pool rows and their columns.
    enum PoolRow { Aggregated, Prefill, Decode, PoolRowCount };
    enum PoolColumn { Tp, Ep, Pp, Replicas, AttentionDp, PoolColumnCount };
    QSpinBox *poolBox(PoolRow row, PoolColumn column) const
    {
        return m_pool[static_cast<std::size_t>(row)][static_cast<std::size_t>(column)];
    }
    QComboBox *stackBox() const { return m_stack; }
    QComboBox *precisionBox() const { return m_precision; }
    // How an FP8 checkpoint is scaled: 0 per tensor, 1 per 128-block (DeepSeek's); enabled with
    // FP8 weights only.
    QComboBox *fp8ScalingBox() const { return m_fp8Scaling; }
    QComboBox *kvPrecisionBox() const { return m_kvPrecision; }
    QSpinBox *inputTokensBox() const { return m_input; }
    QSpinBox *outputTokensBox() const { return m_output; }
    QComboBox *loadBox() const { return m_load; } // closed loop (concurrency) or open loop
    QSpinBox *concurrencyBox() const { return m_concurrency; }
    QDoubleSpinBox *requestRateBox() const { return m_rate; }
    QSpinBox *maxPrefillBox() const { return m_maxPrefill; }
    QCheckBox *disaggregatedBox() const { return m_disaggregated; }
    // Why the last edit was refused (empty: it was not).
    QString errorText() const;
    // What the pools come to, or why the serving engine cannot price them.
    QString summaryText() const;

private:
    void edited(const QString &what, const QString &mergeKey);
    void disaggregationToggled(bool on);
    void push(const engine::ServingConfig &serving,
              const engine::ParallelConfig &parallel,
              const QString &text,
              const QString &mergeKey);
    void readPool(PoolRow row, engine::ServingPool &pool) const;
    void showPool(PoolRow row, const engine::ServingPool &pool);

    QPointer<Document> m_document;
    bool m_syncing = false;
    QComboBox *m_stack;
    QComboBox *m_precision;
    QComboBox *m_fp8Scaling;
    QComboBox *m_kvPrecision;
    QSpinBox *m_input;
    QSpinBox *m_output;
    QComboBox *m_load;
    QSpinBox *m_concurrency;
    QDoubleSpinBox *m_rate;
    QSpinBox *m_maxPrefill;
    QCheckBox *m_disaggregated;
    QGridLayout *m_pools;
    std::array<QLabel *, PoolRowCount> m_poolName{};
    std::array<std::array<QSpinBox *, PoolColumnCount>, PoolRowCount> m_pool{};
    QLabel *m_summary;
    QLabel *m_error;
};

} // namespace railyard
