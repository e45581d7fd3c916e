#pragma once

#include <QRectF>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>
#include <vector>

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

// A part of the cluster to draw (`railyard export --region`): the GPUs, servers, racks or
// scalable units with these indices (as the canvas numbers them, from 0; `ranges` holds first
// and last, inclusive), or an area of the scene.
struct DiagramRegion
{
    enum class Kind { Whole, Gpus, Nodes, Racks, ScalableUnits, Area };
    Kind kind = Kind::Whole;
    std::vector<std::pair<int, int>> ranges;
    QRectF area;
    QString text; // as the user wrote it, for messages
};

// The title block's last line of an export: today's date and the program.
QString defaultExportFooter();

// The part of the scene that holds `region` (with a small margin), or a null rectangle when
// it is the whole cluster. An index the cluster does not have, or an area outside it, is an
// error: returns a null rectangle and sets `error` (non-empty) to what the cluster has.
QRectF regionRect(const ClusterScene &scene, const DiagramRegion &region, QString *error);

struct DiagramExportOptions
{
    QRectF source;        // the part of the scene; null: the whole cluster (or `region`)
    DiagramRegion region; // headless exports: resolved to `source` once the layout is read
    // PNG: pixels per page unit (2 doubles the width and height); a coarse page's unit is its
    // kCoarseVectorPageWidth-wide page.
    double scale = 1;
    // PNG: the image's width in pixels (the height keeps the page's proportions); 0: the page's
    // width times `scale`.
    int width = 0;
    // PNG without `width`: the image is at most this many pixels wide and tall, `scale` lowered
    // to fit (a 16,384-GPU page is 42,000 units wide); 0: `scale` as given.
    int maxSide = 0;
    QString footer; // the title block's last line; empty: today's date and the program
    // Serving, with a moment: the moment is of one request's life (prefill, KV transfer, decode
    // tokens), not of the decode step.
    bool momentOfRequest = false;
};

// What `railyard export` and File > Export make of a page too large for a readable image: a
// PNG at most this wide and tall unless a width is asked for; and a page drawn coarser than
// every device (16,384 GPUs: scalable units and racks) is laid out at most this wide, the width
// of a screen showing the whole cluster, so that its names and links read when the picture is
// shown at a document's page width (its PNG is that page, `scale` or `width` times sharper).
inline constexpr int kDefaultMaxPngSide = 8192;
inline constexpr int kCoarseVectorPageWidth = 1400;
// No image larger than this is made (4 bytes a pixel: 1 GiB).
inline constexpr qint64 kMaxPngPixels = qint64(1) << 28;

// Where a file the user asked for may be written (engine::checkOutputFile: a regular file or a
// new name, a symlink followed only to one, never a device, a FIFO, a folder or one of
// `inputs`): the file to hand QSaveFile, or empty with `error` set to why.
QString checkedExportTarget(const QString &path, const QStringList &inputs, QString *error);

// Writes the scene's diagram to `path` in the format of its suffix (SVG, PNG or PDF). On
// failure returns false and sets `error` to a message naming the file. The title block shows
// the whole band (the document's stack range is finished first).
bool exportDiagram(ClusterScene &scene,
                   const QString &path,
                   const DiagramExportOptions &options,
                   QString *error);

// Writes the document's report to `path`: Markdown, CSV (the links with traffic) or JSON
// (every number, every link), with the whole band (the stack range finished first).
bool exportReport(Document &document, const QString &path, QString *error);

// Draws a widget (a Pricing chart) as SVG, PNG (at `scale`) or PDF.
bool exportWidget(QWidget *widget, const QString &path, double scale, QString *error);

// layoutexport.cpp: a layout read from a file for a headless export.

// Colours the scene as the window opens it: by the first dimension that splits the job, unless
// the layout's "view" names a colouring; the link-load view as the layout says.
void applyLayoutView(ClusterScene &scene);

// What a headless export of a layout shows beyond applyLayoutView: a diagram drawn coarser than
// every device (the element bound) shows the load on the links, so the busy ones stand out,
// unless the layout's "view" says whether to (`namesLinkLoad`: read before applyLayoutView,
// which writes the view it shows back into the document).
void showBusyLinksWhenCoarse(ClusterScene &scene, const QRectF &source, bool namesLinkLoad);

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
