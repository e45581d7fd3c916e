#pragma once

#include <QRectF>
#include <QString>

#include <optional>

class QWidget;

namespace railyard {

class ClusterScene;
class Document;

// What File > Export, File > Print's sibling and `railyard export` write: a cluster diagram
// (SVG, PNG, PDF) drawn by render::DiagramRenderer, a report (Markdown, CSV, JSON) written by
// the engine, or a chart as an image. Every file is written atomically (QSaveFile): a failed
// export leaves the file that was there.
enum class ExportFormat { Svg, Png, Pdf, Markdown, Csv, Json };

// The format a file name asks for by its suffix (case-insensitive), or none.
std::optional<ExportFormat> exportFormatForPath(const QString &path);
bool isDiagramFormat(ExportFormat format);

struct DiagramExportOptions
{
    QRectF source;    // the part of the scene; null: the whole cluster
    double scale = 1; // PNG: pixels per page unit (2 doubles the width and height)
    // PNG: the image's width in pixels (the height keeps the page's proportions); 0: the page's
    // width times `scale`.
    int width = 0;
    // PNG without `width`: the image is at most this many pixels wide and tall, `scale` lowered
    // to fit (a 16,384-GPU page is 42,000 units wide); 0: `scale` as given.
    int maxSide = 0;
    QString footer; // the title block's last line; empty: today's date and the program
};

// What `railyard export` and File > Export make of a page too large for a readable image: a
// PNG at most this wide and tall unless a width is asked for, and a vector page (SVG, PDF)
// drawn coarser than every device at most this wide, so its scalable-unit and rack names read.
inline constexpr int kDefaultMaxPngSide = 8192;
inline constexpr int kCoarseVectorPageWidth = 2400;
// No image larger than this is made (4 bytes a pixel: 1 GiB).
inline constexpr qint64 kMaxPngPixels = qint64(1) << 28;

// Writes the scene's diagram to `path` in the format of its suffix (SVG, PNG or PDF). On
// failure returns false and sets `error` to a message naming the file.
bool exportDiagram(ClusterScene &scene,
                   const QString &path,
                   const DiagramExportOptions &options,
                   QString *error);

// Writes the document's report to `path`: Markdown, CSV (the links with traffic) or JSON
// (every number, every link).
bool exportReport(const Document &document, const QString &path, QString *error);

// Draws a widget (a Pricing chart) as SVG, PNG (at `scale`) or PDF.
bool exportWidget(QWidget *widget, const QString &path, double scale, QString *error);

// Colours the scene as the window opens it: by the first dimension that splits the job, unless
// the layout's "view" names a colouring; the link-load view as the layout says.
void applyLayoutView(ClusterScene &scene);

// Headless: reads the layout FILE, prices it and writes its diagram to `out`; `at` >= 0 draws
// the link load at that moment of the step (the title block says when, and what runs then)
// rather than the step average. Needs a QGuiApplication. Returns false and sets `error`
// (naming the file) on failure.
bool exportLayoutDiagram(
        const QString &layoutPath, const QString &out, double scale, double at, QString *error);
// The same with every option: `options.footer` is replaced when `at` >= 0.
bool exportLayoutDiagram(const QString &layoutPath,
                         const QString &out,
                         DiagramExportOptions options,
                         double at,
                         QString *error);

} // namespace railyard
