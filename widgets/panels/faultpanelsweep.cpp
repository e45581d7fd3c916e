// The fault panel's what-if sweep (faultpanel.h): every element of a kind failed in turn on a
// worker thread, ranked by what it costs the job, and a ranked row applied as a fault.
#include "faultpanel.h"
#include "faulttables.h"

#include "commands/changefaults.h"
#include "document/document.h"
#include "scene/faultmenu.h"

#include <QComboBox>
#include <QLabel>
#include <QLocale>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QUndoStack>

namespace railyard {

using namespace faulttables;

void FaultPanel::runSweep()
{
    if (!m_document)
        return;
    cancelSweep();
    const std::uint64_t generation = ++m_sweepGeneration;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_sweepCancel = flag;
    auto layout = std::make_shared<const engine::Layout>(m_document->layout());
    const auto kind = static_cast<engine::SweepKind>(m_kind->currentData().toInt());
    QPointer<FaultPanel> self(this);
    engine::SweepOptions options;
    options.progress = [self, generation, flag](int done, int total) {
        QMetaObject::invokeMethod(
                self.data(),
                [self, generation, done, total] {
                    if (!self || self->m_sweepGeneration != generation || total <= 0)
                        return;
                    self->m_progress->setValue(done * 1000 / total);
                    self->m_sweepStatus->setText(tr("Priced %1 of %2\u2026").arg(done).arg(total));
                },
                Qt::QueuedConnection);
        return !flag->load();
    };
    m_sweeping = true;
    m_sweepStale = false;
    m_run->setEnabled(false);
    m_cancel->show();
    m_progress->setValue(0);
    m_progress->show();
    m_sweepStatus->setText(tr("Failing each of the %1 in turn\u2026").arg(m_kind->currentText()));
    m_sweepWorker = std::thread([self, generation, layout, kind, options] {
        auto result = std::make_shared<engine::SweepResult>();
        result->kind = kind;
        try {
            const engine::Topology healthy
                    = engine::buildTopology(engine::withoutFaults(*layout).cluster,
                                            engine::Catalog::builtin());
            *result = engine::sweepFaults(*layout, healthy, kind, options);
        } catch (const std::exception &e) {
            result->ok = false;
            result->error = e.what();
        }
        QMetaObject::invokeMethod(
                self.data(),
                [self, result, generation] {
                    if (self)
                        self->sweepDone(result, generation);
                },
                Qt::QueuedConnection);
    });
}

void FaultPanel::cancelSweep()
{
    if (m_sweepCancel)
        m_sweepCancel->store(true);
    joinSweep(); // the sweep asks the progress callback after each evaluation
    if (m_sweeping) {
        m_sweeping = false;
        ++m_sweepGeneration; // its result, still queued, is dropped
        m_run->setEnabled(true);
        m_cancel->hide();
        m_progress->hide();
        m_sweepStatus->setText(tr("Sweep cancelled."));
        Q_EMIT sweepFinished();
    }
}

void FaultPanel::sweepDone(std::shared_ptr<engine::SweepResult> result, std::uint64_t generation)
{
    if (generation != m_sweepGeneration)
        return;
    joinSweep();
    m_sweeping = false;
    m_run->setEnabled(true);
    m_cancel->hide();
    m_progress->hide();
    m_sweep = std::move(*result);
    m_sweepStale = false;
    showSweep();
    Q_EMIT sweepFinished();
}

void FaultPanel::showSweep()
{
    m_ranked->setRowCount(0);
    const engine::SweepResult &s = m_sweep;
    if (!s.ok) {
        if (!s.error.empty())
            m_sweepStatus->setText(tr("Cannot sweep: %1").arg(text(s.error)));
        m_ranked->hide();
        return;
    }
    QString status = (s.serving ? tr("Baseline TPOT %1, TTFT %6, %7 output tokens/s per GPU; %2 "
                                     "candidates, %3 priced in %4%5.")
                                : tr("Baseline step %1; %2 candidates, %3 priced in %4%5."))
                             .arg(seconds(s.baselineStepS))
                             .arg(s.candidates)
                             .arg(s.priced)
                             .arg(seconds(s.elapsedS), s.cancelled ? tr(" (cancelled)") : QString());
    if (s.serving)
        status = status.arg(seconds(s.baselineTtftS),
                            QLocale().toString(s.baselineTokensPerS, 'f', 1));
    for (const std::string &n : s.symmetry)
        status += QLatin1Char('\n') + tr("Symmetry: %1").arg(text(n));
    if (m_sweepStale)
        status += QLatin1Char('\n')
                  + tr("The layout changed since: run again to rank it as it is.");
    m_sweepStatus->setText(status);
    m_ranked->setHorizontalHeaderLabels(
            s.serving ? QStringList{tr("#"), tr("Fails"), tr("TPOT"), tr("Tokens/s per GPU")}
                      : QStringList{tr("#"), tr("Fails"), tr("Step"), tr("Throughput")});
    const int rows = std::min<int>(kSweepRows, static_cast<int>(s.ranked.size()));
    m_ranked->setRowCount(rows);
    for (int row = 0; row < rows; ++row) {
        const engine::SweepEntry &e = s.ranked[static_cast<std::size_t>(row)];
        m_ranked->setItem(row, 0, cell(QString::number(row + 1), true));
        QTableWidgetItem *name = cell(text(e.name));
        if (!e.pricedAs.empty())
            name->setToolTip(tr("Priced as %1 (the same by symmetry)").arg(text(e.pricedAs)));
        m_ranked->setItem(row, 1, name);
        if (e.ok) {
            QTableWidgetItem *step = cell(seconds(e.stepTimeS), true);
            if (s.serving)
                step->setToolTip(tr("TTFT %1").arg(seconds(e.ttftS)));
            m_ranked->setItem(row, 2, step);
            m_ranked->setItem(row,
                              3,
                              cell((e.costFraction > 0 ? QStringLiteral("\u2212")
                                                       : QStringLiteral("+"))
                                           + pct(std::abs(e.costFraction)),
                                   true));
        } else {
            QTableWidgetItem *err = cell(tr("cannot run"));
            err->setToolTip(text(e.error));
            m_ranked->setItem(row, 2, err);
            m_ranked->setItem(row, 3, cell(QString()));
        }
    }
    fitHeight(m_ranked, kSweepRows);
    m_ranked->setVisible(rows > 0);
}

bool FaultPanel::failSweepRow(int row)
{
    if (!m_document || row < 0 || row >= static_cast<int>(m_sweep.ranked.size())
        || row >= kSweepRows)
        return false;
    const engine::SweepEntry &e = m_sweep.ranked[static_cast<std::size_t>(row)];
    return faultmenu::applyFaults(m_document,
                                  ChangeFaults::withFault(m_document->layout().cluster.faults,
                                                          e.fault),
                                  tr("Fail %1").arg(text(e.name)),
                                  this);
}

} // namespace railyard
