#pragma once

#include <QWidget>

#include <vector>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace railyard {

// The planner's Pareto front (Qt Charts): step time against memory per GPU, one point per plan
// no other beats on both, joined least memory first; the ranked plans as a second series, the
// chosen one ringed, and the GPU's usable HBM as a vertical line. Clicking a point asks for its
// plan (pointClicked with its index in the front, or -1 - index in the ranked list).
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

    void setData(const std::vector<Point> &front, const std::vector<Point> &ranked, double hbmGiB);
    void setChosen(int rankedIndex); // -1: none
    int frontCount() const;
    int rankedCount() const;

    QSize sizeHint() const override { return {360, 240}; }

Q_SIGNALS:
    void rankedClicked(int index);

private:
    QChart *m_chart;
    QChartView *m_view;
    QLineSeries *m_frontLine;
    QScatterSeries *m_front;
    QScatterSeries *m_ranked;
    QScatterSeries *m_chosen;
    QLineSeries *m_hbm;
    QValueAxis *m_x;
    QValueAxis *m_y;
    std::vector<Point> m_rankedPoints;
};

} // namespace railyard
