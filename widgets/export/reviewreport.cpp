#include "reviewreport.h"

#include "base/jsoncursor.h"
#include "base/showntext.h"
#include "charts/memorychart.h"
#include "charts/stepchart.h"
#include "document/document.h"
#include "document/safesave.h"
#include "document/viewstate.h"
#include "faults/faultimpact.h"
#include "faults/faultreport.h"
#include "layout/catalog.h"
#include "panels/ganttview.h"
#include "render/diagramrenderer.h"
#include "render/legend.h"
#include "report/reviewreport.h"
#include "report/servingreport.h"
#include "reviewpdf.h"
#include "scene/clusterscene.h"

#include <railyard/version.h>

#include <QBuffer>
#include <QCoreApplication>
#include <QDate>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLocale>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QWidget>

#include <algorithm>
#include <memory>
#include <new>
#include <sstream>

namespace railyard {

namespace {

// The page is laid out at the dpi the window's widgets (the charts) are drawn at, so a chart
// rendered into it keeps its proportions and its text stays text.
constexpr int kDpi = 96;

QString tr(const char *text)
{
    return QCoreApplication::translate("ReviewReport", text);
}

QString documentTitle(const Document &doc)
{
    const QString title = QString::fromStdString(engine::shownTitle(doc.layout().title));
    return title.isEmpty() ? doc.displayName() : title;
}

// A widget drawn into a rectangle of the page at its own size in device units (96 dpi: one
// widget pixel is one unit), laid out first as if shown.
void paintWidget(QWidget *widget, QPainter *p, const QRectF &rect)
{
    widget->setAttribute(Qt::WA_DontShowOnScreen);
    widget->resize(rect.size().toSize());
    widget->show();
    p->save();
    p->translate(rect.topLeft());
    widget->render(p, QPoint(), QRegion(), QWidget::DrawChildren);
    p->restore();
}

// What the PDF's figures are drawn from: the scene (the diagram with its legend), and the
// window's charts, made for the report and never shown.
class Figures
{
public:
    Figures(ClusterScene &scene, const ReviewReportOptions &options)
        : m_scene(scene)
        , m_gantt(nullptr)
    {
        Document &doc = *scene.document();
        const engine::Evaluation &e = doc.evaluation();
        render::DiagramOptions diagram;
        diagram.source = options.source;
        diagram.legend = false; // drawn under it at the page's scale, not the diagram's
        diagram.titleBlock = false;
        m_diagram = std::make_unique<render::DiagramRenderer>(scene, font(), diagram);
        std::vector<StepChart::Row> rows;
        if (options.pinned && options.pinned->ok)
            rows.push_back({tr("A"), options.pinned->exposed, options.pinned->total});
        rows.push_back({options.pinned ? tr("B") : tr("Step"), e.exposed, e.total});
        m_step.setRows(rows);
        m_stepRows = static_cast<int>(rows.size());
        m_memory.setMemory(e.memoryGiBPerStage, e.hbmGiB);
        // Its own view state: the window's may be playing, and the report shows the whole step.
        m_ganttView = std::make_unique<ViewState>(&doc);
        m_gantt = std::make_unique<GanttView>(&doc, m_ganttView.get());
        m_stages = std::max(1, doc.timeline().stages); // a serving layout's: its decode step
    }

    ReviewPdf::Figures figures()
    {
        ReviewPdf::Figures f;
        f[engine::ReviewFigure::Diagram]
                = {[this](double w, double maxH) {
                       const render::Legend &l = legend(w);
                       const QSize page = m_diagram->size();
                       const double h = w * page.height() / std::max(1, page.width());
                       return std::min(h, maxH - l.size().height() - kGap) + kGap
                              + l.size().height();
                   },
                   [this](QPainter *p, const QRectF &r) {
                       const render::Legend &l = legend(r.width());
                       const double h = r.height() - kGap - l.size().height();
                       m_diagram->paint(p, QRectF(r.topLeft(), QSizeF(r.width(), h)));
                       l.paint(p, QPoint(int(r.left()), int(r.top() + h + kGap)));
                   }};
        f[engine::ReviewFigure::StepBreakdown] = {[this](double, double) {
                                                      return 150.0 + 40.0 * m_stepRows;
                                                  },
                                                  [this](QPainter *p, const QRectF &r) {
                                                      paintWidget(&m_step, p, r);
                                                  }};
        f[engine::ReviewFigure::Memory] = {[](double, double) { return 160.0; },
                                           [this](QPainter *p, const QRectF &r) {
                                               paintWidget(&m_memory, p, r);
                                           }};
        f[engine::ReviewFigure::Timeline] = {[this](double, double maxH) {
                                                 // A row per stage, tall enough to read; a long pipeline takes a page.
                                                 const double row = std::clamp(320.0 / m_stages,
                                                                               9.0,
                                                                               60.0);
                                                 return std::min(maxH, 40.0 + row * m_stages);
                                             },
                                             [this](QPainter *p, const QRectF &r) {
                                                 paintWidget(m_gantt.get(), p, r);
                                             }};
        return f;
    }

