#include "servingplanner.h"

#include "base/units.h"
#include "commands/layoutcommand.h"
#include "document/document.h"
#include "planner/servingplanapply.h"
#include "resulttable.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QTableWidget>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace railyard {

namespace {

enum Column { Rank, Config, PerUser, PerGpu, Ttft, Tpot, Columns };

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

QString poolText(const engine::ServingPool &p)
{
    QString s = QStringLiteral("TP%1").arg(p.tp);
    if (p.ep > 1)
        s += QStringLiteral(" EP%1").arg(p.ep);
    if (p.pp > 1)
        s += QStringLiteral(" PP%1").arg(p.pp);
    if (p.attentionDp.value_or(1) > 1)
        s += QStringLiteral(" ADP%1").arg(*p.attentionDp);
    return s + QStringLiteral(" \u00d7%1").arg(p.replicas);
}

QDoubleSpinBox *limitBox(QWidget *parent, const QString &tip)
{
    auto *b = new QDoubleSpinBox(parent);
    b->setRange(0, 1e6);
    b->setDecimals(1);
    b->setSuffix(QObject::tr(" ms"));
    b->setSpecialValueText(QObject::tr("none"));
    b->setToolTip(tip);
    b->setKeyboardTracking(false);
    return b;
}

} // namespace

QString ServingPlanner::configText(const engine::ServingPlanPoint &p)
{
    const QString pools = p.disaggregated ? tr("prefill %1, decode %2")
                                                    .arg(poolText(p.prefill), poolText(p.decode))
                                          : poolText(p.serving);
    return tr("%1 \u00b7 %2 in flight").arg(pools).arg(p.concurrency);
}

