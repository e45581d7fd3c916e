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

    QSize sizeHint() const override { return {360, 180}; }

private:
    struct Charts;
    std::unique_ptr<Charts> m_c;
};

} // namespace railyard
