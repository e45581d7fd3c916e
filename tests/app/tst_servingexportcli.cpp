// `railyard export` of a serving layout: the Markdown report (its tables parsed by cmark-gfm,
// its numbers against `railyard evaluate --json`), the CSV of the per-link loads of a decode
// step (rows and bytes against the JSON), `--at` a moment of the decode step or (request:TIME)
// of one request's life, the design-review
// report (PDF through pdftotext, Markdown) with --compare, and a hostile title in each.
#include "exportcheck.h"

#include "clirun.h"
#include "comparenear.h"

#include <QFile>

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using railyard::test::runTool;

namespace {

QString layoutFile(const char *name)
{
    return QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name);
}

const char *const kAggregated = "serving-llama70b-tp16-two-servers.railyard.json";
const char *const kDisaggregated = "serving-disaggregated-gb200-400g.railyard.json";
const char *const kWideEp = "serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json";
const char *const kTp8 = "serving-llama70b-tp8-h100.railyard.json";

railyard::test::CliRun exportTo(const QStringList &args)
{
    return railyard::test::runCli(QStringList{QStringLiteral("export")} + args);
}

// `evaluate --json --links all`: the reference.
QJsonObject evaluation(const QString &layout)
{
    const railyard::test::CliRun r = railyard::test::runCli({QStringLiteral("evaluate"),
                                                             layout,
                                                             QStringLiteral("--json"),
                                                             QStringLiteral("--links"),
                                                             QStringLiteral("all")});
    if (r.exitCode != 0)
        qWarning("evaluate %s: %s", qPrintable(layout), qPrintable(r.errText()));
    return QJsonDocument::fromJson(r.out).object();
}

// "12.3 ms", "1.5 s", "812 µs" in seconds; -1 when it is not a time.
double seconds(const QString &text)
{
    const QRegularExpressionMatch m = QRegularExpression(
                                              QStringLiteral("^([0-9.]+) (s|ms|\u00b5s|ns)$"))
                                              .match(text.trimmed());
    if (!m.hasMatch())
        return -1;
    const QString u = m.captured(2);
    const double scale = u == QLatin1String("s")    ? 1
                         : u == QLatin1String("ms") ? 1e-3
                         : u == QLatin1String("ns") ? 1e-9
                                                    : 1e-6;
    return m.captured(1).toDouble() * scale;
}

// The Markdown tables as rendered by cmark-gfm: per table, its rows of cells (header first).
QList<QList<QStringList>> tables(const QString &html)
{
    QList<QList<QStringList>> out;
    const QRegularExpression tableRe(QStringLiteral("<table>(.*?)</table>"),
                                     QRegularExpression::DotMatchesEverythingOption);
    const QRegularExpression rowRe(QStringLiteral("<tr>(.*?)</tr>"),
                                   QRegularExpression::DotMatchesEverythingOption);
    const QRegularExpression cellRe(QStringLiteral("<t[hd][^>]*>(.*?)</t[hd]>"),
                                    QRegularExpression::DotMatchesEverythingOption);
    for (auto t = tableRe.globalMatch(html); t.hasNext();) {
        QList<QStringList> rows;
        const QString body = t.next().captured(1);
        for (auto r = rowRe.globalMatch(body); r.hasNext();) {
            QStringList cells;
            const QString row = r.next().captured(1);
            for (auto c = cellRe.globalMatch(row); c.hasNext();)
                cells << c.next().captured(1);
            rows << cells;
        }
        out << rows;
    }
    return out;
}

// The row of `tables` whose first cell is `name`, or empty.
QStringList rowNamed(const QList<QList<QStringList>> &all, const QString &name)
{
    for (const QList<QStringList> &t : all)
        for (const QStringList &r : t)
            if (!r.isEmpty() && r.first() == name)
                return r;
    return {};
}

} // namespace

