#pragma once

#include "planner/servingplan.h"

#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <thread>

class QChart;
class QChartView;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QScatterSeries;
class QTableWidget;
class QValueAxis;

namespace railyard {

class Document;

// The Planner dock for a serving layout: searches TP, EP, PP, replicas, attention DP,
// disaggregated prefill/decode splits and the requests in flight on the document's cluster
// (engine::planServing), under optional TTFT and TPOT limits, lists the Pareto front of output
// tokens/s per GPU against tokens/s per user (the chart serving benchmarks publish), draws it
// with the document's own point, and applies the chosen configuration as one undo step.
class ServingPlanner : public QWidget
{
    Q_OBJECT

public:
    explicit ServingPlanner(QWidget *parent = nullptr);
    ~ServingPlanner() override;

    void setDocument(Document *document);
    // Starts a search of the document as it is now, off the GUI thread (searchFinished when
    // done); does nothing while one runs.
    void search();
    bool isSearching() const { return m_running; }
    // Applies front point `row` (one undo step); false when there is none.
    bool applyPlan(int row);

    const engine::ServingPlanResult &result() const { return m_result; }
    QTableWidget *table() const { return m_table; }
    QDoubleSpinBox *ttftLimitBox() const { return m_ttft; }
    QDoubleSpinBox *tpotLimitBox() const { return m_tpot; }
    QCheckBox *disaggregationBox() const { return m_disaggregation; }
    QPushButton *searchButton() const { return m_search; }
    QPushButton *applyButton() const { return m_apply; }
    QLabel *statusLabel() const { return m_status; }
    QChart *chart() const { return m_chart; }
    // "TP8 x2, 32 in flight": a point's configuration in words.
    static QString configText(const engine::ServingPlanPoint &p);

Q_SIGNALS:
    void searchFinished();

private:
    void finished(std::shared_ptr<engine::ServingPlanResult> result, std::uint64_t generation);
    void joinWorker();
    void showResult();
    void showChosen(int row);
    void markStale();

    QPointer<Document> m_document;
    QDoubleSpinBox *m_ttft;
    QDoubleSpinBox *m_tpot;
    QCheckBox *m_disaggregation;
    QPushButton *m_search;
    QPushButton *m_apply;
    QLabel *m_status;
    QTableWidget *m_table;
    QChart *m_chart;
    QChartView *m_view;
    QLineSeries *m_frontLine;
    QScatterSeries *m_front;
    QScatterSeries *m_chosen;
    QScatterSeries *m_now;
    QValueAxis *m_x;
    QValueAxis *m_y;
    engine::ServingPlanResult m_result;
    bool m_stale = false;
    bool m_applying = false;
    bool m_running = false;
    std::uint64_t m_generation = 0;
    // The search has no cancel: a window closed while it runs waits for it.
    std::thread m_worker;
};

} // namespace railyard
