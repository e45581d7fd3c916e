#pragma once

#include <QWidget>

#include <vector>

class QChart;
class QLabel;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace railyard {

// The planner's Pareto front (Qt Charts): step time against memory per GPU, one point per plan
// no other beats on both, joined least memory first; the ranked plans as a second series, the
// chosen one ringed, and the GPU's usable HBM as a vertical line. Clicking a point asks for its
// plan (pointClicked with its index in the front, or -1 - index in the ranked list).
//
// The step-time axis runs from the fastest plan to kSpan times it (or to the slowest point, if
// nearer): the front's far end, where a plan that barely fits takes 1,000 times the best step,
// would flatten everything else to a line on the axis. The note under the chart says how many
// points are off the top and how far they go. The key is a wrapped label under the chart, so no
// entry is cut in a narrow dock.
class ParetoChart : public QWidget
{
    Q_OBJECT

public:
    struct Point
    {
        double memoryGiB = 0;
        double stepS = 0;
    };

    explicit ParetoChart(QWidget *parent = nullptr);

    // The step-time axis shows at most this many times the fastest plan's step.
    static constexpr double kSpan = 3.0;

    // With no points, `emptyText` (or, by default, "Run a search...") over the empty plot.
    void setData(const std::vector<Point> &front,
                 const std::vector<Point> &ranked,
                 double hbmGiB,
                 const QString &emptyText = QString());
    void setChosen(int rankedIndex); // -1: none
    int frontCount() const;
    int rankedCount() const;
    // The step-time axis's range, in seconds.
    double stepAxisMin() const;
    double stepAxisMax() const;
    // "3 plans of the front are off the chart (up to 6,012 s)", or empty.
    QString noteText() const;
    QLabel *keyLabel() const { return m_key; }
    // Before a search (no plans): the axes at a plain default and "Run a search..." over them.
    bool isEmpty() const;
    QLabel *placeholderLabel() const { return m_placeholder; }

    QSize sizeHint() const override { return {360, 240}; }

Q_SIGNALS:
    void rankedClicked(int index);

private:
    void showEmpty(double hbmGiB, const QString &text);
    static QString runASearchText();

    QChart *m_chart;
    QChartView *m_view;
    QLineSeries *m_frontLine;
    QScatterSeries *m_front;
    QScatterSeries *m_ranked;
    QScatterSeries *m_chosen;
    QLineSeries *m_hbm;
    QValueAxis *m_x;
    QValueAxis *m_y;
    QLabel *m_note;
    QLabel *m_key;
    QLabel *m_placeholder;
    std::vector<Point> m_rankedPoints;
};

} // namespace railyard
