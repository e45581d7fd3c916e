#pragma once

#include <QWidget>

#include <memory>
#include <vector>

namespace railyard {

// Memory per GPU against HBM, one bar per pipeline stage (Qt Charts): what fits in HBM in blue,
// what does not in red, and HBM as a dashed line across.
class MemoryChart : public QWidget
{
    Q_OBJECT

public:
    explicit MemoryChart(QWidget *parent = nullptr);
    ~MemoryChart() override;

    void setMemory(const std::vector<double> &gibPerStage, double hbmGiB);
    int stageCount() const;
    double fitsValue(int stage) const;
    double overValue(int stage) const;
    double hbmLine() const;
    // The stage numbers under the bars. With many stages in a narrow chart only every
    // labelStep()-th stage is numbered, so every number shown is whole and readable.
    QStringList stageLabels() const;
    int labelStep() const;
    // The text the chart draws on its axes, as laid out now (a test checks none is elided).
    QStringList drawnAxisTexts() const;

    QSize sizeHint() const override { return {360, 180}; }

private:
    void relabel();

    struct Charts;
    std::unique_ptr<Charts> m_c;
};

} // namespace railyard
