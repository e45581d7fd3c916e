#pragma once

#include "step/evaluate.h"

#include <QString>
#include <QWidget>

#include <vector>

namespace railyard {

// The step-time breakdown as a stacked horizontal bar chart (Qt Charts), one bar per state
// ("Before" and "Now", or "A" and "B"): each part of the step in its colour, the exposed time
// solid (the solid bar ends at the step time) and the time hidden behind compute hatched after
// it. Every Qt Charts type stays inside widgets/charts/.
class StepChart : public QWidget
{
    Q_OBJECT

public:
    struct Row
    {
        QString label;
        engine::StepBreakdown exposed;
        engine::StepBreakdown total;
    };
    // The parts of a step, in the order they are stacked.
    enum Part { Compute, Tp, Cp, Ep, PpBubble, PpP2p, Dp, Optimizer, PartCount };
    static QString partName(Part part);
    static QColor partColor(Part part);
    static double partSeconds(const engine::StepBreakdown &b, Part part);

    explicit StepChart(QWidget *parent = nullptr);
    ~StepChart() override;

    // Rows from top to bottom.
    void setRows(const std::vector<Row> &rows);
    int rowCount() const;
    // What a bar shows, in the chart's unit (seconds or milliseconds, see unitSuffix()).
    double exposedValue(int row, Part part) const;
    double overlappedValue(int row, Part part) const;
    QString unitSuffix() const;
    // The legend entries shown (parts with time in some row).
    QStringList legendEntries() const;

    QSize sizeHint() const override { return {360, 230}; }

private:
    struct Charts;
    std::unique_ptr<Charts> m_c;
};

} // namespace railyard
