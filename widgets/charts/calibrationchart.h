#pragma once

#include "import/calibration.h"

#include <QWidget>

#include <memory>

namespace railyard {

// An nccl-tests log against the model (Qt Charts): bus bandwidth by message size on a log
// axis, what the log measured as dots joined by a line, what the engine gives on the cluster
// as it is now as a dashed line.
class CalibrationChart : public QWidget
{
    Q_OBJECT

public:
    explicit CalibrationChart(QWidget *parent = nullptr);
    ~CalibrationChart() override;

    void setCalibration(const engine::Calibration &calibration);
    // The series as drawn: (log2 of the size in bytes, GB/s) per point (for tests).
    QList<QPointF> measuredPoints() const;
    QList<QPointF> modelledPoints() const;

    QSize sizeHint() const override { return {360, 220}; }

private:
    struct Charts;
    std::unique_ptr<Charts> m_c;
};

} // namespace railyard
