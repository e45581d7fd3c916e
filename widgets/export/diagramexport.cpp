#include "diagramexport.h"

#include "base/inputerror.h"
#include "base/outputfile.h"
#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "document/document.h"
#include "document/safesave.h"
#include "render/diagramrenderer.h"
#include "report/report.h"
#include "scene/clusterscene.h"

#include <railyard/version.h>

#include <QBuffer>
#include <QCoreApplication>
#include <QDate>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QLocale>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <new>
#include <sstream>

namespace railyard {

namespace {

// QSvgGenerator defaults to 72 dpi and QPdfWriter to 1200: both are set to 96, the dpi the
// page is laid out in, so a 12 px label is 12 px (9 pt) in every format.
constexpr int kDpi = 96;

QString tr(const char *text)
{
    return QCoreApplication::translate("Export", text);
}

QString describe(const QSaveFile &file)
{
    return QStringLiteral("%1: %2").arg(QFileInfo(file.fileName()).absoluteFilePath(),
                                        file.errorString());
}

// Text from a file as it may go into a PDF's metadata or an SVG's <title>: one line, no
// control characters; for the SVG, XML-escaped unless this Qt escapes it itself (6.4's
// QSvgGenerator writes the title and the description as they are).
QString metadataText(const QString &text)
{
    return QString::fromStdString(engine::plainText(text.toStdString()));
}
bool svgGeneratorEscapesMetadata()
{
    static const bool escapes = [] {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator probe;
        probe.setOutputDevice(&buffer);
        probe.setSize(QSize(1, 1));
        probe.setTitle(QStringLiteral("<&>"));
        QPainter p;
        if (p.begin(&probe))
            p.end();
        return !buffer.data().contains("<&>");
    }();
    return escapes;
}
QString svgMetadataText(const QString &text)
{
    const std::string plain = engine::plainText(text.toStdString());
    return QString::fromStdString(svgGeneratorEscapesMetadata() ? plain : engine::xmlText(plain));
}

// What QSvgGenerator writes, on its way to the file: C0 control characters (which a label drawn
// from a hostile layout may hold, and which XML forbids even as &#1;) are dropped, so the SVG
// stays well-formed. They never occur inside a UTF-8 sequence, so bytes can be filtered one by
// one; every tag and attribute Qt writes is ASCII without them.
class XmlSafeDevice : public QIODevice
{
public:
    explicit XmlSafeDevice(QIODevice *to)
        : m_to(to)
    {
        open(QIODevice::WriteOnly);
    }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 size) override
    {
        QByteArray kept;
        kept.reserve(size);
        for (qint64 i = 0; i < size; ++i) {
            const auto c = static_cast<unsigned char>(data[i]);
            if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r')
                kept.append(data[i]);
        }
        return m_to->write(kept) == kept.size() ? size : -1;
    }

private:
    QIODevice *m_to;
};

// QSvgGenerator writes a cosmetic pen (the canvas's hairlines, drawn at a width in device
// pixels whatever the zoom) as vector-effect="non-scaling-stroke" inside a group scaled to the
// page. Renderers that ignore that attribute (librsvg 2.54, several document editors) then
// draw a 16,384-GPU page's links 0.03 units wide: invisible. Each such group's stroke width and
// dashes are written in its own units instead (divided by its scale), so every renderer draws
// them as the page shows them. The generator's groups are flat (a group closes before the next
// opens), and text holds no '<'.
QByteArray resolveNonScalingStrokes(const QByteArray &svg)
{
    static const QByteArray kGroup("<g "), kEnd("</g>"),
            kEffect(" vector-effect=\"non-scaling-stroke\""), kMatrix("transform=\"matrix(");
    const auto attribute = [](const QByteArray &tag, const QByteArray &name, int *from, int *to) {
        const int at = tag.indexOf(" " + name + "=\"");
        if (at < 0)
            return false;
        *from = at + name.size() + 3;
        *to = tag.indexOf('"', *from);
        return *to > *from;
    };
    QByteArray out;
    out.reserve(svg.size());
    int pos = 0;
    while (pos < svg.size()) {
        const int group = svg.indexOf(kGroup, pos);
        const int tagEnd = group < 0 ? -1 : svg.indexOf('>', group);
        if (tagEnd < 0) {
            out += svg.mid(pos);
            break;
        }
        out += svg.mid(pos, group - pos);
        int end = svg.size();
        for (const QByteArray &next : {kGroup, kEnd})
            if (const int at = svg.indexOf(next, tagEnd); at >= 0)
                end = std::min(end, at);
        QByteArray tag = svg.mid(group, tagEnd + 1 - group);
        QByteArray body = svg.mid(tagEnd + 1, end - tagEnd - 1);
        const int matrix = tag.indexOf(kMatrix);
        if (body.contains(kEffect) && matrix >= 0) {
            const QList<QByteArray> m = tag.mid(matrix + kMatrix.size(),
                                                tag.indexOf(')', matrix) - matrix - kMatrix.size())
                                                .split(',');
            const double k = m.size() == 6
                                     ? std::sqrt(std::abs(m[0].toDouble() * m[3].toDouble()
                                                          - m[1].toDouble() * m[2].toDouble()))
                                     : 0;
            if (k > 0 && std::isfinite(k)) {
                int from = 0, to = 0;
                if (attribute(tag, "stroke-width", &from, &to))
                    tag.replace(from,
                                to - from,
                                QByteArray::number(tag.mid(from, to - from).toDouble() / k, 'g', 6));
                if (attribute(tag, "stroke-dasharray", &from, &to)) {
                    QList<QByteArray> dashes = tag.mid(from, to - from).split(',');
                    for (QByteArray &d : dashes)
                        d = QByteArray::number(d.trimmed().toDouble() / k, 'g', 6);
                    tag.replace(from, to - from, dashes.join(','));
                }
                body.replace(kEffect, QByteArray());
            }
        }
        out += tag;
        out += body;
        pos = end;
    }
    return out;
}

QSize scaled(QSize size, double k)
{
    return QSize(std::max(1, int(std::lround(size.width() * k))),
                 std::max(1, int(std::lround(size.height() * k))));
}

// Paints `draw` (a page of `page` units) into `path` as the format says, through a QSaveFile:
// a vector page `output` units wide and high, or an image of `output` pixels. An image with a
// `pixelRatio` above 1 is drawn as a page of output / pixelRatio units, that many pixels to the
// unit (as on a high-density screen: lines and names keep their size relative to the page).
template<class Draw>
bool writePage(const QString &path,
               ExportFormat format,
               QSize page,
               QSize output,
               const QString &title,
               Draw draw,
               QString *error,
               const QStringList &inputs = {},
               double pixelRatio = 1)
{
    if (format == ExportFormat::Png
        && (output.isEmpty() || qint64(output.width()) * output.height() > kMaxPngPixels)) {
        *error = tr("Cannot write %1: a %2 \u00d7 %3 image is too large (lower the scale or "
                    "the width)")
                         .arg(QFileInfo(path).absoluteFilePath())
                         .arg(output.width())
                         .arg(output.height());
        return false;
    }
    const QString target = checkedExportTarget(path, inputs, error);
    if (target.isEmpty())
        return false;
    QSaveFile file(target);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = tr("Cannot write %1").arg(describe(file));
        return false;
    }
    bool painted = false;
    // SVG and PDF are drawn into memory, then written with a checked write (neither
    // QSvgGenerator nor QPdfWriter looks at its device's write() results: a full disk left a
    // truncated file and success).
    QByteArray drawn;
    if (format == ExportFormat::Svg) {
        // Gathered whole (at most about 10 MB: the element bound), its hairlines resolved,
        // then written.
        QBuffer gathered;
        gathered.open(QIODevice::WriteOnly);
        XmlSafeDevice safe(&gathered);
        QSvgGenerator svg;
        svg.setOutputDevice(&safe);
        svg.setResolution(kDpi);
        svg.setSize(output);
        svg.setViewBox(QRect(QPoint(0, 0), output));
        svg.setTitle(svgMetadataText(title));
        svg.setDescription(
                svgMetadataText(tr("Drawn by Railyard %1").arg(QStringLiteral(RAILYARD_VERSION))));
        QPainter p;
        if ((painted = p.begin(&svg))) {
            draw(&p, QRectF(QPointF(0, 0), output));
            p.end();
        }
        drawn = resolveNonScalingStrokes(gathered.data());
    } else if (format == ExportFormat::Pdf) {
        QBuffer gathered;
        gathered.open(QIODevice::WriteOnly);
        {
            QPdfWriter pdf(&gathered);
            pdf.setResolution(kDpi);
            pdf.setTitle(metadataText(title));
            pdf.setCreator(QStringLiteral("Railyard %1").arg(QStringLiteral(RAILYARD_VERSION)));
            // One page the size of the diagram (72 points to the inch), no margins.
            pdf.setPageSize(QPageSize(QSizeF(output) * 72.0 / kDpi,
                                      QPageSize::Point,
                                      metadataText(title),
                                      QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            QPainter p;
            if ((painted = p.begin(&pdf))) {
                draw(&p, QRectF(QPointF(0, 0), QSizeF(pdf.width(), pdf.height())));
                painted = p.end();
            }
        }
        drawn = gathered.data();
    } else {
        const QSize pixels = output;
        // Opaque (the page is white): a PNG of RGB, not RGBA, is a quarter smaller and quicker.
        QImage image(pixels, QImage::Format_RGB32);
        if (image.isNull()) {
            *error = tr("Cannot write %1: a %2 \u00d7 %3 image is too large (lower the scale)")
                             .arg(QFileInfo(path).absoluteFilePath())
                             .arg(pixels.width())
                             .arg(pixels.height());
            file.cancelWriting();
            return false;
        }
        const double scale = double(pixels.width()) / std::max(1, page.width());
        image.setDotsPerMeterX(qRound(kDpi * scale / 0.0254));
        image.setDotsPerMeterY(qRound(kDpi * scale / 0.0254));
        image.fill(Qt::white);
        image.setDevicePixelRatio(pixelRatio);
        QPainter p;
        if ((painted = p.begin(&image))) {
            draw(&p, QRectF(QPointF(0, 0), QSizeF(pixels) / pixelRatio));
            p.end();
        }
        // Quality 80: a lighter zlib level than the default, which spends 3/4 of an 8,192-pixel
        // export compressing; the file is a few percent larger.
        painted = painted && image.save(&file, "PNG", 80);
    }
    if (!painted && file.error() == QFileDevice::NoError) {
        file.cancelWriting();
        *error = tr("Cannot draw %1").arg(QFileInfo(path).absoluteFilePath());
        return false;
    }
    // A write that failed while drawing (a full disk) is reported as such: the reason, not
    // "cannot draw".
    QString reason;
    if (!(format == ExportFormat::Png ? commitSaveFile(file, &reason)
                                      : writeAndCommitSaveFile(file, drawn, &reason))) {
        *error = tr("Cannot write %1: %2").arg(QFileInfo(path).absoluteFilePath(), reason);
        return false;
    }
    return true;
}

// The size a page is written at, and for a PNG how many pixels make one unit of that size. A
// page at full detail: its own size as a vector page; as a PNG `width` pixels wide, or the page
// times the scale, within `maxSide`, each pixel one unit drawn (a larger image shows more
// detail, as a closer zoom does). A page drawn coarser than every device (the element bound of
// DiagramRenderer) is laid out to be read at a document's page width: at most
// kCoarseVectorPageWidth units wide, where the scalable units' and racks' names and the links
// keep the size they have on a screen of that width; its PNG is that page, sharper (`width`
// pixels, or the scale times the page).
struct PageOutput
{
    QSize size;
    double pixelRatio = 1;
};

PageOutput outputSize(ExportFormat format,
                      QSize page,
                      Detail finest,
                      const DiagramExportOptions &options)
{
    if (page.isEmpty())
        return {page, 1};
    const bool coarse = finest < Detail::Devices && page.width() > kCoarseVectorPageWidth;
    const QSize vector = coarse ? scaled(page, double(kCoarseVectorPageWidth) / page.width())
                                : page;
    if (format != ExportFormat::Png)
        return {vector, 1};
    QSize pixels;
    if (options.width > 0) {
        pixels = scaled(vector, double(options.width) / vector.width());
    } else {
        double k = options.scale;
        if (options.maxSide > 0)
            k = std::min(k, double(options.maxSide) / std::max(vector.width(), vector.height()));
        pixels = scaled(vector, k);
    }
    return {pixels, coarse ? double(pixels.width()) / vector.width() : 1.0};
}

QString outOfMemory(const QString &path, int gpus)
{
    return tr("%1: out of memory while exporting the diagram of %2 GPUs; try a smaller PNG "
              "(--width), a PNG instead of SVG or PDF, or a part of the cluster")
            .arg(QFileInfo(path).absoluteFilePath(), QLocale::c().toString(gpus));
}

} // namespace

QString defaultExportFooter()
{
    return tr("%1 \u00b7 Railyard %2")
            .arg(QLocale::c().toString(QDate::currentDate(), QStringLiteral("d MMMM yyyy")),
                 QStringLiteral(RAILYARD_VERSION));
}

namespace {

QString documentTitle(const Document &doc)
{
    const QString title = QString::fromStdString(engine::shownTitle(doc.layout().title));
    return title.isEmpty() ? doc.displayName() : title;
}

} // namespace

QString checkedExportTarget(const QString &path, const QStringList &inputs, QString *error)
{
    std::vector<std::string> in;
    for (const QString &i : inputs)
        in.push_back(i.toStdString());
    try {
        return QString::fromStdString(engine::checkOutputFile(path.toStdString(), in).target);
    } catch (const engine::InputError &e) {
        *error = tr("Cannot write %1").arg(QString::fromStdString(e.what()));
        return {};
    }
}

std::optional<ExportFormat> exportFormatForPath(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("svg"))
        return ExportFormat::Svg;
    if (suffix == QLatin1String("png"))
        return ExportFormat::Png;
    if (suffix == QLatin1String("pdf"))
        return ExportFormat::Pdf;
    if (suffix == QLatin1String("md"))
        return ExportFormat::Markdown;
    if (suffix == QLatin1String("csv"))
        return ExportFormat::Csv;
    if (suffix == QLatin1String("json"))
        return ExportFormat::Json;
    return std::nullopt;
}

