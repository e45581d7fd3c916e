// `railyard export`, run as scripts run it: no display, the format from the output's suffix,
// exit 0 / 1 (bad file, named) / 2 (usage).
#include "exportcheck.h"

#include "clirun.h"
#include "comparenear.h"
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using railyard::test::inkPixels;
using railyard::test::runTool;
using railyard::test::xmlText;

class TestExportCli : public QObject
{
    Q_OBJECT

    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };

    QTemporaryDir m_dir;

    static Run run(const QStringList &args)
    {
        const railyard::test::CliRun r = railyard::test::runCli(
                QStringList{QStringLiteral("export")} + args);
        return {r.exitCode, r.outText(), r.errText()}; // -1: timed out, -2: crashed
    }
    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }
    QString out(const char *name) const { return m_dir.filePath(QLatin1String(name)); }
    static QByteArray read(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    // `evaluate --json --links all`: the reference for the exported reports.
    static QJsonObject evaluation(const char *file)
    {
        const railyard::test::CliRun r = railyard::test::runCli({QStringLiteral("evaluate"),
                                                                 data(file),
                                                                 QStringLiteral("--json"),
                                                                 QStringLiteral("--links"),
                                                                 QStringLiteral("all")});
        if (r.exitCode != 0)
            qWarning("evaluate %s: %s", file, qPrintable(r.errText()));
        return QJsonDocument::fromJson(r.out).object();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QImageReader::setAllocationLimit(1024); // MB: the scale-2 PNG is 7,556 pixels wide
    }

    void csvHasARowPerLoadedLink()
    {
        const Run r = run({data("example.railyard.json"), QStringLiteral("-o"), out("l.csv")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QList<QByteArray> lines = read(out("l.csv")).split('\n');
        QCOMPARE(lines.first().trimmed(),
                 QByteArray("id,name,kind,tier,bytes_per_step,bytes_up,bytes_down,utilization,"
                            "peak_utilization"));
        int rows = 0;
        double bytes = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            if (lines[i].trimmed().isEmpty())
                continue;
            ++rows;
            const QList<QByteArray> fields = lines[i].trimmed().split(',');
            QCOMPARE(fields.size(), 9); // no name here holds a comma
            QVERIFY(fields[4].toDouble() > 0);
            bytes += fields[4].toDouble();
        }
        const QJsonObject e = evaluation("example.railyard.json");
        int loaded = 0;
        double tierBytes = 0;
        for (const QJsonValue t : e.value(QStringLiteral("link_tiers")).toArray()) {
            loaded += t.toObject().value(QStringLiteral("loaded")).toInt();
            tierBytes += t.toObject().value(QStringLiteral("bytes_per_step")).toDouble();
        }
        QVERIFY(loaded > 100);
        QCOMPARE(rows, loaded);
        RAILYARD_COMPARE_NEAR(bytes, tierBytes, 1e-9);
        // --all-links: every link, idle ones too.
        QCOMPARE(run({data("example.railyard.json"),
                      QStringLiteral("-o"),
                      out("all.csv"),
                      QStringLiteral("--all-links")})
                         .exitCode,
                 0);
        QCOMPARE(read(out("all.csv")).trimmed().count('\n'),
                 e.value(QStringLiteral("links")).toArray().size());
    }

    void jsonHasEveryNumberAndEveryLink()
    {
        const Run r = run({data("example.railyard.json"), QStringLiteral("-o"), out("e.json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(read(out("e.json")), &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        const QJsonObject e = evaluation("example.railyard.json");
        QCOMPARE(o.value(QStringLiteral("step_time_s")).toDouble(),
                 e.value(QStringLiteral("step_time_s")).toDouble());
        QVERIFY(o.value(QStringLiteral("step_time_s")).toDouble() > 0);
        QCOMPARE(o.value(QStringLiteral("links")).toArray().size(),
                 e.value(QStringLiteral("links")).toArray().size());
        QVERIFY(o.contains(QStringLiteral("breakdown_s")));
        QVERIFY(o.contains(QStringLiteral("memory_breakdown_gib")));
    }

    void markdownIsAReport()
    {
        const Run r = run({data("example.railyard.json"), QStringLiteral("-o"), out("r.md")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString md = QString::fromUtf8(read(out("r.md")));
        QVERIFY(md.startsWith(QStringLiteral("# Llama 3 70B on a GMI-style H200 cluster\n")));
        QVERIFY(md.contains(QStringLiteral("| Step time | ")));
        QVERIFY(md.contains(QStringLiteral("| Tier | Kind | Links | Loaded |")));
        QVERIFY(md.contains(QStringLiteral("| gpu-nvswitch | nvlink | ")));
        // Every table row has as many cells as its header.
        const QStringList lines = md.split(QLatin1Char('\n'));
        int header = -1;
        for (const QString &l : lines) {
            if (!l.startsWith(QLatin1Char('|'))) {
                header = -1;
                continue;
            }
            const int cells = int(l.count(QLatin1Char('|')) - l.count(QStringLiteral("\\|")));
            if (header < 0)
                header = cells;
            QVERIFY2(cells == header, qPrintable(l));
        }
        // -o -: the same report on standard output.
        const Run s = run(
                {data("example.railyard.json"), QStringLiteral("-o"), QStringLiteral("-")});
        QCOMPARE(s.exitCode, 0);
        QCOMPARE(s.out, md);
    }

    void namesThatBreakTablesAreEscaped()
    {
        QByteArray layout = read(data("example.railyard.json"));
        const QByteArray title = "\"title\": \"Llama 3 70B on a GMI-style H200 cluster\"";
        QVERIFY(layout.contains(title));
        layout.replace(title, "\"title\": \"Pipes | and, \\\"quotes\\\"\"");
        QFile f(out("odd.railyard.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(layout);
        f.close();
        const Run r = run({out("odd.railyard.json"), QStringLiteral("-o"), out("odd.md")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(read(out("odd.md")).startsWith("# Pipes \\| and, \"quotes\"\n"));
    }

    void diagramsWithoutADisplay()
    {
        Run r = run({data("example.railyard.json"), QStringLiteral("-o"), out("d.svg")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QString error;
        const QString text = xmlText(out("d.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(text.contains(QStringLiteral("Llama 3 70B on a GMI-style H200 cluster")));
        QVERIFY(text.contains(QStringLiteral("InfiniBand")));
        const auto svg = runTool(QStringLiteral("rsvg-convert"),
                                 {out("d.svg"), QStringLiteral("-o"), out("d.svg.png")});
        QVERIFY2(svg.ok, qPrintable(svg.output));
        const QImage fromSvg(out("d.svg.png"));
        QVERIFY(fromSvg.width() > 1000);
        QVERIFY(inkPixels(fromSvg) > qint64(fromSvg.width()) * fromSvg.height() / 50);

        r = run({data("example.railyard.json"), QStringLiteral("-o"), out("d.png")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = run({data("example.railyard.json"),
                 QStringLiteral("-o"),
                 out("d2.png"),
                 QStringLiteral("--scale"),
                 QStringLiteral("2")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QImage one(out("d.png")), two(out("d2.png"));
        RAILYARD_COMPARE_ABS(one.width(), fromSvg.width(), 1); // rsvg rounds up
        RAILYARD_COMPARE_ABS(one.height(), fromSvg.height(), 1);
        RAILYARD_COMPARE_ABS(two.width(), 2 * one.width(), 1);
        RAILYARD_COMPARE_ABS(two.height(), 2 * one.height(), 1);

        r = run({data("example.railyard.json"), QStringLiteral("-o"), out("d.pdf")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto pdf = runTool(QStringLiteral("pdftotext"), {out("d.pdf"), QStringLiteral("-")});
        QVERIFY2(pdf.ok, qPrintable(pdf.output));
        QVERIFY(railyard::test::squeezed(pdf.output).contains(QStringLiteral("TP groups")));
    }

    // 16,384 GPUs: drawn as scalable units (named, with their racks) and racks, the links
    // coloured by their load, on a page laid out to read at a document's width: the SVG and
    // the PDF 1,400 units wide, text as text, under 10 MB; the PNG that page, sharper.
    void largeClusterIsDrawnAsBlocks()
    {
        const QString layout = QStringLiteral(RAILYARD_SOURCE_DIR
                                              "/layouts/llama3.1-405b-16k-h100.railyard.json");
        Run r = run({layout, QStringLiteral("-o"), out("big.svg")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const qint64 svgBytes = QFileInfo(out("big.svg")).size();
        QVERIFY2(svgBytes > 0 && svgBytes < 10'000'000, qPrintable(QString::number(svgBytes)));
        QString error;
        const QString text = xmlText(out("big.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QStringList lines = text.split(QLatin1Char('\n'));
        QVERIFY2(lines.contains(QStringLiteral("SU 0")) && lines.contains(QStringLiteral("SU 63")),
                 qPrintable(text.left(2000)));
        QVERIFY(lines.contains(QStringLiteral("racks 504\u2013511"))); // under SU 63's name
        QVERIFY(text.contains(QStringLiteral("16,384 GPUs")));         // the title block
        QVERIFY(text.contains(QStringLiteral("Link load")));           // the busy links' legend
        QVERIFY(!lines.contains(QStringLiteral("GPU 0"))); // no device names at this size
        const auto svg = runTool(QStringLiteral("rsvg-convert"),
                                 {out("big.svg"), QStringLiteral("-o"), out("big.svg.png")});
        QVERIFY2(svg.ok, qPrintable(svg.output));
        const QImage fromSvg(out("big.svg.png"));
        QVERIFY2(fromSvg.width() <= 1401 && fromSvg.width() >= 1000,
                 qPrintable(QString::number(fromSvg.width())));
        QVERIFY(inkPixels(fromSvg) > qint64(fromSvg.width()) * fromSvg.height() / 4);

        // The PNG: the page at 1:1 unless a scale or a width says otherwise, never past 8,192.
        r = run({layout, QStringLiteral("-o"), out("big.png")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QImage png(out("big.png"));
        QVERIFY(!png.isNull());
        RAILYARD_COMPARE_ABS(png.width(), fromSvg.width(), 1);
        RAILYARD_COMPARE_ABS(double(png.height()) / png.width(),
                             double(fromSvg.height()) / fromSvg.width(),
                             0.01);
        QVERIFY(inkPixels(png) > qint64(png.width()) * png.height() / 4);
        r = run({layout,
                 QStringLiteral("-o"),
                 out("big2.png"),
                 QStringLiteral("--scale"),
                 QStringLiteral("2")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        RAILYARD_COMPARE_ABS(QImage(out("big2.png")).width(), 2 * png.width(), 2);
        r = run({layout,
                 QStringLiteral("-o"),
                 out("big8.png"),
                 QStringLiteral("--scale"),
                 QStringLiteral("8")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QImage(out("big8.png")).width() <= 8 * 1401);

        r = run({layout,
                 QStringLiteral("-o"),
                 out("w.png"),
                 QStringLiteral("--width"),
                 QStringLiteral("1200")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QImage(out("w.png")).width(), 1200);

        r = run({layout, QStringLiteral("-o"), out("big.pdf")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(out("big.pdf")).size() < 10'000'000);
        const auto pdf = runTool(QStringLiteral("pdftotext"), {out("big.pdf"), QStringLiteral("-")});
        QVERIFY2(pdf.ok, qPrintable(pdf.output));
        QVERIFY(pdf.output.contains(QStringLiteral("SU 1")));
        QVERIFY(pdf.output.contains(QStringLiteral("racks 8\u201315")));
        const auto page = runTool(QStringLiteral("pdftoppm"),
                                  {QStringLiteral("-r"),
                                   QStringLiteral("72"),
                                   QStringLiteral("-png"),
                                   QStringLiteral("-singlefile"),
                                   out("big.pdf"),
                                   out("big.pdf")});
        QVERIFY2(page.ok, qPrintable(page.output));
        const QImage fromPdf(out("big.pdf.png"));
        QVERIFY(fromPdf.width() <= 1100);
        QVERIFY(inkPixels(fromPdf) > qint64(fromPdf.width()) * fromPdf.height() / 4);
    }

    // A small layout's PNG keeps its page size (the 8,192-pixel bound is not reached), and
    // --width scales it.
    void pngWidth()
    {
        Run r = run({data("example.railyard.json"), QStringLiteral("-o"), out("s.png")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = run({data("example.railyard.json"),
                 QStringLiteral("-o"),
                 out("s600.png"),
                 QStringLiteral("--width"),
                 QStringLiteral("600")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QImage a(out("s.png")), b(out("s600.png"));
        QCOMPARE(b.width(), 600);
        RAILYARD_COMPARE_ABS(b.height(), a.height() * 600.0 / a.width(), 1);
    }

    // A title of megabytes (a hostile file) is shown cut to 200 characters: in the diagram's
    // title block and metadata, and the report's heading. The export takes well under a minute
    // (the unbounded title block took minutes).
    void hugeTitleIsShownCut()
    {
        QFile in(data("example.railyard.json"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject o = QJsonDocument::fromJson(in.readAll()).object();
        const QString title = QStringLiteral("Huge title ").repeated(300'000); // 3.3 MB
        o.insert(QStringLiteral("title"), title);
        QFile f(out("huge-title.railyard.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(o).toJson());
        f.close();
        Run r = run({f.fileName(), QStringLiteral("-o"), out("huge.svg")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(out("huge.svg")).size() < 2'000'000);
        QString error;
        const QString text = xmlText(out("huge.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString shown = title.left(199) + QStringLiteral("\u2026");
        QVERIFY2(text.contains(shown), qPrintable(text.left(600)));
        QVERIFY(!text.contains(title.left(201)));
        r = run({f.fileName(), QStringLiteral("-o"), out("huge.md")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString md = QString::fromUtf8(read(out("huge.md")));
        QCOMPARE(md.section(QLatin1Char('\n'), 0, 0), QStringLiteral("# ") + shown);
    }

    void badFilesNameTheFile()
    {
        const QString missing = out("no-such.railyard.json");
        Run r = run({missing, QStringLiteral("-o"), out("x.svg")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(missing), qPrintable(r.err));
        QVERIFY(!QFile::exists(out("x.svg")));
        r = run({data("impossible.railyard.json"), QStringLiteral("-o"), out("x.md")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("impossible.railyard.json")), qPrintable(r.err));
        // An output that cannot be written: exit 1, named; nothing left behind.
        const QString bad = out("d-not-a-dir.md") + QStringLiteral("/r.csv");
        QFile(out("d-not-a-dir.md")).open(QIODevice::WriteOnly);
        for (const QString &o : {bad, bad.chopped(4) + QStringLiteral(".png")}) {
            r = run({data("example.railyard.json"), QStringLiteral("-o"), o});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(o), qPrintable(r.err));
        }
        QCOMPARE(QDir(m_dir.path())
                         .entryList({QStringLiteral(".*part*")}, QDir::Hidden | QDir::Files),
                 QStringList());
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        const QString f = data("example.railyard.json");
        QTest::newRow("no -o") << QStringList{f} << "needs -o";
        QTest::newRow("no file") << QStringList{QStringLiteral("-o"), QStringLiteral("x.svg")}
                                 << "needs a layout FILE";
        QTest::newRow("suffix") << QStringList{f, QStringLiteral("-o"), QStringLiteral("x.docx")}
                                << ".svg, .png, .pdf, .md, .csv or .json";
        QTest::newRow("scale on svg") << QStringList{f,
                                                     QStringLiteral("-o"),
                                                     QStringLiteral("x.svg"),
                                                     QStringLiteral("--scale"),
                                                     QStringLiteral("2")}
                                      << "not a PNG";
        QTest::newRow("scale range") << QStringList{f,
                                                    QStringLiteral("-o"),
                                                    QStringLiteral("x.png"),
                                                    QStringLiteral("--scale"),
                                                    QStringLiteral("0")}
                                     << "0.1 to 8";
        QTest::newRow("at negative") << QStringList{f,
                                                    QStringLiteral("-o"),
                                                    QStringLiteral("x.csv"),
                                                    QStringLiteral("--at"),
                                                    QStringLiteral("-1")}
                                     << "--at takes a time in seconds";
        QTest::newRow("at not a time") << QStringList{f,
                                                      QStringLiteral("-o"),
                                                      QStringLiteral("x.csv"),
                                                      QStringLiteral("--at"),
                                                      QStringLiteral("soon")}
                                       << "--at takes a time in seconds";
        QTest::newRow("width on svg") << QStringList{f,
                                                     QStringLiteral("-o"),
                                                     QStringLiteral("x.svg"),
                                                     QStringLiteral("--width"),
                                                     QStringLiteral("800")}
                                      << "--width sets a PNG's size";
        QTest::newRow("width range") << QStringList{f,
                                                    QStringLiteral("-o"),
                                                    QStringLiteral("x.png"),
                                                    QStringLiteral("--width"),
                                                    QStringLiteral("8")}
                                     << "from 16 to 32768";
        QTest::newRow("width not a number") << QStringList{f,
                                                           QStringLiteral("-o"),
                                                           QStringLiteral("x.png"),
                                                           QStringLiteral("--width"),
                                                           QStringLiteral("800px")}
                                            << "from 16 to 32768, got '800px'";
        QTest::newRow("width and scale") << QStringList{f,
                                                        QStringLiteral("-o"),
                                                        QStringLiteral("x.png"),
                                                        QStringLiteral("--width"),
                                                        QStringLiteral("800"),
                                                        QStringLiteral("--scale"),
                                                        QStringLiteral("2")}
                                         << "give one";
        QTest::newRow("region kind")
                << QStringList{f, "-o", "x.svg", "--region", "shelf:2"} << "unknown kind 'shelf'";
        QTest::newRow("region no kind")
                << QStringList{f, "-o", "x.svg", "--region", "2-3"} << "no kind before a colon";
        QTest::newRow("region backwards")
                << QStringList{f, "-o", "x.svg", "--region", "gpu:9-2"} << "runs backwards";
        QTest::newRow("region not a number")
                << QStringList{f, "-o", "x.svg", "--region", "node:x"} << "'x' is not an index";
        QTest::newRow("region empty area")
                << QStringList{f, "-o", "x.svg", "--region", "area:0,0,0,10"}
                << "width and height are above 0";
        QTest::newRow("region short area")
                << QStringList{f, "-o", "x.svg", "--region", "area:1,2"} << "four numbers";
        QTest::newRow("region on a report")
                << QStringList{f, "-o", "x.csv", "--region", "rack:0"} << "is not a diagram";
        QTest::newRow("unknown option") << QStringList{f,
                                                       QStringLiteral("-o"),
                                                       QStringLiteral("x.svg"),
                                                       QStringLiteral("--dpi"),
                                                       QStringLiteral("300")}
                                        << "unknown option --dpi";
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const QString dir = QDir::currentPath();
        QDir::setCurrent(m_dir.path()); // relative outputs must not appear anywhere
        const Run r = run(args);
        QDir::setCurrent(dir);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("railyard export --help")), qPrintable(r.err));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.svg"))));
    }

    // --at: the load at one moment. The links loaded then are exactly the links of the phases
    // running then (evaluate --timeline), in the CSV, the JSON and the diagram.
    void momentAt()
    {
        const char *layout = "gmi-h200-cluster.railyard.json";
        const railyard::test::CliRun evaluated = railyard::test::runCli(
                {QStringLiteral("evaluate"),
                 data(layout),
                 QStringLiteral("--json"),
                 QStringLiteral("--timeline"),
                 QStringLiteral("--links"),
                 QStringLiteral("all")}); // every link of each phase, not its busiest
        QCOMPARE(evaluated.exitCode, 0);
        const QJsonObject e = QJsonDocument::fromJson(evaluated.out).object();
        const double step = e.value(QStringLiteral("step_time_s")).toDouble();
        QVERIFY(step > 0);
        const QJsonArray phases = e.value(QStringLiteral("timeline")).toArray();
        // The middle of stage 0's first TP phase and of its first DP phase with traffic.
        const auto middleOf = [&](const char *kind) {
            for (const QJsonValue v : phases) {
                const QJsonObject ph = v.toObject();
                if (ph.value(QStringLiteral("stage")).toInt() == 0
                    && ph.value(QStringLiteral("kind")).toString() == QLatin1String(kind)
                    && !ph.value(QStringLiteral("links")).toArray().isEmpty())
                    return (ph.value(QStringLiteral("start_s")).toDouble()
                            + ph.value(QStringLiteral("end_s")).toDouble())
                           / 2;
            }
            return -1.0;
        };
        const double tpAt = middleOf("tp"), dpAt = middleOf("dp");
        QVERIFY(tpAt > 0 && dpAt > 0 && tpAt < step && dpAt < step);
        // The links of every phase running at `t`.
        const auto busyAt = [&](double t) {
            QSet<int> ids;
            for (const QJsonValue v : phases) {
                const QJsonObject ph = v.toObject();
                if (ph.value(QStringLiteral("start_s")).toDouble() <= t
                    && t < ph.value(QStringLiteral("end_s")).toDouble())
                    for (const QJsonValue l : ph.value(QStringLiteral("links")).toArray())
                        if (l.toObject().value(QStringLiteral("bytes")).toDouble() > 0)
                            ids.insert(l.toObject().value(QStringLiteral("id")).toInt());
            }
            return ids;
        };
        const QString at = QString::number(tpAt, 'g', 17);
        Run r = run({data(layout),
                     QStringLiteral("-o"),
                     out("at.csv"),
                     QStringLiteral("--all-links"),
                     QStringLiteral("--at"),
                     at});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QList<QByteArray> lines = read(out("at.csv")).split('\n');
        QVERIFY(lines.first().trimmed().endsWith(",peak_utilization,utilization_at"));
        QSet<int> loadedThen;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QList<QByteArray> f = lines[i].trimmed().split(',');
            if (lines[i].trimmed().isEmpty())
                continue;
            QVERIFY2(f.size() == 10, lines[i].constData()); // every row has the column
            bool isNumber = false, isId = false;
            const double then = f[9].toDouble(&isNumber);
            const int id = f[0].toInt(&isId);
            QVERIFY2(isNumber && isId && then >= 0, lines[i].constData());
            if (then > 0)
                loadedThen.insert(id);
        }
        const QSet<int> expected = busyAt(tpAt);
        QVERIFY(!expected.isEmpty());
        QCOMPARE(loadedThen, expected);

        r = run({data(layout), QStringLiteral("-o"), out("at.json"), QStringLiteral("--at"), at});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(read(out("at.json"))).object();
        QCOMPARE(j.value(QStringLiteral("at_s")).toDouble(), tpAt);
        int momentLinks = 0;
        for (const QJsonValue l : j.value(QStringLiteral("links")).toArray())
            momentLinks += l.toObject().value(QStringLiteral("utilization_at")).toDouble() > 0;
        QCOMPARE(momentLinks, expected.size());

        // The diagram at two moments: different pictures, and the title block says when.
        for (const auto &[name, t] : {std::pair{"tp.png", tpAt}, std::pair{"dp.png", dpAt}}) {
            r = run({data(layout),
                     QStringLiteral("-o"),
                     out(name),
                     QStringLiteral("--at"),
                     QString::number(t, 'g', 17)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
        const QImage tp(out("tp.png")), dp(out("dp.png"));
        QVERIFY(!tp.isNull() && tp.size() == dp.size());
        QVERIFY(tp != dp);
        r = run({data(layout), QStringLiteral("-o"), out("tp.svg"), QStringLiteral("--at"), at});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QString error;
        const QString text = xmlText(out("tp.svg"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(text.contains(QStringLiteral("Link load at")), qPrintable(text.left(2000)));
        QVERIFY(text.contains(QStringLiteral("utilization at this moment")));

        // Past the end of the step: exit 1, naming the file and the step's length.
        for (const char *name : {"late.csv", "late.svg"}) {
            r = run({data(layout),
                     QStringLiteral("-o"),
                     out(name),
                     QStringLiteral("--at"),
                     QString::number(step * 2)});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(QLatin1String(layout))
                             && r.err.contains(QStringLiteral("past the end")),
                     qPrintable(r.err));
            QVERIFY(!QFile::exists(out(name)));
        }
    }

    void helpNamesEveryFormat()
    {
        const Run r = run({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        for (const char *s : {".svg",
                              ".png",
                              ".pdf",
                              ".md",
                              ".csv",
                              ".json",
                              "--scale",
                              "--width",
                              "--at",
                              "--region",
                              "gpu:0-63",
                              "node:16-31,40",
                              "rack:2-3",
                              "su:0",
                              "area:X,Y,W,H",
                              "--report",
                              "--compare"})
            QVERIFY2(r.out.contains(QLatin1String(s)), s);
    }
};

QTEST_GUILESS_MAIN(TestExportCli)
#include "tst_exportcli.moc"
