// File > Export Review Report and the PDF's page layout (ReviewPdf): the report of what the
// window shows, with A and B when A is pinned, as a PDF and as Markdown; sections on their pages.
#include "base/units.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "export/reviewpdf.h"
#include "export/reviewreport.h"
#include "exportcheck.h"
#include "mainwindow.h"
#include "report/reviewreport.h"
#include "scene/faultmenu.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <memory>

using namespace railyard;
using railyard::test::runTool;

class TestReviewExport : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_recovery;
    std::unique_ptr<Document> m_doc;

    QString out(const char *name) const { return m_dir.filePath(QLatin1String(name)); }
    static QString layout() { return QStringLiteral(RAILYARD_TEST_DATA "/example.railyard.json"); }
    QString title() const { return QString::fromStdString(m_doc->layout().title); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QString error;
        m_doc = Document::load(layout(), &error);
        QVERIFY2(m_doc, qPrintable(error));
    }

    // File > Export Review Report: the report of what the window shows, with A and B when A is
    // pinned; the same content as Markdown with the diagram beside it.
    void windowExportsTheReviewReport()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.action(QStringLiteral("actionExportReviewReport")));
        QVERIFY(w.openFile(layout()));
        const double stepA = w.document()->evaluation().stepTimeS;
        w.document()->pin();
        engine::TrainingConfig training = w.document()->layout().training;
        training.microBatch = 2;
        w.document()->undoStack()->push(new ChangeWorkload(w.document(),
                                                           w.document()->layout().model,
                                                           training,
                                                           QStringLiteral("micro-batch")));
        const double stepB = w.document()->evaluation().stepTimeS;
        QVERIFY(std::abs(stepA - stepB) > 0.01 * stepA);
        QVERIFY2(w.exportReviewReport(out("review.pdf")), qPrintable(w.lastError()));
        const auto text = runTool(QStringLiteral("pdftotext"),
                                  {QStringLiteral("-layout"),
                                   out("review.pdf"),
                                   QStringLiteral("-")});
        QVERIFY2(text.ok, qPrintable(text.output));
        QVERIFY(text.output.contains(title()));
        QVERIFY(text.output.contains(QStringLiteral("A/B comparison")));
        QVERIFY(text.output.contains(QStringLiteral("the pinned state")));
        for (double s : {stepA, stepB})
            QVERIFY2(text.output.contains(QString::fromStdString(engine::formatSeconds(s))),
                     qPrintable(QString::fromStdString(engine::formatSeconds(s))));
        QVERIFY2(w.exportReviewReport(out("review.md")), qPrintable(w.lastError()));
        QFile md(out("review.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QByteArray markdown = md.readAll();
        QVERIFY(markdown.contains("## A/B comparison"));
        QVERIFY(markdown.contains("](<review-diagram.svg>)"));
        QVERIFY(QFileInfo(out("review-diagram.svg")).size() > 1000);
        // A name it cannot write: the message says why, the document stays as it was.
        QVERIFY(!w.exportReviewReport(out("review.docx")));
        QVERIFY(w.lastError().contains(QStringLiteral(".pdf or .md")));
        QVERIFY(!w.exportReviewReport(m_dir.path()));
        QVERIFY(w.lastError().contains(m_dir.path()));
        for (QWidget *top : QApplication::topLevelWidgets())
            if (top->inherits("QMessageBox"))
                top->close();
    }

    // A layout with faults: the report says what is down or slow and what it costs (the step
    // healthy and with the faults), in the PDF and in the Markdown.
    void reviewReportListsTheFaults()
    {
        MainWindow w(nullptr, m_recovery.path());
        QVERIFY(w.openFile(QStringLiteral(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json")));
        Document *doc = w.document();
        const double healthy = doc->evaluation().stepTimeS;
        QVERIFY2(w.exportReviewReport(out("healthy.md")), qPrintable(w.lastError()));
        QFile plain(out("healthy.md"));
        QVERIFY(plain.open(QIODevice::ReadOnly));
        QVERIFY(!plain.readAll().contains("## Faults"));
        engine::Fault leaf;
        leaf.device = "leaf 3";
        engine::Fault slow;
        slow.device = "GPU 9";
        slow.state = engine::FaultState::Degraded;
        slow.slowdown = 1.1;
        QVERIFY(faultmenu::applyFaults(doc, {leaf, slow}, QStringLiteral("Fail"), &w));
        const double faulted = doc->evaluation().stepTimeS;
        QVERIFY(faulted > healthy);
        QVERIFY2(w.exportReviewReport(out("faults.pdf")), qPrintable(w.lastError()));
        const auto text = runTool(QStringLiteral("pdftotext"),
                                  {QStringLiteral("-layout"),
                                   out("faults.pdf"),
                                   QStringLiteral("-")});
        QVERIFY2(text.ok, qPrintable(text.output));
        QVERIFY2(w.exportReviewReport(out("faults.md")), qPrintable(w.lastError()));
        QFile md(out("faults.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(md.readAll());
        const QString before = QString::fromStdString(engine::formatSeconds(healthy));
        const QString after = QString::fromStdString(engine::formatSeconds(faulted));
        for (const QString &report : {text.output, markdown}) {
            QVERIFY2(report.contains(QStringLiteral("Faults")), qPrintable(report));
            const QString sentence = QStringLiteral(
                                             "The step takes %1 on the healthy cluster and %2 "
                                             "with the faults")
                                             .arg(before, after);
            QVERIFY2(report.simplified().contains(sentence), qPrintable(report));
            QVERIFY(report.contains(QStringLiteral("leaf 3")));
            QVERIFY(report.contains(QStringLiteral("down")));
            QVERIFY2(report.contains(QStringLiteral("runs 10% slow")), qPrintable(report));
        }
        QVERIFY(markdown.contains(QStringLiteral("## Faults")));
        for (QWidget *top : QApplication::topLevelWidgets())
            if (top->inherits("QMessageBox"))
                top->close();
    }

    // The review report's diagram of 16,384 GPUs, a page wide: each scalable unit named with
    // its racks under it ("racks 0-7", or "240-247" where the longer name does not fit the
    // unit), as the PNG and SVG diagrams name them.
    void largeLayoutReviewNamesTheRacks()
    {
        QString error;
        QVERIFY2(exportLayoutReviewReport(QStringLiteral(
                                                  RAILYARD_SOURCE_DIR
                                                  "/layouts/llama3.1-405b-16k-h100.railyard.json"),
                                          out("big-review.pdf"),
                                          QString(),
                                          DiagramRegion(),
                                          &error),
                 qPrintable(error));
        const auto text = runTool(QStringLiteral("pdftotext"),
                                  {out("big-review.pdf"), QStringLiteral("-")});
        QVERIFY2(text.ok, qPrintable(text.output));
        // "racks 0-7" fits unit 0; the wider names elsewhere leave the range alone.
        QVERIFY(text.output.contains(QStringLiteral("racks 0\u20137")));
        for (int unit : {30, 63}) {
            const QString racks = QStringLiteral("%1\u2013%2").arg(8 * unit).arg(8 * unit + 7);
            QVERIFY2(text.output.contains(racks), qPrintable(racks));
        }
    }

    // The PDF's layout: every section on a page, headings on the page of what follows them,
    // more than one page for a long report, the charts drawn (the pages' ink).
    void reviewPdfLayout()
    {
        engine::ReviewInput in;
        in.layout = &m_doc->layout();
        in.topology = &m_doc->topology();
        in.evaluation = &m_doc->evaluation();
        in.title = "Layout test";
        in.date = "1 January 2027";
        const engine::ReviewReport report = engine::makeReviewReport(in);
        QPdfWriter pdf(out("layout.pdf"));
        pdf.setResolution(96);
        pdf.setPageLayout(
                QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
        const ReviewPdf layout(report, {}, &pdf, QApplication::font(), QStringLiteral("footer"));
        QVERIFY(layout.pageCount() >= 2);
        const auto pages = layout.sectionPages();
        QCOMPARE(int(pages.size()), int(report.sections.size()));
        int previous = 1;
        for (const engine::ReviewSection &s : report.sections) {
            const int page = pages.at(s.heading);
            QVERIFY2(page > 1, s.heading.c_str()); // after the title page
            QVERIFY(page >= previous);
            previous = page;
        }
        QPainter p;
        QVERIFY(p.begin(&pdf));
        QVERIFY(layout.paint(&pdf, &p));
        QVERIFY(p.end());
        const auto info = runTool(QStringLiteral("pdfinfo"), {out("layout.pdf")});
        QVERIFY2(info.ok, qPrintable(info.output));
        const QRegularExpressionMatch count = QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)"))
                                                      .match(info.output);
        QVERIFY2(count.hasMatch(), qPrintable(info.output));
        QCOMPARE(count.captured(1).toInt(), layout.pageCount());
    }
};

QTEST_MAIN(TestReviewExport)
#include "tst_reviewexport.moc"