bool isDiagramFormat(ExportFormat f)
{
    return f == ExportFormat::Svg || f == ExportFormat::Png || f == ExportFormat::Pdf;
}

static bool writeDiagram(ClusterScene &scene,
                         const QString &path,
                         ExportFormat format,
                         const DiagramExportOptions &options,
                         QString *error);

bool exportDiagram(ClusterScene &scene,
                   const QString &path,
                   const DiagramExportOptions &options,
                   QString *error)
{
    const auto format = exportFormatForPath(path);
    if (!format || !isDiagramFormat(*format)) {
        *error = tr("%1: a diagram is written as .svg, .png or .pdf").arg(path);
        return false;
    }
    // The title block's band is the whole band: the stack range first (Document).
    scene.document()->ensureStackRange();
    try {
        return writeDiagram(scene, path, *format, options, error);
    } catch (const std::bad_alloc &) {
        *error = outOfMemory(path, scene.document()->topology().gpuCount());
        return false;
    }
}

static bool writeDiagram(ClusterScene &scene,
                         const QString &path,
                         ExportFormat format,
                         const DiagramExportOptions &options,
                         QString *error)
{
    render::DiagramOptions o;
    o.source = options.source;
    o.footer = options.footer.isEmpty() ? defaultExportFooter() : options.footer;
    const render::DiagramRenderer renderer(scene, QGuiApplication::font(), o);
    const QSize page = renderer.size();
    const PageOutput output = outputSize(format, page, renderer.finestDetail(), options);
    return writePage(
            path,
            format,
            page,
            output.size,
            documentTitle(*scene.document()),
            [&](QPainter *p, const QRectF &target) { renderer.paint(p, target); },
            error,
            {scene.document()->filePath()},
            output.pixelRatio);
}

