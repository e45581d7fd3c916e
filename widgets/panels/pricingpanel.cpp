#include "pricingpanel.h"

#include "base/units.h"
#include "charts/memorychart.h"
#include "charts/stepchart.h"
#include "commands/restoresnapshot.h"
#include "document/document.h"
#include "pricingformat.h"
#include "scene/style.h"
#include "servingpricing.h"
#include "step/evaluationdiff.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QStyle>
#include <QTableWidget>
#include <QTreeWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>

namespace railyard {

namespace {

constexpr int kRowH = 20;

using pricingformat::number;
using pricingformat::seconds;
// Large counts in three figures: the exact number is in the cell's tip.
QString compact(double v)
{
    return pricingformat::compact(v);
}

QString money(double v)
{
    if (v <= 0)
        return QStringLiteral("\u2014");
    return QStringLiteral("$") + QLocale().toString(v, 'f', v < 10 ? 2 : 0);
}

// A utilization (MFU) as the table shows it: 88.2%.
QString utilizationText(double v)
{
    return number(100 * v, 1) + QStringLiteral("%");
}

// A metric, how to show it and whether more is better.
// The names are short, so A, B and the change fit a narrow dock beside them; the tip says it
// in full.
struct Metric
{
    QString name;
    QString tip;
    std::function<double(const engine::Evaluation &)> value;
    std::function<QString(double)> text;
    bool higherIsBetter;
    bool hiddenWhenZero = false; // a row only some layouts have (hidden where A and B are 0)
};

const std::vector<Metric> &metricList()
{
    static const std::vector<Metric> list = {
            {QObject::tr("Step time"),
             QObject::tr("Seconds per training step"),
             [](const engine::Evaluation &e) { return e.stepTimeS; },
             seconds,
             false},
            {QObject::tr("Tokens/s"),
             QObject::tr("Tokens trained per second, the whole job"),
             [](const engine::Evaluation &e) { return e.tokensPerS; },
             compact,
             true},
            {QObject::tr("Tokens/s per GPU"),
             QObject::tr("Tokens trained per second per GPU"),
             [](const engine::Evaluation &e) { return e.tokensPerSPerGpu; },
             [](double v) { return number(v, v < 100 ? 1 : 0); },
             true},
            {QObject::tr("MFU"),
             QObject::tr("Model FLOPs utilization"),
             [](const engine::Evaluation &e) { return e.mfu; },
             utilizationText,
             true},
            {QObject::tr("MFU, FP8 peak"),
             QObject::tr("FP8 runs: the same FLOPs against the dense FP8 peak (MFU above is "
                         "against the BF16 peak, as Llama 3 and NVIDIA report it, and can pass "
                         "100% in FP8)"),
             [](const engine::Evaluation &e) { return e.mfuOfFp8Peak; },
             [](double v) { return v > 0 ? utilizationText(v) : QStringLiteral("\u2014"); },
             true,
             true},
            {QObject::tr("TFLOP/s per GPU"),
             QObject::tr("Model TFLOP/s per GPU (the model's FLOPs, not recomputation)"),
             [](const engine::Evaluation &e) { return e.modelTflopsPerGpu; },
             [](double v) { return number(v, 0); },
             true},
            {QObject::tr("GiB per GPU"),
             QObject::tr("Memory per GPU in GiB, the most loaded pipeline stage"),
             [](const engine::Evaluation &e) { return e.memory.totalGiB(); },
             [](double v) { return number(v, 1); },
             false},
            {QObject::tr("$ per step"),
             QObject::tr("Dollars per step at the cluster's price per GPU-hour"),
             [](const engine::Evaluation &e) { return e.costPerStep; },
             money,
             false},
            {QObject::tr("$ per M tokens"),
             QObject::tr("Dollars per million tokens trained"),
             [](const engine::Evaluation &e) { return e.costPerMillionTokens; },
             money,
             false},
    };
    return list;
}

QString changeWords(double before, double after, const QString &what)
{
    return QString::fromStdString(engine::describeChange(before, after, what.toStdString()));
}

QColor changeColour(double before, double after, bool higherIsBetter)
{
    if (before <= 0 || std::abs(after - before) <= 0.0005 * std::abs(before))
        return style::kTextMuted;
    const bool better = (after > before) == higherIsBetter;
    return better ? QColor(0x04, 0x7a, 0x55) : QColor(0xc0, 0x1f, 0x1f);
}

QString percent(double u)
{
    return number(100 * u, u < 0.1 ? 1 : 0) + QStringLiteral("%");
}

} // namespace

PricingPanel::PricingPanel(QWidget *parent)
    : QWidget(parent)
    , m_step(new QLabel(this))
    , m_change(new QLabel(this))
    , m_error(new QLabel(this))
    , m_pin(new QPushButton(tr("Pin as A"), this))
    , m_restore(new QPushButton(tr("Restore A"), this))
    , m_unpin(new QPushButton(tr("Unpin"), this))
    , m_source(new QLabel(this))
    , m_metrics(new QTableWidget(this))
    , m_stepChart(new StepChart(this))
    , m_memoryChart(new MemoryChart(this))
    , m_memoryNote(new QLabel(this))
    , m_linksTitle(new QLabel(tr("<b>Links whose load changed most</b>"), this))
    , m_links(new QTreeWidget(this))
    , m_note(new QLabel(this))
    , m_serving(new ServingPricing(this))
{
    QFont big = m_step->font();
    big.setPixelSize(22);
    big.setBold(true);
    m_step->setFont(big);
    m_step->setObjectName(QStringLiteral("stepTime"));
    QFont medium = m_change->font();
    medium.setPixelSize(15);
    medium.setBold(true);
    m_change->setFont(medium);
    m_change->setObjectName(QStringLiteral("stepChange"));
    m_change->setWordWrap(true); // "+41% step time vs A" wraps in a narrow dock
    // Beside the step it never holds the dock wide: arrangeHead() puts it under the step when
    // the room beside it is short, so its own least width does not count there.
    m_change->setMinimumWidth(1);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    m_pin->setToolTip(tr("Keep the current numbers as A; edit, then compare A with B (now)"));
    m_restore->setToolTip(tr("Go back to A's workload and placement (undoable)"));
    m_unpin->setToolTip(tr("Stop comparing with A"));
    m_source->setObjectName(QStringLiteral("pinnedSource"));
    m_source->setWordWrap(true);
    m_source->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_source->hide();
    connect(m_pin, &QPushButton::clicked, this, &PricingPanel::pinA);
    connect(m_restore, &QPushButton::clicked, this, &PricingPanel::restoreA);
    connect(m_unpin, &QPushButton::clicked, this, &PricingPanel::unpin);

    m_metrics->setColumnCount(3);
    m_metrics->setRowCount(static_cast<int>(metricList().size()));
    m_metrics->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    // Each column as wide as its numbers, so none is elided in a narrow dock; the change
    // column takes what is left.
    m_metrics->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_metrics->horizontalHeader()->setStretchLastSection(true);
    m_metrics->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_metrics->setSelectionMode(QAbstractItemView::NoSelection);
    m_metrics->setFocusPolicy(Qt::NoFocus);
    m_metrics->verticalHeader()->setDefaultSectionSize(kRowH);
    for (int r = 0; r < m_metrics->rowCount(); ++r) {
        const Metric &m = metricList()[static_cast<std::size_t>(r)];
        auto *header = new QTableWidgetItem(m.name);
        header->setToolTip(m.tip);
        m_metrics->setVerticalHeaderItem(r, header);
        for (int c = 0; c < 3; ++c) {
            auto *item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_metrics->setItem(r, c, item);
        }
    }
    m_metrics->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_metrics->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_metrics->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_memoryNote->setWordWrap(true);
    m_memoryNote->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_links->setRootIsDecorated(false);
    m_links->setUniformRowHeights(true);
    m_links->setHeaderLabels({tr("Link"), tr("A"), tr("B")});
    m_links->header()->setStretchLastSection(false);
    m_links->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_links->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_links->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_links->setMinimumHeight(100);
    m_links->setMaximumHeight(170);
    connect(m_links, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem *item) {
        Q_EMIT linkActivated(item->data(0, Qt::UserRole).toInt());
    });
    m_note->setWordWrap(true);
    m_note->setStyleSheet(QStringLiteral("color: #5b6675; font-size: 11px;"));

