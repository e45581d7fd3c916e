#pragma once

#include "report/reviewreport.h"

#include <QFont>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <vector>

class QPagedPaintDevice;
class QPaintDevice;
class QPainter;

namespace railyard {

// Lays a review report (engine::ReviewReport: its text and tables) out on A4 portrait pages and
// paints it: a title page; then each section, its heading kept with what follows, tables split
// between rows with their header repeated, and figures scaled to the text width; a footer with
// the title and "Page n of N" on every page. The figures (the diagram, the charts) come from
// the caller, which draws them with the renderers the window uses.
//
// Everything is measured on the device it is painted on (a QPdfWriter at 96 dpi), in its
// units; the type scale is in points.
class ReviewPdf
{
public:
    struct Figure
    {
        // Its height at a width, at most `maxHeight` (a page's text height, less its caption).
        std::function<double(double width, double maxHeight)> height;
        std::function<void(QPainter *, const QRectF &)> paint;
    };
    using Figures = std::map<engine::ReviewFigure, Figure>;

    ReviewPdf(const engine::ReviewReport &report,
              Figures figures,
              QPaintDevice *device,
              const QFont &font,
              const QString &footer);
    ~ReviewPdf();

    int pageCount() const;
    // Paints every page on `painter` (begun on `device`), with device->newPage() between them.
    // Returns false when the device refused a page.
    bool paint(QPagedPaintDevice *device, QPainter *painter) const;

    // For tests: the page each section's heading is on (from 1), by heading.
    std::map<std::string, int> sectionPages() const;

private:
    struct Chunk;
    void build(const engine::ReviewReport &report);
    void paginate();
    void addText(const QString &text,
                 const QFont &font,
                 const QColor &colour,
                 double spaceBefore,
                 bool keepWithNext = false,
                 double indent = 0);
    void addTable(const engine::ReviewTable &table, const QString &caption);
    void addFigure(engine::ReviewFigure figure, const QString &caption);
    void addTitlePage(const engine::ReviewReport &report);

    QPaintDevice *m_device;
    Figures m_figures;
    QFont m_base;
    QString m_footer;
    QRectF m_body; // the text area of a page
    QSizeF m_page;
    std::vector<Chunk> m_chunks;
    // Per page, the chunks on it (indices into m_chunks; a negative index -h-1 repeats table
    // header h) and where each goes.
    struct Placed
    {
        int chunk;
        double y;
    };
    std::vector<std::vector<Placed>> m_pages;
    std::map<std::string, int> m_sectionPages;
};

} // namespace railyard
