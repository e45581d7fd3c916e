// Export of the canvas (SVG, PNG, PDF) through render::DiagramRenderer, File > Export and
// File > Print: the files open in other programs (rsvg-convert, pdftoppm, pdftotext) and show
// the cluster, its legend and its title.
#include "base/safetext.h"
#include "document/document.h"
#include "export/diagramexport.h"
#include "exportcheck.h"
#include "exportdialog.h"
#include "mainwindow.h"
#include "render/diagramrenderer.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/levelofdetail.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPrinter>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <sys/stat.h>

#include "comparenear.h"
#include <memory>

using namespace railyard;
using railyard::test::inkPixels;
using railyard::test::runTool;
using railyard::test::squeezed;
using railyard::test::xmlText;

// The mean difference of two images of one size, as a share of the colour range (0: the same).
static double meanDifference(const QImage &one, const QImage &other)
{
    const QImage a = one.convertToFormat(QImage::Format_RGB32);
    const QImage b = other.convertToFormat(QImage::Format_RGB32);
    if (a.size() != b.size() || a.isNull())
        return 1;
    double diff = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            diff += std::abs(qRed(p) - qRed(q)) + std::abs(qGreen(p) - qGreen(q))
                    + std::abs(qBlue(p) - qBlue(q));
        }
    return diff / (3.0 * 255 * a.width() * a.height());
}