    static QFont font() { return QGuiApplication::font(); }

private:
    static constexpr double kGap = 10;

    const render::Legend &legend(double width)
    {
        if (!m_legend || m_legendWidth != int(width)) {
            m_legendWidth = int(width);
            m_legend = std::make_unique<render::Legend>(m_scene.document()->topology(),
                                                        m_scene.canvasState(),
                                                        font(),
                                                        m_legendWidth);
        }
        return *m_legend;
    }

    ClusterScene &m_scene;
    std::unique_ptr<render::DiagramRenderer> m_diagram;
    std::unique_ptr<render::Legend> m_legend;
    int m_legendWidth = 0;
    StepChart m_step;
    int m_stepRows = 1;
    MemoryChart m_memory;
    std::unique_ptr<ViewState> m_ganttView;
    std::unique_ptr<GanttView> m_gantt;
    int m_stages = 1;
};

// The title page's heading, date and source file, for either kind of report.
void titleLines(const Document &doc,
                const ReviewReportOptions &options,
                std::string &title,
                std::string &date,
                std::string &source)
{
    title = documentTitle(doc).toStdString();
    date = (options.date.isEmpty()
                    ? QLocale::c().toString(QDate::currentDate(), QStringLiteral("d MMMM yyyy"))
                    : options.date)
                   .toStdString();
    if (!doc.filePath().isEmpty() && !doc.filePath().startsWith(QLatin1Char(':')))
        source = QFileInfo(doc.filePath()).fileName().toStdString();
}

engine::ReviewReport makeServingReport(const Document &doc, const ReviewReportOptions &options)
{
    engine::ServingReviewInput in;
    in.layout = &doc.layout();
    in.topology = &doc.topology();
    in.evaluation = doc.servingEvaluation();
    titleLines(doc, options, in.title, in.date, in.source);
    in.pinnedLayout = options.pinnedServing ? options.pinnedLayout : nullptr;
    in.pinned = options.pinnedServing;
    in.pinnedSource = options.pinnedSource.toStdString();
    return engine::makeServingReviewReport(in);
}

engine::ReviewReport makeTrainingReport(const Document &doc, const ReviewReportOptions &options)
{
    engine::ReviewInput in;
    in.layout = &doc.layout();
    in.topology = &doc.topology();
    in.evaluation = &doc.evaluation();
    titleLines(doc, options, in.title, in.date, in.source);
    in.pinnedLayout = options.pinnedLayout;
    in.pinned = options.pinned;
    in.pinnedSource = options.pinnedSource.toStdString();
    return engine::makeReviewReport(in);
}

engine::ReviewReport makeReport(const Document &doc, const ReviewReportOptions &options)
{
    engine::ReviewReport report = doc.isServing() ? makeServingReport(doc, options)
                                                  : makeTrainingReport(doc, options);
    // A layout with faults (training or serving): what they take and cost, after the diagram
    // (which draws them).
    if (!doc.layout().cluster.faults.empty()) {
        const engine::Topology healthy
                = engine::buildTopology(engine::withoutFaults(doc.layout()).cluster,
                                        engine::Catalog::builtin());
        const engine::FaultImpact impact = engine::analyzeFaults(doc.layout(),
                                                                 healthy,
                                                                 doc.topology());
        const auto at = std::min<std::ptrdiff_t>(1, std::ssize(report.sections));
        report.sections.insert(report.sections.begin() + at,
                               engine::faultReviewSection(impact, doc.topology()));
    }
    return report;
}

bool writePdf(ClusterScene &scene,
              const QString &path,
              const engine::ReviewReport &report,
              const ReviewReportOptions &options,
              QString *error)
{
    const Document &doc = *scene.document();
    const QString target = checkedExportTarget(path, {doc.filePath()}, error);
    if (target.isEmpty())
        return false;
    QSaveFile file(target);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = tr("Cannot write %1: %2")
                         .arg(QFileInfo(path).absoluteFilePath(), file.errorString());
        return false;
    }
    const QString title = QString::fromStdString(report.title);
    bool painted = false;
    // Drawn into memory, then written with a checked write: QPdfWriter does not look at its
    // device's write() results, so a full disk left a truncated report and success.
    QBuffer gathered;
    gathered.open(QIODevice::WriteOnly);
    {
        QPdfWriter pdf(&gathered);
        pdf.setResolution(kDpi);
        pdf.setTitle(title);
        pdf.setCreator(QStringLiteral("Railyard %1").arg(QStringLiteral(RAILYARD_VERSION)));
        pdf.setPageLayout(
                QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
        Figures figures(scene, options);
        const ReviewPdf layout(report,
                               figures.figures(),
                               &pdf,
                               Figures::font(),
                               tr("%1 \u00b7 design review \u00b7 Railyard %2")
                                       .arg(title, QStringLiteral(RAILYARD_VERSION)));
        QPainter p;
        if (p.begin(&pdf)) {
            painted = layout.paint(&pdf, &p);
            painted = p.end() && painted;
        }
    }
    if (!painted && file.error() == QFileDevice::NoError) {
        file.cancelWriting();
        *error = tr("Cannot draw %1").arg(QFileInfo(path).absoluteFilePath());
        return false;
    }
    QString reason;
    if (!writeAndCommitSaveFile(file, gathered.data(), &reason)) {
        *error = tr("Cannot write %1: %2").arg(QFileInfo(path).absoluteFilePath(), reason);
        return false;
    }
    return true;
}

bool writeMarkdown(ClusterScene &scene,
                   const QString &path,
                   const engine::ReviewReport &report,
                   const ReviewReportOptions &options,
                   QString *error)
{
    const Document &doc = *scene.document();
    const QString target = checkedExportTarget(path, {doc.filePath()}, error);
    if (target.isEmpty())
        return false;
    // The diagram first, beside the report (a failure leaves no report that links nothing).
    const QString diagramPath = QString::fromStdString(
            engine::reviewDiagramPath(path.toStdString()));
    DiagramExportOptions diagram;
    diagram.source = options.source;
    QString why;
    if (!exportDiagram(scene, diagramPath, diagram, &why)) {
        *error = tr("Cannot write the review report %1: its diagram: %2")
                         .arg(QFileInfo(path).absoluteFilePath(), why);
        return false;
    }
    std::ostringstream text;
    engine::writeReviewMarkdown(text, report, QFileInfo(diagramPath).fileName().toStdString());
    QString reason;
    if (!writeFileAtomically(target, QByteArray::fromStdString(text.str()), &reason)) {
        *error = tr("Cannot write %1: %2").arg(QFileInfo(path).absoluteFilePath(), reason);
        return false;
    }
    return true;
}

bool writeReport(ClusterScene &scene,
                 const QString &path,
                 const ReviewReportOptions &options,
                 QString *error)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("pdf") && suffix != QLatin1String("md")) {
        *error = tr("%1: a review report is written as .pdf or .md").arg(path);
        return false;
    }
    const Document &doc = *scene.document();
    if (!doc.isPriced()) {
        *error = tr("%1: the layout cannot be priced, so there is nothing to review: %2")
                         .arg(path, QString::fromStdString(doc.pricingError()));
        return false;
    }
    const engine::ReviewReport report = makeReport(doc, options);
    return suffix == QLatin1String("pdf") ? writePdf(scene, path, report, options, error)
                                          : writeMarkdown(scene, path, report, options, error);
}

} // namespace

