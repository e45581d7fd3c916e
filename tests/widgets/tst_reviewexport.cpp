// File > Export Review Report and the PDF's page layout (ReviewPdf): the report of what the
// window shows, with A and B when A is pinned, as a PDF and as Markdown; sections on their pages.
#include "base/units.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "export/reviewpdf.h"
#include "exportcheck.h"
#include "mainwindow.h"
#include "report/reviewreport.h"

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
