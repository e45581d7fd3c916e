#include "plannerpanel.h"

#include "base/units.h"
#include "charts/paretochart.h"
#include "commands/layoutcommand.h"
#include "document/document.h"
#include "resulttable.h"
#include "servingplanner.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QUndoStack>
#include <QVBoxLayout>

namespace railyard {

namespace {

QString sizes(const engine::PlanChoice &c)
{
    QStringList parts;
    const std::pair<const char *, int> dims[]
            = {{"TP", c.tp}, {"CP", c.cp}, {"EP", c.ep}, {"PP", c.pp}, {"VP", c.vp}, {"DP", c.dp}};
    for (const auto &[name, size] : dims)
        if (size > 1 || QLatin1String(name) == QLatin1String("DP"))
            parts << QStringLiteral("%1 %2").arg(QLatin1String(name)).arg(size);
    // Pipeline stages inside data-parallel replicas (tp-cp-ep-pp-dp), as Llama 3 placed them.
    if (c.order == engine::PlanOrder::PipelineInner)
        parts << PlannerPanel::tr("PP inside DP");
    return parts.join(QStringLiteral(" \u00b7 "));
}

QString recomputeName(engine::Recompute r)
{
    switch (r) {
    case engine::Recompute::None: return PlannerPanel::tr("none");
    case engine::Recompute::Selective: return PlannerPanel::tr("selective");
    case engine::Recompute::Full: return PlannerPanel::tr("full");
    }
    return {};
}

QString shardingName(engine::Sharding s)
{
    switch (s) {
    case engine::Sharding::Zero0: return PlannerPanel::tr("none");
    case engine::Sharding::Zero1: return PlannerPanel::tr("ZeRO-1");
    case engine::Sharding::Zero2: return PlannerPanel::tr("ZeRO-2");
    case engine::Sharding::Zero3: return PlannerPanel::tr("ZeRO-3");
    case engine::Sharding::Fsdp: return PlannerPanel::tr("FSDP");
    }
    return {};
}

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

// Few columns, so a narrow dock shows them all: the plan's training settings under its sizes,
// its band under its step time, tokens/s in the row's tip.
enum Column { Rank, Plan, Step, Mfu, Memory, Columns };

} // namespace

PlannerPanel::PlannerPanel(QWidget *parent)
    : QWidget(parent)
    , m_objective(new QComboBox(this))
    , m_top(new QSpinBox(this))
    , m_search(new QPushButton(tr("&Search"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_apply(new QPushButton(tr("&Apply Plan"), this))
    , m_progress(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_table(new QTableWidget(0, Columns, this))
    , m_chart(new ParetoChart(this))
    , m_training(new QWidget(this))
    , m_serving(new ServingPlanner(this))
{
    m_objective->addItem(tr("Shortest step"), int(engine::PlanObjective::StepTime));
    m_objective->addItem(tr("Lowest cost per step"), int(engine::PlanObjective::Cost));
    m_objective->addItem(tr("Most tokens per dollar"), int(engine::PlanObjective::TokensPerDollar));
    m_top->setRange(1, 200);
    m_top->setValue(20);
    m_search->setToolTip(tr("Price every valid TP, CP, EP, PP, VP, DP, micro-batch, recompute "
                            "and sharding for this model on this cluster"));
    m_apply->setToolTip(tr("Set the document's parallel sizes and training settings to the "
                           "selected plan (Edit > Undo takes it back)"));
    m_status->setWordWrap(true);
    m_status->setText(tr("Search ranks every configuration that fits in memory."));

    m_table->setHorizontalHeaderLabels({tr("#"), tr("Plan"), tr("Step"), tr("MFU"), tr("GiB")});
    m_table->horizontalHeaderItem(Memory)->setToolTip(tr("Memory per GPU, GiB"));
    // The plan takes what the numbers leave and wraps; rows grow to their text.
    setUpResultTable(m_table, Plan);

    auto *form = new QFormLayout;
    form->addRow(tr("Objective"), m_objective);
    form->addRow(tr("Show the best"), m_top);
    auto *layout = new QVBoxLayout(m_training);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    layout->addLayout(searchButtonRow(m_search, m_cancel, m_apply, m_progress));
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 2);
    layout->addWidget(m_chart, 1);
    auto *outer = new QVBoxLayout(this);
    outer->addWidget(m_training, 1);
    outer->addWidget(m_serving, 1);
    m_serving->hide();
    connect(m_serving, &ServingPlanner::searchFinished, this, &PlannerPanel::searchFinished);

    connect(m_search, &QPushButton::clicked, this, &PlannerPanel::search);
    connect(m_cancel, &QPushButton::clicked, this, &PlannerPanel::cancel);
    connectResultChoice(
            m_table,
            m_apply,
            this,
            [this](int row) { applyPlan(row); },
            [this](int row) { m_chart->setChosen(row); },
            [this] { return m_stale; });
    connect(m_chart, &ParetoChart::rankedClicked, this, [this](int index) {
        m_table->selectRow(index);
    });
}

PlannerPanel::~PlannerPanel() = default;

void PlannerPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    cancel();
    m_document = document;
    m_result = {};
    m_stale = false;
    showResult();
    m_status->setText(tr("Search ranks every configuration that fits in memory."));
    // A serving layout is planned by the serving planner.
    const bool serving = m_document && m_document->isServing();
    m_training->setVisible(!serving);
    m_serving->setVisible(serving);
    m_serving->setDocument(serving ? m_document.data() : nullptr);
    if (!m_document)
        return;
    connect(m_document, &Document::workloadChanged, this, &PlannerPanel::markStale);
    connect(m_document, &Document::clusterChanged, this, &PlannerPanel::markStale);
}

void PlannerPanel::markStale()
{
    if (m_result.plans.empty() || m_stale || m_applying)
        return;
    m_stale = true;
    m_apply->setEnabled(false);
    m_status->setText(m_status->text() + QLatin1Char('\n')
                      + tr("The document changed since: search again to rank it as it is."));
}

void PlannerPanel::search()
{
    if (!m_document)
        return;
    if (m_document->isServing()) {
        m_serving->search();
        return;
    }
    auto layout = std::make_shared<engine::Layout>(m_document->layout());
    auto topology = std::make_shared<engine::Topology>(m_document->topology());
    engine::PlanOptions options;
    options.objective = engine::PlanObjective(m_objective->currentData().toInt());
    options.top = m_top->value();
    options.pareto = true;
    QPointer<PlannerPanel> self(this);
    m_worker.start(
            this,
            [self, layout, topology, options](const std::atomic<bool> &cancel,
                                              const SearchWorker::Post &post) mutable {
                options.cancel = &cancel;
                options.progress = [self, post](const engine::PlanProgress &p) {
                    post([self, p] {
                        self->m_progress->setValue(int(p.fraction * 1000));
                        self->m_status->setText(
                                tr("Priced %1 configurations in %2\u2026")
                                        .arg(QLocale().toString(qlonglong(p.evaluated)),
                                             seconds(p.elapsedS)));
                    });
                };
                return engine::searchPlans(*layout, *topology, options);
            },
            [self](engine::PlanSearch result) { self->finished(std::move(result)); });
    m_search->setEnabled(false);
    m_cancel->show();
    m_progress->setValue(0);
    m_progress->show();
    m_status->setText(tr("Searching\u2026"));
}

void PlannerPanel::cancel()
{
    m_serving->cancel();
    if (!m_worker.cancel()) // the search checks the flag every few thousand configurations
        return;
    m_search->setEnabled(true);
    m_cancel->hide();
    m_progress->hide();
    m_status->setText(tr("Search cancelled."));
}

void PlannerPanel::finished(engine::PlanSearch result)
{
    m_search->setEnabled(true);
    m_cancel->hide();
    m_progress->hide();
    m_result = std::move(result);
    m_stale = false;
    showResult();
    Q_EMIT searchFinished();
}

void PlannerPanel::showResult()
{
    const engine::PlanSearch &r = m_result;
    m_table->setRowCount(0);
    m_apply->setEnabled(false);
    std::vector<ParetoChart::Point> front, ranked;
    if (!r.ok) {
        if (!r.error.empty())
            m_status->setText(tr("Cannot search: %1").arg(QString::fromStdString(r.error)));
        m_chart->setData({}, {}, 0);
        return;
    }
    QString text = tr("Priced %1 valid configurations in %2; %3 fit in %4 GiB of usable HBM.")
                           .arg(QLocale().toString(qlonglong(r.evaluated)),
                                seconds(r.elapsedS),
                                QLocale().toString(qlonglong(r.fitting)))
                           .arg(r.hbmGiB, 0, 'f', 1);
    if (r.plans.empty() && !r.noFit.empty())
        text += QLatin1Char('\n') + QString::fromStdString(r.noFit);
    if (!r.plans.empty()) {
        // How sure the model is where the best plan is: plans within it are not told apart.
        const engine::PlanPrice &best = r.plans.front().price;
        if (best.bandBasis >= 0 && best.bandBasis < int(r.bandBases.size()))
            text += QLatin1Char('\n')
                    + tr("Best plan's step time \u00b1%1%: %2.")
                              .arg(100 * best.bandFraction, 0, 'f', 1)
                              .arg(QString::fromStdString(r.bandBases[std::size_t(best.bandBasis)]));
    }
    if (r.objective != engine::PlanObjective::StepTime && r.pricePerGpuHour <= 0)
        text += QLatin1Char('\n') + tr("No price per GPU-hour: ranked by step time.");
    m_status->setText(text);
    m_status->setToolTip(QString::fromStdString([&] {
        std::string a;
        for (const std::string &s : r.assumptions)
            a += (a.empty() ? "" : "\n") + s;
        return a;
    }()));
    m_table->setRowCount(int(r.plans.size()));
    for (int row = 0; row < int(r.plans.size()); ++row) {
        const engine::Plan &p = r.plans[std::size_t(row)];
        QString training = tr("micro-batch %1 \u00b7 recompute %2 \u00b7 sharding %3")
                                   .arg(p.choice.microBatch)
                                   .arg(recomputeName(p.choice.recompute),
                                        p.price.shardGroup > 0
                                                ? tr("%1 over %2 ranks")
                                                          .arg(shardingName(p.choice.sharding))
                                                          .arg(p.price.shardGroup)
                                                : shardingName(p.choice.sharding));
        if (p.choice.offloadLayers > 0)
            training += p.choice.offloadLayers == 1 ? tr(" \u00b7 1 layer offloaded to CPU")
                                                    : tr(" \u00b7 %1 layers offloaded to CPU")
                                                              .arg(p.choice.offloadLayers);
        const QString cells[Columns] = {QString::number(row + 1),
                                        sizes(p.choice) + QLatin1Char('\n') + training,
                                        tr("%1\n\u00b1%2%")
                                                .arg(seconds(p.price.stepTimeS))
                                                .arg(100 * p.price.bandFraction, 0, 'f', 0),
                                        QStringLiteral("%1%").arg(100 * p.price.mfu, 0, 'f', 1),
                                        QStringLiteral("%1").arg(p.price.memoryGiB, 0, 'f', 1)};
        const QString tokens = tr("%1 tokens/s per GPU")
                                       .arg(QLocale().toString(p.price.tokensPerS
                                                                       / std::max(1, r.gpus),
                                                               'f',
                                                               0));
        for (int c = 0; c < Columns; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            if (c != Plan)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == Plan)
                item->setToolTip(cells[c] + QLatin1Char('\n') + tokens);
            if (c == Mfu)
                item->setToolTip(tokens);
            if (c == Step && p.price.bandBasis >= 0 && p.price.bandBasis < int(r.bandBases.size()))
                item->setToolTip(tr("How sure the model is in this plan's regime: \u00b1%1%, %2")
                                         .arg(100 * p.price.bandFraction, 0, 'f', 1)
                                         .arg(QString::fromStdString(
                                                 r.bandBases[std::size_t(p.price.bandBasis)])));
            m_table->setItem(row, c, item);
        }
        ranked.push_back({p.price.memoryGiB, p.price.stepTimeS});
    }
    for (const engine::Plan &p : r.pareto)
        front.push_back({p.price.memoryGiB, p.price.stepTimeS});
    m_chart->setData(front,
                     ranked,
                     r.hbmGiB,
                     r.plans.empty() ? tr("Nothing fits in %1 GiB of usable HBM: no plan to draw "
                                          "(what the closest needs is above).")
                                               .arg(r.hbmGiB, 0, 'f', 1)
                                     : QString());
    if (!r.plans.empty())
        m_table->selectRow(0);
}

bool PlannerPanel::applyPlan(int row)
{
    if (m_document && m_document->isServing())
        return m_serving->applyPlan(row);
    if (!m_document || m_stale || row < 0 || row >= int(m_result.plans.size()))
        return false;
    const engine::Plan &p = m_result.plans[std::size_t(row)];
    engine::Layout after = engine::applyPlan(m_document->layout(), p.choice);
    m_applying = true; // the document becomes the plan: the results still describe it
    m_document->undoStack()->push(new LayoutCommand(m_document,
                                                    std::move(after),
                                                    tr("Apply plan %1").arg(sizes(p.choice))));
    m_applying = false;
    return true;
}

} // namespace railyard
