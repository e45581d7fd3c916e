#pragma once

#include <QString>
#include <QWidget>

class QLabel;
class QTableWidget;
class QToolButton;

namespace railyard {

namespace engine {
struct ServingEvaluation;
} // namespace engine

// The Pricing dock's numbers for a serving layout (one with `serving`): time to first token,
// time per output token, tokens/s per user and per GPU, the cluster's output tokens/s,
// requests/s, $ per million output tokens, memory per GPU and the concurrency the KV cache
// holds, against the state before the last edit or the pinned A; then where one decode step's
// and one prefill's time goes, and what each GPU holds. It shows the serving engine's numbers
// (Document::servingEvaluation()) and computes none. Compact, to fit a 1280x800 window's dock
// without scrolling: with nothing to compare, the numbers stand in a two-column grid (grid());
// the band's basis, long prose, opens under a toggle.
class ServingPricing : public QWidget
{
    Q_OBJECT

public:
    explicit ServingPricing(QWidget *parent = nullptr);

    // `now` priced (ok); `base` the numbers to compare with (null: none), named `baseName`
    // ("A", "Before") beside `nowName`.
    void setEvaluation(const engine::ServingEvaluation &now,
                       const engine::ServingEvaluation *base,
                       const QString &baseName,
                       const QString &nowName);
    void clear();

    // "TPOT 12.4 ms ±9%": the headline of the dock.
    static QString headline(const engine::ServingEvaluation &now);
    // "+38% time per output token": what changed.
    static QString changeText(const engine::ServingEvaluation &base,
                              const engine::ServingEvaluation &now);

    // Every number in rows (Before or A, now, the change): shown when there is something to
    // compare, else grid() shows the same numbers two to a row.
    QTableWidget *metrics() const { return m_metrics; }
    QTableWidget *grid() const { return m_grid; }
    QTableWidget *breakdown() const { return m_breakdown; }
    // "Where the time goes, a batch of 47" (in the slowest replica, when a fault slows one).
    QLabel *breakdownTitle() const { return m_breakdownTitle; }
    QString memoryText() const;
    // The band's basis (what validation the ± rests on), under bandToggle().
    QString bandText() const;
    QToolButton *bandToggle() const { return m_bandToggle; }
    // The row of `name` ("TPOT", "TTFT", ...) in metrics(), or -1.
    int metricRow(const QString &name) const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void fitMetrics();
    // The metric names' column (the comparison's row headers) takes the width the numbers leave.
    void stretchMetricNames(int tableWidth);
    void fitBreakdown(); // as tall as the rows shown

    QTableWidget *m_metrics;
    QTableWidget *m_grid;
    QLabel *m_breakdownTitle;
    QTableWidget *m_breakdown;
    QLabel *m_memory;
    QLabel *m_note;
    QToolButton *m_bandToggle;
    QLabel *m_band;
};

} // namespace railyard
