#include "paretochart.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLocale>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>

namespace railyard {

ParetoChart::ParetoChart(QWidget *parent)
    : QWidget(parent)
    , m_chart(new QChart)
    , m_frontLine(new QLineSeries)
    , m_front(new QScatterSeries)
    , m_ranked(new QScatterSeries)
    , m_chosen(new QScatterSeries)
    , m_hbm(new QLineSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
    , m_note(new QLabel(this))
    , m_key(new QLabel(this))
    , m_placeholder(new QLabel(this))
{
    m_frontLine->setName(tr("Pareto front"));
    m_frontLine->setPen(QPen(QColor(0x2563eb), 1.5));
    m_front->setName(tr("best for its memory"));
    m_front->setColor(QColor(0x2563eb));
    m_front->setBorderColor(QColor(0x2563eb));
    m_front->setMarkerSize(7);
    m_ranked->setName(tr("top plans"));
    m_ranked->setColor(QColor(0xf59e0b));
    m_ranked->setBorderColor(QColor(0xb45309));
    m_ranked->setMarkerSize(8);
    m_chosen->setName(tr("chosen"));
    m_chosen->setColor(Qt::transparent);
    m_chosen->setBorderColor(QColor(0xdc2626));
    m_chosen->setPen(QPen(QColor(0xdc2626), 2));
    m_chosen->setMarkerSize(15);
    m_hbm->setName(tr("usable HBM"));
    m_hbm->setPen(QPen(QColor(0x64748b), 1, Qt::DashLine));
    for (QAbstractSeries *s :
         std::initializer_list<QAbstractSeries *>{m_hbm, m_frontLine, m_front, m_ranked, m_chosen})
        m_chart->addSeries(s);
    m_x->setTitleText(tr("memory per GPU (GiB)"));
    m_y->setTitleText(tr("step time (s)"));
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    // The key is a label that wraps (the chart's own legend cut its names in a narrow dock).
    m_chart->legend()->hide();
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing, true);
    m_view->setMinimumHeight(200);
    m_note->setObjectName(QStringLiteral("paretoNote"));
    m_note->setWordWrap(true);
    m_note->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_note->hide();
    m_key->setObjectName(QStringLiteral("paretoKey"));
    m_key->setWordWrap(true);
    m_key->setTextFormat(Qt::RichText);
    const auto swatch = [](const QColor &c, const QString &glyph, const QString &name) {
        return QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3")
                .arg(c.name(), glyph, name.toHtmlEscaped());
    };
    m_key->setText(QStringList{swatch(QColor(0x2563eb),
                                      QStringLiteral("●—"),
                                      tr("Pareto front (best for its memory)")),
                               swatch(QColor(0xf59e0b), QStringLiteral("●"), tr("top plans")),
                               swatch(QColor(0xdc2626), QStringLiteral("◯"), tr("chosen")),
                               swatch(QColor(0x64748b), QStringLiteral("┆"), tr("usable HBM"))}
                           .join(QStringLiteral(" &nbsp; ")));
    m_placeholder->setObjectName(QStringLiteral("paretoPlaceholder"));
    m_placeholder->setText(runASearchText());
    m_placeholder->setWordWrap(true);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setMaximumWidth(260);
    m_placeholder->setStyleSheet(QStringLiteral("color: #5b6675;"));
    m_placeholder->setAttribute(Qt::WA_TransparentForMouseEvents);
    auto *layout = new QGridLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_view, 0, 0);
    layout->addWidget(m_placeholder, 0, 0, Qt::AlignCenter); // over the empty plot
    m_placeholder->raise();                                  // above the chart view, made after it
    layout->addWidget(m_key, 1, 0);
    layout->addWidget(m_note, 2, 0);
    layout->setRowStretch(0, 1);
    showEmpty(0, QString());
    connect(m_ranked, &QScatterSeries::clicked, this, [this](const QPointF &p) {
        for (std::size_t i = 0; i < m_rankedPoints.size(); ++i)
            if (qFuzzyCompare(m_rankedPoints[i].memoryGiB, p.x())
                && qFuzzyCompare(m_rankedPoints[i].stepS, p.y())) {
                Q_EMIT rankedClicked(int(i));
                return;
            }
    });
}

