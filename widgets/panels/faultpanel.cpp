#include "faultpanel.h"
#include "faulttables.h"

#include "commands/changefaults.h"
#include "commands/layoutcommand.h"
#include "document/document.h"
#include "scene/faultmenu.h"
#include "step/evaluationdiff.h"

#include <QComboBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

namespace railyard {

// What the worker hands back: the analysis and the topology it was made on (for link names).
struct FaultPanel::ImpactResult
{
    engine::FaultImpact impact;
    std::shared_ptr<const engine::Topology> faulted;
    std::string error;
};

namespace {

using namespace faulttables;

constexpr engine::SweepKind kKinds[] = {engine::SweepKind::Leaves,
                                        engine::SweepKind::Spines,
                                        engine::SweepKind::Nics,
                                        engine::SweepKind::Links,
                                        engine::SweepKind::Gpus};

} // namespace

FaultPanel::FaultPanel(QWidget *parent)
    : QWidget(parent)
    , m_faults(makeTable(2, {tr("Fault"), QString()}, this))
    , m_restoreAll(new QPushButton(tr("Restore &All"), this))
    , m_summary(new QLabel(this))
    , m_breakdown(makeTable(4, {tr("Exposed"), tr("Healthy"), tr("Faulted"), tr("\u0394")}, this))
    , m_links(makeTable(3, {tr("Link"), tr("Utilization"), tr("Bytes per step")}, this))
    , m_recovery(new QLabel(this))
    , m_apply(new QPushButton(tr("A&pply Recovery"), this))
    , m_kind(new QComboBox(this))
    , m_run(new QPushButton(tr("&Run"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_sweepStatus(new QLabel(this))
    , m_ranked(makeTable(4, {tr("#"), tr("Fails"), tr("Step"), tr("Throughput")}, this))
{
    // The name column takes what the numbers leave, so the table fits a narrow dock.
    for (const auto &[table, stretch] :
         {std::pair{m_breakdown, 0}, std::pair{m_links, 0}, std::pair{m_ranked, 1}}) {
        table->horizontalHeader()->setStretchLastSection(false);
        table->horizontalHeader()->setSectionResizeMode(stretch, QHeaderView::Stretch);
    }
    m_links->setTextElideMode(Qt::ElideMiddle);
    m_faults->setObjectName(QStringLiteral("faultTable"));
    m_faults->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_faults->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_faults->horizontalHeader()->setStretchLastSection(false);
    m_restoreAll->setToolTip(tr("Every element back in service (one undo step)"));
    for (QLabel *l : {m_summary, m_recovery, m_sweepStatus}) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::PlainText);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_apply->setToolTip(tr("Change the job or its placement as the recovery says (Edit > Undo "
                           "takes it back)"));
    m_apply->setEnabled(false);
    m_kind->addItem(tr("Leaves"), int(engine::SweepKind::Leaves));
    m_kind->addItem(tr("Spines"), int(engine::SweepKind::Spines));
    m_kind->addItem(tr("NICs"), int(engine::SweepKind::Nics));
    m_kind->addItem(tr("Links"), int(engine::SweepKind::Links));
    m_kind->addItem(tr("GPUs"), int(engine::SweepKind::Gpus));
    m_kind->setToolTip(tr("Which elements to fail, one at a time, on top of the layout's own "
                          "faults"));
    m_run->setToolTip(tr("Price the job with each element of this kind failed in turn and rank "
                         "the failures by what they cost"));
    m_cancel->hide();
    m_progress->hide();
    m_progress->setRange(0, 1000);
    m_sweepStatus->setText(tr("Run ranks the failures of one kind by what they cost this job; "
                              "double-click one to fail it."));
    m_ranked->setToolTip(tr("Double-click a failure to apply it to the layout"));
    m_links->setToolTip(tr("Double-click a link to show it on the canvas"));

    auto *faultsBox = new QGroupBox(tr("Faults"), this);
    auto *faultsLayout = new QVBoxLayout(faultsBox);
    faultsLayout->addWidget(m_faults);
    auto *restoreRow = new QHBoxLayout;
    restoreRow->addStretch(1);
    restoreRow->addWidget(m_restoreAll);
    faultsLayout->addLayout(restoreRow);

    auto *costBox = new QGroupBox(tr("What they cost"), this);
    auto *costLayout = new QVBoxLayout(costBox);
    costLayout->addWidget(m_summary);
    costLayout->addWidget(m_breakdown);
    costLayout->addWidget(m_links);

    auto *recoveryBox = new QGroupBox(tr("Recovery"), this);
    auto *recoveryLayout = new QVBoxLayout(recoveryBox);
    recoveryLayout->addWidget(m_recovery);
    auto *applyRow = new QHBoxLayout;
    applyRow->addStretch(1);
    applyRow->addWidget(m_apply);
    recoveryLayout->addLayout(applyRow);

    auto *sweepBox = new QGroupBox(tr("What if one fails"), this);
    auto *sweepLayout = new QVBoxLayout(sweepBox);
    auto *sweepRow = new QHBoxLayout;
    sweepRow->addWidget(m_kind, 1);
    sweepRow->addWidget(m_run);
    sweepRow->addWidget(m_cancel);
    sweepLayout->addLayout(sweepRow);
    sweepLayout->addWidget(m_progress);
    sweepLayout->addWidget(m_sweepStatus);
    sweepLayout->addWidget(m_ranked);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(faultsBox);
    layout->addWidget(costBox);
    layout->addWidget(recoveryBox);
    layout->addWidget(sweepBox);
    layout->addStretch(1);

    connect(m_restoreAll, &QPushButton::clicked, this, &FaultPanel::restoreAll);
    connect(m_apply, &QPushButton::clicked, this, &FaultPanel::applyRecovery);
    connect(m_run, &QPushButton::clicked, this, &FaultPanel::runSweep);
    connect(m_cancel, &QPushButton::clicked, this, &FaultPanel::cancelSweep);
    connect(m_ranked, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        failSweepRow(row);
    });
    connect(m_links, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (const QTableWidgetItem *item = m_links->item(row, 0))
            Q_EMIT linkActivated(item->data(Qt::UserRole).toInt());
    });
    connect(m_faults, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (!m_document)
            return;
        for (const engine::ResolvedFault &f : m_document->topology().faults())
            if (static_cast<int>(f.index) == row) {
                if (f.fault.target == engine::FaultTarget::Link && !f.links.empty())
                    Q_EMIT linkActivated(f.links.front());
                else if (!f.devices.empty())
                    Q_EMIT deviceActivated(f.devices.front());
            }
    });
    showFaults();
    showImpact();
    showSweep();
}

