#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QScrollBar;
class QToolButton;

namespace railyard {

class Document;
class ViewState;
class GanttView;

// The step as a Gantt chart (GanttView), one row per pipeline stage, with the controls of
// playback above it: Play, pause, speed and the step average drive the view state's playback
// time; the line beside them names the running phases (elided to the room it has: the window
// never widens for it). A scroll bar under the chart pans it when zoomed in.
class TimelinePanel : public QWidget
{
    Q_OBJECT

public:
    TimelinePanel(Document *document, ViewState *view, QWidget *parent = nullptr);
    ~TimelinePanel() override;

    // The phases running at the playback time, as the label names them (for tests).
    QString runningText() const;
    // The line beside the controls, in full (the label shows it elided; its tip in full).
    QString statusText() const { return m_statusText; }
    QLabel *statusLabel() const { return m_status; }
    GanttView *gantt() const { return m_gantt; }
    QScrollBar *scrollBar() const { return m_scroll; }
    // A serving layout: which timeline plays (one decode step, one request's life); hidden
    // for training.
    QComboBox *servingTimelineBox() const { return m_servingTimeline; }

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void syncPlayback();
    void syncScrollBar();
    void showStatus();

    Document *m_document;
    ViewState *m_view;
    GanttView *m_gantt;
    QScrollBar *m_scroll;
    QToolButton *m_play;
    QToolButton *m_average;
    QComboBox *m_speed;
    QComboBox *m_servingTimeline;
    QLabel *m_status;
    QString m_statusText;
};

} // namespace railyard
