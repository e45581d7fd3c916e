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
}

class ClusterGeometry;
class Document;
class GpuMarksItem;
class SelectionItem;

// Shows a document's cluster. It is not the model: it rebuilds its items from the document's
// topology whenever the document says the cluster changed, and re-reads the ranks and link loads
// when the workload, the mapping or the evaluation change. Items are aggregates (one per rack,
// one per block of leaves, one for the spine tier), so a 16,384-GPU cluster is a few hundred
// items; devices are found by geometry (deviceAt), not by item.
//
// Beside the hardware it holds what the user is looking at: colouring by a parallel dimension,
// the link-load view, the hovered GPU (its group and the links its traffic crosses are marked),
// the selected GPUs and the GPUs a drag would drop on.
class ViewState;

class ClusterScene : public QGraphicsScene
{
    Q_OBJECT

public:
    explicit ClusterScene(Document *document, QObject *parent = nullptr);
    ~ClusterScene() override;

    Document *document() const { return m_document; }
    const ClusterGeometry &geometry() const { return *m_geometry; }
    const CanvasState &canvasState() const { return m_state; }
    // The job's ranks, or null when the parallel sizes do not describe the cluster.
    const engine::RankLayout *ranks() const { return m_ranks.get(); }

    int deviceAt(const QPointF &scenePos) const;
    // GPU index (not device id) under a point, or -1; the server and rack under a point, or -1.
    int gpuAt(const QPointF &scenePos) const;
    int nodeAt(const QPointF &scenePos) const;
    int rackAt(const QPointF &scenePos) const;
    int selectedDevice() const { return m_selected; }
    void setSelectedDevice(int device);

    std::optional<GroupKind> colourBy() const { return m_state.colourBy; }
    void setColourBy(std::optional<GroupKind> kind);
    bool isLinkLoadVisible() const { return m_state.linkLoad; }
    void setLinkLoadVisible(bool visible);
    // The view state whose playback time the link-load view shows (the step average without
    // one, or while it has no moment).
    void setViewState(ViewState *view);

    // Hovering a GPU marks its group (of the colouring dimension, TP when not colouring) across
    // the cluster and the links that group's traffic crosses.
    int hoveredGpu() const { return m_hovered; }
    void setHoveredGpu(int gpu);
    std::optional<GroupRef> hoveredGroup() const { return m_hoveredGroup; }
    const std::vector<int> &hoveredGroupGpus() const { return m_hoveredGpus; }
    int hoveredLinkCount() const;

    // GPUs selected by a rubber band, a click or a warning (GPU indices, ascending).
    const std::vector<int> &selectedGpus() const { return m_selectedGpus; }
    void setSelectedGpus(std::vector<int> gpus);

    // Where a drag would drop: the target GPUs, marked green when the drop would work and red
    // when it would be refused.
    void setDropPreview(const std::vector<int> &gpus, bool ok);
    void clearDropPreview();
    const std::vector<int> &dropPreviewGpus() const { return m_previewGpus; }
    bool dropPreviewOk() const { return m_previewOk; }

Q_SIGNALS:
    void selectedDeviceChanged(int device);
    void selectedGpusChanged();
    void hoveredGpuChanged(int gpu);
    void colourByChanged();
    void linkLoadVisibleChanged(bool visible);
    // The ranks or colours changed (a new placement or new sizes).
    void placementChanged();
    void rebuilt();

public Q_SLOTS:
    void rebuild();

private:
    void syncRanks();
    void syncColours();
    void syncLoads();
    void syncMoment();
    void syncHover();
    std::vector<int> gpuDevices(const std::vector<int> &gpus) const;

    Document *m_document;
    ViewState *m_view = nullptr;
    std::unique_ptr<ClusterGeometry> m_geometry;
    std::unique_ptr<engine::RankLayout> m_ranks;
    CanvasState m_state;
    SelectionItem *m_selection = nullptr;
    GpuMarksItem *m_hoverMarks = nullptr;
    GpuMarksItem *m_selectionMarks = nullptr;
    GpuMarksItem *m_previewMarks = nullptr;
    int m_selected = -1;
    int m_hovered = -1;
    std::optional<GroupRef> m_hoveredGroup;
    std::vector<int> m_hoveredGpus;
    std::vector<int> m_selectedGpus;
    std::vector<int> m_previewGpus;
    bool m_previewOk = false;
};

} // namespace railyard
