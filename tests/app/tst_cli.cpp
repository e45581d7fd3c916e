#include "clirun.h"
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <QTemporaryDir>
#include <QTest>
#include <set>

#include "cli.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include "comparenear.h"
#include <algorithm>
#include <map>
#include <sstream>

// Runs the real `railyard` executable, as scripts and CI do, without a display.
class TestCli : public QObject
{
    Q_OBJECT

    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };

    // `memoryLimit`: the child's address-space limit in bytes (RLIMIT_AS), 0 for none.
    static Run run(const QStringList &args,
                   const QString &catalog = QString(),
                   rlim_t memoryLimit = 0)
    {
        railyard::test::CliOptions o;
        if (!catalog.isEmpty())
            o.env.insert(QStringLiteral("RAILYARD_CATALOG"), catalog);
        o.memoryLimit = memoryLimit;
        o.timeoutMs = 60000;
        const railyard::test::CliRun r = railyard::test::runCli(args, o);
        return {r.exitCode, r.outText(), r.errText()}; // -1: timed out, -2: crashed
    }
    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }

    static QJsonObject evaluateObject(const QStringList &extra,
                                      const char *file = "example.railyard.json")
    {
        const Run r = run(
                QStringList{QStringLiteral("evaluate"), data(file), QStringLiteral("--json")}
                + extra);
        if (r.exitCode != 0)
            qWarning("%s", qPrintable(r.err));
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        if (pe.error != QJsonParseError::NoError)
            qWarning("not JSON: %s", qPrintable(pe.errorString()));
        return o;
    }
    static double number(const QJsonObject &o, const char *key)
    {
        return o.value(QLatin1String(key)).toDouble();
    }

