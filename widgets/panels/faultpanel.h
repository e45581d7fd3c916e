#pragma once

#include "faults/faultimpact.h"
#include "faults/faultsweep.h"

#include <QPointer>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace railyard {

class Document;

// The Fault dock: the layout's faults (cluster.faults) with Restore per row and Restore All;
// what they cost the job (engine::analyzeFaults: the step before and after, the per-dimension
// change, the links that now carry more) and the recovery it suggests, with its price and an
// Apply button; and a what-if sweep (engine::sweepFaults: every leaf, spine, NIC, link or GPU
// failed in turn) whose ten worst failures are listed, a double-click failing that element.
// Every edit is one undo step. The analysis and the sweep run off the GUI thread (the sweep
// with progress and Cancel); the panel only shows and forwards what the engine says.
class FaultPanel : public QWidget
{
    Q_OBJECT

public:
    explicit FaultPanel(QWidget *parent = nullptr);
    ~FaultPanel() override;

    void setDocument(Document *document);

    // The analysis shown (null while there are no faults, or before the first one finished),
    // and whether it describes the document as it is now.
    const engine::FaultImpact *impact() const;
    bool isAnalyzing() const { return m_analyzing; }
    bool isImpactCurrent() const { return m_impact && !m_impactStale; }

    // Edits, each one undo step; false (nothing pushed) when there is nothing to do or the
    // engine refuses the result (a message box says why).
    bool restoreFault(int index);
    bool restoreAll();
    bool applyRecovery();

    // Fails each element of the kind chosen in kindBox() in turn (cancels a sweep that runs).
    void runSweep();
    void cancelSweep();
    bool isSweeping() const { return m_sweeping; }
    const engine::SweepResult &sweep() const { return m_sweep; }
    // Fails the element of the sweep's ranked row `row` (one undo step).
    bool failSweepRow(int row);

    QTableWidget *faultTable() const { return m_faults; }
    QPushButton *restoreAllButton() const { return m_restoreAll; }
    QLabel *summaryLabel() const { return m_summary; }
    QTableWidget *breakdownTable() const { return m_breakdown; }
    QTableWidget *linksTable() const { return m_links; }
    QLabel *recoveryLabel() const { return m_recovery; }
    QPushButton *applyButton() const { return m_apply; }
    QComboBox *kindBox() const { return m_kind; }
    QPushButton *runButton() const { return m_run; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *sweepProgress() const { return m_progress; }
    QLabel *sweepStatus() const { return m_sweepStatus; }
    QTableWidget *sweepTable() const { return m_ranked; }

    static constexpr int kSweepRows = 10; // "the ten failures that hurt this job most"

Q_SIGNALS:
    void impactShown();   // an analysis of the document as it is was shown
    void sweepFinished(); // a sweep finished (or was cancelled) and is shown
    // The user asked to see an element: a fault's device or a changed link.
    void deviceActivated(int device);
    void linkActivated(int link);

private:
    struct ImpactResult;
    void documentChanged();
    void showFaults();
    void requestImpact();
    void startImpact();
    void impactFinished(std::shared_ptr<ImpactResult> result, std::uint64_t generation);
    void showImpact();
    void sweepDone(std::shared_ptr<engine::SweepResult> result, std::uint64_t generation);
    void showSweep();
    void joinSweep();

    QPointer<Document> m_document;
    QTableWidget *m_faults;
    QPushButton *m_restoreAll;
    QLabel *m_summary;
    QTableWidget *m_breakdown;
    QTableWidget *m_links;
    QLabel *m_recovery;
    QPushButton *m_apply;
    QComboBox *m_kind;
    QPushButton *m_run;
    QPushButton *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_sweepStatus;
    QTableWidget *m_ranked;

    // The analysis: one worker at a time; a change while it runs asks for another after it.
    std::shared_ptr<ImpactResult> m_impact;
    bool m_impactStale = false;
    bool m_analyzing = false;
    bool m_impactPending = false;
    std::uint64_t m_impactGeneration = 0;
    std::thread m_impactWorker;

    engine::SweepResult m_sweep;
    bool m_sweepStale = false;
    bool m_sweeping = false;
    std::uint64_t m_sweepGeneration = 0;
    std::shared_ptr<std::atomic<bool>> m_sweepCancel;
    std::thread m_sweepWorker;
};

} // namespace railyard
