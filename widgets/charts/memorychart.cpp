#include "memorychart.h"

#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QFontMetrics>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace railyard {

struct MemoryChart::Charts
{
    QChart *chart = nullptr;
    QChartView *view = nullptr;
    QStackedBarSeries *series = nullptr;
    QBarSet *fits = nullptr;
    QBarSet *over = nullptr;
    QLineSeries *hbm = nullptr;
    // Stage numbers on the values 0..n-1 under the bars (a category axis that can leave some
    // out, which a bar category axis cannot).
    QCategoryAxis *stages = nullptr;
    int stageCount = 0;
    int step = 1;
    QValueAxis *gib = nullptr;
    QValueAxis *lineX = nullptr;
    double hbmGiB = 0;
};

MemoryChart::MemoryChart(QWidget *parent)
    : QWidget(parent)
    , m_c(std::make_unique<Charts>())
{
    Charts &c = *m_c;
    c.chart = new QChart;
    c.chart->setAnimationOptions(QChart::NoAnimation);
    c.chart->setBackgroundRoundness(0);
    c.chart->setMargins(QMargins(4, 4, 4, 4));
    c.chart->legend()->hide(); // the panel says what the colours are, in words that wrap
    c.series = new QStackedBarSeries;
    c.series->setBarWidth(0.7);
    c.fits = new QBarSet(tr("GiB per GPU"));
    c.fits->setColor(QColor(0x3b, 0x82, 0xc4));
    c.fits->setBorderColor(QColor(0x3b, 0x82, 0xc4).darker(125));
    c.over = new QBarSet(tr("over HBM"));
    c.over->setColor(QColor(0xdc, 0x26, 0x26));
    c.over->setBorderColor(QColor(0xdc, 0x26, 0x26).darker(125));
    c.series->append(c.fits);
    c.series->append(c.over);
    c.chart->addSeries(c.series);
    c.hbm = new QLineSeries;
    c.hbm->setName(tr("HBM"));
    QPen pen(QColor(0x1f, 0x29, 0x37), 1.5, Qt::DashLine);
    c.hbm->setPen(pen);
    c.chart->addSeries(c.hbm);
    c.stages = new QCategoryAxis;
    c.stages->setTitleText(tr("pipeline stage"));
    c.stages->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    c.stages->setGridLineVisible(false);
    c.stages->setRange(-0.5, 0.5);
    c.gib = new QValueAxis;
    c.gib->setLabelFormat(QStringLiteral("%.0f"));
    c.gib->setTitleText(tr("GiB"));
    c.gib->setTickCount(4);
    // The HBM line runs across all bars on its own hidden x axis.
    c.lineX = new QValueAxis;
    c.lineX->setVisible(false);
    c.chart->addAxis(c.stages, Qt::AlignBottom);
    c.chart->addAxis(c.lineX, Qt::AlignTop);
    c.chart->addAxis(c.gib, Qt::AlignLeft);
    c.series->attachAxis(c.stages);
    c.series->attachAxis(c.gib);
    c.hbm->attachAxis(c.lineX);
    c.hbm->attachAxis(c.gib);
    c.view = new QChartView(c.chart, this);
    c.view->setRenderHint(QPainter::Antialiasing, true);
    c.view->setMinimumHeight(140);
    c.view->setMaximumHeight(150);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(c.view);
    // The number of labels that fit follows the plot's width.
    connect(c.chart, &QChart::plotAreaChanged, this, [this] { relabel(); });
}

MemoryChart::~MemoryChart() = default;

void MemoryChart::setMemory(const std::vector<double> &perStage, double hbmGiB)
{
    Charts &c = *m_c;
    c.hbmGiB = hbmGiB;
    const int n = static_cast<int>(perStage.size());
    if (n != c.stageCount) {
        c.stageCount = n;
        c.stages->setRange(-0.5, std::max(0, n - 1) + 0.5);
        relabel();
    }
    QList<qreal> fits, over;
    double top = hbmGiB;
    for (double v : perStage) {
        fits << std::min(v, hbmGiB > 0 ? hbmGiB : v);
        over << (hbmGiB > 0 ? std::max(0.0, v - hbmGiB) : 0.0);
        top = std::max(top, v);
    }
    c.fits->remove(0, c.fits->count());
    c.fits->append(fits);
    c.over->remove(0, c.over->count());
    c.over->append(over);
    c.lineX->setRange(0, 1);
    c.hbm->replace(QList<QPointF>{{0, hbmGiB}, {1, hbmGiB}});
    c.hbm->setName(tr("HBM %1 GiB").arg(hbmGiB, 0, 'f', 0));
    c.gib->setRange(0, std::max(1.0, top * 1.05));
    c.gib->applyNiceNumbers();
}

void MemoryChart::relabel()
{
    Charts &c = *m_c;
    const int n = c.stageCount;
    // The smallest "nice" step whose labels, each as wide as the widest, fit side by side
    // with a gap under the plot.
    const QFontMetrics fm(c.stages->labelsFont());
    const int labelW = fm.horizontalAdvance(QString::number(std::max(0, n - 1))) + 8;
    const double plotW = c.chart->plotArea().width() > 0 ? c.chart->plotArea().width()
                                                         : sizeHint().width() - 60;
    int step = 1;
    if (n > 0) {
        const double perStage = plotW / n;
        for (int s : {1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000})
            if ((step = s) * perStage >= labelW)
                break;
    }
    QStringList labels;
    for (int i = 0; i < n; i += step)
        labels << QString::number(i);
    if (labels == c.stages->categoriesLabels() && step == c.step)
        return;
    c.step = step;
    for (const QString &l : c.stages->categoriesLabels())
        c.stages->remove(l);
    for (int i = 0; i < n; i += step)
        c.stages->append(QString::number(i), i);
    c.stages->setStartValue(-0.5);
}

QStringList MemoryChart::stageLabels() const
{
    return m_c->stages->categoriesLabels();
}

int MemoryChart::labelStep() const
{
    return m_c->step;
}

QStringList MemoryChart::drawnAxisTexts() const
{
    QStringList out;
    for (QGraphicsItem *item : m_c->view->scene()->items()) {
        if (!item->isVisible())
            continue;
        if (auto *t = dynamic_cast<QGraphicsTextItem *>(item))
            out << t->toPlainText();
        else if (auto *st = dynamic_cast<QGraphicsSimpleTextItem *>(item))
            out << st->text();
    }
    return out;
}

int MemoryChart::stageCount() const
{
    return m_c->fits->count();
}

double MemoryChart::fitsValue(int stage) const
{
    return m_c->fits->at(stage);
}

double MemoryChart::overValue(int stage) const
{
    return m_c->over->at(stage);
}

double MemoryChart::hbmLine() const
{
    return m_c->hbmGiB;
}

} // namespace railyard
