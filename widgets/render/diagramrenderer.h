#pragma once

#include "legend.h"
#include "titleblock.h"

#include <QFont>
#include <QRectF>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>

class QPainter;

namespace railyard {

class ClusterScene;

namespace render {

struct DiagramOptions
{
    QRectF source;      // the part of the scene to draw; null: the whole cluster
    bool legend = true; // the legend under the diagram
    bool titleBlock = true;
    QString footer; // the title block's last line (an export's date), or none
};

// A cluster diagram as a page: the title block on top, the scene (the whole cluster or a part of
// it) in the middle and the legend under it, on a white page with a margin. It needs no view:
// the window's exporter, the printer and the headless `railyard export` draw through it into any
// QPaintDevice (QSvgGenerator and QPdfWriter keep text as text; a QImage takes a scale factor),
// as Tiled's tmxrasterizer shares its map renderer.
//
// The page is laid out once, in page units (one scene unit to one unit at 96 dpi); paint()
// scales it to the target, so the legend and the title keep their size relative to the diagram
// whatever the device.
class DiagramRenderer
{
public:
    DiagramRenderer(ClusterScene &scene, const QFont &font, const DiagramOptions &options = {});
    ~DiagramRenderer();

    QSize size() const { return m_size; }
    // Draws the page scaled to fit `target` (keeping its proportions, centred).
    void paint(QPainter *painter, const QRectF &target) const;
    // Draws the page at its own size, its top-left corner at the painter's origin.
    void paint(QPainter *painter) const;

    // Where the parts go on the page (for tests: nothing overlaps, nothing is cut off).
    QRectF sceneSource() const { return m_source; }
    QRect diagramRect() const { return m_diagram; }
    QRect titleRect() const { return m_titleRect; }
    QRect legendRect() const { return m_legendRect; }
    const TitleBlock *titleBlock() const { return m_title.get(); }
    const Legend *legend() const { return m_legend.get(); }
    // How much the title block and the legend are enlarged on a wide page (1 up to ~1400 units).
    double overlayScale() const { return m_overlayScale; }

private:
    ClusterScene &m_scene;
    QRectF m_source;
    QRect m_diagram, m_titleRect, m_legendRect;
    QSize m_size;
    double m_overlayScale = 1;
    std::unique_ptr<TitleBlock> m_title;
    std::unique_ptr<Legend> m_legend;
};

} // namespace render
} // namespace railyard
