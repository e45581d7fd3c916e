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
// traffic crosses). Draws the legend and a title block over the view so they are in every
// screenshot.
//
// Placement by hand: group chips from the palette and GPUs dragged off the canvas drop here (a
// group lands on the GPU, server or rack under the cursor; a GPU swaps ranks with the GPU under
// it), one undo step each. While dragging, the target GPUs are marked green, or red with the
// reason when the drop would be refused. Shift-drag selects GPUs with a rubber band (Ctrl+Shift
// adds to the selection); makeGroupHere() then moves a group onto them.
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

    // What the cue says while a drag is over the canvas (empty when none).
    QString dragCaption() const { return m_dragCaption; }

public Q_SLOTS:
    void setZoom(double zoom);
    void zoomIn();
    void zoomOut();
    void fitToCluster();
    // Centres the device, zooming in far enough to see it, and selects it.
    void showDevice(int device);
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
    void leaveEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dragLeaveEvent(QDragLeaveEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;

private:
    void applyZoom(double zoom);
    int legendHeight() const;
    void drawLegend(QPainter *painter);
    void drawTitleBlock(QPainter *painter);
    void drawDragCaption(QPainter *painter);
    // Plans the drop at `pos` (viewport coordinates), updating the cue; cached per target.
    const DropPlan &planAt(const QMimeData *data, const QPointF &pos);
    void clearDrag();
    bool apply(const DropPlan &plan);
    void startGpuDrag(int gpu);
    bool canDragGpus() const;

    bool m_legend = true;
    // Until the user zooms, the view keeps the cluster fitted as the window is laid out.
    bool m_autoFit = true;
    QPoint m_pressPos;
    int m_pressGpu = -1; // a GPU pressed on, which becomes a drag once the mouse moves
    bool m_banding = false;
    QPoint m_bandEnd;
    // The drag over the canvas: its plan (kept while the target stays the same) and its cue.
    struct DragState;
    std::unique_ptr<DragState> m_drag;
    QString m_dragCaption;
    QString m_dragDetail;
    bool m_dragOk = false;
    QPoint m_dragPos;

public:
    ~ClusterView() override;
};

} // namespace railyard
