// MainWindow: File > Export and File > Print, through the renderer the headless export uses.
#include "mainwindow.h"

#include "base/showntext.h"
#include "charts/memorychart.h"
#include "charts/stepchart.h"
#include "document/document.h"
#include "export/diagramexport.h"
#include "export/reviewreport.h"
#include "exportdialog.h"
#include "panels/pricingpanel.h"
#include "render/diagramrenderer.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QDate>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QPageLayout>
#include <QPainter>
#include <QPrintDialog>
#include <QPrinter>
#include <QRegularExpression>
#include <QStatusBar>

namespace railyard {

QString MainWindow::suggestedExportPath(const QString &suffix) const
{
    const QString file = m_document->filePath();
    QString base;
    QString dir = QDir::currentPath();
    if (!file.isEmpty() && !file.startsWith(QLatin1Char(':'))) {
        const QFileInfo info(file);
        dir = info.absolutePath();
        base = info.fileName();
        for (const char *ext : {".railyard.json", ".json"})
            if (base.endsWith(QLatin1String(ext))) {
                base.chop(int(qstrlen(ext)));
                break;
            }
    }
    if (base.isEmpty()) {
        // A title makes a file name: "GMI-style H200 cluster" -> "GMI-style-H200-cluster".
        base = QString::fromStdString(engine::shownText(m_document->layout().title, 80))
                       .simplified()
                       .replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")),
                                QStringLiteral("-"));
        if (base.isEmpty())
            base = QStringLiteral("cluster");
    }
    return QDir(dir).filePath(base + QLatin1Char('.') + suffix);
}

bool MainWindow::exportTo(const QString &path, int what, double scale)
{
    QString error;
    bool ok = false;
    const auto format = exportFormatForPath(path);
    const auto kind = ExportDialog::What(what);
    // A file holds the whole band: the stack range first (the charts re-sync to it too).
    m_document->ensureStackRange();
    const auto exportOne = [&] {
        if (format && !isDiagramFormat(*format)) {
            ok = exportReport(*m_document, path, &error);
        } else if (kind == ExportDialog::What::StepChart
                   || kind == ExportDialog::What::MemoryChart) {
            QWidget *chart = kind == ExportDialog::What::StepChart
                                     ? static_cast<QWidget *>(m_pricing->stepChart())
                                     : static_cast<QWidget *>(m_pricing->memoryChart());
            if (chart->width() < 200 || chart->height() < 120)
                chart->resize(std::max(chart->width(), 640), std::max(chart->height(), 360));
            ok = exportWidget(chart, path, scale, &error);
        } else {
            DiagramExportOptions options;
            options.scale = scale;
            options.maxSide = kDefaultMaxPngSide; // a 16,384-GPU page at 2x would be 85,000 wide
            if (kind == ExportDialog::What::VisibleArea)
                options.source = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
            ok = exportDiagram(*m_scene, path, options, &error);
        }
    };
    try {
        exportOne();
    } catch (const std::bad_alloc &) {
        // exportDiagram says what to try; a report or a chart ran out of memory here.
        ok = false;
        error = tr("%1: out of memory while exporting; try a PNG or a smaller scale")
                        .arg(QDir::toNativeSeparators(QFileInfo(path).absoluteFilePath()));
    }
    if (!ok) {
        m_lastError = error;
        showError(tr("Cannot export"), error);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void MainWindow::exportWithDialog()
{
    ExportDialog dialog(suggestedExportPath(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    exportTo(dialog.path(), int(dialog.what()), dialog.scale());
}

bool MainWindow::exportReviewReport(const QString &path)
{
    m_document->ensureStackRange(); // the report's band is the whole band
    ReviewReportOptions options;
    if (const Document::Snapshot *a = m_document->pinned()) {
        options.pinnedLayout = &a->layout;
        options.pinned = &a->evaluation;
        if (m_document->isServing())
            options.pinnedServing = a->serving.get(); // null when A trains: no comparison
        // The pin does not say which file it came from: the report calls it "the pinned state".
    }
    QString error;
    if (!railyard::exportReviewReport(*m_scene, path, options, &error)) {
        m_lastError = error;
        showError(tr("Cannot export the review report"), error);
        return false;
    }
    statusBar()->showMessage(tr("Exported the review report to %1")
                                     .arg(QDir::toNativeSeparators(path)),
                             5000);
    return true;
}

void MainWindow::exportReviewWithDialog()
{
    QString selected = tr("PDF document (*.pdf)");
    QString path = QFileDialog::getSaveFileName(this,
                                                tr("Export Review Report"),
                                                suggestedExportPath(QStringLiteral("pdf")),
                                                tr("PDF document (*.pdf);;Markdown (*.md)"),
                                                &selected);
    if (path.isEmpty())
        return;
    // The filter names the format when the typed name has no suffix.
    if (QFileInfo(path).suffix().isEmpty())
        path += selected.contains(QLatin1String("*.md")) ? QStringLiteral(".md")
                                                         : QStringLiteral(".pdf");
    exportReviewReport(path);
}

bool MainWindow::printTo(QPrinter *printer)
{
    m_document->ensureStackRange(); // the title block's band is the whole band
    render::DiagramOptions options;
    options.footer = QLocale().toString(QDate::currentDate(), QLocale::LongFormat);
    const render::DiagramRenderer renderer(*m_scene, font(), options);
    QPainter painter;
    if (!painter.begin(printer)) {
        m_lastError = tr("Cannot print: the printer did not start");
        showError(tr("Cannot print"), m_lastError);
        return false;
    }
    // One page: the diagram scaled to the printable area, its proportions kept.
    renderer.paint(&painter, QRectF(0, 0, printer->width(), printer->height()));
    painter.end();
    return true;
}

void MainWindow::print()
{
    QPrinter printer(QPrinter::HighResolution);
    const QRectF bounds = m_scene->sceneRect();
    printer.setPageOrientation(bounds.width() > bounds.height() ? QPageLayout::Landscape
                                                                : QPageLayout::Portrait);
    printer.setDocName(m_document->displayName());
    QPrintDialog dialog(&printer, this);
    if (dialog.exec() == QDialog::Accepted && printTo(&printer))
        statusBar()->showMessage(tr("Sent to the printer"), 4000);
}

} // namespace railyard
