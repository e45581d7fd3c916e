#include "inputerror.h"
#include "layout.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace railyard::engine;

static std::string dataPath(const QString &name)
{
    return std::string(RAILYARD_TEST_DATA "/") + name.toStdString();
}

class TestLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsReferenceExample()
    {
        const Layout l = readLayoutFile(dataPath("example.railyard.json"));
        QCOMPARE(l.cluster.gpu, std::string("H200-SXM"));
        QCOMPARE(l.cluster.nodes, 16);
        QCOMPARE(l.cluster.gpuCount(), 128);
        QCOMPARE(l.cluster.nic.gbitPerS, 400.0);
        QCOMPARE(l.cluster.tuning.qpsPerConnection, 4);
        QCOMPARE(*l.cluster.pricePerGpuHour, 3.20);
        QVERIFY(l.model);
        QCOMPARE(l.model->preset, std::string("llama3-70b"));
        QCOMPARE(l.training.seqLen, 8192);
        QCOMPARE(l.training.recompute, Recompute::Selective);
        QCOMPARE(l.parallel.tp, 8);
        QCOMPARE(l.parallel.vp, 5);
        QCOMPARE(l.dataParallel(), 4);
        QCOMPARE(l.view["color_by"].get<std::string>(), std::string("tp"));
    }

    void readsMoeExampleWithMapping()
    {
        const Layout l = readLayoutFile(dataPath("example-moe.railyard.json"));
        QVERIFY(l.model && l.model->moe);
        QCOMPARE(*l.model->moe->experts, 128);
        QCOMPARE(l.mapping.size(), std::size_t(16));
        const ResolvedModel m = resolveModel(*l.model);
        QVERIFY2(m.error.empty(), m.error.c_str());
        QCOMPARE(m.dims.headDim, 128);
        QCOMPARE(m.dims.kvHeads, 4);
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("example") << "example.railyard.json";
        QTest::newRow("moe") << "example-moe.railyard.json";
        QTest::newRow("seed 16") << "seed-16-servers.railyard.json";
    }
    void roundTrip()
    {
        QFETCH(QString, file);
        const Layout a = readLayoutFile(dataPath(file));
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("out.railyard.json")).toStdString();
        writeLayoutFile(a, out);
        const Layout b = readLayoutFile(out);
        QVERIFY(a.sameContent(b));
        // Writing again gives the same bytes: saving is stable.
        QCOMPARE(layoutToText(b), layoutToText(a));
    }

    void unknownKeysSurvive()
    {
        const Layout a = readLayoutFile(dataPath("seed-16-servers.railyard.json"));
        const Json j = layoutToJson(a);
        QVERIFY(j.contains("x_unknown_tool_setting"));
        QCOMPARE(j["x_unknown_tool_setting"]["keep"].size(), std::size_t(3));
    }

    void editsAreWritten()
    {
        Layout a = readLayoutFile(dataPath("example.railyard.json"));
        a.cluster.nodes = 32;
        a.parallel.dp = 8;
        a.model->preset = "llama3-8b";
        const Layout b = parseLayout(layoutToText(a), "edited");
        QCOMPARE(b.cluster.nodes, 32);
        QCOMPARE(b.dataParallel(), 8);
        QCOMPARE(b.model->preset, std::string("llama3-8b"));
    }

    void writeIsAtomicAndLeavesNoTemporary()
    {
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("a.railyard.json")).toStdString();
        const Layout a = readLayoutFile(dataPath("example.railyard.json"));
        writeLayoutFile(a, out);
        writeLayoutFile(a, out);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
        QVERIFY_THROWS_EXCEPTION(InputError, writeLayoutFile(a, "/nonexistent-dir/x.json"));
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("broken JSON")
                << "bad/broken-json.railyard.json"
                << QStringList{"broken-json.railyard.json", "line 5, column 1", "invalid JSON"};
        QTest::newRow("missing key") << "bad/missing-nodes.railyard.json"
                                     << QStringList{"/cluster", "missing required key \"nodes\""};
        QTest::newRow("wrong type")
                << "bad/wrong-type.railyard.json"
                << QStringList{"/cluster/nodes", "expected an integer", "a string \"sixteen\""};
        QTest::newRow("negative count")
                << "bad/negative-nodes.railyard.json"
                << QStringList{"/cluster/nodes", "expected an integer from 1", "got -3"};
        QTest::newRow("unknown version")
                << "bad/future-version.railyard.json"
                << QStringList{"/version", "version 7 is newer than this Railyard reads"};
        QTest::newRow("billion GPUs") << "bad/billion-gpus.railyard.json"
                                      << QStringList{"/cluster/nodes", "at most 262144"};
        QTest::newRow("unknown GPU")
                << "bad/unknown-gpu.railyard.json"
                << QStringList{"/cluster/gpu", "unknown GPU \"X9000\"", "H100-SXM"};
        QTest::newRow("empty file") << "bad/empty.railyard.json"
                                    << QStringList{"empty.railyard.json", "the file is empty"};
        QTest::newRow("array") << "bad/not-an-object.railyard.json"
                               << QStringList{": /: expected an object, got an array"};
        QTest::newRow("missing file")
                << "bad/no-such-file.railyard.json" << QStringList{"no-such-file", "cannot open"};
    }
    void badFiles()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        try {
            readLayoutFile(dataPath(file));
            QFAIL("no error");
        } catch (const InputError &e) {
            const QString msg = QString::fromStdString(e.what());
            qInfo("%s", qPrintable(msg));
            for (const QString &part : expected)
                QVERIFY2(msg.contains(part), qPrintable(msg + " lacks: " + part));
        }
    }

    void badValues_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        const QString head
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":2},)";
        QTest::newRow("zero tp") << head + R"("parallel":{"tp":0}})"
                                 << "/parallel/tp";
        QTest::newRow("bad order") << head + R"("parallel":{"order":"tp-tp-dp-pp"}})"
                                   << "/parallel/order";
        QTest::newRow("bad precision") << head + R"("training":{"precision":"fp4"}})"
                                       << R"(one of "bf16" or "fp8")";
        QTest::newRow("unknown preset") << head + R"("model":{"preset":"gpt5"}})"
                                        << "unknown model preset \"gpt5\"";
        QTest::newRow("kv heads") << head + R"("model":{"preset":"llama3-8b","kv_heads":5}})"
                                  << "kv_heads (5) must divide heads (32)";
        QTest::newRow("mapping duplicate") << head + R"("parallel":{"dp":2},"mapping":[1,1]})"
                                           << "/mapping/1";
        QTest::newRow("mapping length") << head + R"("parallel":{"dp":16},"mapping":[0,1]})"
                                        << "one GPU per rank";
        QTest::newRow("domain not whole servers")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"GB200","nodes":18,"gpus_per_node":4,"nvlink_domain":70}})"
                << "multiple of gpus_per_node";
        QTest::newRow("partial NVL72")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"GB200","nodes":20,"gpus_per_node":4,"nvlink_domain":72}})"
                << "expected a multiple of 18";
        QTest::newRow("wrong format") << R"({"format":"something","version":1})"
                                      << R"(/format: expected "railyard-layout")";
    }
    void badValues()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            parseLayout(json.toStdString(), "inline.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.startsWith(QStringLiteral("inline.json: ")), qPrintable(msg));
            QVERIFY2(msg.contains(expected), qPrintable(msg));
        }
    }
};

QTEST_APPLESS_MAIN(TestLayout)
#include "tst_layout.moc"
