#pragma once

#include <QGraphicsView>

namespace railyard {

class ClusterScene;

// The canvas: zoom with the wheel or keys, pan by dragging the background, fit to the cluster.
// Draws the legend over the view so it is in every screenshot.
class ClusterView : public QGraphicsView
{
    Q_OBJECT

public:
    explicit ClusterView(ClusterScene *scene, QWidget *parent = nullptr);

    double zoom() const;
    void setZoom(double zoom);
    void setLegendVisible(bool visible);
    bool isLegendVisible() const { return m_legend; }

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void fitToCluster();

Q_SIGNALS:
    void zoomChanged(double zoom);

protected:
    void wheelEvent(QWheelEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;

private:
    bool m_legend = true;
    // Until the user zooms, the view keeps the cluster fitted as the window is laid out.
    bool m_autoFit = true;
};

} // namespace railyard
