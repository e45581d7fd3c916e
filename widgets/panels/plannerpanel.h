#pragma once

#include "planner/planner.h"
#include "searchworker.h"

#include <QPointer>
#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace railyard {

class Document;
class ParetoChart;
class ServingPlanner;

// The Planner dock: searches every valid parallel configuration of the document's model on its
// cluster (engine::searchPlans, off the GUI thread, with progress and Cancel), lists the best N
// with their numbers and memory, draws the Pareto front of step time against memory per GPU,
// and applies the chosen plan to the document as one undoable edit. Results that no longer
// describe the document (it was edited since) say so.
class PlannerPanel : public QWidget
{
    Q_OBJECT

public:
    explicit PlannerPanel(QWidget *parent = nullptr);
    ~PlannerPanel() override;

    void setDocument(Document *document);

    // Starts a search of the document as it is now (cancels one that runs).
    void search();
    // Stops the search that runs (the training or the serving one).
    void cancel();
    bool isSearching() const { return m_worker.isRunning(); }
    // Applies the ranked plan `row` (one undo step); false when there is none.
    bool applyPlan(int row);

    const engine::PlanSearch &result() const { return m_result; }
    QTableWidget *table() const { return m_table; }
    ParetoChart *chart() const { return m_chart; }
    QLabel *statusLabel() const { return m_status; }
    QPushButton *searchButton() const { return m_search; }
    QPushButton *applyButton() const { return m_apply; }
    QComboBox *objectiveBox() const { return m_objective; }
    // A serving layout's planner (the Pareto front of tokens/s per GPU against tokens/s per
    // user), shown instead of the training search.
    ServingPlanner *serving() const { return m_serving; }

Q_SIGNALS:
    void searchFinished();

private:
    void finished(engine::PlanSearch result);
    void showResult();
    void markStale();

    QPointer<Document> m_document;
    QComboBox *m_objective;
    QSpinBox *m_top;
    QPushButton *m_search;
    QPushButton *m_cancel;
    QPushButton *m_apply;
    QProgressBar *m_progress;
    QLabel *m_status;
    QTableWidget *m_table;
    ParetoChart *m_chart;
    QWidget *m_training;
    ServingPlanner *m_serving;

    engine::PlanSearch m_result;
    bool m_stale = false;
    bool m_applying = false; // our own edit: the results still describe it
    SearchWorker m_worker;   // last: destroyed (cancelled and joined) first
};

} // namespace railyard
