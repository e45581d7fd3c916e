#include "servingpricing.h"

#include "pricingformat.h"

#include "base/units.h"
#include "scene/style.h"
#include "serving/servingevaluate.h"
#include "step/evaluationdiff.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QStyle>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <functional>

namespace railyard {

namespace {

constexpr int kRowH = 20;

using Eval = engine::ServingEvaluation;

// Serving latencies are milliseconds: "12.4 ms", "1.92 s".
QString latency(double s)
{
    return pricingformat::seconds(s);
}

using pricingformat::number;

QString rate(double v)
{
    return pricingformat::compact(v, v < 10 ? 2 : (v < 100 ? 1 : 0));
}

QString money(double v)
{
    if (v <= 0)
        return QStringLiteral("\u2014");
    return QStringLiteral("$") + QLocale().toString(v, 'f', v < 10 ? 2 : 0);
}

struct Metric
{
    QString name;
    QString tip;
    std::function<double(const Eval &)> value;
    std::function<QString(double)> text;
    bool higherIsBetter;
};

const std::vector<Metric> &metricList()
{
    static const std::vector<Metric> list = {
            {QObject::tr("TTFT"),
             QObject::tr("Time to first token: waiting, prefill (and the KV cache's transfer "
                         "when prefill and decode are separate)"),
             [](const Eval &e) { return e.ttftS; },
             latency,
             false},
            {QObject::tr("TPOT"),
             QObject::tr("Time per output token after the first: one decode step (with the "
                         "prefill chunks that share it)"),
             [](const Eval &e) { return e.tpotS; },
             latency,
             false},
            {QObject::tr("Tokens/s per user"),
             QObject::tr("Output tokens per second each request sees (1 / TPOT)"),
             [](const Eval &e) { return e.tokensPerSPerUser; },
             rate,
             true},
            {QObject::tr("Tokens/s per GPU"),
             QObject::tr("Output tokens per second per GPU of the deployment"),
             [](const Eval &e) { return e.outputTokensPerSPerGpu; },
             rate,
             true},
            {QObject::tr("Output tokens/s"),
             QObject::tr("Output tokens per second, the whole cluster"),
             [](const Eval &e) { return e.outputTokensPerS; },
             rate,
             true},
            {QObject::tr("Requests/s"),
             QObject::tr("Requests served per second, the whole cluster"),
             [](const Eval &e) { return e.requestsPerS; },
             rate,
             true},
            {QObject::tr("Request latency"),
             QObject::tr("End to end: the first token, then every other output token"),
             [](const Eval &e) { return e.e2eLatencyS; },
             latency,
             false},
            {QObject::tr("GiB per GPU"),
             QObject::tr("Memory per decode GPU: weights, the KV cache of the requests in flight, "
                         "activations"),
             [](const Eval &e) { return e.memory.totalGiB(); },
             [](double v) { return number(v, 1); },
             false},
            {QObject::tr("KV cache holds"),
             QObject::tr("Requests in flight one (decode) replica's KV cache holds"),
             [](const Eval &e) { return double(e.maxConcurrency); },
             [](double v) { return number(v, 0); },
             true},
            {QObject::tr("$ per M output tokens"),
             QObject::tr("Dollars per million output tokens at the cluster's price per GPU-hour"),
             [](const Eval &e) { return e.costPerMillionOutputTokens; },
             money,
             false},
    };
    return list;
}

QColor changeColour(double before, double after, bool higherIsBetter)
{
    if (before <= 0 || std::abs(after - before) <= 0.0005 * std::abs(before))
        return style::kTextMuted;
    const bool better = (after > before) == higherIsBetter;
    return better ? QColor(0x04, 0x7a, 0x55) : QColor(0xc0, 0x1f, 0x1f);
}

struct Part
{
    QString name;
    double engine::ServingBreakdown::*member;
};

const std::vector<Part> &partList()
{
    static const std::vector<Part> list = {
            {QObject::tr("Compute"), &engine::ServingBreakdown::compute},
            {QObject::tr("Weights read"), &engine::ServingBreakdown::weightsRead},
            {QObject::tr("Attention"), &engine::ServingBreakdown::attention},
            {QObject::tr("TP all-reduce"), &engine::ServingBreakdown::tp},
            {QObject::tr("EP dispatch"), &engine::ServingBreakdown::ep},
            {QObject::tr("PP sends"), &engine::ServingBreakdown::pp},
            {QObject::tr("KV transfer"), &engine::ServingBreakdown::kvTransfer},
            {QObject::tr("Overhead"), &engine::ServingBreakdown::overhead},
    };
    return list;
}

QTableWidgetItem *cell(const QString &text = {})
{
    auto *item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

void setupTable(QTableWidget *t)
{
    t->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    t->verticalHeader()->setDefaultSectionSize(kRowH);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionMode(QAbstractItemView::NoSelection);
    t->setFocusPolicy(Qt::NoFocus);
    t->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    t->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
}

} // namespace

ServingPricing::ServingPricing(QWidget *parent)
    : QWidget(parent)
    , m_metrics(new QTableWidget(this))
    , m_breakdownTitle(new QLabel(this))
    , m_breakdown(new QTableWidget(this))
    , m_memory(new QLabel(this))
    , m_note(new QLabel(this))
{
    setObjectName(QStringLiteral("servingPricing"));
    setupTable(m_metrics);
    m_metrics->setColumnCount(3);
    m_metrics->setRowCount(static_cast<int>(metricList().size()));
    for (int r = 0; r < m_metrics->rowCount(); ++r) {
        const Metric &m = metricList()[static_cast<std::size_t>(r)];
        auto *header = new QTableWidgetItem(m.name);
        header->setToolTip(m.tip);
        m_metrics->setVerticalHeaderItem(r, header);
        for (int c = 0; c < 3; ++c)
            m_metrics->setItem(r, c, cell());
    }
    // All its rows, always: the dock scrolls rather than cutting the table.
    m_metrics->setFixedHeight(m_metrics->horizontalHeader()->sizeHint().height()
                              + m_metrics->rowCount() * kRowH + 2 * m_metrics->frameWidth() + 2);

    m_breakdownTitle->setText(tr("<b>Where the time goes</b>"));
    setupTable(m_breakdown);
    m_breakdown->setColumnCount(2);
    m_breakdown->setHorizontalHeaderLabels({tr("Decode step"), tr("Prefill")});
    m_breakdown->horizontalHeaderItem(0)->setToolTip(
            tr("One decode step of the batch: every request in flight gets a token"));
    m_breakdown->horizontalHeaderItem(1)->setToolTip(
            tr("One request's prefill over its input tokens (with its KV transfer when "
               "disaggregated)"));
    m_breakdown->setRowCount(static_cast<int>(partList().size()));
    for (int r = 0; r < m_breakdown->rowCount(); ++r) {
        m_breakdown->setVerticalHeaderItem(r,
                                           new QTableWidgetItem(
                                                   partList()[static_cast<std::size_t>(r)].name));
        for (int c = 0; c < 2; ++c)
            m_breakdown->setItem(r, c, cell());
    }
    fitBreakdown();

    m_memory->setObjectName(QStringLiteral("servingMemory"));
    m_memory->setWordWrap(true);
    m_memory->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_note->setWordWrap(true);
    m_note->setStyleSheet(QStringLiteral("color: #5b6675; font-size: 11px;"));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_metrics);
    layout->addWidget(m_breakdownTitle);
    layout->addWidget(m_breakdown);
    layout->addWidget(m_memory);
    layout->addWidget(m_note);
}

QString ServingPricing::headline(const Eval &now)
{
    return tr("TPOT %1 \u00b1%2%").arg(latency(now.tpotS)).arg(qRound(100 * now.tpotBand.fraction));
}

QString ServingPricing::changeText(const Eval &base, const Eval &now)
{
    return QString::fromStdString(
            engine::describeChange(base.tpotS, now.tpotS, "time per output token"));
}

int ServingPricing::metricRow(const QString &name) const
{
    for (int r = 0; r < m_metrics->rowCount(); ++r)
        if (m_metrics->verticalHeaderItem(r)->text() == name)
            return r;
    return -1;
}

QString ServingPricing::memoryText() const
{
    return m_memory->text();
}

void ServingPricing::clear()
{
    for (int r = 0; r < m_metrics->rowCount(); ++r)
        for (int c = 0; c < 3; ++c)
            m_metrics->item(r, c)->setText({});
    for (int r = 0; r < m_breakdown->rowCount(); ++r)
        for (int c = 0; c < 2; ++c)
            m_breakdown->item(r, c)->setText({});
    m_memory->clear();
    m_note->clear();
}

void ServingPricing::setEvaluation(const Eval &now,
                                   const Eval *base,
                                   const QString &baseName,
                                   const QString &nowName)
{
    if (base && !base->ok)
        base = nullptr;
    m_metrics->setHorizontalHeaderLabels({base ? baseName : QString(), nowName, tr("Change")});
    m_metrics->setColumnHidden(0, base == nullptr);
    m_metrics->setColumnHidden(2, base == nullptr);
    const auto &list = metricList();
    for (int r = 0; r < static_cast<int>(list.size()); ++r) {
        const Metric &m = list[static_cast<std::size_t>(r)];
        const double v = m.value(now);
        m_metrics->item(r, 1)->setText(m.text(v));
        m_metrics->item(r, 1)->setToolTip(number(v, v < 100 ? 4 : 0));
        if (!base)
            continue;
        const double b = m.value(*base);
        m_metrics->item(r, 0)->setText(m.text(b));
        m_metrics->item(r, 0)->setToolTip(number(b, b < 100 ? 4 : 0));
        QString delta;
        if (b > 0) {
            const double rel = (v - b) / b;
            delta = std::abs(rel) < 0.0005
                            ? tr("same")
                            : QStringLiteral("%1%2%")
                                      .arg(rel > 0 ? QStringLiteral("+") : QString())
                                      .arg(number(100 * rel, std::abs(rel) < 0.1 ? 1 : 0));
        }
        m_metrics->item(r, 2)->setText(delta);
        m_metrics->item(r, 2)->setForeground(changeColour(b, v, m.higherIsBetter));
    }
    // The band on the latencies' rows, where the question comes up.
    const auto band = [](const engine::ServingBand &b) {
        return tr("band %1 to %2 (\u00b1%3%)")
                .arg(latency(b.lowS), latency(b.highS))
                .arg(qRound(100 * b.fraction));
    };
    m_metrics->item(0, 1)->setToolTip(band(now.ttftBand));
    m_metrics->item(1, 1)->setToolTip(band(now.tpotBand));
    fitMetrics();

    const auto &parts = partList();
    for (int r = 0; r < static_cast<int>(parts.size()); ++r) {
        const double d = now.decode.*parts[static_cast<std::size_t>(r)].member;
        const double p = now.prefill.*parts[static_cast<std::size_t>(r)].member;
        m_breakdown->item(r, 0)->setText(d > 0 ? latency(d) : QStringLiteral("\u2014"));
        m_breakdown->item(r, 1)->setText(p > 0 ? latency(p) : QStringLiteral("\u2014"));
        // A part neither phase spends time on (PP without pipelining, KV transfer when
        // aggregated) takes no row: the rows below stay in a 1280x800 window's dock.
        m_breakdown->setRowHidden(r, d <= 0 && p <= 0);
    }
    fitBreakdown();
    m_breakdownTitle->setText(
            tr("<b>Where the time goes</b>: a decode step of %1 requests, %2; a prefill, %3")
                    .arg(number(now.decodeBatch, now.decodeBatch < 10 ? 1 : 0),
                         latency(now.decode.sum()),
                         latency(now.prefill.sum())));
    m_breakdownTitle->setWordWrap(true);

    const engine::ServingMemoryUse &mem = now.memory;
    QString memory = tr("%1: weights %2 GiB, KV cache %3 GiB (of a %4 GiB pool), activations "
                        "%5 GiB, of %6 GiB HBM. The KV cache holds %7 requests per replica; %8 "
                        "are in flight.")
                             .arg(now.disaggregated ? tr("Per decode GPU") : tr("Per GPU"))
                             .arg(number(mem.weightsGiB, 1),
                                  number(mem.kvCacheGiB, 1),
                                  number(mem.kvPoolGiB, 1),
                                  number(mem.activationsGiB, 1),
                                  number(mem.hbmGiB, 0))
                             .arg(now.maxConcurrency)
                             .arg(number(now.concurrency, now.concurrency < 10 ? 1 : 0));
    if (now.disaggregated) {
        const engine::ServingMemoryUse &p = now.prefillMemory;
        memory += tr(" Per prefill GPU: weights %1 GiB, KV cache %2 GiB, activations %3 GiB.")
                          .arg(number(p.weightsGiB, 1),
                               number(p.kvCacheGiB, 1),
                               number(p.activationsGiB, 1));
    }
    m_memory->setText(memory);
    QStringList methods;
    if (!now.tpMethod.empty())
        methods << tr("TP all-reduce: %1").arg(QString::fromStdString(now.tpMethod));
    if (!now.epMethod.empty())
        methods << tr("MoE dispatch: %1").arg(QString::fromStdString(now.epMethod));
    m_note->setText(methods.join(QStringLiteral(" \u00b7 "))
                    + (methods.isEmpty() ? QString() : QStringLiteral(". "))
                    + tr("Band: %1").arg(QString::fromStdString(now.bandBasis)));
}

void ServingPricing::fitBreakdown()
{
    int rows = 0;
    for (int r = 0; r < m_breakdown->rowCount(); ++r)
        rows += m_breakdown->isRowHidden(r) ? 0 : 1;
    m_breakdown->setFixedHeight(m_breakdown->horizontalHeader()->sizeHint().height() + rows * kRowH
                                + 2 * m_breakdown->frameWidth() + 2);
}

void ServingPricing::fitMetrics()
{
    // As wide as its numbers: squeezed, the table cuts them in a narrow dock.
    const int cellMargin = 2 * (m_metrics->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1)
                           + 2;
    int contentW = m_metrics->verticalHeader()->sizeHint().width() + 2 * m_metrics->frameWidth();
    for (int c = 0; c < m_metrics->columnCount(); ++c) {
        if (m_metrics->isColumnHidden(c))
            continue;
        int w = m_metrics->horizontalHeader()->sectionSizeHint(c);
        for (int r = 0; r < m_metrics->rowCount(); ++r)
            w = std::max(w,
                         m_metrics->fontMetrics().horizontalAdvance(m_metrics->item(r, c)->text())
                                 + cellMargin);
        contentW += w;
    }
    m_metrics->setMinimumWidth(contentW);
}

} // namespace railyard