ServingPlanner::ServingPlanner(QWidget *parent)
    : QWidget(parent)
    , m_ttft(limitBox(this, tr("Drop configurations slower to the first token (none: no limit)")))
    , m_tpot(limitBox(this, tr("Drop configurations slower per output token (none: no limit)")))
    , m_disaggregation(new QCheckBox(tr("Also split prefill and decode"), this))
    , m_search(new QPushButton(tr("&Search"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_apply(new QPushButton(tr("&Apply"), this))
    , m_progress(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_table(new QTableWidget(0, Columns, this))
    , m_chart(new QChart)
    , m_frontLine(new QLineSeries)
    , m_front(new QScatterSeries)
    , m_chosen(new QScatterSeries)
    , m_now(new QScatterSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
{
    setObjectName(QStringLiteral("servingPlanner"));
    m_disaggregation->setChecked(true);
    m_disaggregation->setToolTip(tr("Search separate prefill and decode pools too"));
    m_search->setToolTip(tr("Price every TP, EP, PP, replicas, attention DP, prefill/decode "
                            "split and concurrency of this model on this cluster"));
    m_apply->setToolTip(tr("Set the document's pools and concurrency to the selected "
                           "configuration (Edit > Undo takes it back)"));
    m_cancel->setToolTip(tr("Stop the search (the front found before stays)"));
    m_status->setWordWrap(true);
    m_status->setText(tr("Search finds the configurations no other beats on both output "
                         "tokens/s per GPU and tokens/s per user."));

    m_table->setHorizontalHeaderLabels({tr("#"),
                                        tr("Configuration"),
                                        tr("tok/s/user"),
                                        tr("tok/s/GPU"),
                                        tr("TTFT"),
                                        tr("TPOT")});
    m_table->horizontalHeaderItem(PerUser)->setToolTip(tr("Output tokens/s each request sees"));
    m_table->horizontalHeaderItem(PerGpu)->setToolTip(tr("Output tokens/s per GPU"));
    setUpResultTable(m_table, Config);

    const QColor blue(0x2563eb), red(0xdc2626), green(0x047a55);
    m_frontLine->setPen(QPen(blue, 1.5));
    m_front->setColor(blue);
    m_front->setBorderColor(blue);
    m_front->setMarkerSize(7);
    m_chosen->setColor(Qt::transparent);
    m_chosen->setPen(QPen(red, 2));
    m_chosen->setMarkerSize(15);
    m_now->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_now->setColor(green);
    m_now->setBorderColor(green);
    m_now->setMarkerSize(9);
    for (QAbstractSeries *s :
         std::initializer_list<QAbstractSeries *>{m_frontLine, m_front, m_now, m_chosen})
        m_chart->addSeries(s);
    m_x->setTitleText(tr("tokens/s per user"));
    m_y->setTitleText(tr("output tokens/s per GPU"));
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_chart->legend()->hide();
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing, true);
    m_view->setMinimumHeight(200);
    auto *key = new QLabel(this);
    key->setWordWrap(true);
    key->setTextFormat(Qt::RichText);
    const auto swatch = [](const QColor &c, const QString &glyph, const QString &name) {
        return QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3")
                .arg(c.name(), glyph, name.toHtmlEscaped());
    };
    key->setText(QStringList{swatch(blue, QStringLiteral("\u25cf\u2014"), tr("Pareto front")),
                             swatch(red, QStringLiteral("\u25ef"), tr("chosen")),
                             swatch(green, QStringLiteral("\u25a0"), tr("the layout now"))}
                         .join(QStringLiteral(" &nbsp; ")));

    auto *form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->addRow(tr("TTFT at most"), m_ttft);
    form->addRow(tr("TPOT at most"), m_tpot);
    form->addRow(m_disaggregation);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    layout->addLayout(searchButtonRow(m_search, m_cancel, m_apply, m_progress));
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 2);
    layout->addWidget(m_view, 1);
    layout->addWidget(key);

    connect(m_search, &QPushButton::clicked, this, &ServingPlanner::search);
    connect(m_cancel, &QPushButton::clicked, this, &ServingPlanner::cancel);
    connectResultChoice(
            m_table,
            m_apply,
            this,
            [this](int row) { applyPlan(row); },
            [this](int row) { showChosen(row); },
            [this] { return m_stale; });
}

ServingPlanner::~ServingPlanner() = default;

void ServingPlanner::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    // A search still running was for the document before: it stops, its result is dropped.
    m_worker.cancel();
    searchEnded();
    m_result = {};
    m_stale = false;
    showResult();
    if (!document)
        return;
    connect(document, &Document::workloadChanged, this, &ServingPlanner::markStale);
    connect(document, &Document::clusterChanged, this, &ServingPlanner::markStale);
    connect(document, &Document::evaluationChanged, this, [this] {
        showChosen(m_table->selectionModel()->selectedRows().isEmpty()
                           ? -1
                           : m_table->selectionModel()->selectedRows().first().row());
    });
}

void ServingPlanner::markStale()
{
    if (m_result.front.empty() || m_stale || m_applying)
        return;
    m_stale = true;
    m_apply->setEnabled(false);
    m_status->setText(m_status->text() + QLatin1Char('\n')
                      + tr("The document changed since: search again to plan it as it is."));
}

void ServingPlanner::search()
{
    if (!m_document || !m_document->isServing())
        return;
    engine::ServingPlanOptions options;
    if (m_ttft->value() > 0)
        options.ttftLimitS = m_ttft->value() / 1e3;
    if (m_tpot->value() > 0)
        options.tpotLimitS = m_tpot->value() / 1e3;
    options.disaggregation = m_disaggregation->isChecked();
    if (m_worker.isRunning())
        return;
    auto layout = std::make_shared<engine::Layout>(m_document->layout());
    auto topology = std::make_shared<engine::Topology>(m_document->topology());
    QPointer<ServingPlanner> self(this);
    m_worker.start(
            this,
            [self, layout, topology, options](const std::atomic<bool> &cancel,
                                              const SearchWorker::Post &post) mutable {
                options.cancel = &cancel;
                options.progress = [self, post](const engine::ServingPlanProgress &p) {
                    post([self, p] {
                        self->m_progress->setValue(int(p.fraction * 1000));
                        self->m_status->setText(
                                tr("Priced %1 configurations in %2\u2026")
                                        .arg(QLocale().toString(p.evaluated), seconds(p.elapsedS)));
                    });
                };
                return engine::planServing(*layout, *topology, options);
            },
            [self](engine::ServingPlanResult result) { self->finished(std::move(result)); });
    m_search->setEnabled(false);
    m_apply->setEnabled(false);
    m_cancel->show();
    m_progress->setValue(0);
    m_progress->show();
    m_status->setText(tr("Searching\u2026"));
}

void ServingPlanner::cancel()
{
    if (!m_worker.cancel()) // the search checks the flag before every configuration
        return;
    searchEnded();
    m_status->setText(tr("Search cancelled."));
    // The front found before still stands (unless the document changed since).
    const auto rows = m_table->selectionModel()->selectedRows();
    m_apply->setEnabled(!rows.isEmpty() && !m_stale);
}

void ServingPlanner::searchEnded()
{
    m_search->setEnabled(true);
    m_cancel->hide();
    m_progress->hide();
}

void ServingPlanner::finished(engine::ServingPlanResult result)
{
    searchEnded();
    m_result = std::move(result);
    m_stale = false;
    showResult();
    Q_EMIT searchFinished();
}

void ServingPlanner::showResult()
{
    const engine::ServingPlanResult &r = m_result;
    m_table->setRowCount(0);
    m_apply->setEnabled(false);
    m_frontLine->clear();
    m_front->clear();
    m_chosen->clear();
    if (!r.ok) {
        if (!r.error.empty())
            m_status->setText(tr("Cannot plan: %1").arg(QString::fromStdString(r.error)));
        showChosen(-1);
        return;
    }
    QString text = tr("Priced %1 configurations in %2: %3 do not fit, %4 past the limits; %5 on "
                      "the front.")
                           .arg(QLocale().toString(r.evaluated),
                                seconds(r.elapsedS),
                                QLocale().toString(r.infeasible),
                                QLocale().toString(r.overLimits))
                           .arg(r.front.size());
    if (r.front.empty())
        text += QLatin1Char('\n')
                + (r.overLimits > 0 ? tr("No configuration meets the limits.")
                                    : tr("No configuration fits."));
    m_status->setText(text);
    m_table->setRowCount(int(r.front.size()));
    for (int row = 0; row < int(r.front.size()); ++row) {
        const engine::ServingPlanPoint &p = r.front[std::size_t(row)];
        const QString cells[Columns] = {QString::number(row + 1),
                                        configText(p),
                                        QLocale().toString(p.tokensPerSPerUser, 'f', 1),
                                        QLocale().toString(p.outputTokensPerSPerGpu, 'f', 0),
                                        seconds(p.ttftS),
                                        seconds(p.tpotS)};
        for (int c = 0; c < Columns; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            if (c != Config)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            item->setToolTip(tr("%1\n%2 GPUs, %3 GiB per GPU, the KV cache holds %4")
                                     .arg(configText(p))
                                     .arg(p.gpus)
                                     .arg(p.memoryGiBPerGpu, 0, 'f', 1)
                                     .arg(p.maxConcurrency));
            m_table->setItem(row, c, item);
        }
        m_frontLine->append(p.tokensPerSPerUser, p.outputTokensPerSPerGpu);
        m_front->append(p.tokensPerSPerUser, p.outputTokensPerSPerGpu);
    }
    showChosen(-1);
    if (!r.front.empty())
        m_table->selectRow(0);
}

void ServingPlanner::showChosen(int row)
{
    m_chosen->clear();
    m_now->clear();
    double xMax = 0, yMax = 0;
    for (const engine::ServingPlanPoint &p : m_result.front) {
        xMax = std::max(xMax, p.tokensPerSPerUser);
        yMax = std::max(yMax, p.outputTokensPerSPerGpu);
    }
    if (row >= 0 && row < int(m_result.front.size())) {
        const engine::ServingPlanPoint &p = m_result.front[std::size_t(row)];
        m_chosen->append(p.tokensPerSPerUser, p.outputTokensPerSPerGpu);
    }
    if (const engine::ServingEvaluation *e = m_document ? m_document->servingEvaluation() : nullptr;
        e && e->ok) {
        m_now->append(e->tokensPerSPerUser, e->outputTokensPerSPerGpu);
        xMax = std::max(xMax, e->tokensPerSPerUser);
        yMax = std::max(yMax, e->outputTokensPerSPerGpu);
    }
    m_x->setRange(0, xMax > 0 ? 1.08 * xMax : 1);
    m_y->setRange(0, yMax > 0 ? 1.08 * yMax : 1);
}

bool ServingPlanner::applyPlan(int row)
{
    if (!m_document || m_stale || row < 0 || row >= int(m_result.front.size()))
        return false;
    const engine::ServingPlanPoint &p = m_result.front[std::size_t(row)];
    engine::Layout after = engine::applyServingPlan(m_document->layout(), p);
    if (after.sameContent(m_document->layout()))
        return true;
    const QString problem = Document::checkLayout(after);
    if (!problem.isEmpty()) {
        m_status->setText(tr("Cannot apply: %1").arg(problem));
        return false;
    }
    m_applying = true; // the document becomes the plan: the front still describes it
    m_document->undoStack()->push(
            new LayoutCommand(m_document, std::move(after), tr("Apply %1").arg(configText(p))));
    m_applying = false;
    return true;
}

} // namespace railyard