bool exportReviewReport(ClusterScene &scene,
                        const QString &path,
                        const ReviewReportOptions &options,
                        QString *error)
{
    // The report's band is the whole band: the stack range first.
    scene.document()->ensureStackRange();
    try {
        return writeReport(scene, path, options, error);
    } catch (const std::bad_alloc &) {
        *error = tr("%1: out of memory while writing the review report")
                         .arg(QFileInfo(path).absoluteFilePath());
        return false;
    }
}

bool exportLayoutReviewReport(const QString &layoutPath,
                              const QString &out,
                              const QString &comparePath,
                              const DiagramRegion &region,
                              QString *error)
{
    std::unique_ptr<Document> doc = Document::load(layoutPath, error);
    if (!doc)
        return false;
    std::unique_ptr<Document> a;
    ReviewReportOptions options;
    if (!comparePath.isEmpty()) {
        a = Document::load(comparePath, error);
        if (!a)
            return false;
        if (a->isServing() != doc->isServing()) {
            *error = tr("%1: A serves and B trains, or the other way round: a comparison is "
                        "between two training layouts or two serving layouts")
                             .arg(comparePath);
            return false;
        }
        if (!a->isPriced()) {
            *error = tr("%1: the layout cannot be priced, so it cannot be A of the comparison: "
                        "%2")
                             .arg(comparePath, QString::fromStdString(a->pricingError()));
            return false;
        }
        options.pinnedLayout = &a->layout();
        options.pinned = &a->evaluationWithStackRange();
        options.pinnedServing = a->servingEvaluation();
        options.pinnedSource = QFileInfo(comparePath).fileName();
    }
    const engine::Json &layoutView = doc->layout().view.get();
    const bool namesLinkLoad = layoutView.is_object() && layoutView.contains("link_load");
    ViewState view(doc.get());
    ClusterScene scene(doc.get());
    scene.setViewState(&view);
    applyLayoutView(scene);
    if (region.kind != DiagramRegion::Kind::Whole) {
        QString why;
        options.source = regionRect(scene, region, &why);
        if (!why.isEmpty()) {
            *error = tr("%1: %2").arg(layoutPath, why);
            return false;
        }
    }
    showBusyLinksWhenCoarse(scene, options.source, namesLinkLoad);
    return exportReviewReport(scene, out, options, error);
}

} // namespace railyard
