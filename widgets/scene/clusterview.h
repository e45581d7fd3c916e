#pragma once

#include "document/groupref.h"

#include <QGraphicsView>

#include <memory>
#include <vector>

class QMimeData;

namespace railyard {

class ClusterScene;
struct DropPlan;

// The canvas: zoom with the wheel, the keys or setZoom(); pan by dragging the background; click
// a device to select it; hover one for its tooltip (and, for a GPU, its group and the links its
// traffic crosses). Draws the title block and the legend over the view (widgets/render, shared
// with exports) so they are in every screenshot and, when zoomed in, an overview map in the top
// right corner that says where the view is and moves it when clicked.
//
// Placement by hand: group chips from the palette and GPUs dragged off the canvas drop here (a
// group lands on the GPU, server or rack under the cursor; a GPU swaps ranks with the GPU under
// it), one undo step each. While dragging, the target GPUs are marked green, or red with the
// reason when the drop would be refused. Shift-drag selects GPUs with a rubber band (Ctrl+Shift
// adds to the selection); makeGroupHere() then moves a group onto them. A GPU too small on screen
// to pick up (below kMinDragGpuPx) pans the view instead, and a card at the cursor and the status
// bar say to zoom in.
//
// The code is split by concern: clusterview.cpp (zoom, search, framing, tooltips),
// clusterviewinput.cpp (mouse, keys, context menu), clusterviewdrop.cpp (drags arriving),
// clusterviewpaint.cpp (the overlays).
class ClusterView : public QGraphicsView
{
    Q_OBJECT

public:
    explicit ClusterView(ClusterScene *scene, QWidget *parent = nullptr);

    ClusterScene *clusterScene() const;
    double zoom() const;
    double minZoom() const;
    double maxZoom() const { return 4.0; }
    // The zoom at which the whole cluster fits the viewport.
    double fitZoom() const;
    void setLegendVisible(bool visible);
    bool isLegendVisible() const { return m_legend; }

    // What the cue says while a drag is over the canvas, or while a press too far out to pick
    // up a GPU is held (empty when none).
    QString dragCaption() const { return m_dragCaption; }
    QString dragDetail() const { return m_dragDetail; }
    // Whether GPUs are large enough on screen to pick up and drag at this zoom.
    bool canDragGpus() const;
    // The zoom from which a GPU can be dragged.
    double dragZoom() const;
    // Where the centre of the view is ("SU 3 · Rack 12 · Node 97"), and the overview map's box
    // in viewport coordinates (null when the whole cluster is in view).
    QString locationText() const;
    QRect overviewRect() const;
    // The tooltip for a viewport point: a device's specs (and a GPU's roles), else the link
    // under it (its bytes, utilization and the groups crossing it); empty over nothing.
    QString toolTipAt(const QPoint &pos) const;
    // The link drawn under a viewport point (within a few pixels), or -1; devices come first.
    int linkAtViewport(const QPoint &pos) const;
    // Where the title block and the legend go, in viewport coordinates (null when hidden).
    QRect titleBlockRect() const;
    QRect legendRect() const;
    // Zoomed in on a viewport the overlays would crowd (the title block, the legend and the
    // overview map over more than kMaxOverlayShare of it), they fold: the title to one line, the
    // legend to a "Legend" tab, the map to a smaller one. A click on the tab (or the folded
    // title) unfolds them until the next fit; a click on them unfolded folds them again.
    bool overlaysFolded() const;
    static constexpr double kMaxOverlayShare = 0.2;

    // A GPU narrower than this on screen is too small to pick up.
    static constexpr double kMinDragGpuPx = 14;
    // Between the overlays and the viewport's edges.
    static constexpr int kOverlayMargin = 12;

public Q_SLOTS:
    void setZoom(double zoom);
    void zoomIn();
    void zoomOut();
    void fitToCluster();
    // Centres the device, zooming in far enough to see it, and selects it.
    void showDevice(int device);
    // Centres a link's route, zooming in far enough to see single links, and selects it.
    void showLink(int link);
    // Frames a set of GPUs (a group, a warning's GPUs) and selects them.
    void showGpus(const std::vector<int> &gpus);
    // Finds a device by what the user typed ("GPU 1234", "node 17", "leaf 3") and shows it.
    // Returns false if nothing matches.
    bool search(const QString &query);
    // Moves the group of `kind` that the first selected GPU runs onto the selected GPUs, as one
    // undo step. Returns false (and says why through message()) when it cannot.
    bool makeGroupHere(GroupKind kind);

Q_SIGNALS:
    void zoomChanged(double zoom);
    // Something to tell the user in the status bar: what a drop did, or why it was refused.
    void message(const QString &text, bool refused);

protected:
    void wheelEvent(QWheelEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dragLeaveEvent(QDragLeaveEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    enum class Tone { Ok, Refused, Hint };
    // Where the overlays go now, in viewport coordinates (null rects: not shown).
    struct Overlays
    {
        bool folded = false;
        QRect title;
        QRect legend;
        QRect overview;
        int overviewWidth = 200; // the map's width
        int titleWidth = 0;      // what the full title block wraps to
    };
    Overlays overlays() const;
    bool foldable() const;
    void drawFoldedTitle(QPainter *painter, const QRect &box);
    void drawFoldedLegend(QPainter *painter, const QRect &box);
    void applyZoom(double zoom);
    int overlayWidth() const;
    // The viewport less the title block and the legend: where the fitted cluster goes.
    QRect freeRect() const;
    // The GPU the user sees under a scene point: its box, or its slice of a server drawn as a
    // block when zoomed far out; -1 if none.
    int visibleGpuAt(const QPointF &scenePos) const;
    void drawDragCaption(QPainter *painter);
    // Moves the view so the overview map's point under `pos` (viewport) is centred.
    void centreOnOverview(const QPoint &pos);
    // Plans the drop at `pos` (viewport coordinates), updating the cue; cached per target.
    const DropPlan &planAt(const QMimeData *data, const QPointF &pos);
    void clearDrag();
    bool apply(const DropPlan &plan);
    void startGpuDrag(int gpu);
    void showCue(const QString &caption, const QString &detail, Tone tone, const QPoint &pos);

    bool m_legend = true;
    bool m_unfolded = false; // the user unfolded the overlays (until the next fit)
    // Until the user zooms, the view keeps the cluster fitted as the window is laid out.
    bool m_autoFit = true;
    QPoint m_pressPos;
    int m_pressGpu = -1; // a GPU pressed on, which becomes a drag once the mouse moves
    // A GPU pressed on at a zoom where it is too small to drag: the press pans, and says so.
    int m_pressSmallGpu = -1;
    bool m_banding = false;
    bool m_overviewDrag = false; // the mouse went down on the overview map
    QPoint m_bandEnd;
    // The drag over the canvas: its plan (kept while the target stays the same) and its cue.
    struct DragState;
    std::unique_ptr<DragState> m_drag;
    QString m_dragCaption;
    QString m_dragDetail;
    Tone m_dragTone = Tone::Ok;
    QPoint m_dragPos;

public:
    ~ClusterView() override;
};

} // namespace railyard