bool exportReport(Document &doc, const QString &path, QString *error)
{
    const auto format = exportFormatForPath(path);
    if (!format || isDiagramFormat(*format)) {
        *error = tr("%1: a report is written as .md, .csv or .json").arg(path);
        return false;
    }
    const engine::Evaluation &e = doc.evaluationWithStackRange();
    if (!e.ok) {
        *error = tr("%1: the step cannot be priced, so there is no report: %2")
                         .arg(path, QString::fromStdString(e.error));
        return false;
    }
    std::ostringstream text;
    engine::ReportOptions report;
    report.title = documentTitle(doc).toStdString();
    report.links = *format == ExportFormat::Json ? engine::LinkListing::All
                                                 : engine::LinkListing::Busiest;
    if (*format == ExportFormat::Markdown)
        engine::writeEvaluationMarkdown(text, e, doc.topology(), report);
    else if (*format == ExportFormat::Csv)
        engine::writeLinkLoadsCsv(text, e, doc.topology());
    else
        engine::writeEvaluationJson(text, e, doc.topology(), report);
    const QString target = checkedExportTarget(path, {doc.filePath()}, error);
    if (target.isEmpty())
        return false;
    QString reason;
    if (!writeFileAtomically(target, QByteArray::fromStdString(text.str()), &reason)) {
        *error = tr("Cannot write %1: %2").arg(QFileInfo(path).absoluteFilePath(), reason);
        return false;
    }
    return true;
}

bool exportWidget(QWidget *widget, const QString &path, double scale, QString *error)
{
    const auto format = exportFormatForPath(path);
    if (!format || !isDiagramFormat(*format)) {
        *error = tr("%1: a chart is written as .svg, .png or .pdf").arg(path);
        return false;
    }
    const QSize size = widget->size();
    return writePage(
            path,
            *format,
            size,
            *format == ExportFormat::Png ? scaled(size, scale) : size,
            widget->windowTitle(),
            [&](QPainter *p, const QRectF &target) {
                p->save();
                p->translate(target.topLeft());
                p->scale(target.width() / size.width(), target.height() / size.height());
                widget->render(p, QPoint(), QRegion(), QWidget::DrawChildren);
                p->restore();
            },
            error);
}

} // namespace railyard
