#pragma once

#include "step/timeline.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QToolButton;

namespace railyard {

class Document;
class ViewState;
class GanttView;

// The step as a Gantt chart, one row per pipeline stage: the stage's critical path (compute,
// bubble, exposed waits, optimizer) on top, the communication that runs beside it in lanes
// below, coloured as in the Pricing chart. Play, pause, scrub (click or drag in the chart) and
// speed drive the view state's playback time; the running phases are outlined and named.
class TimelinePanel : public QWidget
{
    Q_OBJECT

public:
    TimelinePanel(Document *document, ViewState *view, QWidget *parent = nullptr);
    ~TimelinePanel() override;

    // The phases running at the playback time, as the label names them (for tests).
    QString runningText() const;
    GanttView *gantt() const { return m_gantt; }

private:
    void syncPlayback();

    Document *m_document;
    ViewState *m_view;
    GanttView *m_gantt;
    QToolButton *m_play;
    QToolButton *m_average;
    QComboBox *m_speed;
    QLabel *m_status;
};

// The chart itself (painted; no Qt Charts: thousands of phases).
class GanttView : public QWidget
{
    Q_OBJECT

public:
    GanttView(Document *document, ViewState *view, QWidget *parent = nullptr);
    static QColor kindColor(engine::PhaseKind kind); // the Pricing chart's colours
    // The x of a moment and the moment at an x (seconds), in widget coordinates.
    double xOf(double t) const;
    double timeAt(double x) const;
    QSize sizeHint() const override { return {800, 150}; }
    QSize minimumSizeHint() const override { return {200, 60}; }

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;

private:
    Document *m_document;
    ViewState *m_view;
};

} // namespace railyard
