// `railyard evaluate` with cluster.faults and --what-if, through the real executable.
#include "clirun.h"
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

class TestFaultCli : public QObject
{
    Q_OBJECT

    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };

    static Run run(const QStringList &args)
    {
        railyard::test::CliOptions o;
        o.timeoutMs = 120000;
        const railyard::test::CliRun r = railyard::test::runCli(args, o);
        return {r.exitCode, r.outText(), r.errText()};
    }

    // The GMI-style H200 cluster with `faults` (a JSON array), written to the temporary folder.
    QString withFaults(const QByteArray &faults,
                       const QString &source = QStringLiteral(RAILYARD_TEST_DATA
                                                              "/gmi-h200-cluster.railyard.json"))
    {
        QFile in(source);
        if (!in.open(QIODevice::ReadOnly))
            return {};
        QJsonObject doc = QJsonDocument::fromJson(in.readAll()).object();
        QJsonObject cluster = doc.value(QStringLiteral("cluster")).toObject();
        cluster.insert(QStringLiteral("faults"), QJsonDocument::fromJson(faults).array());
        doc.insert(QStringLiteral("cluster"), cluster);
        const QString path = m_dir.filePath(
                QStringLiteral("faulted-%1.railyard.json").arg(++m_files));
        QFile out(path);
        if (!out.open(QIODevice::WriteOnly))
            return {};
        out.write(QJsonDocument(doc).toJson());
        return path;
    }

    static QJsonObject json(const Run &r)
    {
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        if (pe.error != QJsonParseError::NoError)
            qWarning("not JSON: %s", qPrintable(pe.errorString()));
        return o;
    }

    QTemporaryDir m_dir;
    int m_files = 0;