class TestServingExportCli : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString out(const QString &name) const { return m_dir.filePath(name); }

    // A serving layout whose title is markup, Markdown, a spreadsheet formula and controls.
    QString hostileLayout()
    {
        const QString path = out(QStringLiteral("hostile-serving.railyard.json"));
        QByteArray text = railyard::test::readFile(layoutFile(kAggregated));
        const QByteArray title = "\"title\": \"Serving Llama 3.1 70B: TP16 across two H100 "
                                 "servers\"";
        if (!text.contains(title))
            return {};
        text.replace(title,
                     "\"title\": \"=cmd|' /C calc'!A0 <script>alert(1)</script> | # *x* "
                     "\\u0001\\u001b[31m end\"");
        return railyard::test::writeFile(path, text) ? path : QString();
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The Markdown report: tables that parse, TTFT, TPOT and the rates as evaluate --json
    // gives them (3 significant digits of seconds, 4 of rates), each with its band; the
    // breakdown, memory, pools, links.
    void markdownHasTheNumbers_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::newRow("aggregated") << layoutFile(kAggregated);
        QTest::newRow("disaggregated") << layoutFile(kDisaggregated);
    }
    void markdownHasTheNumbers()
    {
        QFETCH(QString, layout);
        const QString md = out(QStringLiteral("serving.md"));
        const auto r = exportTo({layout, QStringLiteral("-o"), md});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const auto html = runTool(QStringLiteral("cmark-gfm"),
                                  {QStringLiteral("-e"), QStringLiteral("table"), md});
        QVERIFY2(html.ok, qPrintable(html.output));
        const QString text = QString::fromUtf8(railyard::test::readFile(md));
        // Every table parses as one.
        const QList<QList<QStringList>> all = tables(html.output);
        QVERIFY(all.size() >= 4);
        QCOMPARE(int(all.size()),
                 int(text.count(QRegularExpression(QStringLiteral("\n\\|(-{3}:?\\|)+\n")))));
        const QJsonObject e = evaluation(layout);
        QVERIFY(!e.isEmpty());
        const auto near = [&](const char *row, const char *key, double tolerance) {
            const QStringList cells = rowNamed(all, QLatin1String(row));
            QVERIFY2(cells.size() == 3, row);
            const double value = e.value(QLatin1String(key)).toDouble();
            QVERIFY2(value > 0, key);
            const double shown = seconds(cells[1]) >= 0 ? seconds(cells[1])
                                                        : QString(cells[1]).remove(',').toDouble();
            QVERIFY2(std::abs(shown - value) <= tolerance * value,
                     qPrintable(QStringLiteral("%1: %2 against %3").arg(row, cells[1]).arg(value)));
            QVERIFY2(!cells[2].isEmpty() || QLatin1String(row) == QLatin1String("Decode step"),
                     row); // the band
        };
        near("TTFT", "ttft_s", 0.006);
        near("TPOT", "tpot_s", 0.006);
        near("Output tokens/s per GPU", "output_tokens_per_s_per_gpu", 0.0006);
        near("Tokens/s per user", "tokens_per_s_per_user", 0.0006);
        // TPOT's band, low to high, as the JSON's.
        const QStringList tpot = rowNamed(all, QStringLiteral("TPOT"));
        const QRegularExpressionMatch band = QRegularExpression(QStringLiteral("^(.+) to (.+) \\("))
                                                     .match(tpot.value(2));
        QVERIFY2(band.hasMatch(), qPrintable(tpot.value(2)));
        const QJsonArray tb = e.value(QStringLiteral("tpot_band_s")).toArray();
        RAILYARD_COMPARE_NEAR(seconds(band.captured(1)), tb.at(0).toDouble(), 0.006);
        RAILYARD_COMPARE_NEAR(seconds(band.captured(2)), tb.at(1).toDouble(), 0.006);
        // The decode step's parts add up to its total, as the JSON's.
        const QJsonObject decode = e.value(QStringLiteral("breakdown_s"))
                                           .toObject()
                                           .value(QStringLiteral("decode"))
                                           .toObject();
        RAILYARD_COMPARE_NEAR(seconds(rowNamed(all, QStringLiteral("TP")).value(1)),
                              decode.value(QStringLiteral("tp")).toDouble(),
                              0.006);
        // Memory per GPU: weights and KV cache.
        const QJsonObject memory = e.value(QStringLiteral("memory_breakdown_gib")).toObject();
        const bool disaggregated = e.value(QStringLiteral("disaggregated")).toBool();
        const QStringList gpus = rowNamed(all,
                                          disaggregated ? QStringLiteral("Decode pool")
                                                        : QStringLiteral("Every GPU"));
        QCOMPARE(gpus.size(), 7);
        RAILYARD_COMPARE_NEAR(gpus[1].toDouble(),
                              memory.value(QStringLiteral("weights")).toDouble(),
                              0.006);
        RAILYARD_COMPARE_NEAR(gpus[2].toDouble(),
                              memory.value(QStringLiteral("kv_cache")).toDouble(),
                              0.006);
        QCOMPARE(text.contains(QStringLiteral("\n## Pools\n")), disaggregated);
        if (disaggregated)
            QVERIFY(!rowNamed(all, QStringLiteral("Prefill pool")).isEmpty());
        QVERIFY(text.contains(QStringLiteral("\n### Busiest links")));
    }

    // The CSV: training's columns then bytes_per_request, one row per link that carries bytes
    // in a decode step or per request, each as the JSON's link.
    void csvMatchesTheJson()
    {
        const QString layout = layoutFile(kDisaggregated);
        const QString csv = out(QStringLiteral("serving.csv"));
        const auto r = exportTo({layout, QStringLiteral("-o"), csv});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const QStringList rows = QString::fromUtf8(railyard::test::readFile(csv))
                                         .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
        QCOMPARE(rows.first(),
                 QStringLiteral("id,name,kind,tier,bytes_per_step,bytes_up,bytes_down,"
                                "utilization,peak_utilization,bytes_per_request"));
        const QJsonObject e = evaluation(layout);
        QHash<int, QJsonObject> loaded;
        for (const QJsonValue v : e.value(QStringLiteral("links")).toArray()) {
            const QJsonObject l = v.toObject();
            if (l.value(QStringLiteral("bytes_per_decode_step")).toDouble() > 0
                || l.value(QStringLiteral("bytes_per_request")).toDouble() > 0)
                loaded.insert(l.value(QStringLiteral("id")).toInt(), l);
        }
        QVERIFY(loaded.size() > 10);
        QCOMPARE(int(rows.size()) - 1, int(loaded.size()));
        bool request = false;
        for (qsizetype i = 1; i < rows.size(); ++i) {
            const QStringList cells = rows[i].split(QLatin1Char(','));
            QCOMPARE(cells.size(), 10);
            const QJsonObject l = loaded.value(cells[0].toInt());
            QVERIFY2(!l.isEmpty(), qPrintable(rows[i]));
            QCOMPARE(cells[1], l.value(QStringLiteral("name")).toString());
            RAILYARD_COMPARE_NEAR(cells[4].toDouble(),
                                  l.value(QStringLiteral("bytes_per_decode_step")).toDouble(),
                                  1e-6);
            RAILYARD_COMPARE_NEAR(cells[7].toDouble(),
                                  l.value(QStringLiteral("utilization")).toDouble(),
                                  1e-6);
            RAILYARD_COMPARE_NEAR(cells[9].toDouble(),
                                  l.value(QStringLiteral("bytes_per_request")).toDouble(),
                                  1e-6);
            request = request || cells[9].toDouble() > 0;
        }
        QVERIFY(request); // a disaggregated layout's KV transfer
    }

    // --at: the load at a moment of the decode step. Wide EP's decode step computes for its
    // first 80% (GEMMs, attention: nothing on the links) and ends with the MoE all-to-all over
    // NVLink: at 30% every link is idle, at 90% the NVLinks carry the all-to-all. Past the
    // decode step, a clear error.
    void atChangesTheLoads()
    {
        const QString layout = layoutFile(kWideEp);
        const QJsonObject e = evaluation(layout);
        const double step = e.value(QStringLiteral("decode_step_s")).toDouble();
        QVERIFY(step > 0);
        QList<QList<double>> moments;
        for (double f : {0.3, 0.9}) {
            const QString csv = out(QStringLiteral("at%1.csv").arg(f));
            const auto r = exportTo({layout,
                                     QStringLiteral("-o"),
                                     csv,
                                     QStringLiteral("--at"),
                                     QString::number(f * step, 'g', 12)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
            const QStringList rows = QString::fromUtf8(railyard::test::readFile(csv))
                                             .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
            QVERIFY(rows.first().contains(QStringLiteral(",utilization_at,")));
            QList<double> at;
            for (qsizetype i = 1; i < rows.size(); ++i)
                at << rows[i].split(QLatin1Char(',')).value(9).toDouble();
            moments << at;
        }
        QCOMPARE(moments[0].size(), moments[1].size());
        QVERIFY(moments[0].size() > 64);
        const auto busiest = [](const QList<double> &v) {
            return *std::max_element(v.begin(), v.end());
        };
        QCOMPARE(busiest(moments[0]), 0.0);
        QVERIFY(busiest(moments[1]) > 0.05);
        // The Markdown says the moment and adds the column.
        const QString md = out(QStringLiteral("at.md"));
        QCOMPARE(exportTo({layout,
                           QStringLiteral("-o"),
                           md,
                           QStringLiteral("--at"),
                           QString::number(0.5 * step, 'g', 12)})
                         .exitCode,
                 0);
        QVERIFY(railyard::test::readFile(md).contains("| Peak | At t |"));
        // Past the decode step.
        const auto r = exportTo({layout,
                                 QStringLiteral("-o"),
                                 out(QStringLiteral("late.csv")),
                                 QStringLiteral("--at"),
                                 QString::number(step * 2, 'g', 12)});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(QStringLiteral("past the end of the decode step")),
                 qPrintable(r.errText()));
    }

    // --at request:TIME, a moment of one request's life (evaluate --timeline's
    // request_timeline). Disaggregated over 400G NICs: mid-prefill (its GEMMs and attention)
    // no link carries the request, mid-KV-transfer the NICs do; the same time as a decode-step
    // moment is past the decode step. Bad values: a clear message naming --at.
    void atRequestTimeline()
    {
        const QString layout = layoutFile(kDisaggregated);
        const auto timeline = railyard::test::runCli({QStringLiteral("evaluate"),
                                                      layout,
                                                      QStringLiteral("--json"),
                                                      QStringLiteral("--timeline")});
        QCOMPARE(timeline.exitCode, 0);
        const QJsonObject e = QJsonDocument::fromJson(timeline.out).object();
        double prefill = -1, kv = -1, life = 0;
        for (const QJsonValue v : e.value(QStringLiteral("request_timeline")).toArray()) {
            const QJsonObject p = v.toObject();
            const double mid = (p.value(QStringLiteral("start_s")).toDouble()
                                + p.value(QStringLiteral("end_s")).toDouble())
                               / 2;
            const QString name = p.value(QStringLiteral("name")).toString();
            if (name == QLatin1String("prefill: GEMMs and attention"))
                prefill = mid;
            if (name == QLatin1String("KV cache transfer"))
                kv = mid;
            life = std::max(life, p.value(QStringLiteral("end_s")).toDouble());
        }
        QVERIFY(prefill > 0 && kv > prefill && life > kv);
        const double step = e.value(QStringLiteral("decode_step_s")).toDouble();
        QVERIFY(kv > step); // so a decode-step moment at that time is refused

        const auto busiestAt = [&](const QString &at, const QString &name) {
            const QString csv = out(name);
            const auto r = exportTo({layout, QStringLiteral("-o"), csv, QStringLiteral("--at"), at});
            if (r.exitCode != 0) {
                qWarning("%s", qPrintable(r.errText()));
                return -1.0;
            }
            const QStringList rows = QString::fromUtf8(railyard::test::readFile(csv))
                                             .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
            if (rows.size() < 2 || !rows.first().contains(QStringLiteral(",utilization_at,")))
                return -1.0;
            double most = 0;
            for (qsizetype i = 1; i < rows.size(); ++i)
                most = std::max(most, rows[i].split(QLatin1Char(',')).value(9).toDouble());
            return most;
        };
        const QString atKv = QStringLiteral("request:") + QString::number(kv, 'g', 12);
        QCOMPARE(busiestAt(QStringLiteral("request:") + QString::number(prefill, 'g', 12),
                           QStringLiteral("prefill.csv")),
                 0.0);
        const double kvLoad = busiestAt(atKv, QStringLiteral("kv.csv"));
        QVERIFY2(kvLoad > 0.01, qPrintable(QString::number(kvLoad)));
        // The same moment in milliseconds.
        QCOMPARE(busiestAt(QStringLiteral("request:%1ms").arg(kv * 1e3, 0, 'g', 12),
                           QStringLiteral("kv-ms.csv")),
                 kvLoad);
        // JSON: the moment, its timeline and what runs then; Markdown says it in words.
        const QString json = out(QStringLiteral("kv.json"));
        QCOMPARE(exportTo({layout, QStringLiteral("-o"), json, QStringLiteral("--at"), atKv})
                         .exitCode,
                 0);
        const QJsonObject j = QJsonDocument::fromJson(railyard::test::readFile(json)).object();
        RAILYARD_COMPARE_ABS(j.value(QStringLiteral("at_s")).toDouble(), kv, 1e-12);
        QCOMPARE(j.value(QStringLiteral("at_timeline")).toString(), QStringLiteral("request"));
        QCOMPARE(j.value(QStringLiteral("at_phases")).toArray(),
                 QJsonArray{QStringLiteral("KV cache transfer")});
        const QString md = out(QStringLiteral("kv.md"));
        QCOMPARE(exportTo({layout, QStringLiteral("-o"), md, QStringLiteral("--at"), atKv}).exitCode,
                 0);
        const QString mdText = QString::fromUtf8(railyard::test::readFile(md));
        QVERIFY2(mdText.contains(QStringLiteral("into one request's"))
                         && mdText.contains(QStringLiteral("during KV cache transfer")),
                 qPrintable(mdText.left(3000)));
        QVERIFY(mdText.contains(QStringLiteral("| Peak | At t |")));
        // The diagram draws the moment and says of what.
        const QString svg = out(QStringLiteral("kv.svg"));
        const auto drawn = exportTo(
                {layout, QStringLiteral("-o"), svg, QStringLiteral("--at"), atKv});
        QVERIFY2(drawn.exitCode == 0, qPrintable(drawn.errText()));
        const QString svgText = QString::fromUtf8(railyard::test::readFile(svg));
        QVERIFY(svgText.contains(QStringLiteral("KV cache transfer")));
        QVERIFY(svgText.contains(QStringLiteral("life")));

        // Bad values, each naming --at.
        struct Bad
        {
            QString at;
            int exit;
            QStringList says;
        };
        const QString late = QStringLiteral("request:") + QString::number(life * 2, 'g', 6);
        for (const Bad &b :
             {Bad{QStringLiteral("request:-1ms"), 2, {"--at", "got 'request:-1ms'"}},
              Bad{QStringLiteral("request:soon"), 2, {"--at", "'soon' is not a number"}},
              Bad{QStringLiteral("request:"), 2, {"--at", "is not a number"}},
              Bad{QStringLiteral("lunch:3"), 2, {"--at", "'lunch' is not a timeline"}},
              Bad{QStringLiteral("request:nan"), 2, {"--at", "not a number"}},
              Bad{late, 1, {"--at request:", "past the end of one request's life", kDisaggregated}},
              Bad{QString::number(kv, 'g', 12), 1, {"past the end of the decode step"}}}) {
            const QString file = out(QStringLiteral("bad.csv"));
            const auto r = exportTo(
                    {layout, QStringLiteral("-o"), file, QStringLiteral("--at"), b.at});
            QVERIFY2(r.exitCode == b.exit, qPrintable(b.at + QStringLiteral(": ") + r.errText()));
            for (const QString &say : b.says)
                QVERIFY2(r.errText().contains(say),
                         qPrintable(b.at + QStringLiteral(": ") + r.errText()));
            QVERIFY(!QFile::exists(file));
        }
        // A training layout has no request to take a moment of.
        const auto training = exportTo(
                {QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/hgx-h100-server.railyard.json"),
                 QStringLiteral("-o"),
                 out(QStringLiteral("training.csv")),
                 QStringLiteral("--at"),
                 QStringLiteral("request:1ms")});
        QCOMPARE(training.exitCode, 1);
        QVERIFY2(training.errText().contains(
                         QStringLiteral("--at request:1ms: a request's life is a "
                                        "serving layout's")),
                 qPrintable(training.errText()));
    }

    // The review report of a serving layout: every section, TPOT and TTFT as evaluate gives
    // them, in the PDF (pdftotext) and the Markdown.
    void reviewReport()
    {
        const QString layout = layoutFile(kDisaggregated);
        const QJsonObject e = evaluation(layout);
        const QString pdf = out(QStringLiteral("review.pdf"));
        auto r = exportTo({layout, QStringLiteral("-o"), pdf, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const auto t = runTool(QStringLiteral("pdftotext"),
                               {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(t.ok, qPrintable(t.output));
        const QString text = t.output.normalized(QString::NormalizationForm_KC);
        for (const char *heading : {"The cluster",
                                    "Where a token's time goes",
                                    "Decode-step timeline",
                                    "Memory per GPU",
                                    "Pools",
                                    "Hottest links",
                                    "Warnings",
                                    "Assumptions and where the model is unsure"})
            QVERIFY2(text.contains(QLatin1String(heading)), heading);
        QVERIFY(text.contains(QStringLiteral("SERVING")));
        const auto after = [&](const QString &label) {
            const QRegularExpressionMatch m = QRegularExpression(
                                                      QRegularExpression::escape(label)
                                                      + QStringLiteral(
                                                              "\\s+([0-9.]+ (?:s|ms|\u00b5s))"))
                                                      .match(text);
            return m.hasMatch() ? seconds(m.captured(1)) : -1.0;
        };
        RAILYARD_COMPARE_NEAR(after(QStringLiteral("TPOT")),
                              e.value(QStringLiteral("tpot_s")).toDouble(),
                              0.006);
        RAILYARD_COMPARE_NEAR(after(QStringLiteral("TTFT")),
                              e.value(QStringLiteral("ttft_s")).toDouble(),
                              0.006);
        const QString md = out(QStringLiteral("review.md"));
        r = exportTo({layout, QStringLiteral("-o"), md, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const QString m = QString::fromUtf8(railyard::test::readFile(md));
        QVERIFY(m.contains(QStringLiteral("- **TPOT**: ")));
        QVERIFY(m.contains(QStringLiteral("\n## Decode-step timeline\n")));
        QVERIFY(QFile::exists(out(QStringLiteral("review-diagram.svg"))));
    }

    // --compare: A and B both serving, each one's TPOT as evaluate gives it; a training A is
    // refused by name.
    void reviewComparison()
    {
        const QString a = layoutFile("serving-llama70b-tp8-h100.railyard.json");
        const QString b = layoutFile(kAggregated);
        const double tpotA = evaluation(a).value(QStringLiteral("tpot_s")).toDouble();
        const double tpotB = evaluation(b).value(QStringLiteral("tpot_s")).toDouble();
        QVERIFY(std::abs(tpotA - tpotB) > 0.01 * tpotB);
        const QString pdf = out(QStringLiteral("ab.pdf"));
        auto r = exportTo({b,
                           QStringLiteral("-o"),
                           pdf,
                           QStringLiteral("--report"),
                           QStringLiteral("--compare"),
                           a});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const auto t = runTool(QStringLiteral("pdftotext"),
                               {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(t.ok, qPrintable(t.output));
        QVERIFY(t.output.contains(QStringLiteral("A/B comparison")));
        // The Markdown's comparison table: TPOT of A, then of B, as evaluate gives them.
        const QString md = out(QStringLiteral("ab.md"));
        r = exportTo({b,
                      QStringLiteral("-o"),
                      md,
                      QStringLiteral("--report"),
                      QStringLiteral("--compare"),
                      a});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const auto html = runTool(QStringLiteral("cmark-gfm"),
                                  {QStringLiteral("-e"), QStringLiteral("table"), md});
        QVERIFY2(html.ok, qPrintable(html.output));
        QStringList tpot;
        for (const QList<QStringList> &table : tables(html.output))
            if (!table.isEmpty() && table.first().value(1) == QLatin1String("A"))
                tpot = rowNamed({table}, QStringLiteral("TPOT"));
        QCOMPARE(tpot.size(), 4);
        RAILYARD_COMPARE_NEAR(seconds(tpot[1].section(QStringLiteral(" ("), 0, 0)), tpotA, 0.006);
        RAILYARD_COMPARE_NEAR(seconds(tpot[2].section(QStringLiteral(" ("), 0, 0)), tpotB, 0.006);
        r = exportTo({b,
                      QStringLiteral("-o"),
                      out(QStringLiteral("mixed.pdf")),
                      QStringLiteral("--report"),
                      QStringLiteral("--compare"),
                      QStringLiteral(RAILYARD_TEST_DATA "/example.railyard.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(QStringLiteral("two serving layouts")),
                 qPrintable(r.errText()));
    }

    // A hostile title comes out escaped: Markdown (one heading, no tag), CSV (no cell a
    // formula), the review PDF (as written, no control character).
    // A serving layout with a fault: the review report says what it costs, TPOT on the healthy
    // cluster and with the fault as `evaluate --json` gives them (its faults.metrics).
    void reviewReportHasTheFaults()
    {
        QJsonObject doc = QJsonDocument::fromJson(railyard::test::readFile(layoutFile(kTp8)))
                                  .object();
        QVERIFY(!doc.isEmpty());
        QJsonObject cluster = doc.value(QStringLiteral("cluster")).toObject();
        cluster.insert(QStringLiteral("faults"),
                       QJsonArray{QJsonObject{{QStringLiteral("device"), QStringLiteral("GPU 3")}}});
        doc.insert(QStringLiteral("cluster"), cluster);
        const QString layout = out(QStringLiteral("gpu3-out.railyard.json"));
        QVERIFY(railyard::test::writeFile(layout, QJsonDocument(doc).toJson()));
        const QJsonObject tpot = evaluation(layout)
                                         .value(QStringLiteral("faults"))
                                         .toObject()
                                         .value(QStringLiteral("metrics"))
                                         .toObject()
                                         .value(QStringLiteral("tpot_s"))
                                         .toObject();
        const double before = tpot.value(QStringLiteral("before")).toDouble(),
                     after = tpot.value(QStringLiteral("after")).toDouble();
        QVERIFY2(before > 0 && after > before, "a GPU out slows the tokens of the other replica");
        const QString md = out(QStringLiteral("faulted-review.md"));
        const auto r = exportTo({layout, QStringLiteral("-o"), md, QStringLiteral("--report")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.errText()));
        const QString m = QString::fromUtf8(railyard::test::readFile(md));
        QVERIFY2(m.contains(QStringLiteral("\n## Faults\n")), qPrintable(m.left(600)));
        const QRegularExpressionMatch said
                = QRegularExpression(QStringLiteral("TPOT is ([0-9.]+ (?:s|ms|\u00b5s)) on the "
                                                    "healthy cluster and ([0-9.]+ "
                                                    "(?:s|ms|\u00b5s)) with the faults"))
                          .match(m);
        QVERIFY2(said.hasMatch(), qPrintable(m));
        RAILYARD_COMPARE_NEAR(seconds(said.captured(1)), before, 0.006);
        RAILYARD_COMPARE_NEAR(seconds(said.captured(2)), after, 0.006);
    }

    void hostileTitle()
    {
        const QString layout = hostileLayout();
        QVERIFY(!layout.isEmpty());
        const QString md = out(QStringLiteral("h.md")), csv = out(QStringLiteral("h.csv")),
                      pdf = out(QStringLiteral("h.pdf"));
        for (const QString &o : {md, csv, pdf}) {
            QStringList args{layout, QStringLiteral("-o"), o};
            if (o == pdf)
                args << QStringLiteral("--report");
            const auto r = exportTo(args);
            QVERIFY2(r.exitCode == 0, qPrintable(o + QLatin1String(": ") + r.errText()));
        }
        const QByteArray raw = railyard::test::readFile(md);
        QVERIFY(!raw.contains("<script>"));
        QVERIFY(!raw.contains('\x01') && !raw.contains('\x1b'));
        const auto html = runTool(QStringLiteral("cmark-gfm"),
                                  {QStringLiteral("-e"), QStringLiteral("table"), md});
        QVERIFY2(html.ok, qPrintable(html.output));
        QVERIFY2(html.output.startsWith(
                         QStringLiteral("<h1>=cmd|' /C calc'!A0 &lt;script&gt;alert(1)&lt;/"
                                        "script&gt; | # *x* \ufffd\ufffd[31m end</h1>")),
                 qPrintable(html.output.left(300)));
        for (const QString &row : QString::fromUtf8(railyard::test::readFile(csv))
                                          .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts))
            for (const QString &c : row.split(QLatin1Char(','))) {
                bool number = false;
                c.toDouble(&number);
                QVERIFY2(number || c.isEmpty() || !QStringLiteral("=+-@\t\r").contains(c.front()),
                         qPrintable(row));
            }
        const auto t = runTool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(t.ok, qPrintable(t.output));
        QVERIFY2(t.output.contains(QStringLiteral("<script>alert(1)</script> | # *x*")),
                 qPrintable(t.output.left(400)));
        QVERIFY(!t.output.contains(QChar(0x1b)));
    }
};

QTEST_GUILESS_MAIN(TestServingExportCli)
#include "tst_servingexportcli.moc"
