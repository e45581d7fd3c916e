#pragma once

#include "document/groupref.h"
#include "import/importedmachine.h"

#include <QFlags>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QVariantAnimation;

namespace railyard {

struct LessonFrame;

// How the user is looking at the document, beside it (never in it, never on the undo stack):
// the colouring, the selection, the hovered link and the step's playback. The scene, the
// palette, the inspector, the hottest-links list and the exporter read it; each change says
// what changed. The one animation driver of the canvas lives here: while playing it moves the
// playback time through the step, and everything that shows the moment (the canvas's link
// loads and dashes, the timeline's cursor, the hottest links) follows changed(Playback).
class ViewState : public QObject
{
    Q_OBJECT

public:
    enum Change {
        Hover = 0x1,      // the hovered link
        Playback = 0x2,   // the playback time (or whether one is set)
        Playing = 0x4,    // play / pause, speed
        Colouring = 0x8,  // the dimension GPUs are coloured by
        LinkLoad = 0x10,  // the link-load view on or off
        Selection = 0x20, // the selected device, GPUs or link
        Lesson = 0x100,   // the collective lesson's step shown on the canvas (or none)
        NcclGraph = 0x200 // the NCCL graph overlay: which graph, which channel, shown or not
    };
    Q_DECLARE_FLAGS(Changes, Change)

    explicit ViewState(QObject *parent = nullptr);
    ~ViewState() override;

    // Colouring: GPUs take their group's colour in this dimension (none: plain).
    std::optional<GroupKind> colourBy() const { return m_colourBy; }
    void setColourBy(std::optional<GroupKind> kind);
    // The link-load view: links coloured, thickened and (while playing) dashed by their load.
    bool linkLoad() const { return m_linkLoad; }
    void setLinkLoad(bool on);

    // The selection: one device (its inspector page), GPUs (a rubber band, a click, a warning;
    // ascending, no repeats) and one link (the hottest-links list, a click on a link). The
    // scene checks ids against the cluster before it sets them.
    int selectedDevice() const { return m_selectedDevice; }
    void setSelectedDevice(int device);
    const std::vector<int> &selectedGpus() const { return m_selectedGpus; }
    void setSelectedGpus(std::vector<int> gpus);
    int selectedLink() const { return m_selectedLink; }
    void setSelectedLink(int link);

    // The NCCL graph overlay: the rings and trees of an NCCL_GRAPH_DUMP_FILE drawn over the
    // cluster. The scene places the chosen graph on the cluster (engine::overlayNcclGraph) and
    // drops the overlay when a new cluster no longer fits it.
    struct GraphOverlay
    {
        QString file; // the file's name, as the legend names it
        std::vector<engine::NcclGraph> graphs;
        int graph = 0;       // which of the file's graphs is drawn
        int channel = -1;    // which channel; -1: all of them
        bool visible = true; // View > NCCL Graph Overlay
    };
    const GraphOverlay *graphOverlay() const { return m_graph ? &*m_graph : nullptr; }
    void setGraphOverlay(std::optional<GraphOverlay> overlay); // nullopt: no overlay
    void setGraphOverlayGraph(int graph);                      // and all its channels
    void setGraphOverlayChannel(int channel);
    void setGraphOverlayVisible(bool visible);

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

    // The collective lesson's step on the canvas: while set, the canvas lights its links and
    // marks its GPUs instead of the link-load view. Null: no lesson.
    const LessonFrame *lesson() const { return m_lesson.get(); }
    void setLesson(std::shared_ptr<const LessonFrame> frame);

Q_SIGNALS:
    void changed(railyard::ViewState::Changes what);

private:
    void moveTo(double seconds);
    void restartAnimation();

    std::optional<GroupKind> m_colourBy;
    bool m_linkLoad = false;
    int m_selectedDevice = -1;
    std::vector<int> m_selectedGpus;
    int m_selectedLink = -1;
    int m_hoveredLink = -1;
    double m_stepS = 0;
    double m_time = -1;
    double m_speed = 1;
    bool m_playing = false;
    QVariantAnimation *m_animation = nullptr;
    std::optional<GraphOverlay> m_graph;
    std::shared_ptr<const LessonFrame> m_lesson;
};

} // namespace railyard

Q_DECLARE_OPERATORS_FOR_FLAGS(railyard::ViewState::Changes)
