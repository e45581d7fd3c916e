#pragma once

#include "legend.h"
#include "scene/levelofdetail.h"
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
    // At most about this many shapes are drawn: a cluster (or source) that would take more at
    // full detail is drawn at the finest level of detail that fits (servers, then racks and
    // scalable units with their names), whatever the output size. 0: no bound.
    int maxElements = kDiagramElementBudget;

    // About 10 MB of SVG (an element is ~400 bytes there) and well under a second to draw.
    static constexpr int kDiagramElementBudget = 25000;
};

// About how many shapes the scene's `source` (null: all of it) takes at each level of detail:
// every device and link (and, with labels, a name per device), a band per device and a box per
// server, or a box per server and rack.
double estimatedElements(const ClusterScene &scene, const QRectF &source, Detail detail);
// The finest level of detail whose estimate fits `maxElements` (0: Labels, no bound).
Detail finestDetailWithin(const ClusterScene &scene, const QRectF &source, int maxElements);

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
    // The finest level of detail paint() draws (Labels unless the element bound caps it).
    Detail finestDetail() const { return m_finest; }

private:
    // A page drawn coarser than every device: under each scalable unit's name, its racks.
    void paintRackRanges(QPainter *painter) const;

    ClusterScene &m_scene;
    QRectF m_source;
    QRect m_diagram, m_titleRect, m_legendRect;
    QSize m_size;
    double m_overlayScale = 1;
    Detail m_finest = Detail::Labels;
    std::unique_ptr<TitleBlock> m_title;
    std::unique_ptr<Legend> m_legend;
};

} // namespace render
} // namespace railyard
