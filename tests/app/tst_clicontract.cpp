// The command line as a build delivers it (issue 18): --version names the layout format the
// engine writes, the JSON reports share one vocabulary of keys (README, "JSON output"), and a
// GUI-less build (-DRAILYARD_BUILD_GUI=OFF) runs every subcommand but says clearly that the
// window and diagrams need the GUI build. Runs the real executable and, in process, the CLI
// library without a DiagramWriter.
#include "cli.h"
#include "clirun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sstream>

using railyard::test::runCli;

class TestCliContract : public QObject
{
    Q_OBJECT

    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }

    static QJsonObject json(const railyard::test::CliRun &r)
    {
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out, &pe).object();
        if (pe.error != QJsonParseError::NoError)
            qWarning("not JSON (%s): %s", qPrintable(pe.errorString()), qPrintable(r.errText()));
        return o;
    }

    // Every key of `v`, its objects' keys too (arrays looked into), as "a/b".
    static void keysOf(const QJsonValue &v, const QString &path, QStringList &out)
    {
        if (v.isObject()) {
            const QJsonObject o = v.toObject();
            for (auto it = o.begin(); it != o.end(); ++it) {
                const QString key = path.isEmpty() ? it.key() : path + '/' + it.key();
                out << key;
                keysOf(it.value(), key, out);
            }
        } else if (v.isArray()) {
            for (const QJsonValue &e : v.toArray())
                keysOf(e, path, out);
        }
    }