private Q_SLOTS:
    void leafDownJson()
    {
        const QString file = withFaults(R"([{"device": "leaf 0", "state": "down"}])");
        const Run r = run({QStringLiteral("evaluate"), file, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = json(r);
        const QJsonObject faults = o.value(QStringLiteral("faults")).toObject();
        QVERIFY(!faults.isEmpty());
        const QJsonObject step = faults.value(QStringLiteral("metrics"))
                                         .toObject()
                                         .value(QStringLiteral("step_time_s"))
                                         .toObject();
        // The evaluation is the faulted one; the healthy one is the "before".
        QCOMPARE(step.value(QStringLiteral("after")).toDouble(),
                 o.value(QStringLiteral("step_time_s")).toDouble());
        QVERIFY(step.value(QStringLiteral("before")).toDouble() > 0);
        QVERIFY(!faults.value(QStringLiteral("links_changed")).toArray().isEmpty());
        QVERIFY(!faults.value(QStringLiteral("rerouted")).toArray().isEmpty());
        QVERIFY(faults.contains(QStringLiteral("recovery")));
        const QJsonArray list = faults.value(QStringLiteral("faults")).toArray();
        QCOMPARE(list.size(), 1);
        QCOMPARE(list[0].toObject().value(QStringLiteral("path")).toString(),
                 QStringLiteral("/cluster/faults/0"));
        // The down leaf's links carry nothing.
        for (const QJsonValue &l : o.value(QStringLiteral("links")).toArray())
            if (l.toObject()
                        .value(QStringLiteral("name"))
                        .toString()
                        .startsWith(QStringLiteral("NIC 0.0 ")))
                QCOMPARE(l.toObject().value(QStringLiteral("bytes_per_step")).toDouble(), 0.0);
    }

    void leafDownText()
    {
        const QString file = withFaults(R"([{"device": "leaf 0"}])");
        const Run r = run({QStringLiteral("evaluate"), file});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("\nfaults\n  leaf 0 down\n")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("rerouted: GPU 0 reaches NIC 0.1 over PCIe")));
        QVERIFY(r.out.contains(QStringLiteral("step_time_s")));
        QVERIFY(r.out.contains(QStringLiteral("recovery: ")));
    }

    void whatIfSpinesJson()
    {
        const Run r = run({QStringLiteral("evaluate"),
                           QStringLiteral(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json"),
                           QStringLiteral("--what-if"),
                           QStringLiteral("spines"),
                           QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = json(r);
        QCOMPARE(o.value(QStringLiteral("what_if")).toString(), QStringLiteral("spines"));
        QCOMPARE(o.value(QStringLiteral("candidates")).toInt(), 2);
        QCOMPARE(o.value(QStringLiteral("priced")).toInt(), 1); // two alike spines
        const QJsonArray ranked = o.value(QStringLiteral("ranked")).toArray();
        QCOMPARE(ranked.size(), 2);
        QVERIFY(ranked[1].toObject().contains(QStringLiteral("priced_as")));
    }

    void whatIfLeavesText()
    {
        const Run r = run({QStringLiteral("evaluate"),
                           QStringLiteral(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json"),
                           QStringLiteral("--what-if=leaves"),
                           QStringLiteral("--top"),
                           QStringLiteral("3"),
                           QStringLiteral("--threads"),
                           QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("the 3 that hurt this job most")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("  1.   leaf ")));
        QVERIFY(!r.out.contains(QStringLiteral("  4.   ")));
    }

    void badFaultNamesFileAndPath()
    {
        const QString file = withFaults(R"([{"device": "leaf 0"}, {"device": "spine 9"}])");
        for (const QStringList &extra :
             {QStringList{}, QStringList{QStringLiteral("--what-if"), QStringLiteral("nics")}}) {
            const Run r = run(QStringList{QStringLiteral("evaluate"), file} + extra);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(file
                                    + QStringLiteral(": /cluster/faults/1/device: no device "
                                                     "\"spine 9\"")),
                     qPrintable(r.err));
        }
        // Every uplink of leaf 3 down: an error, not a crash.
        const QString stuck = withFaults(
                R"([{"link": "leaf 3 - spine 0"}, {"link": "leaf 3 - spine 1"}])");
        const Run r = run({QStringLiteral("evaluate"), stuck, QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("every uplink of leaf 3 is down")),
                 qPrintable(r.err));
    }

    void servingLayoutWithFaults()
    {
        // The Llama 70B TP8 x 2 serving layout with GPU 3 out: the serving report, then what
        // the fault costs (text), and in JSON the serving metrics before and after.
        const QString serving = QStringLiteral(RAILYARD_SOURCE_DIR
                                               "/layouts/serving-llama70b-tp8-h100.railyard.json");
        const QString file = withFaults(R"([{"device": "GPU 3"}])", serving);
        const Run text = run({QStringLiteral("evaluate"), file});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains(QStringLiteral("tpot_s")), qPrintable(text.out));
        QVERIFY2(text.out.contains(QStringLiteral("left service")), qPrintable(text.out));
        const Run r = run({QStringLiteral("evaluate"), file, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = json(r);
        const QJsonObject faults = o.value(QStringLiteral("faults")).toObject();
        QCOMPARE(faults.value(QStringLiteral("serving")).toBool(), true);
        const QJsonObject metrics = faults.value(QStringLiteral("metrics")).toObject();
        const QJsonObject perGpu = metrics.value(QStringLiteral("output_tokens_per_s_per_gpu"))
                                           .toObject();
        QVERIFY(perGpu.value(QStringLiteral("after")).toDouble()
                < perGpu.value(QStringLiteral("before")).toDouble());
        QVERIFY(metrics.contains(QStringLiteral("tpot_s")));
        QVERIFY(metrics.contains(QStringLiteral("ttft_s")));

        // --what-if on a serving layout ranks by tokens/s per GPU lost, with TPOT and TTFT.
        const Run w = run({QStringLiteral("evaluate"),
                           serving,
                           QStringLiteral("--what-if"),
                           QStringLiteral("gpus"),
                           QStringLiteral("--json")});
        QVERIFY2(w.exitCode == 0, qPrintable(w.err));
        const QJsonObject sweep = json(w);
        QCOMPARE(sweep.value(QStringLiteral("serving")).toBool(), true);
        QCOMPARE(sweep.value(QStringLiteral("candidates")).toInt(), 16);
        QCOMPARE(sweep.value(QStringLiteral("priced")).toInt(), 2);
        const QJsonObject first = sweep.value(QStringLiteral("ranked")).toArray()[0].toObject();
        QVERIFY(first.contains(QStringLiteral("tpot_s")));
        QVERIFY(first.value(QStringLiteral("cost")).toDouble() > 0.1);
        const Run wt = run(
                {QStringLiteral("evaluate"), serving, QStringLiteral("--what-if=leaves")});
        QVERIFY2(wt.exitCode == 0, qPrintable(wt.err));
        QVERIFY2(wt.out.contains(QStringLiteral("baseline TPOT")), qPrintable(wt.out));
    }

    void servingBadFaultNamesTheKey()
    {
        const QString serving = QStringLiteral(RAILYARD_SOURCE_DIR
                                               "/layouts/serving-llama70b-tp8-h100.railyard.json");
        const QString file = withFaults(R"([{"device": "leaf 99"}])", serving);
        for (const QStringList &extra :
             {QStringList{}, QStringList{QStringLiteral("--what-if"), QStringLiteral("spines")}}) {
            const Run r = run(QStringList{QStringLiteral("evaluate"), file} + extra);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(file
                                    + QStringLiteral(": /cluster/faults/0/device: no device "
                                                     "\"leaf 99\"")),
                     qPrintable(r.err));
        }
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("unknown kind")
                << QStringList{QStringLiteral("--what-if"), QStringLiteral("racks")};
        QTest::newRow("top alone") << QStringList{QStringLiteral("--top"), QStringLiteral("3")};
        QTest::newRow("top not a number") << QStringList{QStringLiteral("--what-if"),
                                                         QStringLiteral("leaves"),
                                                         QStringLiteral("--top"),
                                                         QStringLiteral("x")};
        QTest::newRow("with links") << QStringList{QStringLiteral("--what-if"),
                                                   QStringLiteral("leaves"),
                                                   QStringLiteral("--links"),
                                                   QStringLiteral("all")};
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        const Run r = run(
                QStringList{QStringLiteral("evaluate"),
                            QStringLiteral(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json")}
                + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("railyard evaluate --help")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestFaultCli)
#include "tst_faultcli.moc"