private Q_SLOTS:
    void helpAndVersionWithoutDisplay()
    {
        const Run help = run({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains(QStringLiteral("railyard collective FILE")));
        // Training and serving both: the summary says so.
        QVERIFY2(help.out.contains(QStringLiteral("training or serving job's traffic")),
                 qPrintable(help.out));
        const Run version = run({QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.startsWith(QStringLiteral("railyard 0.")));
    }

    void collectiveSeed_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("seconds");
        QTest::newRow("1 server") << data("seed-1-server.railyard.json") << 0.068;
        QTest::newRow("16 servers") << data("seed-16-servers.railyard.json") << 0.694;
    }
    void collectiveSeed()
    {
        QFETCH(QString, file);
        QFETCH(double, seconds);
        const Run r = run({QStringLiteral("collective"),
                           file,
                           QStringLiteral("--op"),
                           QStringLiteral("all_reduce"),
                           QStringLiteral("--size"),
                           QStringLiteral("14GB"),
                           QStringLiteral("--algo"),
                           QStringLiteral("flat-ring"),
                           QStringLiteral("--efficiency"),
                           QStringLiteral("0.8"),
                           QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(r.out));
        QCOMPARE(o.value(QStringLiteral("algorithm")).toString(), QStringLiteral("flat-ring"));
        RAILYARD_COMPARE_ABS(o.value(QStringLiteral("time_s")).toDouble(), seconds, 0.001);
        QVERIFY(o.value(QStringLiteral("algbw_gbps")).toDouble() > 0);
        QVERIFY(o.value(QStringLiteral("busbw_gbps")).toDouble() > 0);
    }

    void efficiencyDefaultsToLayoutTuning()
    {
        // The seed layouts set tuning.efficiency = 0.8, so no --efficiency gives the same time.
        const Run r = run({QStringLiteral("collective"),
                           data("seed-1-server.railyard.json"),
                           QStringLiteral("--op=all_reduce"),
                           QStringLiteral("--size=14GB"),
                           QStringLiteral("--algo=flat-ring"),
                           QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        RAILYARD_COMPARE_ABS(o.value(QStringLiteral("time_s")).toDouble(), 0.068, 0.0005);
    }

    void evaluateJson()
    {
        const Run r = run({QStringLiteral("evaluate"),
                           data("example.railyard.json"),
                           QStringLiteral("--json"),
                           QStringLiteral("--top-links"),
                           QStringLiteral("20")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        for (const char *key : {"step_time_s",
                                "tokens_per_s",
                                "tokens_per_s_per_gpu",
                                "mfu",
                                "model_tflops_per_gpu",
                                "memory_gib_per_gpu",
                                "breakdown_s",
                                "links",
                                "warnings",
                                "flop_convention"})
            QVERIFY2(o.contains(QLatin1String(key)), key);
        const QJsonObject b = o.value(QStringLiteral("breakdown_s")).toObject();
        double sum = 0;
        for (const char *key : {"compute", "tp", "cp", "ep", "pp_bubble", "pp_p2p", "dp"}) {
            QVERIFY2(b.contains(QLatin1String(key)), key);
            sum += b.value(QLatin1String(key)).toDouble();
        }
        const double step = o.value(QStringLiteral("step_time_s")).toDouble();
        QVERIFY(sum <= step && sum > 0.95 * step); // the optimizer is the rest
        // The band from validation: [low, high] around the step time.
        const QJsonArray band = o.value(QStringLiteral("step_time_band_s")).toArray();
        QCOMPARE(band.size(), 2);
        QVERIFY(band.at(0).toDouble() < step && step < band.at(1).toDouble());
        QVERIFY(band.at(1).toDouble() < 2 * step);
        const QJsonArray links = o.value(QStringLiteral("links")).toArray();
        QCOMPARE(links.size(), 20);
        const QJsonObject busiest = links.first().toObject();
        for (const char *key : {"id", "kind", "bytes_per_step", "utilization"})
            QVERIFY2(busiest.contains(QLatin1String(key)), key);
        QVERIFY(busiest.value(QStringLiteral("utilization")).toDouble()
                >= links.last().toObject().value(QStringLiteral("utilization")).toDouble());
    }

    // The default: the keys, the per-tier summary and exactly the 20 busiest links, sorted.
    void evaluateDefaultLinks_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("dense") << "example.railyard.json";
        QTest::newRow("MoE") << "example-moe.railyard.json";
    }
    void evaluateDefaultLinks()
    {
        QFETCH(QString, file);
        const QJsonObject o = evaluateObject({}, qPrintable(file));
        for (const char *key : {"step_time_s",
                                "tokens_per_s",
                                "tokens_per_s_per_gpu",
                                "mfu",
                                "model_tflops_per_gpu",
                                "memory_gib_per_gpu",
                                "breakdown_s",
                                "link_tiers",
                                "links",
                                "warnings"})
            QVERIFY2(o.contains(QLatin1String(key)), key);
        const QJsonArray links = o.value(QStringLiteral("links")).toArray();
        QCOMPARE(links.size(), 20);
        for (qsizetype i = 1; i < links.size(); ++i) {
            const QJsonObject a = links[i - 1].toObject(), b = links[i].toObject();
            const double ua = number(a, "utilization"), ub = number(b, "utilization");
            // Busiest first; equally busy links by id.
            QVERIFY(ua > ub || (ua == ub && number(a, "id") < number(b, "id")));
        }
        for (const auto &v : links) {
            const QJsonObject l = v.toObject();
            for (const char *key : {"id", "kind", "tier", "bytes_per_step", "utilization"})
                QVERIFY2(l.contains(QLatin1String(key)), key);
            QVERIFY(number(l, "bytes_per_step") > 0);
            QCOMPARE(number(l, "bytes_per_step"), number(l, "bytes_up") + number(l, "bytes_down"));
        }
        QVERIFY(!o.value(QStringLiteral("link_tiers")).toArray().isEmpty());
        // --top-links still chooses how many.
        QCOMPARE(evaluateObject({QStringLiteral("--top-links"), QStringLiteral("3")},
                                qPrintable(file))
                         .value(QStringLiteral("links"))
                         .toArray()
                         .size(),
                 3);
    }

    // --links all lists every link once; the tier summary of the default output adds up to it,
    // tier by tier (links, loaded links, bytes, mean and max utilization), and the default's 20
    // busiest are the top of the full list.
    void evaluateAllLinksMatchSummary_data() { evaluateDefaultLinks_data(); }
    void evaluateAllLinksMatchSummary()
    {
        QFETCH(QString, file);
        const QJsonObject summary = evaluateObject({}, qPrintable(file));
        const QJsonObject all = evaluateObject({QStringLiteral("--links"), QStringLiteral("all")},
                                               qPrintable(file));
        QCOMPARE(number(all, "step_time_s"), number(summary, "step_time_s"));
        QCOMPARE(all.value(QStringLiteral("link_tiers")),
                 summary.value(QStringLiteral("link_tiers")));
        const QJsonArray links = all.value(QStringLiteral("links")).toArray();
        struct Tier
        {
            double links = 0, loaded = 0, bytes = 0, utilization = 0, max = 0;
        };
        std::map<QString, Tier> tiers;
        std::vector<std::pair<double, int>> ranked; // (-utilization, id) of loaded links
        for (qsizetype i = 0; i < links.size(); ++i) {
            const QJsonObject l = links[i].toObject();
            QCOMPARE(int(number(l, "id")), int(i)); // every link, in id order
            Tier &t = tiers[l.value(QStringLiteral("tier")).toString() + QLatin1Char('/')
                            + l.value(QStringLiteral("kind")).toString()];
            const double bytes = number(l, "bytes_per_step"), u = number(l, "utilization");
            t.links += 1;
            t.loaded += bytes > 0 ? 1 : 0;
            t.bytes += bytes;
            t.utilization += u;
            t.max = std::max(t.max, u);
            if (bytes > 0)
                ranked.emplace_back(-u, int(i));
        }
        double total = 0;
        int count = 0;
        const QJsonArray tierList = summary.value(QStringLiteral("link_tiers")).toArray();
        QCOMPARE(std::size_t(tierList.size()), tiers.size());
        for (const auto &v : tierList) {
            const QJsonObject s = v.toObject();
            const QString key = s.value(QStringLiteral("tier")).toString() + QLatin1Char('/')
                                + s.value(QStringLiteral("kind")).toString();
            QVERIFY2(tiers.count(key), qPrintable(key));
            const Tier &t = tiers[key];
            QCOMPARE(number(s, "links"), t.links);
            QCOMPARE(number(s, "loaded"), t.loaded);
            RAILYARD_COMPARE_NEAR(number(s, "bytes_per_step"), t.bytes, 1e-9);
            RAILYARD_COMPARE_NEAR(number(s, "mean_utilization"), t.utilization / t.links, 1e-6);
            QCOMPARE(number(s, "max_utilization"), t.max);
            total += number(s, "bytes_per_step");
            count += int(number(s, "links"));
        }
        QCOMPARE(count, int(links.size()));
        double listed = 0;
        for (const auto &v : links)
            listed += number(v.toObject(), "bytes_per_step");
        RAILYARD_COMPARE_NEAR(total, listed, 1e-9);
        std::sort(ranked.begin(), ranked.end());
        const QJsonArray busiest = summary.value(QStringLiteral("links")).toArray();
        for (qsizetype i = 0; i < busiest.size(); ++i)
            QCOMPARE(int(number(busiest[i].toObject(), "id")), ranked[std::size_t(i)].second);
    }

    // For people: the same summary in a screenful, not a line per link.
    // --timeline: phases per pipeline stage whose per-link bytes add up to each link's bytes
    // per step; without it no timeline (the default output stays small).
    void evaluateTimeline()
    {
        const QJsonObject plain = evaluateObject({}, "gmi-h200-cluster.railyard.json");
        QVERIFY(!plain.contains(QStringLiteral("timeline")));
        const QJsonObject o = evaluateObject({QStringLiteral("--timeline"),
                                              QStringLiteral("--links"),
                                              QStringLiteral("all")},
                                             "gmi-h200-cluster.railyard.json");
        const double step = number(o, "step_time_s");
        QCOMPARE(step, number(plain, "step_time_s"));
        const QJsonArray phases = o.value(QStringLiteral("timeline")).toArray();
        const QJsonArray links = o.value(QStringLiteral("links")).toArray();
        QVERIFY(phases.size() > 100);
        const QStringList kinds{"compute", "tp", "cp", "ep", "pp_p2p", "dp", "optimizer", "bubble"};
        std::vector<double> sum(static_cast<std::size_t>(links.size()), 0.0);
        std::set<QString> seen;
        std::set<int> stages;
        int segmented = 0;
        for (const QJsonValue &v : phases) {
            const QJsonObject p = v.toObject();
            const QString kind = p.value(QStringLiteral("kind")).toString();
            QVERIFY2(kinds.contains(kind), qPrintable(kind));
            seen.insert(kind);
            stages.insert(int(number(p, "stage")));
            const double start = number(p, "start_s"), end = number(p, "end_s");
            QVERIFY(start >= 0 && start <= end && end <= step * (1 + 1e-12));
            // Where its collective shared links and ran slower: stretches in order inside the
            // phase, carrying all of its bytes between them.
            if (p.contains(QStringLiteral("segments"))) {
                double at = start, fraction = 0;
                for (const QJsonValue &g : p.value(QStringLiteral("segments")).toArray()) {
                    const double from = number(g.toObject(), "start_s");
                    QVERIFY(from >= at - 1e-12 && number(g.toObject(), "end_s") > from);
                    at = number(g.toObject(), "end_s");
                    fraction += number(g.toObject(), "fraction");
                }
                QVERIFY(at <= end + 1e-12);
                QVERIFY2(std::abs(fraction - 1) < 1e-9, qPrintable(QString::number(fraction)));
                ++segmented;
            }
            for (const QJsonValue &l : p.value(QStringLiteral("links")).toArray()) {
                const int id = l.toObject().value(QStringLiteral("id")).toInt(-1);
                QVERIFY(id >= 0 && id < links.size());
                sum[static_cast<std::size_t>(id)] += number(l.toObject(), "bytes");
            }
        }
        QCOMPARE(stages, (std::set<int>{0, 1, 2, 3}));
        QVERIFY(segmented > 0); // the reduce-scatters slow down beside the cool-down's sends
        for (const char *k : {"compute", "tp", "pp_p2p", "dp", "optimizer", "bubble"})
            QVERIFY2(seen.count(QLatin1String(k)), k);
        for (qsizetype i = 0; i < links.size(); ++i) {
            const double bytes = number(links[i].toObject(), "bytes_per_step");
            QVERIFY2(std::abs(sum[static_cast<std::size_t>(i)] - bytes) <= 1e-4 * bytes + 1,
                     qPrintable(QString("link %1: %2 vs %3").arg(i).arg(sum[i]).arg(bytes)));
        }
    }

    // --timeline without --links all: each phase lists only its busiest links (--top-links N,
    // default 20) and says how many links and bytes it left out, so a 262,144-GPU step is not
    // 20 GB of JSON. Listed and left-out bytes add up to the full timeline's.
    void evaluateTimelineListsTheBusiestLinksPerPhase()
    {
        const char *file = "gmi-h200-cluster.railyard.json";
        const QJsonObject full = evaluateObject({QStringLiteral("--timeline"),
                                                 QStringLiteral("--links"),
                                                 QStringLiteral("all")},
                                                file);
        const QJsonArray fullPhases = full.value(QStringLiteral("timeline")).toArray();
        QVERIFY(fullPhases.size() > 100);
        for (int top : {20, 3}) {
            const QJsonObject o = evaluateObject(top == 20
                                                         ? QStringList{QStringLiteral("--timeline")}
                                                         : QStringList{QStringLiteral("--timeline"),
                                                                       QStringLiteral(
                                                                               "--top-links"),
                                                                       QString::number(top)},
                                                 file);
            const QJsonArray phases = o.value(QStringLiteral("timeline")).toArray();
            QCOMPARE(phases.size(), fullPhases.size());
            bool cut = false;
            for (qsizetype i = 0; i < phases.size(); ++i) {
                const QJsonObject p = phases[i].toObject(), f = fullPhases[i].toObject();
                QCOMPARE(p.value(QStringLiteral("kind")), f.value(QStringLiteral("kind")));
                QCOMPARE(number(p, "start_s"), number(f, "start_s"));
                const QJsonArray links = p.value(QStringLiteral("links")).toArray();
                const QJsonArray all = f.value(QStringLiteral("links")).toArray();
                QVERIFY(links.size() <= top);
                QVERIFY(p.contains(QStringLiteral("links_omitted")));
                QVERIFY(!f.contains(QStringLiteral("links_omitted")));
                qsizetype carrying = 0;
                double bytes = 0, least = 1e300, most = 0;
                for (const QJsonValue &l : all)
                    if (number(l.toObject(), "bytes") > 0) {
                        ++carrying;
                        bytes += number(l.toObject(), "bytes");
                    }
                double listed = 0;
                for (const QJsonValue &l : links) {
                    const double b = number(l.toObject(), "bytes");
                    QVERIFY(b > 0);
                    listed += b;
                    least = std::min(least, b);
                }
                QCOMPARE(qsizetype(number(p, "links_omitted")), carrying - links.size());
                cut = cut || number(p, "links_omitted") > 0;
                QVERIFY2(std::abs(listed + number(p, "bytes_omitted") - bytes) <= 1e-4 * bytes + 1,
                         qPrintable(QString("phase %1: %2 + %3 vs %4")
                                            .arg(i)
                                            .arg(listed)
                                            .arg(number(p, "bytes_omitted"))
                                            .arg(bytes)));
                // The listed links are the busiest: none left out carries more.
                if (links.size() == top) {
                    for (const QJsonValue &l : all)
                        most = std::max(most, number(l.toObject(), "bytes"));
                    QVERIFY(most >= least);
                    int more = 0;
                    for (const QJsonValue &l : all)
                        more += number(l.toObject(), "bytes") > least * (1 + 1e-6) ? 1 : 0;
                    QVERIFY2(more < top, qPrintable(QString::number(more)));
                }
            }
            QVERIFY(cut); // the cluster's phases cross more links than that
        }
    }

    void evaluateTextSummarizes()
    {
        const Run r = run({QStringLiteral("evaluate"), data("example.railyard.json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(lines.size() < 50, qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("step time")));
        QVERIFY(r.out.contains(QStringLiteral("992 links, 896 with traffic")));
        QVERIFY(r.out.contains(QStringLiteral("nic-leaf")));
        QVERIFY(r.out.contains(QStringLiteral("busiest links     20 of 896")));
        const Run all = run({QStringLiteral("evaluate"),
                             data("example.railyard.json"),
                             QStringLiteral("--links=all")});
        QVERIFY2(all.exitCode == 0, qPrintable(all.err));
        QVERIFY(all.out.split(QLatin1Char('\n')).size() > 992);
        QVERIFY(all.out.contains(QStringLiteral("leaf 7 \u2014 spine 1")));
    }

    // 262,144 GPUs under a 256 MiB address-space limit: a message and exit status 1, not an
    // abort. The same limit runs the program and a small layout, so it is the cluster's size
    // that does not fit; 1 GiB is enough for the default output.
    void evaluateOutOfMemoryIsAnError()
    {
#if defined(__SANITIZE_ADDRESS__) // g++
        QSKIP("AddressSanitizer reserves more address space than any limit here allows");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) // clang (the nogui preset)
        QSKIP("AddressSanitizer reserves more address space than any limit here allows");
#endif
#endif
        const rlim_t limit = 256ull << 20;
        const Run small = run({QStringLiteral("evaluate"),
                               data("example.railyard.json"),
                               QStringLiteral("--json")},
                              QString(),
                              limit);
        QVERIFY2(small.exitCode == 0, qPrintable(small.err));
        const Run huge = run({QStringLiteral("evaluate"),
                              data("llama3.1-405b-262k-h100.railyard.json"),
                              QStringLiteral("--json")},
                             QString(),
                             limit);
        QCOMPARE(huge.exitCode, 1);
        QVERIFY2(huge.err.contains(QStringLiteral("llama3.1-405b-262k-h100.railyard.json: out of "
                                                  "memory")),
                 qPrintable(huge.err));
        QVERIFY(huge.out.isEmpty());
        // With 1 GiB it fits: the default output holds the summary and 20 links, not a JSON
        // tree of two million (4.8 GB).
        const Run fits = run({QStringLiteral("evaluate"),
                              data("llama3.1-405b-262k-h100.railyard.json"),
                              QStringLiteral("--json")},
                             QString(),
                             rlim_t(1) << 30);
        QVERIFY2(fits.exitCode == 0, qPrintable(fits.err));
        const QJsonObject o = QJsonDocument::fromJson(fits.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("links")).toArray().size(), 20);
        double links = 0;
        for (const auto &v : o.value(QStringLiteral("link_tiers")).toArray())
            links += number(v.toObject(), "links");
        QVERIFY2(links > 2e6, qPrintable(QString::number(links)));
    }

    void collectiveAutoAndLinks()
    {
        const Run r = run({QStringLiteral("collective"),
                           data("seed-16-servers.railyard.json"),
                           QStringLiteral("--op"),
                           QStringLiteral("all_reduce"),
                           QStringLiteral("--size"),
                           QStringLiteral("1GB"),
                           QStringLiteral("--gpus"),
                           QStringLiteral("0-15"),
                           QStringLiteral("--links"),
                           QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(o.value(QStringLiteral("algorithm")).toString() != QStringLiteral("flat-ring"));
        const QJsonArray links = o.value(QStringLiteral("links")).toArray();
        QVERIFY(!links.isEmpty());
        bool ib = false;
        for (const auto &v : links)
            ib = ib
                 || v.toObject().value(QStringLiteral("kind")).toString() == QStringLiteral("ib");
        QVERIFY(ib); // two servers: the NICs carry traffic
    }

    void userCatalogAddsAndReplaces()
    {
        const QStringList args{QStringLiteral("collective"),
                               data("user-gpu.railyard.json"),
                               QStringLiteral("--op"),
                               QStringLiteral("all_reduce"),
                               QStringLiteral("--size"),
                               QStringLiteral("4GiB"),
                               QStringLiteral("--algo"),
                               QStringLiteral("ring"),
                               QStringLiteral("--json")};
        // Without the user's catalog the GPU is unknown.
        const Run without = run(args);
        QCOMPARE(without.exitCode, 1);
        QVERIFY2(without.err.contains(QStringLiteral("unknown GPU \"TEST-GPU\"")),
                 qPrintable(without.err));
        // With it, the GPU exists and the NIC runs at the user's (halved) efficiency: 8 NICs x
        // 25 GB/s bound the two-server ring.
        const Run with = run(args, data("user-catalog.json"));
        QVERIFY2(with.exitCode == 0, qPrintable(with.err));
        const double busbw = QJsonDocument::fromJson(with.out.toUtf8())
                                     .object()
                                     .value(QStringLiteral("busbw_gbps"))
                                     .toDouble();
        QVERIFY2(busbw > 180 && busbw < 205, qPrintable(QString::number(busbw)));
        // A broken user catalog is an error naming it (tst_catalogcli tries the others).
        const Run broken = run({QStringLiteral("collective"),
                                data("seed-1-server.railyard.json"),
                                QStringLiteral("--op"),
                                QStringLiteral("all_reduce"),
                                QStringLiteral("--size"),
                                QStringLiteral("1GB")},
                               data("bad/broken-json.railyard.json"));
        QCOMPARE(broken.exitCode, 1);
        QVERIFY2(broken.err.contains(QStringLiteral("broken-json.railyard.json: line 5")),
                 qPrintable(broken.err));
    }

    void badInputExitsOne_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("broken layout") << QStringList{"collective",
                                                      data("bad/broken-json.railyard.json"),
                                                      "--op",
                                                      "all_reduce",
                                                      "--size",
                                                      "1GB"}
                                       << "broken-json.railyard.json: line 5, column 1";
        QTest::newRow("bad gpus") << QStringList{"collective",
                                                 data("seed-1-server.railyard.json"),
                                                 "--op",
                                                 "all_reduce",
                                                 "--size",
                                                 "1GB",
                                                 "--gpus",
                                                 "0-9"}
                                  << "GPU 9 does not exist";
        QTest::newRow("gui with bad file")
                << QStringList{data("bad/negative-nodes.railyard.json")} << "/cluster/nodes";
    }
    void badInputExitsOne()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void usageErrorsExitTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no file") << QStringList{"collective"} << "needs a layout FILE";
        QTest::newRow("no op") << QStringList{"collective", "x.json", "--size", "1GB"}
                               << "needs --op";
        QTest::newRow("bad op") << QStringList{"collective",
                                               "x.json",
                                               "--op",
                                               "allreduce",
                                               "--size",
                                               "1GB"}
                                << "unknown --op 'allreduce'";
        // A malformed value is the command line's fault, whatever the file (tst_cliusage has
        // every option's).
        QTest::newRow("bad size") << QStringList{"collective",
                                                 data("seed-1-server.railyard.json"),
                                                 "--op",
                                                 "all_reduce",
                                                 "--size",
                                                 "14XB"}
                                  << "--size '14XB'";
        QTest::newRow("unknown option") << QStringList{"collective", "x.json", "--frobnicate"}
                                        << "unknown option --frobnicate";
        QTest::newRow("bad --links") << QStringList{"evaluate", "x.json", "--links", "some"}
                                     << "--links takes busiest or all, got 'some'";
        QTest::newRow("--links all with --top-links")
                << QStringList{"evaluate", "x.json", "--links=all", "--top-links", "5"}
                << "--links all lists every link";
        QTest::newRow("--timeline without --json")
                << QStringList{"evaluate", "x.json", "--timeline"}
                << "--timeline is part of the JSON report: add --json";
        QTest::newRow("--no-links with --links")
                << QStringList{"evaluate", "x.json", "--no-links", "--links", "all"}
                << "--no-links leaves no links";
    }
    void usageErrorsExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    // An unknown or not yet available subcommand is a usage error, never the GUI (which, with
    // no display, opened offscreen and never exited). `railyard FILE` still opens the GUI.
    void unknownSubcommandsExitTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString layout = data("seed-1-server.railyard.json");
        QTest::newRow("simulate FILE")
                << QStringList{"simulate", layout} << "unknown subcommand 'simulate'";
        QTest::newRow("simulate alone")
                << QStringList{"simulate"} << "unknown subcommand 'simulate'";
        QTest::newRow("typo") << QStringList{"evalute", layout, "--json"}
                              << "unknown subcommand 'evalute'";
        QTest::newRow("after a Qt option")
                << QStringList{"-platform", "offscreen", "simulate", layout}
                << "unknown subcommand 'simulate'";
        QTest::newRow("known, not first") << QStringList{"-style", "fusion", "evaluate", layout}
                                          << "'evaluate' must be the first argument";
        QTest::newRow("two files")
                << QStringList{layout, layout} << "the GUI opens one layout FILE, got 2";
        QTest::newRow("empty argument") << QStringList{""} << "an empty argument";
        // An option that is neither ours nor Qt's never opens the window (it did).
        QTest::newRow("--bogus") << QStringList{"--bogus"} << "unknown option --bogus";
        QTest::newRow("--bogus FILE") << QStringList{"--bogus", layout} << "unknown option --bogus";
        QTest::newRow("-x=1 after a Qt option")
                << QStringList{"-reverse", "-x=1", layout} << "unknown option -x=1";
        QTest::newRow("a Qt flag given a value")
                << QStringList{"-reverse=yes", layout} << "unknown option -reverse=yes";
    }
    void unknownSubcommandsExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        // The usage follows, with the subcommands this version has.
        QVERIFY2(r.err.contains(QStringLiteral("usage: railyard")), qPrintable(r.err));
        if (message.startsWith(QStringLiteral("unknown subcommand")))
            QVERIFY2(r.err.contains(QStringLiteral("this version has: collective, evaluate")),
                     qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    // Hostile files (issue 8): exit 1 with the file and the place, in bounded time, from the
    // subcommands and from the GUI's start-up check alike.
    void hostileFilesExitOne_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        QTest::newRow("view nested 100,000 deep")
                << "deep-view.railyard.json"
                << "deep-view.railyard.json: line 2, column 81: objects and arrays nested deeper "
                   "than 64 levels";
        QTest::newRow("unknown key nested 100,000 deep")
                << "deep-unknown.railyard.json"
                << "deep-unknown.railyard.json: line 2, column 264: objects and arrays nested";
        QTest::newRow("1e400") << "number-overflow.railyard.json"
                               << "number-overflow.railyard.json: line 1, column 12: the number "
                                  "1e400 is too large";
        QTest::newRow("duplicate key")
                << "duplicate-key.railyard.json"
                << "duplicate-key.railyard.json: line 7, column 5: duplicate key \"nodes\" at "
                   "/cluster/nodes (first given at line 6, column 5)";
        QTest::newRow("NUL bytes") << "nul-bytes.railyard.json"
                                   << "nul-bytes.railyard.json: line 1, column 1: a NUL byte";
        QTest::newRow("binary") << "binary.railyard.json"
                                << "binary.railyard.json: line 3, column 1: a NUL byte";
        QTest::newRow("invalid UTF-8")
                << "invalid-utf8.railyard.json"
                << "invalid-utf8.railyard.json: line 2, column 16: invalid JSON";
        QTest::newRow("NaN") << "nan.railyard.json"
                             << "nan.railyard.json: line 2, column 67: invalid JSON: NaN";
        QTest::newRow("-Infinity") << "infinity.railyard.json"
                                   << "infinity.railyard.json: line 3, column 19: invalid JSON: "
                                      "-Infinity";
        QTest::newRow("huge integer")
                << "huge-integer.railyard.json"
                << "huge-integer.railyard.json: /cluster/nodes: expected an integer";
        QTest::newRow("empty") << "empty.railyard.json"
                               << "empty.railyard.json: line 1, column 1: the file is empty";
        QTest::newRow("zero GPUs per node") << "zero-gpus-per-node.railyard.json"
                                            << "/cluster/gpus_per_node";
        QTest::newRow("EP x expert TP past 2^31")
                << "ep-overflow.railyard.json"
                << "ep-overflow.railyard.json: cannot price this step: parallel: EP x expert TP = "
                   "65536 x 65536 = 4294967296 must divide";
    }
    void hostileFilesExitOne()
    {
        QFETCH(QString, file);
        QFETCH(QString, message);
        const QString path = data("bad/") + file;
        const QList<QStringList> invocations
                = {{"evaluate", path, "--json"},
                   {"collective", path, "--op", "all_reduce", "--size", "1GB"},
                   {path}}; // the GUI checks the file before any window exists
        for (const QStringList &args : invocations) {
            if (args.size() == 1 && file.startsWith(QStringLiteral("ep-overflow")))
                continue; // loads; the GUI shows the pricing error in its warnings
            if (args.first() == "collective" && file.startsWith(QStringLiteral("ep-overflow")))
                continue; // a collective does not need the parallel sizes
            const Run r = run(args);
            QVERIFY2(r.exitCode == 1, qPrintable(args.first() + ": " + r.err));
            QVERIFY2(r.err.contains(message), qPrintable(args.first() + ": " + r.err));
            QVERIFY2(r.err.size() < 1000, qPrintable(r.err.left(400)));
        }
    }

    // Only regular files are read: a FIFO with no writer used to block forever, a directory was
    // "an 8.8 TB file".
    void specialFilesExitOne_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("FIFO") << "fifo"
                              << "is a FIFO; expected a layout file";
        QTest::newRow("directory") << "dir"
                                   << "is a directory; expected a layout file";
    }
    void specialFilesExitOne()
    {
        QFETCH(QString, kind);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("x.railyard.json"));
        if (kind == QStringLiteral("fifo"))
            QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
        else
            QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("x.railyard.json")));
        for (const QStringList &args : QList<QStringList>{{"evaluate", path}, {path}}) {
            const Run r = run(args);
            QVERIFY2(r.exitCode == 1, qPrintable(r.err));
            QVERIFY2(r.err.contains(path + ": " + message), qPrintable(r.err));
        }
    }

    // A long file name is echoed by its ends. A process argument is at most 128 KiB on Linux
    // (MAX_ARG_STRLEN), so the binary gets the longest one it can; the 10 MB name of the issue
    // goes through the same dispatch in-process.
    void longNamesAreElided()
    {
        const QString longName = QStringLiteral("/tmp/") + QString(131000, QLatin1Char('n'))
                                 + QStringLiteral("-end.railyard.json");
        const Run gui = run({longName});
        QCOMPARE(gui.exitCode, 1);
        QVERIFY2(gui.err.contains(QStringLiteral("nnn...nnn")), qPrintable(gui.err.left(400)));
        QVERIFY2(gui.err.contains(QStringLiteral("nnnn-end.railyard.json: cannot open")),
                 qPrintable(gui.err.left(400)));
        QVERIFY2(gui.err.size() < 1000, qPrintable(QString::number(gui.err.size())));
        const QString longWord(131000, QLatin1Char('w'));
        const Run word = run({longWord});
        QCOMPARE(word.exitCode, 2);
        QVERIFY2(word.err.contains(QStringLiteral("unknown subcommand 'www")),
                 qPrintable(word.err.left(400)));
        QVERIFY2(word.err.size() < 3000, qPrintable(QString::number(word.err.size())));

        const std::string tenMb = "/tmp/" + std::string(10'000'000, 'n') + ".railyard.json";
        std::ostringstream out, errStream;
        std::string err;
        const auto outcome = railyard::cli::run({"railyard", "evaluate", tenMb}, out, errStream);
        err = errStream.str();
        QVERIFY(outcome.handled);
        QCOMPARE(outcome.exitCode, 1);
        QVERIFY2(err.size() < 1000, qPrintable(QString::number(err.size())));
        QVERIFY2(QString::fromStdString(err).contains(
                         QStringLiteral("n.railyard.json: cannot open")),
                 err.c_str());
        errStream.str({});
        const auto word10 = railyard::cli::run({"railyard", std::string(10'000'000, 'w')},
                                               out,
                                               errStream);
        err = errStream.str();
        QCOMPARE(word10.exitCode, 2);
        QVERIFY2(err.size() < 3000, qPrintable(QString::number(err.size())));
        errStream.str({});
        const auto option = railyard::cli::run({"railyard",
                                                "evaluate",
                                                "x.json",
                                                "--" + std::string(10'000'000, 'o')},
                                               out,
                                               errStream);
        err = errStream.str();
        QCOMPARE(option.exitCode, 2);
        QVERIFY2(err.size() < 1000, qPrintable(QString::number(err.size())));
    }

    // What the rule leaves to the GUI: a FILE (checked before any window opens), Qt's options.
    void guiArgumentsAreNotSubcommands_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("file");
        const std::string layout = data("seed-1-server.railyard.json").toStdString();
        QTest::newRow("no arguments") << QStringList{} << QString();
        QTest::newRow("FILE") << QStringList{QString::fromStdString(layout)}
                              << QString::fromStdString(layout);
        QTest::newRow("missing FILE with an extension")
                << QStringList{"nothere.json"} << "nothere.json";
        QTest::newRow("Qt options and FILE") << QStringList{"-platform",
                                                            "offscreen",
                                                            "--style",
                                                            "fusion",
                                                            "-reverse",
                                                            QString::fromStdString(layout)}
                                             << QString::fromStdString(layout);
    }
    void guiArgumentsAreNotSubcommands()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, file);
        std::vector<std::string> argv{"railyard"};
        for (const QString &a : args)
            argv.push_back(a.toStdString());
        std::ostringstream out, err;
        const auto outcome = railyard::cli::run(argv, out, err);
        QVERIFY2(!outcome.handled, err.str().c_str());
        QCOMPARE(QString::fromStdString(outcome.guiFile), file);
        QVERIFY(err.str().empty());
    }

    // A bare word that is an existing file opens it in the GUI: run from inside a folder that
    // holds a layout named "cluster", the binary checks it (and fails on its content, exit 1).
    void bareWordThatIsAFile()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("cluster")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": 1e400}");
        f.close();
        // Headless (no display, no platform), where a bad FILE fails fast instead of opening
        // the window with the message.
        railyard::test::CliOptions o;
        o.workingDirectory = dir.path();
        const railyard::test::CliRun r = railyard::test::runCli({QStringLiteral("cluster")}, o);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("cluster: line 1, column 12: the number 1e400"),
                 "not read as a file");
    }
    void importWritesAPricedLayout()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("imported.railyard.json"));
        const Run r = run({QStringLiteral("import"),
                           data("import/nccl-tests/"
                                "h100-2node-16gpu-allreduce-srun-prefixed-nccltests290.txt"),
                           QStringLiteral("-o"),
                           out,
                           QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("gpus")).toInt(), 16);
        QCOMPARE(o.value(QStringLiteral("nics")).toInt(), 0);
        QVERIFY(o.value(QStringLiteral("links")).isObject());
        const QJsonArray ms = o.value(QStringLiteral("measurements")).toArray();
        QCOMPARE(ms.size(), 22);
        const QJsonObject last = ms.at(20).toObject(); // the largest size, out-of-place
        QCOMPARE(last.value(QStringLiteral("op")).toString(), QStringLiteral("all_reduce"));
        QCOMPARE(last.value(QStringLiteral("size_bytes")).toDouble(), 8589934592.0);
        QCOMPARE(last.value(QStringLiteral("time_us")).toDouble(), 103530.0);
        QCOMPARE(last.value(QStringLiteral("algbw_gbps")).toDouble(), 82.97);
        QCOMPARE(last.value(QStringLiteral("busbw_gbps")).toDouble(), 155.57);
        QCOMPARE(last.value(QStringLiteral("in_place")).toBool(), false);
        QCOMPARE(ms.at(21).toObject().value(QStringLiteral("in_place")).toBool(), true);
        // The layout it wrote prices the same all-reduce near the measured bus bandwidth.
        const Run c = run({QStringLiteral("collective"),
                           out,
                           QStringLiteral("--op"),
                           QStringLiteral("all_reduce"),
                           QStringLiteral("--size"),
                           QStringLiteral("8GiB"),
                           QStringLiteral("--json")});
        QCOMPARE(c.exitCode, 0);
        const double busbw = QJsonDocument::fromJson(c.out.toUtf8())
                                     .object()
                                     .value(QStringLiteral("busbw_gbps"))
                                     .toDouble();
        RAILYARD_COMPARE_NEAR(busbw, 155.57, 0.01);
    }

    void importTopologyCounts()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("h800.railyard.json"));
        const Run r = run({QStringLiteral("import"),
                           data("import/topo-m/hgx-h800-8gpu-nv8-9nic-sglang28424.txt"),
                           QStringLiteral("-o"),
                           out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains(QStringLiteral("8 GPUs, 9 NICs")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("28 nvlink")), qPrintable(r.err));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonObject cluster = doc.value(QStringLiteral("cluster")).toObject();
        QCOMPARE(cluster.value(QStringLiteral("gpu")).toString(), QStringLiteral("H800-SXM"));
        QCOMPARE(cluster.value(QStringLiteral("gpus_per_node")).toInt(), 8);
        QVERIFY(doc.value(QStringLiteral("imported")).toObject().contains(QStringLiteral("devices")));
    }

    void importErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString out = QDir::temp().filePath(QStringLiteral("railyard-tst-import.json"));
        QTest::newRow("no -o") << QStringList{"import",
                                              data("import/topo-m/pcie-2x2080ti-pix-autodl.txt")}
                               << 2 << "needs -o";
        QTest::newRow("no file") << QStringList{"import", "-o", out} << 2 << "needs a file";
        QTest::newRow("unknown option") << QStringList{"import", "x.txt", "-o", out, "--frob"} << 2
                                        << "unknown option --frob";
        QTest::newRow("unknown gpu")
                << QStringList{"import", "x.txt", "-o", out, "--gpu", "Z9"} << 2 << "unknown --gpu";
        QTest::newRow("layout is not an import")
                << QStringList{"import", data("example.railyard.json"), "-o", out} << 1
                << "example.railyard.json: line 1: not a format";
        QTest::newRow("missing file") << QStringList{"import", data("import/none.txt"), "-o", out}
                                      << 1 << "none.txt: cannot open";
    }
    void importErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
