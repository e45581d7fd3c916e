#pragma once

#include "planner/servingplan.h"
#include "searchworker.h"

#include <QPointer>
#include <QWidget>

class QChart;
class QChartView;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineSeries;
class QProgressBar;
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
// with the document's own point, and applies the chosen configuration as one undo step. The
// search runs off the GUI thread with progress and Cancel (the front found before stays).
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
    // Stops the search that runs: "Search cancelled.", the front shown before stays.
    void cancel();
    bool isSearching() const { return m_worker.isRunning(); }
    // Applies front point `row` (one undo step); false when there is none.
    bool applyPlan(int row);

    const engine::ServingPlanResult &result() const { return m_result; }
    QTableWidget *table() const { return m_table; }
    QDoubleSpinBox *ttftLimitBox() const { return m_ttft; }
    QDoubleSpinBox *tpotLimitBox() const { return m_tpot; }
    QCheckBox *disaggregationBox() const { return m_disaggregation; }
    QPushButton *searchButton() const { return m_search; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }
    QPushButton *applyButton() const { return m_apply; }
    QLabel *statusLabel() const { return m_status; }
    QChart *chart() const { return m_chart; }
    // "TP8 x2, 32 in flight": a point's configuration in words.
    static QString configText(const engine::ServingPlanPoint &p);

Q_SIGNALS:
    void searchFinished();

private:
    void finished(engine::ServingPlanResult result);
    void searchEnded();
    void showResult();
    void showChosen(int row);
    void markStale();

    QPointer<Document> m_document;
    QDoubleSpinBox *m_ttft;
    QDoubleSpinBox *m_tpot;
    QCheckBox *m_disaggregation;
    QPushButton *m_search;
    QPushButton *m_cancel;
    QPushButton *m_apply;
    QProgressBar *m_progress;
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
    SearchWorker m_worker; // last: destroyed (cancelled and joined) first
};

} // namespace railyard