FaultPanel::~FaultPanel()
{
    if (m_sweepCancel)
        m_sweepCancel->store(true);
    joinSweep();
    // The analysis cannot be interrupted: it works on its own copies, so wait for it.
    if (m_impactWorker.joinable())
        m_impactWorker.join();
}

const engine::FaultImpact *FaultPanel::impact() const
{
    return m_impact ? &m_impact->impact : nullptr;
}

void FaultPanel::joinSweep()
{
    if (m_sweepWorker.joinable())
        m_sweepWorker.join();
}

void FaultPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    cancelSweep();
    m_document = document;
    m_sweep = {};
    m_sweepStale = false;
    m_impact.reset();
    showSweep();
    if (m_document)
        connect(m_document, &Document::evaluationChanged, this, &FaultPanel::documentChanged);
    documentChanged();
}

void FaultPanel::documentChanged()
{
    showFaults();
    if (!m_sweep.ranked.empty() && !m_sweepStale) {
        m_sweepStale = true;
        showSweep();
    }
    requestImpact();
}

void FaultPanel::showFaults()
{
    m_faults->setRowCount(0);
    const std::vector<engine::Fault> none;
    const std::vector<engine::Fault> &faults = m_document ? m_document->layout().cluster.faults
                                                          : none;
    m_faults->setRowCount(static_cast<int>(faults.size()));
    for (int row = 0; row < static_cast<int>(faults.size()); ++row) {
        const engine::Fault &f = faults[static_cast<std::size_t>(row)];
        QTableWidgetItem *item = cell(text(f.describe()));
        // What the engine resolved it to, for the tooltip.
        for (const engine::ResolvedFault &r : m_document->topology().faults())
            if (static_cast<int>(r.index) == row)
                item->setToolTip(tr("%1: %2 device(s), %3 link(s), %4 GPU(s); double-click to "
                                    "show it")
                                         .arg(text(f.targetText()))
                                         .arg(r.devices.size())
                                         .arg(r.links.size())
                                         .arg(r.gpus.size()));
        m_faults->setItem(row, 0, item);
        auto *restore = new QToolButton(m_faults);
        restore->setText(tr("Restore"));
        restore->setObjectName(QStringLiteral("restoreFault%1").arg(row));
        restore->setAutoRaise(true);
        restore->setToolTip(
                tr("Bring %1 back into service (one undo step)").arg(text(f.targetText())));
        connect(restore, &QToolButton::clicked, this, [this, row] { restoreFault(row); });
        m_faults->setCellWidget(row, 1, restore);
    }
    if (faults.empty()) {
        m_faults->setRowCount(1);
        auto *item = cell(tr("No faults: right-click a device or a link on the canvas to fail, "
                             "degrade or slow it down."));
        item->setFlags(Qt::ItemIsEnabled);
        m_faults->setItem(0, 0, item);
    }
    m_faults->resizeRowsToContents();
    fitHeight(m_faults, 6);
    m_restoreAll->setEnabled(!faults.empty());
}

