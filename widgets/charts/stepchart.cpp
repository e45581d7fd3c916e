#include "stepchart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLegendMarker>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <cmath>

namespace railyard {

struct StepChart::Charts
{
    QChart *chart = nullptr;
    QChartView *view = nullptr;
    QLabel *legend = nullptr; // wraps, unlike QLegend in a narrow dock
    QStringList entries;
    QHorizontalStackedBarSeries *series = nullptr;
    QBarCategoryAxis *rows = nullptr;
    QValueAxis *values = nullptr;
    std::array<QBarSet *, PartCount> exposed{};
    std::array<QBarSet *, PartCount> overlapped{};
    int rowCount = 0;
    double scale = 1; // seconds -> chart unit
    QString unit = QStringLiteral("s");
};

QString StepChart::partName(Part part)
{
    switch (part) {
    case Compute: return tr("Compute");
    case Tp: return tr("TP");
    case Cp: return tr("CP");
    case Ep: return tr("EP");
    case PpBubble: return tr("PP bubble");
    case PpP2p: return tr("PP send/recv");
    case Dp: return tr("DP");
    case Optimizer: return tr("Optimizer");
    case PartCount: break;
    }
    return {};
}

QColor StepChart::partColor(Part part)
{
    switch (part) {
    case Compute: return QColor(0x9a, 0xa5, 0xb5);
    case Tp: return QColor(0x16, 0xa3, 0x4a);
    case Cp: return QColor(0x08, 0x91, 0xb2);
    case Ep: return QColor(0x93, 0x33, 0xea);
    case PpBubble: return QColor(0xf5, 0x9e, 0x0b);
    case PpP2p: return QColor(0xb4, 0x53, 0x09);
    case Dp: return QColor(0x25, 0x63, 0xeb);
    case Optimizer: return QColor(0x47, 0x55, 0x69);
    case PartCount: break;
    }
    return Qt::gray;
}

double StepChart::partSeconds(const engine::StepBreakdown &b, Part part)
{
    switch (part) {
    case Compute: return b.compute;
    case Tp: return b.tp;
    case Cp: return b.cp;
    case Ep: return b.ep;
    case PpBubble: return b.ppBubble;
    case PpP2p: return b.ppP2p;
    case Dp: return b.dp;
    case Optimizer: return b.optimizer;
    case PartCount: break;
    }
    return 0;
}

StepChart::StepChart(QWidget *parent)
    : QWidget(parent)
    , m_c(std::make_unique<Charts>())
{
    Charts &c = *m_c;
    c.chart = new QChart;
    c.chart->setAnimationOptions(QChart::NoAnimation); // the numbers must be there at once
    c.chart->setBackgroundRoundness(0);
    c.chart->setMargins(QMargins(4, 4, 4, 4));
    c.chart->legend()->hide();
    c.series = new QHorizontalStackedBarSeries;
    c.series->setBarWidth(0.62);
    for (int p = 0; p < PartCount; ++p) {
        auto *solid = new QBarSet(partName(Part(p)));
        solid->setColor(partColor(Part(p)));
        solid->setBorderColor(partColor(Part(p)).darker(130));
        c.series->append(solid);
        c.exposed[static_cast<std::size_t>(p)] = solid;
    }
    for (int p = 0; p < PartCount; ++p) {
        auto *hatched = new QBarSet(tr("%1, overlapped").arg(partName(Part(p))));
        QColor colour = partColor(Part(p));
        hatched->setBrush(QBrush(colour, Qt::BDiagPattern));
        hatched->setBorderColor(colour);
        c.series->append(hatched);
        c.overlapped[static_cast<std::size_t>(p)] = hatched;
    }
    c.chart->addSeries(c.series);
    c.rows = new QBarCategoryAxis;
    c.values = new QValueAxis;
    c.values->setLabelFormat(QStringLiteral("%g"));
    c.values->setTickCount(5);
    c.chart->addAxis(c.rows, Qt::AlignLeft);
    c.chart->addAxis(c.values, Qt::AlignBottom);
    c.series->attachAxis(c.rows);
    c.series->attachAxis(c.values);
    c.view = new QChartView(c.chart, this);
    c.view->setRenderHint(QPainter::Antialiasing, true);
    c.view->setMinimumHeight(140);
    c.view->setMaximumHeight(190);
    c.legend = new QLabel(this);
    c.legend->setWordWrap(true);
    c.legend->setTextFormat(Qt::RichText);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(c.view, 1);
    layout->addWidget(c.legend);
}

StepChart::~StepChart() = default;

void StepChart::setRows(const std::vector<Row> &rows)
{
    Charts &c = *m_c;
    double longest = 0;
    for (const Row &r : rows) {
        double all = 0;
        for (int p = 0; p < PartCount; ++p)
            all += std::max(partSeconds(r.exposed, Part(p)), partSeconds(r.total, Part(p)));
        longest = std::max(longest, all);
    }
    c.scale = longest < 1 ? 1e3 : 1;
    c.unit = longest < 1 ? QStringLiteral("ms") : QStringLiteral("s");
    // Qt Charts draws the first category at the bottom: list the rows bottom-up.
    QStringList labels;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it)
        labels << it->label;
    if (labels != c.rows->categories()) {
        c.rows->clear();
        c.rows->append(labels);
    }
    const int n = static_cast<int>(rows.size());
    std::array<bool, PartCount> used{};
    for (int p = 0; p < PartCount; ++p) {
        QList<qreal> solid, hatched;
        for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
            const double e = partSeconds(it->exposed, Part(p));
            const double t = partSeconds(it->total, Part(p));
            solid << e * c.scale;
            hatched << std::max(0.0, t - e) * c.scale;
            used[static_cast<std::size_t>(p)] = used[static_cast<std::size_t>(p)] || e > 0 || t > 0;
        }
        QBarSet *s = c.exposed[static_cast<std::size_t>(p)];
        QBarSet *h = c.overlapped[static_cast<std::size_t>(p)];
        if (s->count() != n) {
            s->remove(0, s->count());
            s->append(solid);
            h->remove(0, h->count());
            h->append(hatched);
        } else {
            for (int i = 0; i < n; ++i) {
                s->replace(i, solid[i]);
                h->replace(i, hatched[i]);
            }
        }
    }
    c.rowCount = n;
    // Ticks at round numbers (0, 5, 10, ...), the axis ending just past the longest bar.
    const double top = longest > 0 ? longest * c.scale : 1;
    const double raw = top / 4;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double tick = magnitude;
    for (double f : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (f * magnitude >= raw) {
            tick = f * magnitude;
            break;
        }
    c.values->setTickType(QValueAxis::TicksDynamic);
    c.values->setTickAnchor(0);
    c.values->setTickInterval(tick);
    c.values->setRange(0, std::ceil(top * 1.01 / tick) * tick);
    c.values->setTitleText(longest < 1 ? tr("milliseconds per step") : tr("seconds per step"));
    // A legend entry for each part that takes time, and one that explains the hatching.
    bool anyOverlap = false;
    for (int p = 0; p < PartCount; ++p)
        for (int i = 0; i < n; ++i)
            anyOverlap = anyOverlap || c.overlapped[static_cast<std::size_t>(p)]->at(i) > 0;
    c.entries.clear();
    QStringList html;
    for (int p = 0; p < PartCount; ++p) {
        if (!used[static_cast<std::size_t>(p)])
            continue;
        c.entries << partName(Part(p));
        html << QStringLiteral("<span style='color:%1; font-size:14px'>\u25a0</span>&nbsp;%2")
                        .arg(partColor(Part(p)).name(), partName(Part(p)).toHtmlEscaped());
    }
    if (anyOverlap) {
        c.entries << tr("overlapped with compute");
        html << QStringLiteral("<span style='font-size:14px'>\u25a8</span>&nbsp;%1")
                        .arg(tr("hatched: overlapped with compute (not in the step time)"));
    }
    c.legend->setText(QStringLiteral("<span style='font-size:11px'>%1</span>")
                              .arg(html.join(QStringLiteral(" &nbsp; "))));
}

int StepChart::rowCount() const
{
    return m_c->rowCount;
}

double StepChart::exposedValue(int row, Part part) const
{
    // Rows are stored bottom-up.
    const int i = m_c->rowCount - 1 - row;
    return m_c->exposed[static_cast<std::size_t>(part)]->at(i);
}

double StepChart::overlappedValue(int row, Part part) const
{
    const int i = m_c->rowCount - 1 - row;
    return m_c->overlapped[static_cast<std::size_t>(part)]->at(i);
}

QString StepChart::unitSuffix() const
{
    return m_c->unit;
}

QStringList StepChart::legendEntries() const
{
    return m_c->entries;
}

} // namespace railyard
