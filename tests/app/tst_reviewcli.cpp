// `railyard export FILE -o review.pdf --report` (and .md): the design-review report, opened as a
// reader opens it (pdfinfo, pdftotext, pdftoppm; cmark-gfm for the Markdown) and its numbers
// checked against `railyard evaluate --json` of the same layout.
#include "exportcheck.h"

#include "clirun.h"
#include "comparenear.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using railyard::test::inkPixels;
using railyard::test::runTool;
using railyard::test::squeezed;

namespace {

QString data(const char *name)
{
    return QStringLiteral(RAILYARD_TEST_DATA "/") + QLatin1String(name);
}

railyard::test::CliRun exportReport(const QStringList &args)
{
    return railyard::test::runCli(QStringList{QStringLiteral("export")} + args);
}

QJsonObject evaluation(const QString &layout)
{
    const railyard::test::CliRun r = railyard::test::runCli(
            {QStringLiteral("evaluate"), layout, QStringLiteral("--json")});
    if (r.exitCode != 0)
        qWarning("evaluate %s: %s", qPrintable(layout), qPrintable(r.errText()));
    return QJsonDocument::fromJson(r.out).object();
}

// "5.32 s" or "812 ms" after `label` in `text` (the first), in seconds; -1 if absent.
double secondsAfter(const QString &text, const QString &label)
{
    const QRegularExpression re(QRegularExpression::escape(label)
                                + QStringLiteral("\\s+([0-9.]+) (ms|s)\\b"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return -1;
    return m.captured(1).toDouble() * (m.captured(2) == QLatin1String("ms") ? 1e-3 : 1);
}

// A number with thousands separators after `label`, or -1.
double numberAfter(const QString &text, const QString &label)
{
    const QRegularExpression re(QRegularExpression::escape(label)
                                + QStringLiteral("\\s+([0-9][0-9,]*\\.?[0-9]*)"));
    const QRegularExpressionMatch m = re.match(text);
    return m.hasMatch() ? m.captured(1).remove(QLatin1Char(',')).toDouble() : -1;
}

// The band "±8.3%: 4.9 s to 5.7 s" after `label`: low and high in seconds.
std::pair<double, double> bandAfter(const QString &text, const QString &label)
{
    const QRegularExpression re(
            QRegularExpression::escape(label)
            + QStringLiteral("\\s+\u00b1[0-9.]+%: ([0-9.]+) (ms|s) to ([0-9.]+) (ms|s)"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return {-1, -1};
    const auto s = [&](int v, int u) {
        return m.captured(v).toDouble() * (m.captured(u) == QLatin1String("ms") ? 1e-3 : 1);
    };
    return {s(1, 2), s(3, 4)};
}

// Checks the report's key numbers (as text: PDF or Markdown) against evaluate --json. The text
// shows 3 significant digits of seconds and GiB, whole tokens/s.
void checkNumbers(const QString &text, const QJsonObject &json)
{
    QVERIFY2(!json.isEmpty(), "evaluate --json gave nothing");
    RAILYARD_COMPARE_NEAR(secondsAfter(text, QStringLiteral("Step time")),
                          json.value(QStringLiteral("step_time_s")).toDouble(),
                          0.006);
    const QJsonArray band = json.value(QStringLiteral("step_time_band_s")).toArray();
    const auto [low, high] = bandAfter(text, QStringLiteral("Step-time band"));
    RAILYARD_COMPARE_NEAR(low, band.at(0).toDouble(), 0.006);
    RAILYARD_COMPARE_NEAR(high, band.at(1).toDouble(), 0.006);
    RAILYARD_COMPARE_NEAR(numberAfter(text, QStringLiteral("Tokens/s")),
                          json.value(QStringLiteral("tokens_per_s")).toDouble(),
                          0.0005);
    RAILYARD_COMPARE_NEAR(numberAfter(text, QStringLiteral("Memory per GPU")),
                          json.value(QStringLiteral("memory_gib_per_gpu")).toDouble(),
                          0.006);
}

const QStringList kSections = {QStringLiteral("The cluster"),
                               QStringLiteral("Where the step goes"),
                               QStringLiteral("Step timeline"),
                               QStringLiteral("Memory per GPU"),
                               QStringLiteral("Hottest links"),
                               QStringLiteral("Warnings"),
                               QStringLiteral("Assumptions and where the model is unsure")};

} // namespace

class TestReviewCli : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString out(const QString &name) const { return m_dir.filePath(name); }

    // Layout A for the A/B comparison: the example with TP 4 and PP 8 instead of TP 8 and PP 4.
    QString layoutA()
    {
        const QString path = out(QStringLiteral("a-tp4.railyard.json"));
        QByteArray text = railyard::test::readFile(data("example.railyard.json"));
        text.replace("\"tp\": 8, \"cp\": 1, \"ep\": 1, \"pp\": 4",
                     "\"tp\": 4, \"cp\": 1, \"ep\": 1, \"pp\": 8");
        text.replace("\"color_by\": \"tp\"", "\"color_by\": \"pp\"");
        return railyard::test::writeFile(path, text) ? path : QString();
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The PDF: A4 pages, every section, numbers as evaluate gives them, every page drawn.
    void pdfReport()
    {
        const QString pdf = out(QStringLiteral("review.pdf"));
        const auto r = exportReport({data("example.railyard.json"),
                                     QStringLiteral("-o"),
                                     pdf,
                                     QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const auto info = runTool(QStringLiteral("pdfinfo"), {pdf});
        QVERIFY2(info.ok, qPrintable(info.output));
        QVERIFY2(info.output.contains(QStringLiteral("(A4)")), qPrintable(info.output));
        const QRegularExpressionMatch pages = QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)"))
                                                      .match(info.output);
        QVERIFY(pages.hasMatch());
        const int count = pages.captured(1).toInt();
        QVERIFY2(count >= 4 && count <= 12, qPrintable(info.output));

        const auto text = runTool(QStringLiteral("pdftotext"),
                                  {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(text.ok, qPrintable(text.output));
        const QString t = text.output.normalized(QString::NormalizationForm_KC);
        QVERIFY(t.contains(QStringLiteral("Llama 3 70B on a GMI-style H200 cluster")));
        QVERIFY(t.contains(QStringLiteral("DESIGN REVIEW")));
        QVERIFY(t.contains(QStringLiteral("16 servers of 8 \u00d7 H200-SXM")));
        QVERIFY(t.contains(
                QStringLiteral("llama3-70b \u00b7 TP 8 \u00b7 PP 4 (VP 5) \u00b7 DP 4")));
        for (const QString &heading : kSections)
            QVERIFY2(t.contains(heading), qPrintable(heading));
        QVERIFY(!t.contains(QStringLiteral("A/B comparison"))); // nothing pinned
        checkNumbers(t, evaluation(data("example.railyard.json")));
        // The diagram's own text (its legend, a device name) is text in the PDF.
        QVERIFY(squeezed(t).contains(QStringLiteral("TP groups")));
        // Page numbers on every page, "Page n of N".
        for (int p = 1; p <= count; ++p)
            QVERIFY2(t.contains(QStringLiteral("Page %1 of %2").arg(p).arg(count)),
                     qPrintable(QString::number(p)));

        // Every page drawn: at 40 dpi, each has ink beyond its footer.
        const auto png = runTool(QStringLiteral("pdftoppm"),
                                 {QStringLiteral("-r"),
                                  QStringLiteral("40"),
                                  QStringLiteral("-png"),
                                  pdf,
                                  out(QStringLiteral("page"))});
        QVERIFY2(png.ok, qPrintable(png.output));
        const QStringList images = QDir(m_dir.path())
                                           .entryList({QStringLiteral("page-*.png")},
                                                      QDir::Files,
                                                      QDir::Name);
        QCOMPARE(images.size(), count);
        for (const QString &name : images) {
            const QImage page(out(name));
            QVERIFY(!page.isNull());
            RAILYARD_COMPARE_NEAR(double(page.height()) / page.width(), 297.0 / 210.0, 0.01);
            QVERIFY2(inkPixels(page) > qint64(page.width()) * page.height() / 200, qPrintable(name));
        }
        // The page with the diagram is mostly picture: far more ink than a page of text.
        qint64 most = 0;
        for (const QString &name : images)
            most = std::max(most, inkPixels(QImage(out(name))));
        const QImage first(out(images.first()));
        QVERIFY(most > qint64(first.width()) * first.height() / 8);
    }

    // The Markdown: the same sections and numbers, tables that a Markdown reader parses, the
    // diagram beside it.
    void markdownReport()
    {
        const QString md = out(QStringLiteral("review.md"));
        const auto r = exportReport({data("example.railyard.json"),
                                     QStringLiteral("-o"),
                                     md,
                                     QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const QString text = QString::fromUtf8(railyard::test::readFile(md));
        QVERIFY(text.startsWith(QStringLiteral("# Llama 3 70B on a GMI\\-style H200 cluster\n"))
                || text.startsWith(QStringLiteral("# Llama 3 70B on a GMI-style H200 cluster\n")));
        for (const QString &heading : kSections)
            QVERIFY2(text.contains(QStringLiteral("\n## ") + heading + QLatin1Char('\n')),
                     qPrintable(heading));
        const auto html = runTool(QStringLiteral("cmark-gfm"),
                                  {QStringLiteral("-e"), QStringLiteral("table"), md});
        QVERIFY2(html.ok, qPrintable(html.output));
        // Every table parses as a table: as many <table> as header separator rows.
        const int tables = html.output.count(QStringLiteral("<table>"));
        QVERIFY(tables >= 6);
        QCOMPARE(tables, int(text.count(QRegularExpression(QStringLiteral("\n\\|(-{3}:?\\|)+\n")))));
        // The numbers, read from the rendered text (tags out).
        QString plain = html.output;
        plain.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        plain.replace(QStringLiteral("&amp;"), QStringLiteral("&"));
        checkNumbers(plain, evaluation(data("example.railyard.json")));
        // The diagram beside it, linked, with its text as text.
        const QString svg = out(QStringLiteral("review-diagram.svg"));
        QVERIFY(html.output.contains(QStringLiteral("<img src=\"review-diagram.svg\"")));
        QString error;
        const QString svgText = railyard::test::xmlText(svg, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(svgText.contains(QStringLiteral("InfiniBand")));
    }

    // A pinned A (--compare): the comparison section shows both states' numbers, each as
    // evaluate gives it, in the PDF and the Markdown.
    void comparison()
    {
        const QString a = layoutA();
        QVERIFY(!a.isEmpty());
        const QJsonObject ja = evaluation(a), jb = evaluation(data("example.railyard.json"));
        const double stepA = ja.value(QStringLiteral("step_time_s")).toDouble();
        const double stepB = jb.value(QStringLiteral("step_time_s")).toDouble();
        QVERIFY2(std::abs(stepA - stepB) > 0.01 * stepB, "A and B must differ to be told apart");
        for (const char *name : {"ab.pdf", "ab.md"}) {
            const QString path = out(QLatin1String(name));
            const auto r = exportReport({data("example.railyard.json"),
                                         QStringLiteral("-o"),
                                         path,
                                         QStringLiteral("--report"),
                                         QStringLiteral("--compare"),
                                         a});
            QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
            QString text;
            if (path.endsWith(QLatin1String(".pdf"))) {
                const auto t = runTool(QStringLiteral("pdftotext"),
                                       {QStringLiteral("-layout"), path, QStringLiteral("-")});
                QVERIFY2(t.ok, qPrintable(t.output));
                text = t.output;
            } else {
                const auto t = runTool(QStringLiteral("cmark-gfm"),
                                       {QStringLiteral("-e"), QStringLiteral("table"), path});
                QVERIFY2(t.ok, qPrintable(t.output));
                text = t.output;
                text.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
            }
            QVERIFY2(text.contains(QStringLiteral("A/B comparison")), name);
            QVERIFY2(text.contains(QStringLiteral("a-tp4.railyard.json")), name);
            // The comparison's row "Step time  A  B  change".
            const QRegularExpressionMatch m
                    = QRegularExpression(QStringLiteral("Step time\\s+([0-9.]+) s\\s+([0-9.]+) s"))
                              .match(text);
            QVERIFY2(m.hasMatch(), name);
            RAILYARD_COMPARE_NEAR(m.captured(1).toDouble(), stepA, 0.006);
            RAILYARD_COMPARE_NEAR(m.captured(2).toDouble(), stepB, 0.006);
        }
    }

    // A title with markup, Markdown syntax and control characters: shown as written (the
    // controls as U+FFFD), never interpreted, in both formats.
    void hostileTitle()
    {
        QByteArray text = railyard::test::readFile(data("example.railyard.json"));
        text.replace("\"Llama 3 70B on a GMI-style H200 cluster\"",
                     "\"<script>alert(1)</script> | # *x* [a](b) \\u0001\\u001b[31m end\"");
        const QString layout = out(QStringLiteral("hostile.railyard.json"));
        QVERIFY(railyard::test::writeFile(layout, text));
        const QString md = out(QStringLiteral("hostile.md")), pdf = out(QStringLiteral("h.pdf"));
        auto r = exportReport({layout, QStringLiteral("-o"), md, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        r = exportReport({layout, QStringLiteral("-o"), pdf, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const QByteArray raw = railyard::test::readFile(md);
        QVERIFY(!raw.contains("<script>"));
        QVERIFY(!raw.contains('\x01') && !raw.contains('\x1b'));
        const auto html = runTool(QStringLiteral("cmark-gfm"),
                                  {QStringLiteral("-e"), QStringLiteral("table"), md});
        QVERIFY2(html.ok, qPrintable(html.output));
        // One heading, as written: no tag, no link, no emphasis.
        QVERIFY2(html.output.startsWith(
                         QStringLiteral("<h1>&lt;script&gt;alert(1)&lt;/script&gt; | # *x* [a](b) "
                                        "\ufffd\ufffd[31m end</h1>")),
                 qPrintable(html.output.left(300)));
        const auto t = runTool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(t.ok, qPrintable(t.output));
        QVERIFY2(t.output.contains(QStringLiteral("<script>alert(1)</script> | # *x* [a](b)")),
                 qPrintable(t.output.left(400)));
        QVERIFY(!t.output.contains(QChar(0x1b)));
    }

    // Where it cannot write: a folder, a FIFO, a missing folder: exit 1 naming the file, nothing
    // written; through a symlink to a regular file it writes that file and says so.
    void outputsItRefuses()
    {
        const QString folder = out(QStringLiteral("folder.pdf"));
        QVERIFY(QDir().mkpath(folder));
        auto r = exportReport({data("example.railyard.json"),
                               QStringLiteral("-o"),
                               folder,
                               QStringLiteral("--report")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(QStringLiteral("folder.pdf")), qPrintable(r.errText()));

        const QString fifo = out(QStringLiteral("fifo.md"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0644), 0);
        r = exportReport({data("example.railyard.json"),
                          QStringLiteral("-o"),
                          fifo,
                          QStringLiteral("--report")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(QStringLiteral("fifo.md")), qPrintable(r.errText()));
        QVERIFY(!QFileInfo::exists(out(QStringLiteral("fifo-diagram.svg"))));

        const QString missing = out(QStringLiteral("no/such/folder/r.pdf"));
        r = exportReport({data("example.railyard.json"),
                          QStringLiteral("-o"),
                          missing,
                          QStringLiteral("--report")});
        QCOMPARE(r.exitCode, 1);

        const QString real = out(QStringLiteral("real.pdf")),
                      link = out(QStringLiteral("link.pdf"));
        QVERIFY(railyard::test::writeFile(real, "old"));
        QVERIFY(QFile::link(real, link));
        r = exportReport({data("example.railyard.json"),
                          QStringLiteral("-o"),
                          link,
                          QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        QVERIFY(railyard::test::readFile(real).startsWith("%PDF"));
        QVERIFY(QFileInfo(link).isSymLink());
        QVERIFY2(r.errText().contains(QStringLiteral("real.pdf")), qPrintable(r.errText()));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        const QString in = data("example.railyard.json");
        QTest::newRow("report as svg") << QStringList{in, "-o", "x.svg", "--report"}
                                       << "--report writes a review report as .pdf or .md";
        QTest::newRow("compare without report")
                << QStringList{in, "-o", "x.pdf", "--compare", in} << "give --report too";
        QTest::newRow("report at a moment")
                << QStringList{in, "-o", "x.pdf", "--report", "--at", "1"}
                << "a review report shows the whole step";
        QTest::newRow("report all links")
                << QStringList{in, "-o", "x.md", "--report", "--all-links"}
                << "a review report lists the busiest";
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const auto r = exportReport(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.errText().contains(says), qPrintable(r.errText()));
    }

    // The 16,384-GPU preset: a report in seconds, its diagram drawn as blocks (the PDF stays
    // small), its timeline with every stage.
    void largeCluster()
    {
        const QString layout = QStringLiteral(RAILYARD_SOURCE_DIR
                                              "/layouts/llama3.1-405b-16k-h100.railyard.json");
        const QString pdf = out(QStringLiteral("big.pdf"));
        const auto r = exportReport({layout, QStringLiteral("-o"), pdf, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        QVERIFY(QFileInfo(pdf).size() < 10'000'000);
        const auto t = runTool(QStringLiteral("pdftotext"),
                               {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(t.ok, qPrintable(t.output));
        QVERIFY(t.output.contains(QStringLiteral("SU 1")));
        QVERIFY(t.output.contains(QStringLiteral("16,384 GPUs")));
        checkNumbers(t.output, evaluation(layout));
    }
};

QTEST_GUILESS_MAIN(TestReviewCli)
#include "tst_reviewcli.moc"