bool FaultPanel::restoreFault(int index)
{
    if (!m_document)
        return false;
    const std::vector<engine::Fault> &faults = m_document->layout().cluster.faults;
    if (index < 0 || index >= static_cast<int>(faults.size()))
        return false;
    const engine::Fault &f = faults[static_cast<std::size_t>(index)];
    return faultmenu::applyFaults(m_document,
                                  ChangeFaults::without(faults, {static_cast<std::size_t>(index)}),
                                  tr("Restore %1").arg(text(f.targetText())),
                                  this);
}

bool FaultPanel::restoreAll()
{
    if (!m_document || m_document->layout().cluster.faults.empty())
        return false;
    return faultmenu::applyFaults(m_document, {}, tr("Restore every element"), this);
}

void FaultPanel::requestImpact()
{
    ++m_impactGeneration; // what runs or is queued describes an older document
    if (!m_document || m_document->layout().cluster.faults.empty()) {
        m_impact.reset();
        m_impactStale = false;
        m_impactPending = false;
        showImpact();
        return;
    }
    m_impactStale = true;
    if (m_analyzing) {
        m_impactPending = true;
    } else {
        startImpact();
    }
    showImpact();
}

void FaultPanel::startImpact()
{
    if (m_impactWorker.joinable())
        m_impactWorker.join();
    m_analyzing = true;
    m_impactPending = false;
    const std::uint64_t generation = m_impactGeneration;
    auto layout = std::make_shared<const engine::Layout>(m_document->layout());
    auto faulted = std::make_shared<const engine::Topology>(m_document->topology());
    QPointer<FaultPanel> self(this);
    m_impactWorker = std::thread([self, generation, layout, faulted] {
        auto result = std::make_shared<ImpactResult>();
        result->faulted = faulted;
        try {
            const engine::Topology healthy
                    = engine::buildTopology(engine::withoutFaults(*layout).cluster,
                                            engine::Catalog::builtin());
            result->impact = engine::analyzeFaults(*layout, healthy, *faulted);
        } catch (const std::exception &e) {
            result->error = e.what();
        }
        QMetaObject::invokeMethod(
                self.data(),
                [self, result, generation] {
                    if (self)
                        self->impactFinished(result, generation);
                },
                Qt::QueuedConnection);
    });
}

void FaultPanel::impactFinished(std::shared_ptr<ImpactResult> result, std::uint64_t generation)
{
    if (m_impactWorker.joinable())
        m_impactWorker.join();
    m_analyzing = false;
    if (generation == m_impactGeneration) {
        m_impact = std::move(result);
        m_impactStale = false;
        showImpact();
        Q_EMIT impactShown();
        return;
    }
    if (m_impactPending && m_document && !m_document->layout().cluster.faults.empty())
        startImpact();
}

