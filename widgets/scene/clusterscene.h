#pragma once

#include "canvasstate.h"
#include "document/groupref.h"

#include <QGraphicsScene>

#include <memory>
#include <optional>
#include <vector>

namespace railyard {

namespace engine {
class RankLayout;
struct NcclGraphOverlay;
} // namespace engine

class ClusterGeometry;
class Document;
class GpuMarksItem;
class NcclGraphItem;
class LessonMarksItem;
class SelectionItem;

// Shows a document's cluster. It is not the model: it rebuilds its items from the document's
// topology whenever the document says the cluster changed, and re-reads the document's ranks and
// the link loads when they change. Items are aggregates (one per rack, one per block of leaves,
// one for the spine tier), so a 16,384-GPU cluster is a few hundred items; devices are found by
// geometry (deviceAt), not by item.
//
// What the user is looking at (colouring, the link-load view, the selection, the hovered link,
// the playback time) lives in a ViewState beside the document: the scene reads it and marks
// what it says (selected GPUs, the selected and hovered links). Its own setters below write to
// that view state. The scene keeps only what the pointer does on the canvas: the hovered GPU
// (its group and the links its traffic crosses are marked) and the GPUs a drag would drop on.
class ViewState;
class LinkPicker;

class ClusterScene : public QGraphicsScene
{
    Q_OBJECT

public:
    explicit ClusterScene(Document *document, QObject *parent = nullptr);
    ~ClusterScene() override;

    Document *document() const { return m_document; }
    const ClusterGeometry &geometry() const { return *m_geometry; }
    const CanvasState &canvasState() const { return m_state; }
    // The document's ranks (Document::ranks()), or null when the parallel sizes do not
    // describe the cluster.
    const engine::RankLayout *ranks() const;

    int deviceAt(const QPointF &scenePos) const;
    // GPU index (not device id) under a point, or -1; the server and rack under a point, or -1.
    int gpuAt(const QPointF &scenePos) const;
    int nodeAt(const QPointF &scenePos) const;
    int rackAt(const QPointF &scenePos) const;
    // The link whose drawn route passes within `tolerance` scene units of a point (where
    // routes share a trunk, the busiest in the link-load view), or -1.
    int linkAt(const QPointF &scenePos, double tolerance) const;

    // The view state the scene shows and writes to: its own until setViewState() gives it the
    // window's (null: back to its own). The scene re-syncs from it at once. Whoever shows what
    // the view state says (views, panels) connects to its changed() signal: give the scene its
    // view state before they attach.
    ViewState *viewState() const { return m_view; }
    void setViewState(ViewState *view);

    // Shorthands for the view state's selection and colouring, checked against the cluster.
    int selectedDevice() const;
    void setSelectedDevice(int device);
    int selectedLink() const;
    void setSelectedLink(int link);
    std::optional<GroupKind> colourBy() const;
    void setColourBy(std::optional<GroupKind> kind);
    bool isLinkLoadVisible() const;
    void setLinkLoadVisible(bool visible);

    // Hovering a GPU marks its group (of the colouring dimension, TP when not colouring) across
    // the cluster and the links that group's traffic crosses.
    int hoveredGpu() const { return m_hovered; }
    void setHoveredGpu(int gpu);
    std::optional<GroupRef> hoveredGroup() const { return m_hoveredGroup; }
    const std::vector<int> &hoveredGroupGpus() const { return m_hoveredGpus; }
    int hoveredLinkCount() const;

    // GPUs selected by a rubber band, a click or a warning (GPU indices, ascending).
    const std::vector<int> &selectedGpus() const;
    void setSelectedGpus(std::vector<int> gpus);

    // The NCCL graph overlay the view state asks for, placed on this cluster (null: none, or
    // hidden), and the channel drawn (-1: all).
    const engine::NcclGraphOverlay *graphOverlay() const { return m_graph.get(); }
    int graphOverlayPathCount() const;

    // Where a drag would drop: the target GPUs, marked green when the drop would work and red
    // when it would be refused.
    void setDropPreview(const std::vector<int> &gpus, bool ok);
    void clearDropPreview();
    const std::vector<int> &dropPreviewGpus() const { return m_previewGpus; }
    bool dropPreviewOk() const { return m_previewOk; }

Q_SIGNALS:
    void hoveredGpuChanged(int gpu);
    // The ranks or colours changed (a new placement or new sizes).
    void placementChanged();
    void rebuilt();
    // A new cluster no longer fits the NCCL graph overlay, which was dropped: why.
    void graphOverlayDropped(const QString &message);

public Q_SLOTS:
    void rebuild();

private:
    void syncRanks();
    void syncColours();
    void syncLoads();
    void syncMoment();
    bool syncLesson(); // true while a lesson's step is shown
    void syncHover();
    void syncView(int what); // ViewState::Changes
    void syncLinkMarks();
    void syncGraph(bool clusterChanged);
    std::vector<int> gpuDevices(const std::vector<int> &gpus) const;

    Document *m_document;
    ViewState *m_view = nullptr;
    ViewState *m_ownView = nullptr;
    mutable std::unique_ptr<LinkPicker> m_picker; // built on the first hover
    std::unique_ptr<ClusterGeometry> m_geometry;
    CanvasState m_state;
    SelectionItem *m_selection = nullptr;
    GpuMarksItem *m_hoverMarks = nullptr;
    GpuMarksItem *m_selectionMarks = nullptr;
    GpuMarksItem *m_previewMarks = nullptr;
    GpuMarksItem *m_linkMarks = nullptr; // the hovered and the selected link
    NcclGraphItem *m_graphItem = nullptr;
    std::unique_ptr<engine::NcclGraphOverlay> m_graph;
    LessonMarksItem *m_lessonMarks = nullptr;
    int m_hovered = -1;
    std::optional<GroupRef> m_hoveredGroup;
    std::vector<int> m_hoveredGpus;
    std::vector<int> m_previewGpus;
    bool m_previewOk = false;
};

} // namespace railyard
