#include "servingpricing.h"

#include "pricingformat.h"

#include "base/units.h"
#include "scene/style.h"
#include "serving/servingevaluate.h"
#include "step/evaluationdiff.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QResizeEvent>
#include <QStyle>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>

namespace railyard {

namespace {

// Compact rows: the dock holds every number at 1280x800 without scrolling.
constexpr int kRowH = 18;
// The comparison's rows (every number and the decode step's parts, A | B | change): tighter.
constexpr int kCompareRowH = 16;

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
    QString shortName; // in the two-column grid shown when there is nothing to compare
    QString tip;
    std::function<double(const Eval &)> value;
    std::function<QString(double)> text;
    bool higherIsBetter;
};

const std::vector<Metric> &metricList()
{
    static const std::vector<Metric> list = {
            {QObject::tr("TTFT"),
             QObject::tr("TTFT"),
             QObject::tr("Time to first token: waiting, prefill (and the KV cache's transfer "
                         "when prefill and decode are separate)"),
             [](const Eval &e) { return e.ttftS; },
             latency,
             false},
            {QObject::tr("TPOT"),
             QObject::tr("TPOT"),
             QObject::tr("Time per output token after the first: one decode step (with the "
                         "prefill chunks that share it)"),
             [](const Eval &e) { return e.tpotS; },
             latency,
             false},
            {QObject::tr("Tokens/s per user"),
             QObject::tr("Tok/s per user"),
             QObject::tr("Output tokens per second each request sees (1 / TPOT)"),
             [](const Eval &e) { return e.tokensPerSPerUser; },
             rate,
             true},
            {QObject::tr("Tokens/s per GPU"),
             QObject::tr("Tok/s per GPU"),
             QObject::tr("Output tokens per second per GPU of the deployment"),
             [](const Eval &e) { return e.outputTokensPerSPerGpu; },
             rate,
             true},
            {QObject::tr("Output tokens/s"),
             QObject::tr("Output tok/s"),
             QObject::tr("Output tokens per second, the whole cluster"),
             [](const Eval &e) { return e.outputTokensPerS; },
             rate,
             true},
            {QObject::tr("Requests/s"),
             QObject::tr("Requests/s"),
             QObject::tr("Requests served per second, the whole cluster"),
             [](const Eval &e) { return e.requestsPerS; },
             rate,
             true},
            {QObject::tr("Request latency"),
             QObject::tr("Latency"),
             QObject::tr("End to end: the first token, then every other output token"),
             [](const Eval &e) { return e.e2eLatencyS; },
             latency,
             false},
            {QObject::tr("GiB per GPU"),
             QObject::tr("GiB per GPU"),
             QObject::tr("Memory per decode GPU: weights, the KV cache of the requests in flight, "
                         "activations"),
             [](const Eval &e) { return e.memory.totalGiB(); },
             [](double v) { return number(v, 1); },
             false},
            {QObject::tr("KV cache holds"),
             QObject::tr("KV holds"),
             QObject::tr("Requests in flight one (decode) replica's KV cache holds"),
             [](const Eval &e) { return double(e.maxConcurrency); },
             [](double v) { return number(v, 0); },
             true},
            {QObject::tr("$ per M output tokens"),
             QObject::tr("$ per M tok"),
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
    , m_grid(new QTableWidget(this))
    , m_breakdownTitle(new QLabel(this))
    , m_breakdown(new QTableWidget(this))
    , m_memory(new QLabel(this))
    , m_note(new QLabel(this))
    , m_bandToggle(new QToolButton(this))
    , m_band(new QLabel(this))
{
    setObjectName(QStringLiteral("servingPricing"));
    setupTable(m_metrics);
    m_metrics->verticalHeader()->setMinimumSectionSize(kCompareRowH);
    m_metrics->verticalHeader()->setDefaultSectionSize(kCompareRowH);
    // A, B and the change as wide as their numbers (fitMetrics()); the names take what is left,
    // so a wide dock does not give it all to the change column.
    m_metrics->horizontalHeader()->setStretchLastSection(false);
    m_metrics->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_metrics->installEventFilter(this);
    // The comparison, one table of A | B | change: every number, then the decode step and the
    // parts of it that changed (where a TPOT difference comes from), in place of the grid, the
    // breakdown and the memory note (the memory note's figures are its GiB and KV rows).
    m_metrics->setColumnCount(3);
    const int metricCount = static_cast<int>(metricList().size());
    m_metrics->setRowCount(metricCount + 1 + static_cast<int>(partList().size()));
    for (int r = 0; r < m_metrics->rowCount(); ++r) {
        QString name, full, tip;
        if (r < metricCount) {
            const Metric &m = metricList()[static_cast<std::size_t>(r)];
            name = m.shortName;
            full = m.name;
            tip = m.name + QStringLiteral(": ") + m.tip;
        } else if (r == metricCount) {
            name = full = tr("Decode step");
            tip = tr("One decode step of the batch (in the slowest replica when replicas differ)");
        } else {
            full = partList()[static_cast<std::size_t>(r - metricCount - 1)].name;
            name = QStringLiteral("\u2003") + full; // indented under the decode step
            tip = tr("Decode step: %1").arg(full);
        }
        auto *header = new QTableWidgetItem(name);
        header->setData(Qt::UserRole, full);
        header->setToolTip(tip);
        header->setTextAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        m_metrics->setVerticalHeaderItem(r, header);
        for (int c = 0; c < 3; ++c)
            m_metrics->setItem(r, c, cell());
    }
    m_metrics->hide(); // until there is something to compare

    // The same numbers two to a row: name, value, name, value.
    m_grid->setObjectName(QStringLiteral("servingGrid"));
    setupTable(m_grid);
    m_grid->horizontalHeader()->hide();
    m_grid->verticalHeader()->hide();
    m_grid->setColumnCount(4);
    m_grid->setRowCount((metricCount + 1) / 2);
    for (int i = 0; i < metricCount; ++i) {
        const Metric &m = metricList()[static_cast<std::size_t>(i)];
        auto *name = new QTableWidgetItem(m.shortName);
        name->setToolTip(m.name + QStringLiteral(": ") + m.tip);
        name->setForeground(style::kTextMuted);
        m_grid->setItem(i / 2, 2 * (i % 2), name);
        m_grid->setItem(i / 2, 2 * (i % 2) + 1, cell());
    }
    m_grid->setFixedHeight(m_grid->rowCount() * kRowH + 2 * m_grid->frameWidth() + 2);

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
    m_memory->setStyleSheet(QStringLiteral("color: #5b6675; font-size: 11px;"));
    m_note->setWordWrap(true);
    m_note->setStyleSheet(QStringLiteral("color: #5b6675; font-size: 11px;"));
    // The band's basis is a paragraph few read twice: it opens on demand (the ± is in the
    // headline, the basis in its tooltip too).
    m_bandToggle->setObjectName(QStringLiteral("servingBandToggle"));
    m_bandToggle->setText(tr("Band basis"));
    m_bandToggle->setToolTip(tr("What the ± band of TPOT and TTFT rests on"));
    m_bandToggle->setCheckable(true);
    m_bandToggle->setAutoRaise(true);
    m_bandToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_bandToggle->setArrowType(Qt::RightArrow);
    m_bandToggle->setStyleSheet(QStringLiteral("font-size: 11px;"));
    m_band->setObjectName(QStringLiteral("servingBand"));
    m_band->setWordWrap(true);
    m_band->setStyleSheet(QStringLiteral("color: #5b6675; font-size: 11px;"));
    m_band->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_band->hide();
    connect(m_bandToggle, &QToolButton::toggled, this, [this](bool open) {
        m_bandToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_band->setVisible(open);
    });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addWidget(m_metrics);
    layout->addWidget(m_grid);
    layout->addWidget(m_breakdownTitle);
    layout->addWidget(m_breakdown);
    layout->addWidget(m_memory);
    layout->addWidget(m_note);
    layout->addWidget(m_bandToggle);
    layout->addWidget(m_band);
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
        if (m_metrics->verticalHeaderItem(r)->data(Qt::UserRole).toString() == name)
            return r;
    return -1;
}

QString ServingPricing::memoryText() const
{
    return m_memory->text();
}

QString ServingPricing::bandText() const
{
    return m_band->text();
}

void ServingPricing::clear()
{
    for (int r = 0; r < m_metrics->rowCount(); ++r)
        for (int c = 0; c < 3; ++c)
            m_metrics->item(r, c)->setText({});
    for (int r = 0; r < m_grid->rowCount(); ++r)
        for (int c = 1; c < 4; c += 2)
            if (QTableWidgetItem *item = m_grid->item(r, c))
                item->setText({});
    for (int r = 0; r < m_breakdown->rowCount(); ++r)
        for (int c = 0; c < 2; ++c)
            m_breakdown->item(r, c)->setText({});
    m_memory->clear();
    m_note->clear();
    m_band->clear();
}

void ServingPricing::setEvaluation(const Eval &now,
                                   const Eval *base,
                                   const QString &baseName,
                                   const QString &nowName)
{
    if (base && !base->ok)
        base = nullptr;
    m_metrics->setHorizontalHeaderLabels(
            {base ? baseName : QString(), nowName, QStringLiteral("\u0394")});
    m_metrics->horizontalHeaderItem(2)->setToolTip(
            tr("Change from %1 to %2").arg(base ? baseName : QString(), nowName));
    m_metrics->setColumnHidden(0, base == nullptr);
    m_metrics->setColumnHidden(2, base == nullptr);
    // Nothing to compare: the numbers two to a row (the rows would not fit a 1280x800 dock).
    m_metrics->setVisible(base != nullptr);
    m_grid->setVisible(base == nullptr);
    // One row: now, and A with the change when comparing.
    const auto setRow = [this, base](int r,
                                     double v,
                                     double b,
                                     const std::function<QString(double)> &text,
                                     bool higherIsBetter) {
        m_metrics->item(r, 1)->setText(text(v));
        m_metrics->item(r, 1)->setToolTip(number(v, v < 100 ? 4 : 0));
        if (!base)
            return;
        m_metrics->item(r, 0)->setText(text(b));
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
        m_metrics->item(r, 2)->setForeground(changeColour(b, v, higherIsBetter));
    };
    const auto &list = metricList();
    const int metricCount = static_cast<int>(list.size());
    for (int r = 0; r < metricCount; ++r) {
        const Metric &m = list[static_cast<std::size_t>(r)];
        setRow(r, m.value(now), base ? m.value(*base) : 0.0, m.text, m.higherIsBetter);
    }
    // The decode step and its parts, when comparing: a part neither spends time on takes no row.
    const auto stepTime = [](double v) { return v > 0 ? latency(v) : QStringLiteral("\u2014"); };
    setRow(metricCount, now.decode.sum(), base ? base->decode.sum() : 0.0, stepTime, false);
    m_metrics->setRowHidden(metricCount, base == nullptr);
    for (std::size_t i = 0; i < partList().size(); ++i) {
        const int r = metricCount + 1 + static_cast<int>(i);
        const double v = now.decode.*partList()[i].member;
        const double b = base ? base->decode.*partList()[i].member : 0.0;
        setRow(r, v, b, stepTime, false);
        m_metrics->setRowHidden(r, base == nullptr || (v <= 0 && b <= 0));
    }
    // The band on the latencies' rows, where the question comes up.
    const auto band = [](const engine::ServingBand &b) {
        return tr("band %1 to %2 (\u00b1%3%)")
                .arg(latency(b.lowS), latency(b.highS))
                .arg(qRound(100 * b.fraction));
    };
    m_metrics->item(0, 1)->setToolTip(band(now.ttftBand));
    m_metrics->item(1, 1)->setToolTip(band(now.tpotBand));
    for (int i = 0; i < metricCount; ++i) {
        QTableWidgetItem *item = m_grid->item(i / 2, 2 * (i % 2) + 1);
        item->setText(m_metrics->item(i, 1)->text());
        item->setToolTip(m_metrics->item(i, 1)->toolTip());
    }
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
    // The phases' totals head their columns: the title keeps to one line.
    m_breakdown->horizontalHeaderItem(0)->setText(tr("Decode %1").arg(latency(now.decode.sum())));
    m_breakdown->horizontalHeaderItem(1)->setText(tr("Prefill %1").arg(latency(now.prefill.sum())));
    // Replicas at different speeds (a fault): the breakdown is the slowest one's.
    m_breakdownTitle->setText((now.replicaClasses.empty()
                                       ? tr("<b>Where the time goes</b>, a batch of %1")
                                       : tr("<b>Where the time goes</b> in the slowest replica, "
                                            "a batch of %1"))
                                      .arg(number(now.decodeBatch, now.decodeBatch < 10 ? 1 : 0)));
    m_breakdownTitle->setToolTip(tr("One decode step of %1 requests in flight, %2; one "
                                    "request's prefill, %3")
                                         .arg(number(now.decodeBatch, now.decodeBatch < 10 ? 1 : 0),
                                              latency(now.decode.sum()),
                                              latency(now.prefill.sum())));
    m_breakdownTitle->setWordWrap(true);

    const engine::ServingMemoryUse &mem = now.memory;
    QString memory = tr("%1: weights %2 GiB, KV cache %3 (pool %4), activations %5, of %6 GiB "
                        "HBM; holds %7 requests per replica, %8 in flight.")
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
        memory += tr(" Per prefill GPU: weights %1, KV cache %2, activations %3 GiB.")
                          .arg(number(p.weightsGiB, 1),
                               number(p.kvCacheGiB, 1),
                               number(p.activationsGiB, 1));
    }
    m_memory->setText(memory);
    // Comparing, the table's GiB and KV rows stand for the note, which their tooltips hold.
    m_memory->setVisible(base == nullptr);
    m_breakdownTitle->setVisible(base == nullptr);
    m_breakdown->setVisible(base == nullptr);
    for (int r = 0; r < metricCount; ++r)
        if (list[static_cast<std::size_t>(r)].name == tr("GiB per GPU")
            || list[static_cast<std::size_t>(r)].name == tr("KV cache holds"))
            m_metrics->verticalHeaderItem(r)->setToolTip(memory);
    QStringList methods;
    if (!now.tpMethod.empty())
        methods << tr("TP all-reduce: %1").arg(QString::fromStdString(now.tpMethod));
    if (!now.epMethod.empty())
        methods << tr("MoE dispatch: %1").arg(QString::fromStdString(now.epMethod));
    m_note->setText(methods.join(QStringLiteral(" \u00b7 ")));
    // Comparing, the methods are the decode step row's tooltip: the table keeps the dock's height.
    m_note->setVisible(!methods.isEmpty() && base == nullptr);
    m_metrics->verticalHeaderItem(metricCount)
            ->setToolTip(tr("One decode step of the batch (in the slowest replica when replicas "
                            "differ)")
                         + (methods.isEmpty()
                                    ? QString()
                                    : QStringLiteral("\n") + methods.join(QStringLiteral("\n"))));
    m_band->setText(QString::fromStdString(now.bandBasis));
    m_bandToggle->setText(tr("Band \u00b1%1%: its basis").arg(qRound(100 * now.tpotBand.fraction)));
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
    // As tall as its rows shown: all of them, always (the dock scrolls rather than cut it).
    int rows = 0;
    for (int r = 0; r < m_metrics->rowCount(); ++r)
        rows += m_metrics->isRowHidden(r) ? 0 : 1;
    m_metrics->setFixedHeight(m_metrics->horizontalHeader()->sizeHint().height()
                              + rows * kCompareRowH + 2 * m_metrics->frameWidth() + 2);
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
        m_metrics->setColumnWidth(c, w);
        contentW += w;
    }
    m_metrics->setMinimumWidth(contentW);
    stretchMetricNames(m_metrics->width());
    // The grid likewise: each column as wide as its widest name or number.
    int gridW = 2 * m_grid->frameWidth();
    for (int c = 0; c < m_grid->columnCount(); ++c) {
        int w = 0;
        for (int r = 0; r < m_grid->rowCount(); ++r)
            if (const QTableWidgetItem *item = m_grid->item(r, c))
                w = std::max(w, m_grid->fontMetrics().horizontalAdvance(item->text()) + cellMargin);
        gridW += w;
    }
    m_grid->setMinimumWidth(gridW);
}

bool ServingPricing::eventFilter(QObject *watched, QEvent *event)
{
    // Before the table lays itself out at its new width.
    if (watched == m_metrics && event->type() == QEvent::Resize)
        stretchMetricNames(static_cast<QResizeEvent *>(event)->size().width());
    return QWidget::eventFilter(watched, event);
}

void ServingPricing::stretchMetricNames(int tableWidth)
{
    int columns = 0;
    for (int c = 0; c < m_metrics->columnCount(); ++c)
        if (!m_metrics->isColumnHidden(c))
            columns += m_metrics->columnWidth(c);
    QHeaderView *names = m_metrics->verticalHeader();
    const int left = tableWidth - 2 * m_metrics->frameWidth() - columns;
    const int width = std::max(names->sizeHint().width(), left);
    if (names->minimumWidth() == width)
        return;
    names->setMinimumWidth(width);
    m_metrics->doItemsLayout();
}

} // namespace railyard