private Q_SLOTS:
    // --version says the format a saved file carries: the engine's, not a build variable's.
    void versionNamesTheSavedFormat()
    {
        QTemporaryDir dir;
        // An imported server is written in the newest format (cluster.server needs it).
        const QString saved = dir.filePath(QStringLiteral("server.railyard.json"));
        const auto imported = runCli({QStringLiteral("import"),
                                      data("import/topo-m/hgx-h100-8gpu-8nic-sglang30401.txt"),
                                      QStringLiteral("-o"),
                                      saved});
        QVERIFY2(imported.exitCode == 0, qPrintable(imported.errText()));
        QFile f(saved);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject file = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(file.value(QStringLiteral("format")).toString(), QStringLiteral("railyard-layout"));
        const int written = file.value(QStringLiteral("version")).toInt();
        QVERIFY(written >= 2);

        const auto version = runCli({QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        const QRegularExpressionMatch m
                = QRegularExpression(QStringLiteral("^railyard \\d+\\.\\d+\\.\\d+ \\(layout format "
                                                    "(\\d+)\\)\\n$"))
                          .match(QString::fromUtf8(version.out));
        QVERIFY2(m.hasMatch(), version.out.constData());
        QCOMPARE(m.captured(1).toInt(), written);
    }

    // The numbers evaluate, plan and buy share go by the same keys, with the same parts; no key
    // carries a unit the others leave out (`_usd`) or names a breakdown another way.
    void oneVocabulary()
    {
        const QString layout = data("example.railyard.json");
        const QJsonObject e = json(
                runCli({QStringLiteral("evaluate"), layout, QStringLiteral("--json")}));
        const QJsonObject p = json(runCli({QStringLiteral("plan"),
                                           layout,
                                           QStringLiteral("--top"),
                                           QStringLiteral("1"),
                                           QStringLiteral("--json")}));
        QVERIFY(!e.isEmpty());
        const QJsonObject plan = p.value(QStringLiteral("plans")).toArray().at(0).toObject();
        QVERIFY(!plan.isEmpty());
        QVERIFY2(e.value(QStringLiteral("cost_per_step")).toDouble() > 0,
                 "the example has a price: its cost keys are written");
        for (const char *key : {"step_time_s",
                                "step_time_band_s",
                                "step_time_band_basis",
                                "tokens_per_s",
                                "mfu",
                                "memory_gib_per_gpu",
                                "memory_breakdown_gib",
                                "breakdown_s",
                                "cost_per_step",
                                "cost_per_million_tokens"}) {
            QVERIFY2(e.contains(QLatin1String(key)), key);
            QVERIFY2(plan.contains(QLatin1String(key)), key);
            QCOMPARE(e.value(QLatin1String(key)).type(), plan.value(QLatin1String(key)).type());
        }
        for (const char *object : {"memory_breakdown_gib", "breakdown_s"})
            QCOMPARE(e.value(QLatin1String(object)).toObject().keys(),
                     plan.value(QLatin1String(object)).toObject().keys());
        QCOMPARE(p.value(QStringLiteral("hbm_gib")).toDouble(),
                 e.value(QStringLiteral("hbm_gib")).toDouble());

        const QJsonObject c = json(runCli({QStringLiteral("collective"),
                                           layout,
                                           QStringLiteral("--op"),
                                           QStringLiteral("all_reduce"),
                                           QStringLiteral("--size"),
                                           QStringLiteral("1GB"),
                                           QStringLiteral("--json")}));
        for (const char *key : {"time_s", "algbw_gbps", "busbw_gbps", "algorithm", "size_bytes"})
            QVERIFY2(c.contains(QLatin1String(key)), key);

        QStringList keys;
        keysOf(e, {}, keys);
        keysOf(p, {}, keys);
        keysOf(c, {}, keys);
        for (const QString &k : keys) {
            QVERIFY2(!k.endsWith(QLatin1String("_usd")), qPrintable(k));
            QVERIFY2(!k.endsWith(QLatin1String("memory_gib")), qPrintable(k));
        }
    }

    // A serving layout's `evaluate --json` carries DESIGN.md's serving keys, in the same
    // vocabulary (units in the suffix, breakdowns by part, warnings as training's).
    void servingVocabulary()
    {
        const QString layout = QStringLiteral(
                RAILYARD_SOURCE_DIR "/layouts/serving-llama70b-tp16-two-servers.railyard.json");
        const auto run = runCli({QStringLiteral("evaluate"),
                                 layout,
                                 QStringLiteral("--json"),
                                 QStringLiteral("--timeline")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.errText()));
        const QJsonObject e = json(run);
        for (const char *key : {"ttft_s",
                                "tpot_s",
                                "e2e_latency_s",
                                "output_tokens_per_s",
                                "output_tokens_per_s_per_gpu",
                                "input_tokens_per_s_per_gpu",
                                "tokens_per_s_per_user",
                                "requests_per_s",
                                "memory_gib_per_gpu",
                                "max_concurrency",
                                "cost_per_million_output_tokens"})
            QVERIFY2(e.value(QLatin1String(key)).toDouble() > 0, key);
        for (const char *band : {"tpot_band_s", "ttft_band_s"}) {
            const QJsonArray b = e.value(QLatin1String(band)).toArray();
            QCOMPARE(b.size(), 2);
            QVERIFY(b.at(0).toDouble() < b.at(1).toDouble());
        }
        QVERIFY(e.value(QStringLiteral("band_basis"))
                        .toString()
                        .contains(QStringLiteral("no end-to-end")));
        QCOMPARE(e.value(QStringLiteral("memory_breakdown_gib")).toObject().keys(),
                 (QStringList{"activations", "kv_cache", "weights"}));
        const QJsonObject breakdown = e.value(QStringLiteral("breakdown_s")).toObject();
        QCOMPARE(breakdown.keys(), (QStringList{"decode", "prefill"}));
        const QStringList parts = {"attention",
                                   "compute",
                                   "ep",
                                   "kv_transfer",
                                   "overhead",
                                   "pp",
                                   "tp",
                                   "weights_read"};
        for (const QString &phase : breakdown.keys())
            QCOMPARE(breakdown.value(phase).toObject().keys(), parts);
        QVERIFY(breakdown.value(QStringLiteral("decode"))
                        .toObject()
                        .value(QStringLiteral("tp"))
                        .toDouble()
                > 0);
        const QJsonArray links = e.value(QStringLiteral("links")).toArray();
        QVERIFY(!links.isEmpty());
        for (const char *key : {"id",
                                "name",
                                "kind",
                                "tier",
                                "bytes_per_decode_step",
                                "bytes_per_request",
                                "utilization",
                                "peak_utilization"})
            QVERIFY2(links.at(0).toObject().contains(QLatin1String(key)), key);
        const QJsonArray warnings = e.value(QStringLiteral("warnings")).toArray();
        bool crossing = false;
        for (const QJsonValue &w : warnings) {
            const QJsonObject o = w.toObject();
            for (const char *key : {"severity", "code", "message", "gpus", "cost_s"})
                QVERIFY2(o.contains(QLatin1String(key)), key);
            if (o.value(QStringLiteral("code")).toString() == QLatin1String("tp-spans-domains")) {
                crossing = true;
                QVERIFY(o.value(QStringLiteral("message"))
                                .toString()
                                .contains(QStringLiteral("per token")));
                QVERIFY(o.value(QStringLiteral("cost_s")).toDouble() > 0);
            }
        }
        QVERIFY(crossing);
        for (const char *timeline : {"timeline", "request_timeline"}) {
            const QJsonArray phases = e.value(QLatin1String(timeline)).toArray();
            QVERIFY2(!phases.isEmpty(), timeline);
            for (const char *key : {"stage", "kind", "name", "start_s", "end_s", "links"})
                QVERIFY2(phases.at(0).toObject().contains(QLatin1String(key)), key);
        }
        QStringList keys;
        keysOf(e, {}, keys);
        for (const QString &k : keys) {
            QVERIFY2(!k.endsWith(QLatin1String("_usd")), qPrintable(k));
            QVERIFY2(!k.endsWith(QLatin1String("memory_gib")), qPrintable(k));
        }
        // The text report says the same for people.
        const auto text = runCli({QStringLiteral("evaluate"), layout});
        QVERIFY2(text.exitCode == 0, qPrintable(text.errText()));
        for (const char *part : {"TTFT",
                                 "TPOT",
                                 "output tokens/s per GPU",
                                 "per user",
                                 "KV cache",
                                 "TP group crosses NVLink domains"})
            QVERIFY2(text.out.contains(part), part);
        // Reports: JSON, and the Markdown report in the serving vocabulary (tst_servingexportcli
        // checks its numbers).
        QTemporaryDir dir;
        const auto exported = runCli({QStringLiteral("export"),
                                      layout,
                                      QStringLiteral("-o"),
                                      dir.filePath(QStringLiteral("s.json"))});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.errText()));
        const auto md = runCli({QStringLiteral("export"),
                                layout,
                                QStringLiteral("-o"),
                                dir.filePath(QStringLiteral("s.md"))});
        QVERIFY2(md.exitCode == 0, qPrintable(md.errText()));
        QFile report(dir.filePath(QStringLiteral("s.md")));
        QVERIFY(report.open(QIODevice::ReadOnly));
        const QString written = QString::fromUtf8(report.readAll());
        for (const char *part : {"TTFT", "TPOT", "per user"})
            QVERIFY2(written.contains(QLatin1String(part)), part);
        QVERIFY2(!written.contains(QStringLiteral("step time")), qPrintable(written.left(400)));
    }

    // `plan` on a serving layout: the Pareto front under --ttft / --tpot limits, as JSON; the
    // training planner's options are refused for it, the limits for a training layout.
    void servingPlan()
    {
        const QString layout = QStringLiteral(RAILYARD_SOURCE_DIR
                                              "/layouts/serving-llama70b-tp8-h100.railyard.json");
        const auto run = runCli({QStringLiteral("plan"),
                                 layout,
                                 QStringLiteral("--json"),
                                 QStringLiteral("--ttft"),
                                 QStringLiteral("200ms"),
                                 QStringLiteral("--tpot"),
                                 QStringLiteral("0.012")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.errText()));
        const QJsonObject e = json(run);
        QCOMPARE(e.value(QStringLiteral("workload")).toString(), QStringLiteral("serving"));
        QCOMPARE(e.value(QStringLiteral("limits"))
                         .toObject()
                         .value(QStringLiteral("ttft_s"))
                         .toDouble(),
                 0.2);
        QCOMPARE(e.value(QStringLiteral("limits"))
                         .toObject()
                         .value(QStringLiteral("tpot_s"))
                         .toDouble(),
                 0.012);
        QVERIFY(e.value(QStringLiteral("evaluated")).toDouble() > 0);
        const QJsonArray front = e.value(QStringLiteral("front")).toArray();
        QVERIFY(!front.isEmpty());
        for (const QJsonValue &v : front) {
            const QJsonObject p = v.toObject();
            for (const char *key : {"concurrency",
                                    "gpus",
                                    "output_tokens_per_s_per_gpu",
                                    "tokens_per_s_per_user",
                                    "ttft_s",
                                    "tpot_s",
                                    "requests_per_s",
                                    "memory_gib_per_gpu",
                                    "max_concurrency"})
                QVERIFY2(p.value(QLatin1String(key)).toDouble() > 0, key);
            QVERIFY(p.value(QStringLiteral("ttft_s")).toDouble() <= 0.2);
            QVERIFY(p.value(QStringLiteral("tpot_s")).toDouble() <= 0.012);
            const QJsonObject pool = p.value(p.value(QStringLiteral("disaggregated")).toBool()
                                                     ? QStringLiteral("decode")
                                                     : QStringLiteral("parallel"))
                                             .toObject();
            QCOMPARE(pool.keys(), (QStringList{"attention_dp", "ep", "pp", "replicas", "tp"}));
        }
        const auto text = runCli({QStringLiteral("plan"), layout});
        QVERIFY2(text.exitCode == 0, qPrintable(text.errText()));
        QVERIFY(text.out.contains("Pareto front"));
        const auto impossible = runCli(
                {QStringLiteral("plan"), layout, QStringLiteral("--tpot"), QStringLiteral("1e-6")});
        QCOMPARE(impossible.exitCode, 1);
        QVERIFY2(impossible.errText().contains(QStringLiteral("meets the limits")),
                 qPrintable(impossible.errText()));
        const auto objective = runCli({QStringLiteral("plan"),
                                       layout,
                                       QStringLiteral("--objective"),
                                       QStringLiteral("cost")});
        QCOMPARE(objective.exitCode, 2);
        const auto badTime = runCli(
                {QStringLiteral("plan"), layout, QStringLiteral("--ttft"), QStringLiteral("soon")});
        QCOMPARE(badTime.exitCode, 2);
        QVERIFY(badTime.errText().contains(QStringLiteral("--ttft")));
        const auto training = runCli(
                {QStringLiteral("plan"),
                 QStringLiteral(RAILYARD_TEST_DATA "/seed-1-server.railyard.json"),
                 QStringLiteral("--tpot"),
                 QStringLiteral("50ms")});
        QCOMPARE(training.exitCode, 2);
        QVERIFY2(training.errText().contains(QStringLiteral("serving")),
                 qPrintable(training.errText()));
    }

    // The CLI library without a DiagramWriter (a GUI-less build's): a diagram is a usage error
    // that says which build draws it, found before the file is read; reports still work.
    void diagramsNeedTheGuiBuild_data()
    {
        QTest::addColumn<QString>("suffix");
        QTest::newRow("svg") << "svg";
        QTest::newRow("png") << "png";
        QTest::newRow("pdf") << "pdf";
    }
    void diagramsNeedTheGuiBuild()
    {
        QFETCH(QString, suffix);
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("d.") + suffix).toStdString();
        std::ostringstream o, err;
        const auto r = railyard::cli::run({"railyard",
                                           "export",
                                           data("no-such-layout.railyard.json").toStdString(),
                                           "-o",
                                           out},
                                          o,
                                          err);
        QVERIFY(r.handled);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(err.str().find("are drawn by the GUI build of railyard") != std::string::npos,
                 err.str().c_str());
        QVERIFY2(err.str().find("-DRAILYARD_BUILD_GUI=OFF") != std::string::npos, err.str().c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(out)));
    }

    // What the executable of this build does with a diagram and with a FILE for the window.
    void theBuildsExecutable()
    {
        QTemporaryDir dir;
        const QString layout = data("seed-1-server.railyard.json");
        const auto report = runCli({QStringLiteral("export"),
                                    data("example.railyard.json"),
                                    QStringLiteral("-o"),
                                    dir.filePath("r.json")});
        QVERIFY2(report.exitCode == 0, qPrintable(report.errText()));
#ifdef RAILYARD_HAVE_GUI
        const auto svg = runCli(
                {QStringLiteral("export"), layout, QStringLiteral("-o"), dir.filePath("d.svg")});
        QVERIFY2(svg.exitCode == 0, qPrintable(svg.errText()));
        QVERIFY(QFile(dir.filePath("d.svg")).size() > 0);
#else
        const auto svg = runCli(
                {QStringLiteral("export"), layout, QStringLiteral("-o"), dir.filePath("d.svg")});
        QCOMPARE(svg.exitCode, 2);
        QVERIFY2(svg.errText().contains(QStringLiteral("are drawn by the GUI build")),
                 qPrintable(svg.errText()));
        QVERIFY(!QFile::exists(dir.filePath("d.svg")));
        // The window: none, a usage error naming the FILE; a bad FILE is still bad input.
        const auto window = runCli({layout});
        QCOMPARE(window.exitCode, 2);
        QVERIFY2(window.errText().contains(QStringLiteral("built without its GUI"))
                         && window.errText().contains(layout)
                         && window.errText().contains(QStringLiteral("usage: railyard")),
                 qPrintable(window.errText()));
        const auto none = runCli({});
        QCOMPARE(none.exitCode, 2);
        QVERIFY(none.errText().contains(QStringLiteral("built without its GUI")));
        const auto bad = runCli({data("bad/broken-json.railyard.json")});
        QCOMPARE(bad.exitCode, 1);
#endif
    }
};

QTEST_GUILESS_MAIN(TestCliContract)
#include "tst_clicontract.moc"
