#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

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

    static Run run(const QStringList &args, const QString &catalog = QString())
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), QStringLiteral("/nonexistent"));
        if (catalog.isEmpty())
            env.remove(QStringLiteral("RAILYARD_CATALOG"));
        else
            env.insert(QStringLiteral("RAILYARD_CATALOG"), catalog);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(RAILYARD_BINARY), args);
        if (!p.waitForFinished(60000))
            return {-1, {}, QStringLiteral("timed out")};
        return {p.exitCode(),
                QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }
    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }

private Q_SLOTS:
    void helpAndVersionWithoutDisplay()
    {
        const Run help = run({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains(QStringLiteral("railyard collective FILE")));
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
        QVERIFY(std::abs(o.value(QStringLiteral("time_s")).toDouble() - seconds) < 0.001);
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
        QVERIFY(std::abs(o.value(QStringLiteral("time_s")).toDouble() - 0.068) < 0.0005);
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
        // A broken user catalog is reported and the built-in one used.
        const Run broken = run({QStringLiteral("collective"),
                                data("seed-1-server.railyard.json"),
                                QStringLiteral("--op"),
                                QStringLiteral("all_reduce"),
                                QStringLiteral("--size"),
                                QStringLiteral("1GB")},
                               data("bad/broken-json.railyard.json"));
        QCOMPARE(broken.exitCode, 0);
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
        QTest::newRow("bad size") << QStringList{"collective",
                                                 data("seed-1-server.railyard.json"),
                                                 "--op",
                                                 "all_reduce",
                                                 "--size",
                                                 "14XB"}
                                  << "size '14XB'";
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
        QTest::newRow("unknown option") << QStringList{"collective", "x.json", "--frobnicate"}
                                        << "unknown option --frobnicate";
    }
    void usageErrorsExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
