#pragma once

#include <QGraphicsView>

namespace railyard {

class ClusterScene;

// The canvas: zoom with the wheel, the keys or setZoom(); pan by dragging the background; click
// a device to select it; hover one for its tooltip. Draws the legend and a title block over the
// view so they are in every screenshot.
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

public Q_SLOTS:
    void setZoom(double zoom);
    void zoomIn();
    void zoomOut();
    void fitToCluster();
    // Centres the device, zooming in far enough to see it, and selects it.
    void showDevice(int device);
    // Finds a device by what the user typed ("GPU 1234", "node 17", "leaf 3") and shows it.
    // Returns false if nothing matches.
    bool search(const QString &query);

Q_SIGNALS:
    void zoomChanged(double zoom);

protected:
    void wheelEvent(QWheelEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;

private:
    void applyZoom(double zoom);
    void drawLegend(QPainter *painter);
    void drawTitleBlock(QPainter *painter);

    bool m_legend = true;
    // Until the user zooms, the view keeps the cluster fitted as the window is laid out.
    bool m_autoFit = true;
    QPoint m_pressPos;
};

} // namespace railyard