void FaultPanel::showImpact()
{
    m_breakdown->setRowCount(0);
    m_links->setRowCount(0);
    m_apply->setEnabled(false);
    m_summary->setToolTip(QString());
    const bool faults = m_document && !m_document->layout().cluster.faults.empty();
    m_breakdown->setVisible(faults);
    m_links->setVisible(faults);
    if (!faults) {
        m_summary->setText(tr("The cluster is healthy."));
        m_recovery->setText(tr("Nothing to recover."));
        return;
    }
    if (!m_impact) {
        m_summary->setText(tr("Pricing the job with and without the faults\u2026"));
        m_recovery->setText(QString());
        return;
    }
    const engine::FaultImpact &a = m_impact->impact;
    const engine::Topology &t = *m_impact->faulted;
    QStringList lines;
    if (m_impactStale)
        lines << tr("(Updating for the latest change\u2026)");
    if (!m_impact->error.empty()) {
        m_summary->setText(tr("Cannot price the faults: %1").arg(text(m_impact->error)));
        m_recovery->setText(QString());
        return;
    }
    if (!a.priced()) {
        m_summary->setText(tr("Cannot price the job: %1").arg(text(a.error())));
        m_recovery->setText(QString());
        return;
    }
    for (const engine::ImpactMetric &m : a.metrics)
        lines << tr("%1: %2 \u2192 %3 (%4)")
                         .arg(metricName(m.key),
                              metricValue(m.key, m.before),
                              metricValue(m.key, m.after),
                              text(engine::describeChange(m.before, m.after, "")));
    for (const std::string &j : a.jobChanges)
        lines << tr("Job: %1").arg(text(j));
    // A rail down reroutes a GPU in every server: the first few, the rest in the tooltip.
    constexpr std::size_t kReroutedShown = 3;
    QStringList rerouted;
    for (const std::string &r : a.rerouted)
        rerouted << text(r);
    for (std::size_t i = 0; i < a.rerouted.size() && i < kReroutedShown; ++i)
        lines << tr("Rerouted: %1").arg(rerouted[static_cast<qsizetype>(i)]);
    if (a.rerouted.size() > kReroutedShown)
        lines << tr("\u2026 and %1 more rerouted (hover to read them)")
                         .arg(a.rerouted.size() - kReroutedShown);
    m_summary->setText(lines.join(QLatin1Char('\n')));
    m_summary->setToolTip(rerouted.join(QLatin1Char('\n')));

    m_breakdown->setHorizontalHeaderLabels(
            {a.serving ? tr("Part (decode step, prefill)") : tr("Exposed"),
             tr("Healthy"),
             tr("Faulted"),
             tr("\u0394")});
    m_links->setHorizontalHeaderLabels(
            {tr("Link"),
             tr("Utilization"),
             a.serving ? tr("Bytes per decode step") : tr("Bytes per step")});
    int row = 0;
    for (const engine::BreakdownChange &b : a.breakdown) {
        if (b.before == 0 && b.after == 0)
            continue;
        m_breakdown->insertRow(row);
        const double delta = b.after - b.before;
        m_breakdown->setItem(row, 0, cell(text(b.dim)));
        m_breakdown->setItem(row, 1, cell(seconds(b.before), true));
        m_breakdown->setItem(row, 2, cell(seconds(b.after), true));
        m_breakdown->setItem(row,
                             3,
                             cell((delta >= 0 ? QStringLiteral("+") : QStringLiteral("\u2212"))
                                          + seconds(std::abs(delta)),
                                  true));
        ++row;
    }
    fitHeight(m_breakdown, 8);
    row = 0;
    for (const engine::LinkChange &c : a.links) {
        if (c.link < 0 || c.link >= t.linkCount())
            continue;
        m_links->insertRow(row);
        QTableWidgetItem *name = cell(text(t.linkName(c.link)));
        name->setData(Qt::UserRole, c.link);
        m_links->setItem(row, 0, name);
        m_links->setItem(row,
                         1,
                         cell(tr("%1 \u2192 %2").arg(pct(c.utilizationA), pct(c.utilizationB)),
                              true));
        m_links->setItem(row,
                         2,
                         cell(tr("%1 \u2192 %2").arg(bytes(c.bytesA), bytes(c.bytesB)), true));
        ++row;
    }
    fitHeight(m_links, 10);
    m_links->setVisible(m_links->rowCount() > 0); // a straggler moves no bytes

    if (a.recovery) {
        const engine::Recovery &r = *a.recovery;
        QString s = a.serving ? tr("%1\nTPOT %2, TTFT %3, %4 of the lost output tokens/s back.\n"
                                   "Price: %5")
                                        .arg(text(r.summary),
                                             seconds(r.stepTimeS),
                                             seconds(r.ttftS),
                                             pct(r.recovered),
                                             text(r.price))
                              : tr("%1\nStep %2, %3 of the lost throughput back.\nPrice: %4")
                                        .arg(text(r.summary),
                                             seconds(r.stepTimeS),
                                             pct(r.recovered),
                                             text(r.price));
        if (r.healthyGain > 0)
            s += QLatin1Char('\n')
                 + tr("The same change makes the healthy job %1 faster too: the layout's own "
                      "placement is not the fastest.")
                           .arg(pct(r.healthyGain));
        m_recovery->setText(s);
        m_apply->setEnabled(!m_impactStale);
    } else {
        m_recovery->setText(text(a.recoveryNote));
    }
}

bool FaultPanel::applyRecovery()
{
    if (!m_document || !isImpactCurrent() || !m_impact->impact.recovery)
        return false;
    const engine::Recovery &r = *m_impact->impact.recovery;
    // The job's keys the recovery changes (as evaluate's recovery.layout_change lists them);
    // the rest of the document stays as it is.
    engine::Layout after = m_document->layout();
    after.parallel = r.layout.parallel;
    after.training.globalBatch = r.layout.training.globalBatch;
    after.mapping = r.layout.mapping;
    after.serving = r.layout.serving; // serving: the replicas and the requests in flight
    const QString what = tr("Apply recovery: %1").arg(text(r.summary));
    if (const QString problem = Document::checkLayout(after); !problem.isEmpty()) {
        auto *box = new QMessageBox(QMessageBox::Warning,
                                    tr("Cannot Apply the Recovery"),
                                    what,
                                    QMessageBox::Ok,
                                    this);
        box->setObjectName(QStringLiteral("recoveryRefused"));
        box->setInformativeText(problem);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    m_document->undoStack()->push(new LayoutCommand(m_document, std::move(after), what));
    return true;
}

} // namespace railyard
