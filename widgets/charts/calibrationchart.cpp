#include "calibrationchart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace railyard {

namespace {
const QColor kMeasured(0x1f, 0x29, 0x37);
const QColor kModelled(0x3b, 0x82, 0xc4);
} // namespace

struct CalibrationChart::Charts
{
    QChart *chart = nullptr;
    QChartView *view = nullptr;
    QLineSeries *measured = nullptr;
    QScatterSeries *dots = nullptr;
    QLineSeries *modelled = nullptr;
    QCategoryAxis *size = nullptr; // log2 of the size in bytes, labelled in KiB, MiB, GiB
    QValueAxis *busbw = nullptr;
};

CalibrationChart::CalibrationChart(QWidget *parent)
    : QWidget(parent)
    , m_c(std::make_unique<Charts>())
{
    Charts &c = *m_c;
    c.chart = new QChart;
    c.chart->setAnimationOptions(QChart::NoAnimation);
    c.chart->setBackgroundRoundness(0);
    c.chart->setMargins(QMargins(4, 4, 4, 4));
    c.measured = new QLineSeries;
    c.measured->setName(tr("log"));
    c.measured->setPen(QPen(kMeasured, 1.5));
    c.dots = new QScatterSeries;
    c.dots->setMarkerSize(6);
    c.dots->setColor(kMeasured);
    c.dots->setBorderColor(kMeasured);
    c.modelled = new QLineSeries;
    c.modelled->setName(tr("model"));
    c.modelled->setPen(QPen(kModelled, 2, Qt::DashLine));
    for (QAbstractSeries *s :
         std::initializer_list<QAbstractSeries *>{c.measured, c.dots, c.modelled})
        c.chart->addSeries(s);
    c.size = new QCategoryAxis;
    c.size->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    c.busbw = new QValueAxis;
    c.busbw->setTitleText(tr("busbw, GB/s"));
    c.busbw->setLabelFormat(QStringLiteral("%.0f"));
    c.busbw->setTickCount(5);
    c.chart->addAxis(c.size, Qt::AlignBottom);
    c.chart->addAxis(c.busbw, Qt::AlignLeft);
    for (QAbstractSeries *s : c.chart->series()) {
        s->attachAxis(c.size);
        s->attachAxis(c.busbw);
    }
    c.chart->legend()->setAlignment(Qt::AlignTop);
    // The dots are the measured line's markers: one legend entry for both.
    c.chart->legend()->markers(c.dots).first()->setVisible(false);
    c.view = new QChartView(c.chart, this);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumHeight(200);
    auto *box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->addWidget(c.view);
}

CalibrationChart::~CalibrationChart() = default;

void CalibrationChart::setCalibration(const engine::Calibration &cal)
{
    Charts &c = *m_c;
    QList<QPointF> measured, modelled;
    double top = 0;
    for (const engine::CalibrationPoint &p : cal.points) {
        const double x = std::log2(p.sizeBytes);
        measured << QPointF(x, p.measuredGBps);
        top = std::max(top, p.measuredGBps);
        if (p.modelledGBps >= 0) {
            modelled << QPointF(x, p.modelledGBps);
            top = std::max(top, p.modelledGBps);
        }
    }
    c.measured->replace(measured);
    c.dots->replace(measured);
    c.modelled->replace(modelled);
    if (measured.isEmpty())
        return;
    // From the power of 1024 at or below the smallest size to the one at or above the largest,
    // a label at each (1 KiB, 1 MiB, 1 GiB): a dock is narrow.
    const double lo = 10 * std::floor(measured.front().x() / 10);
    const double hi = std::max(lo + 10, 10 * std::ceil(measured.back().x() / 10));
    for (const QString &label : c.size->categoriesLabels())
        c.size->remove(label);
    const int every = 10;
    static const char *const units[] = {"B", "K", "M", "G", "T", "P"}; // powers of 1024
    for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); e += every) {
        const int unit = std::clamp(e / 10, 0, 5);
        c.size->append(QStringLiteral("%1%2")
                               .arg(1 << (e - 10 * unit))
                               .arg(QLatin1String(units[unit])),
                       e);
    }
    c.size->setStartValue(lo);
    c.size->setRange(lo, hi);
    c.busbw->setRange(0, top > 0 ? top * 1.1 : 1);
    c.busbw->applyNiceNumbers();
}

QList<QPointF> CalibrationChart::measuredPoints() const
{
    return m_c->measured->points();
}

QList<QPointF> CalibrationChart::modelledPoints() const
{
    return m_c->modelled->points();
}

} // namespace railyard