    m_head = new QBoxLayout(QBoxLayout::LeftToRight);
    m_head->addWidget(m_step);
    m_head->addWidget(m_change, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_pin);
    buttons->addWidget(m_restore);
    buttons->addWidget(m_unpin);
    buttons->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6); // the dock is narrow: room for the numbers
    layout->addLayout(m_head);
    layout->addWidget(m_error);
    layout->addLayout(buttons);
    layout->addWidget(m_source);
    layout->addWidget(m_metrics);
    layout->addWidget(m_stepChart);
    layout->addWidget(m_memoryChart);
    layout->addWidget(m_memoryNote);
    layout->addWidget(m_linksTitle);
    layout->addWidget(m_links);
    layout->addWidget(m_note);
    layout->addWidget(m_serving);
    layout->addStretch(1);
    m_serving->hide();

    setEnabled(false);
    sync();
}

void PricingPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    arrangeHead();
}

void PricingPanel::arrangeHead()
{
    // What changed goes under the step when beside it would leave it less than a few words: the
    // dock stays as narrow as the numbers, not as the step and its change side by side.
    const int room = contentsRect().width() - m_step->sizeHint().width();
    const QBoxLayout::Direction want = room >= 130 ? QBoxLayout::LeftToRight
                                                   : QBoxLayout::TopToBottom;
    if (m_head->direction() != want)
        m_head->setDirection(want);
}

void PricingPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    setEnabled(document != nullptr);
    if (document) {
        connect(document, &Document::evaluationChanged, this, &PricingPanel::sync);
        connect(document, &Document::stackRangeChanged, this, &PricingPanel::sync);
        connect(document, &Document::pinnedChanged, this, &PricingPanel::sync);
    }
    sync();
}

QString PricingPanel::stepText() const
{
    return m_step->text();
}

QString PricingPanel::changeText() const
{
    return m_change->text();
}

QString PricingPanel::pinnedText() const
{
    return m_source->isVisibleTo(this) ? m_source->text() : QString();
}

void PricingPanel::pinA()
{
    if (m_document)
        m_document->pin();
}

void PricingPanel::unpin()
{
    if (m_document)
        m_document->unpin();
}

void PricingPanel::restoreA()
{
    if (!m_document || !m_document->pinned())
        return;
    const engine::Layout &a = m_document->pinned()->layout;
    const engine::Layout after = RestoreSnapshot::apply(m_document->layout(), a);
    if (after.sameContent(m_document->layout()))
        return;
    if (!Document::checkLayout(after).isEmpty())
        return;
    m_document->undoStack()->push(new RestoreSnapshot(m_document, a, tr("Restore A")));
}

void PricingPanel::sync()
{
    const bool haveDoc = m_document != nullptr;
    const Document::Snapshot *pinned = haveDoc ? m_document->pinned() : nullptr;
    m_pin->setText(pinned ? tr("Re-pin A") : tr("Pin as A")); // three buttons fit a narrow dock
    m_restore->setVisible(pinned != nullptr);
    m_unpin->setVisible(pinned != nullptr);
    m_linksTitle->setVisible(pinned != nullptr);
    m_links->setVisible(pinned != nullptr);
    m_source->setVisible(pinned != nullptr);
    if (pinned) {
        // A can come from another file than B: say which, with its title.
        const QString title = QString::fromStdString(pinned->layout.title);
        m_source->setText(title.isEmpty() || title == pinned->source
                                  ? tr("A: %1").arg(pinned->source)
                                  : tr("A: %1 (%2)").arg(pinned->source, title));
        m_source->setToolTip(pinned->sourcePath.isEmpty() ? QString() : pinned->sourcePath);
    }
    if (!haveDoc) {
        m_step->setText(tr("Step \u2014"));
        m_change->clear();
        return;
    }
    showTrainingParts(!m_document->isServing());
    if (m_document->isServing()) {
        syncServing();
        return;
    }
    const engine::Evaluation &now = m_document->evaluation();
    const engine::Evaluation *base = pinned ? &pinned->evaluation
                                            : m_document->previousEvaluation();
    if (base && !base->ok)
        base = nullptr;
    // Short headers: the dock is narrow, and the line above says "vs A".
    const QString baseName = pinned ? tr("A") : tr("Before");
    const QString nowName = pinned ? tr("B") : tr("Now");

    if (!now.ok) {
        m_step->setText(tr("Step \u2014"));
        m_change->clear();
        m_error->setText(tr("The step cannot be priced: %1").arg(QString::fromStdString(now.error)));
        m_error->show();
    } else {
        m_error->hide();
        // With the band validation gives runs like this one: "Step 18.8 s ±8%".
        m_step->setText(tr("Step %1 \u00b1%2%")
                                .arg(seconds(now.stepTimeS))
                                .arg(qRound(100 * now.stepTimeBand.fraction)));
        QString band = tr("Step time band: %1").arg(QString::fromStdString(now.stepTimeBand.basis));
        // The band shown is the validation band until the stacks are priced (then it widens).
        if (m_document->isStackRangePending())
            band += tr("; no software stack named: the stacks it may be running are being "
                       "priced, and the band widens to hold them when they are");
        m_step->setToolTip(band);
        if (base) {
            m_change->setText(changeWords(base->stepTimeS, now.stepTimeS, tr("step time"))
                              + (pinned ? tr(" vs A") : QString()));
            const QColor c = changeColour(base->stepTimeS, now.stepTimeS, false);
            m_change->setStyleSheet(QStringLiteral("color: %1;").arg(c.name()));
        } else {
            m_change->setText(tr("edit to see what changes"));
            m_change->setStyleSheet(QStringLiteral("color: #5b6675; font-weight: normal;"));
        }
    }

    // The numbers, baseline | now | change.
    m_metrics->setHorizontalHeaderLabels({base ? baseName : QString(), nowName, tr("Change")});
    m_metrics->horizontalHeaderItem(0)->setToolTip(
            pinned ? tr("A: the state pinned with Compare > Pin, from %1").arg(pinned->source)
                   : tr("Before the last edit"));
    m_metrics->horizontalHeaderItem(1)->setToolTip(pinned ? tr("B: the state now") : QString());
    m_metrics->setColumnHidden(0, base == nullptr);
    m_metrics->setColumnHidden(2, base == nullptr);
    const auto &list = metricList();
    int shownRows = 0;
    for (int r = 0; r < static_cast<int>(list.size()); ++r) {
        const Metric &m = list[static_cast<std::size_t>(r)];
        const double v = now.ok ? m.value(now) : 0;
        const bool hidden = m.hiddenWhenZero && v == 0 && (!base || m.value(*base) == 0);
        m_metrics->setRowHidden(r, hidden);
        shownRows += hidden ? 0 : 1;
        m_metrics->item(r, 1)->setText(now.ok ? m.text(v) : QStringLiteral("\u2014"));
        m_metrics->item(r, 1)->setToolTip(now.ok ? number(v, v < 100 ? 3 : 0) : QString());
        if (base) {
            const double b = m.value(*base);
            m_metrics->item(r, 0)->setText(m.text(b));
            m_metrics->item(r, 0)->setToolTip(number(b, b < 100 ? 3 : 0));
            QString delta;
            // A row only one side has (FP8 against BF16) has no change to tell.
            if (now.ok && b > 0 && (v > 0 || !m.hiddenWhenZero)) {
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
    }
    m_metrics->setMaximumHeight(m_metrics->horizontalHeader()->height() + shownRows * kRowH + 4);
    // As wide as its numbers at least: squeezed, the table cut them (to one digit in a narrow
    // dock); the dock keeps this width instead (it never scrolls sideways).
    const int cellMargin = 2 * (m_metrics->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1)
                           + 2;
    int contentW = m_metrics->verticalHeader()->sizeHint().width() + 2 * m_metrics->frameWidth();
    for (int c = 0; c < m_metrics->columnCount(); ++c) {
        if (m_metrics->isColumnHidden(c))
            continue;
        int w = m_metrics->horizontalHeader()->sectionSizeHint(c);
        for (int r = 0; r < m_metrics->rowCount(); ++r)
            if (!m_metrics->isRowHidden(r))
                w = std::max(w,
                             m_metrics->fontMetrics().horizontalAdvance(
                                     m_metrics->item(r, c)->text())
                                     + cellMargin);
        contentW += w;
    }
    m_metrics->setMinimumWidth(contentW);

    std::vector<StepChart::Row> rows;
    if (base)
        rows.push_back({pinned ? tr("A") : tr("Before"), base->exposed, base->total});
    if (now.ok)
        rows.push_back({pinned ? tr("B") : tr("Now"), now.exposed, now.total});
    m_stepChart->setRows(rows);
    m_memoryChart->setMemory(now.ok ? now.memoryGiBPerStage : std::vector<double>{}, now.hbmGiB);
    if (now.ok) {
        const engine::MemoryBreakdown &mem = now.memory;
        m_memoryNote->setText(tr("GiB per GPU by pipeline stage, against %6 GiB of HBM (dashed; "
                                 "red: over). Most loaded stage: weights %1, gradients %2, "
                                 "optimizer %3, activations %4, other %5.")
                                      .arg(number(mem.weightsGiB, 1),
                                           number(mem.gradientsGiB, 1),
                                           number(mem.optimizerGiB, 1),
                                           number(mem.activationsGiB, 1),
                                           number(mem.otherGiB, 1),
                                           number(now.hbmGiB, 0)));
    } else {
        m_memoryNote->clear();
    }

    m_links->clear();
    if (pinned && now.ok) {
        const engine::Topology &t = m_document->topology();
        // Links are compared by their ids, which name the same links only on the same cluster.
        const bool sameCluster = pinned->layout.cluster == m_document->layout().cluster;
        const auto changes = sameCluster ? engine::mostChangedLinks(pinned->evaluation, now, 12)
                                         : std::vector<engine::LinkChange>{};
        if (changes.empty()) {
            auto *item = new QTreeWidgetItem(m_links);
            item->setText(0,
                          sameCluster ? tr("No link's load changed")
                                      : tr("A is another cluster: its links cannot be compared"));
            item->setData(0, Qt::UserRole, -1);
        }
        for (const engine::LinkChange &c : changes) {
            auto *item = new QTreeWidgetItem(m_links);
            item->setText(0, QString::fromStdString(t.linkName(c.link)));
            item->setText(1, percent(c.utilizationA));
            item->setText(2, percent(c.utilizationB));
            item->setForeground(1, style::loadColor(c.utilizationA).darker(115));
            item->setForeground(2, style::loadColor(c.utilizationB).darker(115));
            item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
            item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
            item->setToolTip(0,
                             tr("%1: %2 per step in A, %3 in B")
                                     .arg(QString::fromStdString(t.linkName(c.link)),
                                          QString::fromStdString(engine::formatBytes(c.bytesA)),
                                          QString::fromStdString(engine::formatBytes(c.bytesB))));
            item->setData(0, Qt::UserRole, c.link);
        }
    }
    // How MFU counts FLOPs: on the MFU row, where the question comes up.
    m_metrics->verticalHeaderItem(3)->setToolTip(
            now.ok ? list[3].tip + QStringLiteral(": ") + QString::fromStdString(now.flopConvention)
                   : list[3].tip);
    m_note->setText(now.ok ? tr("Hover MFU for how FLOPs are counted; hover a link for its bytes.")
                           : QString());
    arrangeHead();
}

void PricingPanel::showTrainingParts(bool on)
{
    m_metrics->setVisible(on);
    m_stepChart->setVisible(on);
    m_memoryChart->setVisible(on);
    m_memoryNote->setVisible(on);
    m_note->setVisible(on);
    m_serving->setVisible(!on);
    if (!on) { // the changed links are the training step's
        m_linksTitle->hide();
        m_links->hide();
    }
}

void PricingPanel::syncServing()
{
    const Document::Snapshot *pinned = m_document->pinned();
    const engine::ServingEvaluation *now = m_document->servingEvaluation();
    const engine::ServingEvaluation *base = pinned ? pinned->serving.get()
                                                   : m_document->previousServingEvaluation();
    if (base && !base->ok)
        base = nullptr;
    if (!now || !now->ok) {
        m_step->setText(tr("TPOT \u2014"));
        m_step->setToolTip({});
        m_change->clear();
        m_error->setText(tr("The serving workload cannot be priced: %1")
                                 .arg(QString::fromStdString(now ? now->error : std::string())));
        m_error->show();
        m_serving->clear();
        m_serving->hide();
        arrangeHead();
        return;
    }
    m_error->hide();
    m_step->setText(ServingPricing::headline(*now));
    m_step->setToolTip(
            tr("Time per output token band: %1").arg(QString::fromStdString(now->bandBasis)));
    if (base) {
        m_change->setText(ServingPricing::changeText(*base, *now)
                          + (pinned ? tr(" vs A") : QString()));
        const QColor c = changeColour(base->tpotS, now->tpotS, false);
        m_change->setStyleSheet(QStringLiteral("color: %1;").arg(c.name()));
    } else {
        m_change->setText(pinned ? tr("A is not a priced serving layout")
                                 : tr("edit to see what changes"));
        m_change->setStyleSheet(QStringLiteral("color: #5b6675; font-weight: normal;"));
    }
    m_serving->setEvaluation(*now,
                             base,
                             pinned ? tr("A") : tr("Before"),
                             pinned ? tr("B") : tr("Now"));
    arrangeHead();
}

} // namespace railyard