void ParetoChart::setData(const std::vector<Point> &front,
                          const std::vector<Point> &ranked,
                          double hbmGiB,
                          const QString &emptyText)
{
    m_rankedPoints = ranked;
    if (front.empty() && ranked.empty()) {
        showEmpty(hbmGiB, emptyText);
        return;
    }
    m_placeholder->hide();
    QList<QPointF> f, r;
    double xMax = hbmGiB, yMin = 0, yMax = 0;
    bool first = true;
    const auto extend = [&](const Point &p) {
        xMax = std::max(xMax, p.memoryGiB);
        yMin = first ? p.stepS : std::min(yMin, p.stepS);
        yMax = first ? p.stepS : std::max(yMax, p.stepS);
        first = false;
    };
    for (const Point &p : front) {
        f << QPointF(p.memoryGiB, p.stepS);
        extend(p);
    }
    for (const Point &p : ranked) {
        r << QPointF(p.memoryGiB, p.stepS);
        extend(p);
    }
    m_frontLine->replace(f);
    m_front->replace(f);
    m_ranked->replace(r);
    m_chosen->clear();
    // The axis to kSpan times the fastest step (the front's slow end would flatten the rest);
    // the ranked plans always show.
    double rankedMax = 0;
    for (const Point &p : ranked)
        rankedMax = std::max(rankedMax, p.stepS);
    const double yTop = std::min(yMax, std::max(rankedMax, kSpan * yMin));
    int off = 0;
    double offMax = 0;
    for (const Point &p : front)
        if (p.stepS > yTop * (1 + 1e-9)) {
            ++off;
            offMax = std::max(offMax, p.stepS);
        }
    if (off > 0) {
        const QString slowest = QLocale().toString(offMax, 'f', offMax < 100 ? 1 : 0);
        m_note->setText(
                (off == 1 ? tr("1 point of the front (less memory, %1 s a step) is off "
                               "the top")
                                    .arg(slowest)
                          : tr("%1 points of the front (less memory, up to %2 s a step) "
                               "are off the top")
                                    .arg(off)
                                    .arg(slowest))
                + tr(": the axis stops at %1\u00d7 the fastest step.").arg(kSpan, 0, 'g', 3));
        m_note->show();
    } else {
        m_note->clear();
        m_note->hide();
    }
    // The memory axis over what shows (and the HBM line).
    double xShown = hbmGiB;
    for (const Point &p : front)
        if (p.stepS <= yTop * (1 + 1e-9))
            xShown = std::max(xShown, p.memoryGiB);
    for (const Point &p : ranked)
        xShown = std::max(xShown, p.memoryGiB);
    const double pad = std::max(1e-6, (yTop - yMin) * 0.08);
    m_x->setRange(0, (first ? xMax : xShown) * 1.05 + 1e-9);
    m_y->setRange(std::max(0.0, yMin - pad), yTop + pad);
    m_x->applyNiceNumbers(); // ticks on round numbers
    m_y->applyNiceNumbers();
    m_hbm->replace({QPointF(hbmGiB, m_y->min()), QPointF(hbmGiB, m_y->max())});
}

QString ParetoChart::runASearchText()
{
    return tr("Run a search to rank the plans: each is drawn here by its step time and its memory "
              "per GPU.");
}

void ParetoChart::showEmpty(double hbmGiB, const QString &text)
{
    // No plan yet: memory up to the GPU's HBM (80 GiB when not known), step time 0 to 10 s,
    // the usable HBM line when known, and the placeholder over the plot.
    m_frontLine->clear();
    m_front->clear();
    m_ranked->clear();
    m_chosen->clear();
    m_note->clear();
    m_note->hide();
    m_x->setRange(0, hbmGiB > 0 ? hbmGiB * 1.05 : 80);
    m_y->setRange(0, 10);
    m_x->applyNiceNumbers();
    m_y->applyNiceNumbers();
    if (hbmGiB > 0)
        m_hbm->replace({QPointF(hbmGiB, m_y->min()), QPointF(hbmGiB, m_y->max())});
    else
        m_hbm->clear();
    m_placeholder->setText(text.isEmpty() ? runASearchText() : text);
    m_placeholder->show();
}

bool ParetoChart::isEmpty() const
{
    return m_front->count() == 0 && m_ranked->count() == 0;
}

double ParetoChart::stepAxisMin() const
{
    return m_y->min();
}

double ParetoChart::stepAxisMax() const
{
    return m_y->max();
}

QString ParetoChart::noteText() const
{
    return m_note->isHidden() ? QString() : m_note->text();
}

void ParetoChart::setChosen(int rankedIndex)
{
    m_chosen->clear();
    if (rankedIndex >= 0 && rankedIndex < int(m_rankedPoints.size())) {
        const Point &p = m_rankedPoints[std::size_t(rankedIndex)];
        m_chosen->append(p.memoryGiB, p.stepS);
    }
}

int ParetoChart::frontCount() const
{
    return int(m_front->count());
}

int ParetoChart::rankedCount() const
{
    return int(m_ranked->count());
}

} // namespace railyard
