#pragma once

#include "base/jsonvalue.h"
#include "document/groupref.h"
#include "import/importedmachine.h"
#include "report/moment.h"
#include "step/timeline.h"

#include <QFlags>
#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QAbstractAnimation;
class QVariantAnimation;

namespace railyard {

class Document;
struct LessonFrame;

// How the user is looking at the document, beside it (never in it, never on the undo stack):
// the colouring, the selection, the hovered link and the step's playback. The scene, the
// palette, the inspector, the hottest-links list and the exporter read it; each change says
// what changed. The one animation driver of the canvas lives here: while playing it moves the
// playback time through the step (whose length is the document's evaluation's), and the
// moment (engine::StepMoment: the running phases, the link loads, the busiest links) is
// computed here once per frame; everything that shows it (the canvas's link loads and dashes,
// the timeline's cursor, the hottest links) reads it on changed(Playback) and changed(Moment).
// It owns the layout file's "color_by" and "link_load" view keys: it reads them from a layout
// and keeps the document's "view" up to date, so a save or an autosave writes what is shown.
class ViewState : public QObject
{
    Q_OBJECT

public:
    enum Change {
        Hover = 0x1,           // the hovered link
        Playback = 0x2,        // the playback time (or whether one is set)
        Playing = 0x4,         // play / pause, speed
        Colouring = 0x8,       // the dimension GPUs are coloured by
        LinkLoad = 0x10,       // the link-load view on or off
        SelectedDevice = 0x20, // the selected device
        SelectedGpus = 0x40,   // the selected GPUs
        SelectedLink = 0x80,   // the selected link
        Lesson = 0x100,        // the collective lesson's step shown on the canvas (or none)
        NcclGraph = 0x200,     // the NCCL graph overlay: which graph, which channel, shown or not
        Moment = 0x400,     // the moment's loads: other phases run, a new evaluation, no moment now
        LessonPlay = 0x800, // the lesson's played step moved on, or its playing started or stopped
        Timeline = 0x1000   // a serving layout's timeline: one decode step or one request's life
    };
    Q_DECLARE_FLAGS(Changes, Change)

    // The view of `document` (null: of nothing; no step to play).
    explicit ViewState(Document *document = nullptr, QObject *parent = nullptr);
    ~ViewState() override;

    Document *document() const;

    // The layout file's "view" keys of this state: "color_by" (a kindKey(), or "none") and
    // "link_load". Applies those `view` has (other keys, the window's zoom and focus, are not
    // this state's); writes them into `view`, keeping its other keys.
    void readLayoutView(const engine::Json &view);
    void writeLayoutView(engine::Json &view) const;
    // Writes them into the document's "view" (no edit, no signal). Done at each change of
    // them, so that an autosave writes what is shown; a save does it once more, so that the
    // file always says how it was shown.
    void writeDocumentView() const;

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

    // What is played: the training step, or for a serving layout one decode step or one
    // request's life (waiting, prefill, KV transfer, its decode steps).
    enum class ServingTimeline { DecodeStep, Request };
    ServingTimeline servingTimeline() const { return m_servingTimeline; }
    void setServingTimeline(ServingTimeline which);
    // The timeline played: the document's step, or the chosen serving one (empty: none).
    const engine::StepTimeline &timeline() const;

    // The step being played, in seconds: the document's evaluation's timeline (0: none); the
    // playback time stays in it.
    double stepLength() const { return m_stepS; }
    // The moment shown, in seconds from the start of the step; negative: none (the canvas
    // shows the step average).
    double playbackTime() const { return m_time; }
    bool hasMoment() const { return m_time >= 0; }
    void setPlaybackTime(double seconds); // scrubbing: also pauses
    void clearPlaybackTime();
    // What happens at the moment shown (empty without one): the phases running, the links'
    // loads, the kBusiestLinks busiest. Recomputed only when the running phases change.
    static constexpr std::size_t kBusiestLinks = 20;
    const engine::StepMoment &moment() const { return m_moment; }

    // Plays the step over kWallSeconds / speed seconds of wall time, looping.
    static constexpr double kWallSeconds = 12.0;
    bool isPlaying() const { return m_playing; }
    void play();
    void pause();
    double speed() const { return m_speed; }
    void setSpeed(double speed);
    // The collective lesson's steps played on the same driver, one per kLessonStepMs, from
    // `from` to `last`, then it stops (changed(LessonPlay) at each step and at the stop).
    // Playing the lesson pauses the step's playback and playing the step stops the lesson.
    static constexpr int kLessonStepMs = 1200;
    void playLesson(int from, int last);
    void stopLesson();
    bool isLessonPlaying() const { return m_lessonPlaying; }
    int lessonPlayStep() const { return m_lessonStep; }

    // The animation driver (for tests: its setCurrentTime moves a playing step's time, or a
    // playing lesson's step).
    QAbstractAnimation *driver() const;

    // The collective lesson's step on the canvas: while set, the canvas lights its links and
    // marks its GPUs instead of the link-load view. Null: no lesson.
    const LessonFrame *lesson() const { return m_lesson.get(); }
    void setLesson(std::shared_ptr<const LessonFrame> frame);

Q_SIGNALS:
    void changed(railyard::ViewState::Changes what);

private:
    void moveTo(double seconds);
    void restartAnimation();
    void syncEvaluation();
    bool syncMoment(bool fresh); // whether the moment's loads changed
    void keepDocumentView(Changes what);

    QPointer<Document> m_document;
    engine::StepMoment m_moment;
    std::optional<GroupKind> m_colourBy;
    bool m_linkLoad = false;
    int m_selectedDevice = -1;
    std::vector<int> m_selectedGpus;
    int m_selectedLink = -1;
    int m_hoveredLink = -1;
    double m_stepS = 0;
    double m_time = -1;
    double m_speed = 1;
    ServingTimeline m_servingTimeline = ServingTimeline::DecodeStep;
    bool m_playing = false;
    bool m_lessonPlaying = false;
    bool m_configuring = false; // the driver's values are being set: no frame
    int m_lessonStep = 0;
    QVariantAnimation *m_animation = nullptr;
    std::optional<GraphOverlay> m_graph;
    std::shared_ptr<const LessonFrame> m_lesson;
};

} // namespace railyard

Q_DECLARE_OPERATORS_FOR_FLAGS(railyard::ViewState::Changes)
