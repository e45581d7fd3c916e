#pragma once

#include <QFlags>
#include <QObject>

class QVariantAnimation;

namespace railyard {

// How the user is looking at the document, beside it (never in it, never on the undo stack):
// the hovered link and the step's playback. The one animation driver of the canvas lives here:
// while playing it moves the playback time through the step, and everything that shows the
// moment (the canvas's link loads, the timeline's cursor) follows changed(Playback).
class ViewState : public QObject
{
    Q_OBJECT

public:
    enum Change {
        Hover = 0x1,
        Playback = 0x2, // the playback time (or whether one is set)
        Playing = 0x4,  // play / pause, speed
    };
    Q_DECLARE_FLAGS(Changes, Change)

    explicit ViewState(QObject *parent = nullptr);
    ~ViewState() override;

    int hoveredLink() const { return m_hoveredLink; }
    void setHoveredLink(int link);

    // The step being played, in seconds (from the evaluation); the playback time stays in it.
    double stepLength() const { return m_stepS; }
    void setStepLength(double seconds);
    // The moment shown, in seconds from the start of the step; negative: none (the canvas
    // shows the step average).
    double playbackTime() const { return m_time; }
    bool hasMoment() const { return m_time >= 0; }
    void setPlaybackTime(double seconds); // scrubbing: also pauses
    void clearPlaybackTime();

    // Plays the step over kWallSeconds / speed seconds of wall time, looping.
    static constexpr double kWallSeconds = 12.0;
    bool isPlaying() const { return m_playing; }
    void play();
    void pause();
    double speed() const { return m_speed; }
    void setSpeed(double speed);

Q_SIGNALS:
    void changed(railyard::ViewState::Changes what);

private:
    void moveTo(double seconds);
    void restartAnimation();

    int m_hoveredLink = -1;
    double m_stepS = 0;
    double m_time = -1;
    double m_speed = 1;
    bool m_playing = false;
    QVariantAnimation *m_animation = nullptr;
};

} // namespace railyard

Q_DECLARE_OPERATORS_FOR_FLAGS(railyard::ViewState::Changes)
