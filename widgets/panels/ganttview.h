#pragma once

#include "step/timeline.h"

#include <QWidget>

#include <vector>

namespace railyard {

class Document;
class ViewState;

// The step as a Gantt chart, one row per pipeline stage (painted; no Qt Charts: thousands of
// phases): the stage's critical path (compute, bubble, exposed waits, optimizer) on top, the
// communication that runs beside it in lanes below, coloured as in the Pricing chart.
//
// At scale it stays readable and usable: the wheel (or + and -) zooms the time axis around the
// cursor and Shift+wheel or the panel's scroll bar pans it (0 fits the step again); the stages
// are labelled every Nth row when rows are too thin for each to have a label; and a phase
// narrower than kMinTargetPx on screen (a 1 ms DP phase in a 6 s step) is still hit by a click
// within kMinTargetPx / 2 of it, which scrubs into the phase.
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

    // The part of the step in view: from visibleStart(), visibleSpan() seconds long.
    double zoom() const { return m_zoom; }
    double visibleStart() const;
    double visibleSpan() const;
    // Zooms to `zoom` (1: the whole step) keeping the moment `anchor` where it is on screen.
    void setZoom(double zoom, double anchor);
    void setVisibleStart(double seconds);
    void fit();
    static constexpr double kMaxZoom = 1000;

    // A stage label on every stride-th row (1: each row has its own).
    int labelStride() const;
    // The label of a one-stage timeline's row: "step" for training; for a serving layout
    // "decode step" or "request" (what is played), shortened to fit the label column.
    QString stepLabel() const;
    // Where phase `index` is drawn, and the phase under a point (its drawn box, or within
    // kMinTargetPx / 2 of a narrower one in that lane); -1 for none.
    QRectF phaseRect(int index) const;
    int phaseAt(const QPointF &pos) const;
    static constexpr double kMinTargetPx = 10;

Q_SIGNALS:
    void viewChanged(); // the zoom or the visible part moved

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;
    void wheelEvent(QWheelEvent *) override;
    void keyPressEvent(QKeyEvent *) override;
    bool event(QEvent *) override;

private:
    struct Rows;
    Rows rows() const;
    void scrubTo(const QPointF &pos);

    Document *m_document;
    ViewState *m_view;
    double m_zoom = 1;
    double m_start = 0; // seconds at the left edge of the chart
    // The lanes the timeline's phases use (rows()), and the timeline they were counted on.
    mutable std::vector<char> m_lanesUsed;
    mutable const engine::Phase *m_lanesOf = nullptr;
    mutable std::size_t m_lanesCount = 0;
};

} // namespace railyard