class TestExport : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_recovery;
    std::unique_ptr<Document> m_doc;
    std::unique_ptr<ClusterScene> m_scene;

    // Every export here names its footer, so the pages match a renderer made with it.
    static DiagramExportOptions options(double scale = 1)
    {
        DiagramExportOptions o;
        o.scale = scale;
        o.footer = QStringLiteral("Exported by tst_export");
        return o;
    }
    std::unique_ptr<render::DiagramRenderer> renderer() const
    {
        render::DiagramOptions o;
        o.footer = options().footer;
        return std::make_unique<render::DiagramRenderer>(*m_scene, QApplication::font(), o);
    }

    QString out(const char *name) const { return m_dir.filePath(QLatin1String(name)); }
    static QString layout() { return QStringLiteral(RAILYARD_TEST_DATA "/example.railyard.json"); }
    QString title() const { return QString::fromStdString(m_doc->layout().title); }
    // Every piece of legend text (headings, labels, group numbers).
    QStringList legendTexts() const
    {
        QStringList list;
        for (const render::PlacedText &t : renderer()->legend()->texts())
            list << t.text;
        return list;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QImageReader::setAllocationLimit(1024); // MB: the scale-2 PNG is 7,556 pixels wide
        QString error;
        m_doc = Document::load(layout(), &error);
        QVERIFY2(m_doc, qPrintable(error));
        m_scene = std::make_unique<ClusterScene>(m_doc.get());
        applyLayoutView(*m_scene);
        QVERIFY(m_scene->canvasState().colouring()); // TP groups coloured, as the window shows
    }

    void pageLayoutKeepsPartsApart()
    {
        const render::DiagramRenderer r(*m_scene, QApplication::font());
        const QRect page(QPoint(0, 0), r.size());
        QVERIFY(r.titleBlock() && r.legend());
        for (const QRect &part : {r.titleRect(), r.diagramRect(), r.legendRect()})
            QVERIFY2(page.contains(part), "a part of the page falls off it");
        QVERIFY(!r.titleRect().intersects(r.diagramRect()));
        QVERIFY(!r.legendRect().intersects(r.diagramRect()));
        QVERIFY(m_scene->sceneRect().contains(r.sceneSource()));
        QVERIFY(r.sceneSource().contains(m_scene->itemsBoundingRect()));
        QCOMPARE(r.diagramRect().width(), int(std::ceil(r.sceneSource().width())));
        // A wide cluster enlarges its title and legend so they read at document width.
        QVERIFY(r.overlayScale() > 1.5);
        for (const render::PlacedText &t : r.titleBlock()->texts())
            QVERIFY2(render::fits(t), qPrintable(t.text));
        for (const render::PlacedText &t : r.legend()->texts())
            QVERIFY2(render::fits(t), qPrintable(t.text));
    }

    void svgIsXmlWithTheLegendAndTitle()
    {
        QString error;
        QVERIFY2(exportDiagram(*m_scene, out("cluster.svg"), options(), &error), qPrintable(error));
        const QString text = xmlText(out("cluster.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(text.contains(title()));
        QVERIFY(text.contains(QStringLiteral("128 GPUs")));
        QVERIFY(text.contains(QStringLiteral("\u00b1"))); // the step time's band
        QVERIFY(text.contains(options().footer));
        const QStringList legend = legendTexts();
        QVERIFY(legend.contains(QStringLiteral("NVLink")));
        for (const QString &t : legend)
            QVERIFY2(text.contains(t), qPrintable(t));
    }

    void svgRendersInRsvg()
    {
        QString error;
        QVERIFY2(exportDiagram(*m_scene, out("r.svg"), options(), &error), qPrintable(error));
        const auto tool = runTool(QStringLiteral("rsvg-convert"),
                                  {out("r.svg"), QStringLiteral("-o"), out("r.svg.png")});
        QVERIFY2(tool.ok, qPrintable(tool.output));
        const QImage image(out("r.svg.png"));
        const auto keep = renderer();
        const render::DiagramRenderer &r = *keep;
        RAILYARD_COMPARE_ABS(image.width(), r.size().width(), 1);
        RAILYARD_COMPARE_ABS(image.height(), r.size().height(), 1);
        // Not blank: the diagram's racks, the title and the legend all leave ink.
        QVERIFY(inkPixels(image) > qint64(image.width()) * image.height() / 50);
        QVERIFY(inkPixels(image.copy(r.titleRect())) > 500);
        QVERIFY(inkPixels(image.copy(r.legendRect())) > 500);
    }

    void pdfRendersInPoppler()
    {
        QString error;
        QVERIFY2(exportDiagram(*m_scene, out("c.pdf"), options(), &error), qPrintable(error));
        auto tool = runTool(QStringLiteral("pdftoppm"),
                            {QStringLiteral("-r"),
                             QStringLiteral("96"),
                             QStringLiteral("-png"),
                             QStringLiteral("-singlefile"),
                             out("c.pdf"),
                             out("c.pdf")});
        QVERIFY2(tool.ok, qPrintable(tool.output));
        const QImage image(out("c.pdf.png"));
        const auto keep = renderer();
        const render::DiagramRenderer &r = *keep;
        RAILYARD_COMPARE_ABS(image.width(), r.size().width(), 2);
        RAILYARD_COMPARE_ABS(image.height(), r.size().height(), 2);
        QVERIFY(inkPixels(image) > qint64(image.width()) * image.height() / 50);
        QVERIFY(inkPixels(image.copy(r.legendRect())) > 500);
        tool = runTool(QStringLiteral("pdftotext"), {out("c.pdf"), QStringLiteral("-")});
        QVERIFY2(tool.ok, qPrintable(tool.output));
        const QString text = squeezed(tool.output);
        QVERIFY2(text.contains(title()), qPrintable(text.left(300)));
        for (const QString &t : legendTexts())
            QVERIFY2(text.contains(squeezed(t)), qPrintable(t));
    }

    void pngScaleTwoDoublesTheSize()
    {
        QString error;
        const DiagramExportOptions one = options(), two = options(2);
        QVERIFY2(exportDiagram(*m_scene, out("one.png"), one, &error), qPrintable(error));
        QVERIFY2(exportDiagram(*m_scene, out("two.png"), two, &error), qPrintable(error));
        const QImage a(out("one.png")), b(out("two.png"));
        QCOMPARE(a.size(), renderer()->size());
        RAILYARD_COMPARE_ABS(b.width(), 2 * a.width(), 1);
        RAILYARD_COMPARE_ABS(b.height(), 2 * a.height(), 1);
        // The same picture: about four times the ink.
        const double ratio = double(inkPixels(b)) / double(inkPixels(a));
        QVERIFY2(ratio > 3.2 && ratio < 4.8, qPrintable(QString::number(ratio)));
    }

    void visibleAreaDrawsThatPart()
    {
        const QRectF all = m_scene->itemsBoundingRect();
        render::DiagramOptions o;
        o.source = QRectF(all.topLeft(), all.size() / 2);
        const render::DiagramRenderer part(*m_scene, QApplication::font(), o);
        const render::DiagramRenderer whole(*m_scene, QApplication::font());
        QCOMPARE(part.sceneSource(), o.source);
        QCOMPARE(part.diagramRect().size(), (all.size() / 2).toSize());
        QVERIFY(part.size().width() < whole.size().width());
    }

    // A small cluster is exported at full detail: every device drawn and named.
    void smallLayoutDrawsEveryDevice()
    {
        const auto r = renderer();
        QCOMPARE(r->finestDetail(), Detail::Labels);
        QImage image(r->size(), QImage::Format_ARGB32_Premultiplied);
        paintStats() = {};
        QPainter p(&image);
        r->paint(&p);
        p.end();
        QVERIFY(paintStats().devices >= m_doc->topology().gpuCount());
        QVERIFY(paintStats().labels > 0);
        QCOMPARE(finestDetail(), Detail::Labels); // the cap is the renderer's only
    }

    // 16,384 GPUs would be ~300,000 shapes at full detail: the page is drawn as racks and
    // scalable units (named), whatever the output size, and the element estimate is bounded.
    void largeLayoutDrawsBlocks()
    {
        QString error;
        const auto doc = Document::load(QStringLiteral(
                                                RAILYARD_SOURCE_DIR
                                                "/layouts/llama3.1-405b-16k-h100.railyard.json"),
                                        &error);
        QVERIFY2(doc, qPrintable(error));
        ClusterScene scene(doc.get());
        applyLayoutView(scene);
        const render::DiagramRenderer r(scene, QApplication::font());
        QVERIFY(render::estimatedElements(scene, QRectF(), Detail::Labels)
                > render::DiagramOptions::kDiagramElementBudget);
        QCOMPARE(r.finestDetail(), Detail::Racks);
        QImage image(QSize(2000, 2000 * r.size().height() / r.size().width()),
                     QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        paintStats() = {};
        QPainter p(&image);
        r.paint(&p, QRectF(QPointF(0, 0), QSizeF(image.size())));
        p.end();
        QCOMPARE(paintStats().devices, 0);
        QCOMPARE(paintStats().servers, 0);
        QVERIFY(paintStats().racks > 0);
        // Without the bound (as before), every device: the renderer still can.
        render::DiagramOptions all;
        all.maxElements = 0;
        QCOMPARE(render::DiagramRenderer(scene, QApplication::font(), all).finestDetail(),
                 Detail::Labels);
        // A part of the cluster (the visible area of a zoomed-in window) is drawn in detail.
        render::DiagramOptions part;
        part.source = QRectF(scene.geometry().rackRect(0).topLeft(),
                             scene.geometry().rackRect(0).size());
        QVERIFY(render::DiagramRenderer(scene, QApplication::font(), part).finestDetail()
                >= Detail::Devices);
    }

    // At 16,384 GPUs the page is laid out to read at a document's page width: the SVG at most
    // kCoarseVectorPageWidth wide with the scalable units named as text; a PNG at scale 2 is the
    // picture of scale 1, sharper: downscaled to its size, it differs from it by 4% of the
    // colour range on average (antialiasing), where one drawn as a page twice as large (names
    // and lines half as large: the export before pixel ratios) differs by 8%.
    void largeLayoutReadsAtPageSize()
    {
        QString error;
        const auto doc = Document::load(QStringLiteral(
                                                RAILYARD_SOURCE_DIR
                                                "/layouts/llama3.1-405b-16k-h100.railyard.json"),
                                        &error);
        QVERIFY2(doc, qPrintable(error));
        ClusterScene scene(doc.get());
        applyLayoutView(scene);
        QVERIFY2(exportDiagram(scene, out("big.svg"), options(), &error), qPrintable(error));
        QVERIFY2(exportDiagram(scene, out("big.png"), options(2), &error), qPrintable(error));
        QVERIFY2(exportDiagram(scene, out("big1.png"), options(1), &error), qPrintable(error));
        QVERIFY(QFileInfo(out("big.svg")).size() < 10'000'000);
        const QString text = xmlText(out("big.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(text.split(QLatin1Char('\n')).contains(QStringLiteral("SU 63")));
        // Rendered at its own size (a document's page width), the diagram has ink throughout.
        const auto svg = runTool(QStringLiteral("rsvg-convert"),
                                 {out("big.svg"), QStringLiteral("-o"), out("big.svg.png")});
        QVERIFY2(svg.ok, qPrintable(svg.output));
        const QImage page(out("big.svg.png"));
        QVERIFY2(page.width() <= kCoarseVectorPageWidth + 1
                         && page.width() >= 1000, // rsvg rounds up
                 qPrintable(QString::number(page.width())));
        const double pageInk = double(inkPixels(page)) / (double(page.width()) * page.height());
        QVERIFY2(pageInk > 0.3, qPrintable(QString::number(pageInk)));
        const QImage png(out("big.png")), one(out("big1.png"));
        RAILYARD_COMPARE_ABS(one.width(), page.width(), 1);
        RAILYARD_COMPARE_ABS(png.width(), 2 * one.width(), 2);
        const QImage small = png.scaled(one.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        const double pngInk = double(inkPixels(small)) / (double(small.width()) * small.height());
        const double oneInk = double(inkPixels(one)) / (double(one.width()) * one.height());
        RAILYARD_COMPARE_NEAR(pngInk, oneInk, 0.1);
        const double diff = meanDifference(one, small);
        QVERIFY2(diff < 0.06, qPrintable(QString::number(diff)));
        // Drawn by librsvg (which ignores vector-effect="non-scaling-stroke"), the SVG is the
        // same picture: its hairlines (the links) are there, at their width on the page.
        const double svgDiff
                = meanDifference(one, page.convertToFormat(QImage::Format_RGB32).scaled(one.size()));
        QVERIFY2(svgDiff < 0.06, qPrintable(QString::number(svgDiff)));
    }

    // At 16,384 GPUs the page is shown ~30 times smaller than it is laid out: the room between
    // the title block, the diagram and the legend must be room in the picture (it was half a
    // pixel, and the title block covered scalable units 0-3, the legend units 55-58). In the
    // PNG, the SVG (as librsvg draws it) and the PDF (as poppler does): at least 8 pixels of
    // white page between the title block and the cluster and between the cluster and the
    // legend. The racks of each unit are named under it.
    void largeLayoutKeepsClearOfTheTitleAndLegend()
    {
        QString error;
        const auto doc = Document::load(QStringLiteral(
                                                RAILYARD_SOURCE_DIR
                                                "/layouts/llama3.1-405b-16k-h100.railyard.json"),
                                        &error);
        QVERIFY2(doc, qPrintable(error));
        ClusterScene scene(doc.get());
        applyLayoutView(scene);
        render::DiagramOptions o;
        o.footer = options().footer;
        const render::DiagramRenderer r(scene, QApplication::font(), o);
        QVERIFY(!r.titleRect().isNull() && !r.legendRect().isNull());
        QVERIFY2(exportDiagram(scene, out("clear.png"), options(), &error), qPrintable(error));
        QVERIFY2(exportDiagram(scene, out("clear.svg"), options(), &error), qPrintable(error));
        QVERIFY2(exportDiagram(scene, out("clear.pdf"), options(), &error), qPrintable(error));
        const auto svg = runTool(QStringLiteral("rsvg-convert"),
                                 {out("clear.svg"), QStringLiteral("-o"), out("clear.svg.png")});
        QVERIFY2(svg.ok, qPrintable(svg.output));
        const auto pdf = runTool(QStringLiteral("pdftoppm"),
                                 {QStringLiteral("-r"),
                                  QStringLiteral("96"),
                                  QStringLiteral("-png"),
                                  QStringLiteral("-singlefile"),
                                  out("clear.pdf"),
                                  out("clear.pdf")});
        QVERIFY2(pdf.ok, qPrintable(pdf.output));
        for (const char *file : {"clear.png", "clear.svg.png", "clear.pdf.png"}) {
            const QImage read(out(file));
            QVERIFY2(!read.isNull(), file);
            // On white (librsvg leaves what the page does not cover transparent: the SVG's
            // width rounded up).
            QImage image(read.size(), QImage::Format_RGB32);
            image.fill(Qt::white);
            {
                QPainter p(&image);
                p.drawImage(0, 0, read);
            }
            const double k = double(image.width()) / r.size().width();
            const auto whiteRows = [&](double from, double to) {
                const int top = int(std::ceil(from * k)) + 1, bottom = int(std::floor(to * k)) - 1;
                if (bottom - top < 6) // 8 pixels, less a row each side for antialiasing
                    return QStringLiteral("%1 pixels").arg(bottom - top + 2);
                for (int y = top; y <= bottom; ++y)
                    for (int x = 0; x < image.width(); ++x)
                        if (qGray(image.pixel(x, y)) < 245)
                            return QStringLiteral("ink at %1,%2").arg(x).arg(y);
                return QString();
            };
            const QString above = whiteRows(r.titleRect().bottom() + 1, r.diagramRect().top());
            QVERIFY2(above.isEmpty(),
                     qPrintable(QStringLiteral("%1, under the title: %2")
                                        .arg(QLatin1String(file), above)));
            const QString below = whiteRows(r.diagramRect().bottom() + 1, r.legendRect().top());
            QVERIFY2(below.isEmpty(),
                     qPrintable(QStringLiteral("%1, over the legend: %2")
                                        .arg(QLatin1String(file), below)));
        }
        const QString text = xmlText(out("clear.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(text.contains(QStringLiteral("racks 0\u20137")));
        QVERIFY(text.contains(QStringLiteral("racks 504\u2013511")));
    }

    // --region: the part holding the named racks, servers, GPUs or scalable units, drawn at full
    // detail (its devices named); an index the cluster lacks is an error naming what it has.
    void regionDrawsThatPartInDetail()
    {
        QString error;
        const auto doc = Document::load(QStringLiteral(
                                                RAILYARD_SOURCE_DIR
                                                "/layouts/llama3.1-405b-16k-h100.railyard.json"),
                                        &error);
        QVERIFY2(doc, qPrintable(error));
        ClusterScene scene(doc.get());
        applyLayoutView(scene);
        const ClusterGeometry &g = scene.geometry();
        DiagramRegion rack;
        rack.kind = DiagramRegion::Kind::Racks;
        rack.ranges = {{1, 1}};
        rack.text = QStringLiteral("rack:1");
        const QRectF r = regionRect(scene, rack, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(r.contains(g.rackRect(1)));
        QVERIFY(!r.intersects(g.rackRect(3)));
        DiagramExportOptions o = options();
        o.source = r;
        QVERIFY2(exportDiagram(scene, out("rack1.svg"), o, &error), qPrintable(error));
        const QStringList lines = xmlText(out("rack1.svg"), &error).split(QLatin1Char('\n'));
        const int firstGpu = g.firstNodeOfRack(1) * 8;
        QVERIFY2(lines.contains(QStringLiteral("GPU %1").arg(firstGpu)),
                 qPrintable(lines.mid(0, 40).join(QLatin1Char('|'))));
        QVERIFY(!lines.contains(QStringLiteral("GPU 0")));

        DiagramRegion gpus;
        gpus.kind = DiagramRegion::Kind::Gpus;
        gpus.ranges = {{8, 15}, {40, 40}};
        const QRectF gr = regionRect(scene, gpus, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(gr.contains(g.deviceRect(doc->topology().gpuDevice(40))));
        QVERIFY(gr.contains(g.deviceRect(doc->topology().gpuDevice(8))));

        DiagramRegion none = rack;
        none.ranges = {{0, 9999}};
        QVERIFY(regionRect(scene, none, &error).isNull());
        QVERIFY2(error.contains(QStringLiteral("512 racks")), qPrintable(error));
        error.clear();
        DiagramRegion far;
        far.kind = DiagramRegion::Kind::Area;
        far.area = QRectF(-1e7, -1e7, 10, 10);
        QVERIFY(regionRect(scene, far, &error).isNull());
        QVERIFY2(error.contains(QStringLiteral("outside the cluster")), qPrintable(error));
    }

    // A title and notes of megabytes (a hostile file) are shown cut: the title block, the
    // window's panel (read-only, so no edit throws the rest away); the document keeps them.
    void hugeTitleAndNotesAreShownCut()
    {
        QFile in(layout());
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject o = QJsonDocument::fromJson(in.readAll()).object();
        const QString title = QStringLiteral("Huge title ").repeated(300'000);
        const QString notes = QStringLiteral("Long notes. ").repeated(300'000);
        o.insert(QStringLiteral("title"), title);
        o.insert(QStringLiteral("notes"), notes);
        const QString path = out("huge.railyard.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(o).toJson());
        f.close();
        QString error;
        const auto doc = Document::load(path, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(QString::fromStdString(doc->layout().title), title);
        const render::TitleBlock block(*doc, QApplication::font(), 1400);
        const QString shown = title.left(199) + QStringLiteral("\u2026");
        QCOMPARE(block.texts().front().text, shown);
        QVERIFY(block.size().height() < 200);

        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(path));
        auto *field = w.findChild<QLineEdit *>(QStringLiteral("clusterTitle"));
        auto *box = w.findChild<QPlainTextEdit *>(QStringLiteral("clusterNotes"));
        QVERIFY(field && box);
        QCOMPARE(field->text(), shown);
        QVERIFY(field->isReadOnly());
        QVERIFY(box->isReadOnly());
        QCOMPARE(box->toPlainText().size(), 8192);
        QVERIFY(notes.startsWith(box->toPlainText().chopped(1)));
        QCOMPARE(QString::fromStdString(w.document()->layout().notes), notes);
        QVERIFY(!w.document()->isModified());
        QVERIFY(w.exportTo(out("huge.svg"), int(ExportDialog::What::WholeCluster)));
        QVERIFY(QFileInfo(out("huge.svg")).size() < 2'000'000);
        // An ordinary title stays editable.
        QVERIFY(w.openFile(layout()));
        QVERIFY(!field->isReadOnly() && !box->isReadOnly());
        QCOMPARE(field->text(), QString::fromStdString(w.document()->layout().title));
    }

    void failedExportKeepsTheOldFile()
    {
        QString error;
        QVERIFY(exportDiagram(*m_scene, out("keep.png"), options(), &error));
        QFile f(out("keep.png"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        const DiagramExportOptions huge = options(5000); // no such image can be made
        QVERIFY(!exportDiagram(*m_scene, out("keep.png"), huge, &error));
        QVERIFY2(error.contains(out("keep.png")), qPrintable(error));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
        // A folder that cannot exist: the message names the file.
        const QString bad = out("keep.png") + QStringLiteral("/inside.svg");
        QVERIFY(!exportDiagram(*m_scene, bad, options(), &error));
        QVERIFY2(error.contains(bad), qPrintable(error));
        QVERIFY(!exportDiagram(*m_scene, out("cluster.txt"), options(), &error));
        QVERIFY2(error.contains(QStringLiteral(".svg")), qPrintable(error));
    }

    // Issue 17: a shared layout's title is text in the SVG (never markup that runs) and in the
    // PDF's metadata (one line, no control characters).
    void hostileTitleStaysText_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("script") << "script-title";
        QTest::newRow("controls") << "control-title";
        QTest::newRow("table") << "table-title";
    }
    void hostileTitleStaysText()
    {
        QFETCH(QString, name);
        QString error;
        const auto doc = Document::load(QStringLiteral(RAILYARD_TEST_DATA
                                                       "/hostile/%1.railyard.json")
                                                .arg(name),
                                        &error);
        QVERIFY2(doc, qPrintable(error));
        ClusterScene scene(doc.get());
        const QString svg = m_dir.filePath(name + QStringLiteral(".svg"));
        QVERIFY2(exportDiagram(scene, svg, options(), &error), qPrintable(error));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        QString title;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement()) {
                QVERIFY2(xml.name() != QLatin1String("script"), "a <script> element");
                if (xml.name() == QLatin1String("title"))
                    title = xml.readElementText();
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        const QString expected = QString::fromStdString(engine::plainText(doc->layout().title));
        QCOMPARE(title, expected);
        const QString pdf = m_dir.filePath(name + QStringLiteral(".pdf"));
        QVERIFY2(exportDiagram(scene, pdf, options(), &error), qPrintable(error));
        const auto info = runTool(QStringLiteral("pdfinfo"), {pdf});
        QVERIFY2(info.ok, qPrintable(info.output));
        QVERIFY2(info.output.contains(QStringLiteral("Title:") + QString(1, QLatin1Char(' '))),
                 qPrintable(info.output));
        for (const QString &line : info.output.split(QLatin1Char('\n')))
            if (line.startsWith(QStringLiteral("Title:")))
                QCOMPARE(line.mid(6).trimmed(), expected.trimmed());
    }

    // Issue 17: File > Export writes only regular files, never the document itself.
    void exportRefusesSpecialFiles()
    {
        QString error;
        const QString fifo = out("pipe.svg");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        QVERIFY(!exportDiagram(*m_scene, fifo, options(), &error));
        QVERIFY2(error.contains(fifo) && error.contains(QStringLiteral("FIFO")), qPrintable(error));
        const QString report = out("pipe.md");
        QVERIFY(::mkfifo(report.toLocal8Bit().constData(), 0600) == 0);
        QVERIFY(!exportReport(*m_doc, report, &error));
        QVERIFY2(error.contains(report) && error.contains(QStringLiteral("FIFO")),
                 qPrintable(error));
        QVERIFY(QFileInfo(fifo).exists() && !QFileInfo(fifo).isFile());
        // A symlink to a regular file: written through, the link kept.
        const QString real = out("real.svg");
        QFile(real).open(QIODevice::WriteOnly);
        QVERIFY(QFile::link(real, out("link.svg")));
        QVERIFY2(exportDiagram(*m_scene, out("link.svg"), options(), &error), qPrintable(error));
        QVERIFY(QFileInfo(out("link.svg")).isSymLink());
        QVERIFY(QFileInfo(real).size() > 1000);
    }

    void windowExportsDiagramChartsAndReport()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(layout()));
        QCOMPARE(w.suggestedExportPath(), QStringLiteral(RAILYARD_TEST_DATA "/example.svg"));
        QVERIFY(w.exportTo(out("w.svg"), int(ExportDialog::What::WholeCluster)));
        QVERIFY(w.exportTo(out("v.png"), int(ExportDialog::What::VisibleArea), 1));
        QVERIFY(w.exportTo(out("step.png"), int(ExportDialog::What::StepChart), 2));
        QVERIFY(w.exportTo(out("memory.svg"), int(ExportDialog::What::MemoryChart)));
        const QImage chart(out("step.png"));
        QVERIFY(!chart.isNull());
        QVERIFY(inkPixels(chart) > qint64(chart.width()) * chart.height() / 100);
        QVERIFY(w.exportTo(out("w.md")));
        QFile md(out("w.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().startsWith("# " + title().toUtf8()));
        // A bad name: the message names it, the document stays as it was.
        QVERIFY(!w.exportTo(out("w.doc")));
        QVERIFY(w.lastError().contains(QStringLiteral("w.doc")));
        QVERIFY(!w.document()->isModified());
        for (QWidget *top : QApplication::topLevelWidgets())
            if (top->inherits("QMessageBox"))
                top->close();
    }

    void printGoesThroughTheRenderer()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(layout()));
        QPrinter printer(QPrinter::HighResolution);
        printer.setOutputFormat(QPrinter::PdfFormat);
        printer.setOutputFileName(out("print.pdf"));
        QVERIFY(w.printTo(&printer));
        const auto tool = runTool(QStringLiteral("pdftotext"),
                                  {out("print.pdf"), QStringLiteral("-")});
        QVERIFY2(tool.ok, qPrintable(tool.output));
        QVERIFY(squeezed(tool.output).contains(title()));
        QVERIFY(squeezed(tool.output).contains(QStringLiteral("NVLink")));
    }

    void shortcuts()
    {
        MainWindow w(nullptr, m_recovery.path());
        QCOMPARE(w.action(QStringLiteral("actionExport"))->shortcut(),
                 QKeySequence(Qt::CTRL | Qt::Key_E));
        QCOMPARE(w.action(QStringLiteral("actionPrint"))->shortcut(), QKeySequence::Print);
        // No two actions share a shortcut (Pin moved off Ctrl+P for Print).
        QMap<QString, QString> seen;
        for (QAction *a : w.findChildren<QAction *>()) {
            for (const QKeySequence &k : a->shortcuts()) {
                const QString key = k.toString();
                QVERIFY2(!seen.contains(key),
                         qPrintable(key + QStringLiteral(": ") + seen.value(key)
                                    + QStringLiteral(" and ") + a->objectName()));
                seen.insert(key, a->objectName());
            }
        }
    }

    void dialogTakesTheFormatFromTheSuffix()
    {
        ExportDialog d(out("x.svg"));
        QVERIFY(d.problem().isEmpty());
        d.setPath(out("x.docx"));
        QVERIFY(d.problem().contains(QStringLiteral(".svg")));
        d.setPath(out("x.csv"));
        QVERIFY(d.problem().isEmpty());
        QVERIFY(!d.findChild<QWidget *>(QStringLiteral("exportWhat"))->isEnabled());
        QVERIFY(!d.findChild<QWidget *>(QStringLiteral("exportScale"))->isEnabled());
        d.setPath(out("x.png"));
        QVERIFY(d.findChild<QWidget *>(QStringLiteral("exportScale"))->isEnabled());
    }
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"
